import { ACCESS_TOKEN_REF, mergeEnv } from "./env";
import { FaultStore } from "./faults";
import { Clock } from "./state/clock";
import type { TemplateRecord } from "./types";

describe("Clock", () => {
  test("advance moves time forward; negative or non-finite steps are refused", () => {
    let real = 1_000_000;
    const clock = new Clock(0, () => real);
    clock.shift(500);
    expect(clock.nowMs()).toBe(1_000_500);
    real += 100;
    expect(clock.nowMs()).toBe(1_000_600);
    expect(() => clock.shift(-1)).toThrow(RangeError);
    expect(() => clock.shift(Number.NaN)).toThrow(RangeError);
  });

  test("freeze stops real time; unfreeze resumes from the frozen time; offset survives", () => {
    let real = 0;
    const clock = new Clock(10, () => real);
    clock.freeze();
    real = 5000;
    expect(clock.nowMs()).toBe(10);
    clock.shift(90);
    expect(clock.nowMs()).toBe(100);
    expect(clock.offset).toBe(100 - 5000);
    clock.unfreeze();
    real = 6000;
    expect(clock.nowMs()).toBe(1100);
    clock.freeze(new Date(42));
    expect(clock.nowMs()).toBe(42);
  });
});

describe("mergeEnv", () => {
  const template = {
    env: [
      { key: "A", value: "1", secret: false },
      { key: "B", value: "2", secret: false },
      { key: "PASS", value: ACCESS_TOKEN_REF, secret: true },
    ],
  } as TemplateRecord;

  test.each([
    ["override replaces by key", [{ key: "A", value: "x", secret: false }], { A: "x", B: "2" }],
    ["null value drops the entry", [{ key: "B", value: null, secret: false }], { A: "1" }],
    ["new keys are added", [{ key: "C", value: "3", secret: true }], { A: "1", B: "2", C: "3" }],
    [
      "protected keys cannot be shadowed",
      [{ key: "GPU_COUNT", value: "9", secret: false }],
      { A: "1", B: "2" },
    ],
    [
      "a carrier of the token cannot be shadowed",
      [{ key: "PASS", value: "mine", secret: false }],
      { A: "1", B: "2" },
    ],
  ])("%s", (_name, overrides, expected) => {
    const env = Object.fromEntries(mergeEnv(template, overrides, "tok", 2).map((e) => [e.key, e.value]));
    expect(env).toEqual({
      ...expected,
      GPU_COUNT: "2",
      SERVICE_ACCESS_TOKEN: "tok",
      JUPYTER_TOKEN: "tok",
      PASS: "tok",
    });
  });

  test("without an access token the carriers and token variables are absent", () => {
    const env = mergeEnv(template, [{ key: "SERVICE_ACCESS_TOKEN", value: "x", secret: false }], null, 1);
    expect(env.map((e) => e.key).sort()).toEqual(["A", "B", "GPU_COUNT"]);
  });
});

describe("FaultStore", () => {
  test("matches by method and pattern or path, honours times and probability", () => {
    const faults = new FaultStore();
    faults.add({ route: "POST /v1/instances", kind: "status", status: 503, times: 2 });
    faults.add({ route: "/v1/instances/:id", kind: "latency", latencyMs: 5, probability: 0.5 });
    expect(faults.match("GET", "/v1/instances", "/v1/instances")).toHaveLength(0);
    expect(faults.match("POST", "/v1/instances", "/v1/instances")).toHaveLength(1);
    expect(faults.match("POST", undefined, "/v1/instances")).toHaveLength(1);
    expect(faults.match("POST", "/v1/instances", "/v1/instances")).toHaveLength(0);
    expect(faults.match("GET", "/v1/instances/:id", "/v1/instances/x", () => 0.9)).toHaveLength(0);
    expect(faults.match("GET", "/v1/instances/:id", "/v1/instances/x", () => 0.1)).toHaveLength(1);
    expect(faults.list()).toHaveLength(1);
    faults.clear();
    expect(faults.list()).toHaveLength(0);
  });

  test("rejects malformed faults", () => {
    const faults = new FaultStore();
    expect(() => faults.add({ route: "v1/x", kind: "drop" })).toThrow();
    expect(() => faults.add({ route: "/v1/x", kind: "status" })).toThrow();
    expect(() => faults.add({ route: "/v1/x", kind: "latency" })).toThrow();
    expect(() => faults.add({ route: "/v1/x", kind: "drop", probability: 2 })).toThrow();
  });
});
