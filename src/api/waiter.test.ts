import {
  ApiError,
  InstanceErrorStateError,
  NetworkError,
  RequestAbortedError,
  WaitTimeoutError,
} from "./errors";
import type { Instance, InstanceStatus } from "./schemas";
import { makeInstance } from "./testing/fixtures";
import { type InstanceReader, type WaitForInstanceOptions, waitForInstance } from "./waiter";

// The waiter's timing runs on a fake clock: sleep advances it instantly and records each delay.

type Step = InstanceStatus | Error;

function harness(steps: Step[]) {
  let t = 0;
  const sleeps: number[] = [];
  const pollTimes: number[] = [];
  const reader: InstanceReader = {
    async getInstance(id) {
      pollTimes.push(t);
      const step = steps.length > 1 ? steps.shift()! : steps[0]!;
      if (step instanceof Error) throw step;
      return makeInstance({ id, status: step });
    },
  };
  const timing: Pick<WaitForInstanceOptions, "sleep" | "now"> = {
    now: () => t,
    sleep: async (ms, signal) => {
      if (signal?.aborted) throw signal.reason;
      sleeps.push(ms);
      t += ms;
    },
  };
  return { reader, timing, sleeps, pollTimes, now: () => t };
}

const net = () => new NetworkError("GET /v1/instances/{id}", "ECONNRESET", "ECONNRESET");
const api = (status: number, code: string) =>
  new ApiError({ status, code, message: code, endpoint: "GET /v1/instances/{id}" });

test("polls at once, again 0.1 s later, then 0.5 s after the first doubling to the 10 s cap", async () => {
  const h = harness([
    "creating",
    "creating",
    "creating",
    "creating",
    "creating",
    "creating",
    "creating",
    "creating",
    "running",
  ]);
  const inst = await waitForInstance(h.reader, "i1", { target: "running", ...h.timing });
  expect(inst.status).toBe("running");
  expect(h.pollTimes).toEqual([0, 100, 500, 1500, 3500, 7500, 15500, 25500, 35500]);
});

test("a transition that ends at once is seen 0.1 s after the call, not 0.5 s", async () => {
  const h = harness(["destroying", "destroyed"]);
  await waitForInstance(h.reader, "i1", { target: "destroyed", ...h.timing });
  expect(h.now()).toBe(100);
});

