import { call, deploy, errorOf, runningInstance, useFake } from "./helpers";

describe("fault injection", () => {
  const { fb, creds } = useFake();
  const admin = () => creds().admin_session_token;

  test("429 with Retry-After on a route pattern, limited by times", async () => {
    fb().addFault({ route: "GET /v1/offers", kind: "status", status: 429, retryAfterSeconds: 2, times: 1 });
    const a = await call(fb(), "GET", "/v1/offers", { token: admin() });
    expect([a.status, errorOf(a).code, a.headers.get("retry-after")]).toEqual([429, "RATE_LIMITED", "2"]);
    expect((await call(fb(), "GET", "/v1/offers", { token: admin() })).status).toBe(200);
  });

  test.each([
    [500, "INTERNAL"],
    [502, "BAD_GATEWAY"],
    [503, "SERVICE_UNAVAILABLE"],
  ])("status %d fault answers %s and leaves nothing behind", async (status, code) => {
    fb().addFault({ route: "/v1/instances", method: "POST", kind: "status", status });
    const a = await deploy(fb(), creds(), admin());
    expect([a.status, errorOf(a).code]).toEqual([status, code]);
    expect(fb().listInstances()).toHaveLength(0);
    // GET on the same path is not affected.
    expect((await call(fb(), "GET", "/v1/instances", { token: admin() })).status).toBe(200);
    fb().clearFaults();
  });

  test("a parameterised route pattern matches every id", async () => {
    const id = await runningInstance(fb(), creds());
    fb().addFault({ route: "GET /v1/instances/:id", kind: "status", status: 503, retryAfterSeconds: 1 });
    expect((await call(fb(), "GET", `/v1/instances/${id}`, { token: admin() })).status).toBe(503);
    fb().clearFaults();
  });

  test("a route ending in /* matches every path under it, and only those", async () => {
    const id = await runningInstance(fb(), creds());
    fb().addFault({ route: "GET /v1/*", kind: "status", status: 502 });
    for (const path of ["/v1/offers", `/v1/instances/${id}`, `/v1/instances/${id}/logs`, "/v1/nothing"]) {
      const a = await call(fb(), "GET", path, { token: admin() });
      expect([path, a.status, errorOf(a).code]).toEqual([path, 502, "BAD_GATEWAY"]);
    }
    // Another method, and the control API, are untouched.
    expect((await call(fb(), "DELETE", `/v1/instances/${id}`, { token: admin() })).status).toBe(200);
    const ctl = await call(fb(), "GET", "/_control/faults", {
      headers: { "x-control-token": fb().controlToken },
    });
    expect(ctl.status).toBe(200);
    fb().clearFaults();
  });

  test("added latency delays the answer", async () => {
    fb().addFault({ route: "GET /v1/offers", kind: "latency", latencyMs: 150 });
    const t0 = Date.now();
    expect((await call(fb(), "GET", "/v1/offers", { token: admin() })).status).toBe(200);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(140);
    fb().clearFaults();
  });

  test("connection dropped before processing: nothing is created", async () => {
    fb().addFault({ route: "POST /v1/instances", kind: "drop", times: 1 });
    await expect(deploy(fb(), creds(), admin())).rejects.toThrow();
    expect(fb().listInstances()).toHaveLength(0);
    expect((await deploy(fb(), creds(), admin())).status).toBe(201);
  });

  test("processed but response lost: the instance exists although the client saw no answer", async () => {
    fb().addFault({ route: "POST /v1/instances", kind: "lost-response", times: 1 });
    await expect(deploy(fb(), creds(), admin())).rejects.toThrow();
    expect(fb().listInstances()).toHaveLength(1);
    const list = await call(fb(), "GET", "/v1/instances", { token: admin() });
    expect(list.body.items).toHaveLength(1);
  });

  test("probability 0 never fires", async () => {
    fb().addFault({ route: "GET /v1/offers", kind: "status", status: 500, probability: 0 });
    for (let i = 0; i < 5; i++)
      expect((await call(fb(), "GET", "/v1/offers", { token: admin() })).status).toBe(200);
    fb().clearFaults();
  });
});