test("a slow transition is polled as before the quick poll: one GET more over 10 minutes, at the same times from 0.5 s on", async () => {
  const tenMinutes = async (options: Pick<WaitForInstanceOptions, "quickPollMs">) => {
    const h = harness(["creating"]);
    const err = await waitForInstance(h.reader, "i1", {
      target: "running",
      timeoutMs: 10 * 60_000,
      ...options,
      ...h.timing,
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WaitTimeoutError);
    return h.pollTimes;
  };
  const before = await tenMinutes({ quickPollMs: 0 }); // the schedule before the quick poll
  const after = await tenMinutes({});
  expect(before).toHaveLength(65);
  expect(after).toHaveLength(66);
  expect(after.filter((t) => t !== 100)).toEqual(before);
  // The same 10 s apart once the backoff reaches its cap.
  expect(after.slice(-3)).toEqual([585_500, 595_500, 600_000]);
});

test("the quick poll is left out when the first interval is no longer than it", async () => {
  const h = harness(["creating", "creating", "running"]);
  await waitForInstance(h.reader, "i1", { target: "running", initialPollMs: 50, ...h.timing });
  expect(h.sleeps).toEqual([50, 100]);
});

test("accepts several targets and reports every poll", async () => {
  const h = harness(["stopping", "stopped"]);
  const seen: string[] = [];
  const inst = await waitForInstance(h.reader, "i1", {
    target: ["stopped", "running"],
    onPoll: (i) => seen.push(i.status),
    ...h.timing,
  });
  expect(inst.status).toBe("stopped");
  expect(seen).toEqual(["stopping", "stopped"]);
});

test("times out with the last status seen, polling once more at the deadline", async () => {
  const h = harness(["starting"]);
  const err = await waitForInstance(h.reader, "i1", {
    target: "running",
    timeoutMs: 5000,
    ...h.timing,
  }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(WaitTimeoutError);
  const e = err as WaitTimeoutError;
  expect(e.lastStatus).toBe("starting");
  expect(e.lastInstance?.id).toBe("i1");
  expect(e.message).toContain("last status starting");
  expect(h.sleeps).toEqual([100, 400, 1000, 2000, 1500]);
  expect(h.pollTimes.at(-1)).toBe(5000);
});

test("an error status rejects with the instance and its error_code", async () => {
  const reader: InstanceReader = {
    getInstance: async (id) =>
      makeInstance({
        id,
        status: "error",
        error_code: "provision_failed",
        error_message: "image pull failed",
      }),
  };
  const err = (await waitForInstance(reader, "i1", { target: "running", sleep: async () => {} }).catch(
    (e: unknown) => e,
  )) as InstanceErrorStateError;
  expect(err).toBeInstanceOf(InstanceErrorStateError);
  expect(err.errorCode).toBe("provision_failed");
  expect(err.instance.error_message).toBe("image pull failed");
  expect(err.message).toContain("provision_failed: image pull failed");
});

test("destroyed fails a wait for running by default, but is a fine target", async () => {
  await expect(
    waitForInstance(harness(["destroyed"]).reader, "i1", { target: "running", sleep: async () => {} }),
  ).rejects.toThrow(InstanceErrorStateError);
  await expect(
    waitForInstance(harness(["destroying", "destroyed"]).reader, "i1", {
      target: "destroyed",
      sleep: async () => {},
    }),
  ).resolves.toMatchObject({ status: "destroyed" });
});

test("a status outside pending fails when pending is given", async () => {
  const h = harness(["starting", "stopped"]);
  const err = (await waitForInstance(h.reader, "i1", {
    target: "running",
    pending: ["starting"],
    ...h.timing,
  }).catch((e: unknown) => e)) as InstanceErrorStateError;
  expect(err).toBeInstanceOf(InstanceErrorStateError);
  expect(err.status).toBe("stopped");
});

test("tolerates a few transient failures between polls", async () => {
  const h = harness([
    "creating",
    net(),
    api(503, "SERVICE_UNAVAILABLE"),
    api(429, "RATE_LIMITED"),
    "running",
  ]);
  await expect(waitForInstance(h.reader, "i1", { target: "running", ...h.timing })).resolves.toMatchObject({
    status: "running",
  });
});

test("gives up after maxTransientFailures consecutive failures", async () => {
  const h = harness(["creating", net(), net(), net()]);
  const err = await waitForInstance(h.reader, "i1", {
    target: "running",
    maxTransientFailures: 2,
    ...h.timing,
  }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(NetworkError);
  expect(h.pollTimes).toHaveLength(4);
});

test("a non-transient error ends the wait at once", async () => {
  const h = harness(["creating", api(403, "ORG_MISMATCH")]);
  await expect(waitForInstance(h.reader, "i1", { target: "running", ...h.timing })).rejects.toMatchObject({
    code: "ORG_MISMATCH",
  });
});

test("404 is an error by default and done when asked", async () => {
  const gone = () => api(404, "INSTANCE_NOT_FOUND");
  await expect(
    waitForInstance(harness([gone()]).reader, "i1", { target: "destroyed", sleep: async () => {} }),
  ).rejects.toMatchObject({ code: "INSTANCE_NOT_FOUND" });
  const h = harness(["destroying", gone()]);
  const result: Instance | null = await waitForInstance(h.reader, "i1", {
    target: "destroyed",
    notFound: "done",
    ...h.timing,
  });
  expect(result).toBeNull();
});

test("a timeout after failed polls carries the last instance and the last error", async () => {
  const h = harness(["starting", net()]);
  const e = (await waitForInstance(h.reader, "i1", {
    target: "running",
    timeoutMs: 2000,
    maxTransientFailures: 100,
    ...h.timing,
  }).catch((x: unknown) => x)) as WaitTimeoutError;
  expect(e).toBeInstanceOf(WaitTimeoutError);
  expect(e.lastStatus).toBe("starting");
  expect(e.lastError).toBeInstanceOf(NetworkError);
});

test("an AbortSignal cancels the wait between polls", async () => {
  const ac = new AbortController();
  const h = harness(["creating"]);
  const p = waitForInstance(h.reader, "i1", {
    target: "running",
    signal: ac.signal,
    onPoll: () => {
      if (h.pollTimes.length === 3) ac.abort();
    },
    ...h.timing,
  });
  await expect(p).rejects.toThrow(RequestAbortedError);
  expect(h.pollTimes).toHaveLength(3);
});

test("a real abort interrupts a real sleep promptly", async () => {
  const ac = new AbortController();
  const reader: InstanceReader = { getInstance: async (id) => makeInstance({ id, status: "creating" }) };
  const started = Date.now();
  setTimeout(() => ac.abort(), 30);
  await expect(
    waitForInstance(reader, "i1", { target: "running", signal: ac.signal, initialPollMs: 10_000 }),
  ).rejects.toThrow(RequestAbortedError);
  expect(Date.now() - started).toBeLessThan(2000);
});

test("the poll in flight gets the signal", async () => {
  const ac = new AbortController();
  let received: AbortSignal | undefined;
  const reader: InstanceReader = {
    getInstance: async (_id, opts) => {
      received = opts?.signal;
      ac.abort();
      throw new RequestAbortedError("GET /v1/instances/{id}");
    },
  };
  await expect(waitForInstance(reader, "i1", { target: "running", signal: ac.signal })).rejects.toThrow(
    RequestAbortedError,
  );
  expect(received).toBe(ac.signal);
});
