import { client, deployBody, drop, fail, hang, logs, ok, server, sleeps } from "../testing/scripted-server";
import type { GpurentalClient } from "./client";
import { AmbiguousRequestError, ApiError, NetworkError, TimeoutError } from "./errors";
import { makeInstance } from "./testing/fixtures";

// Transport-level behaviour (dropped connections, timeouts, odd bodies) against a tiny scripted
// server; behaviour of the real API is tested against the fake backend in client.fake-backend.test.ts.

/** Client options whose clock moves only by the retry waits, which are recorded in `sleeps`. */
function onSimulatedClock(): { now: () => number; sleep: (ms: number) => Promise<void> } {
  let t = 0;
  return {
    now: () => t,
    sleep: async (ms) => {
      sleeps.push(ms);
      t += ms;
    },
  };
}

describe("retries", () => {
  test("429 with Retry-After seconds is retried after that delay, plus at most baseDelayMs of jitter", async () => {
    server.queue(fail(429, "RATE_LIMITED", {}, { "retry-after": "2" }), ok({ items: [] }));
    await expect(client().listOffers()).resolves.toEqual([]);
    expect(server.seen).toHaveLength(2);
    expect(sleeps).toEqual([2005]);
  });

  test("the jitter added to a Retry-After never makes the wait shorter than asked", async () => {
    server.queue(fail(429, "RATE_LIMITED", {}, { "retry-after": "2" }), ok({ items: [] }));
    await client({ random: () => 0 }).listOffers();
    server.queue(fail(429, "RATE_LIMITED", {}, { "retry-after": "2" }), ok({ items: [] }));
    await client({ random: () => 0.999 }).listOffers();
    expect(sleeps).toEqual([2000, 2009]);
  });

  test("503 with an HTTP-date Retry-After is honoured", async () => {
    const when = new Date(Date.now() + 3000).toUTCString();
    server.queue(fail(503, "SERVICE_UNAVAILABLE", {}, { "retry-after": when }), ok({ items: [] }));
    await client().listTemplates();
    expect(server.seen).toHaveLength(2);
    expect(sleeps[0]).toBeGreaterThan(1000);
    expect(sleeps[0]).toBeLessThanOrEqual(3010);
  });

  test("a long Retry-After (90 s) is waited in full when the operation's deadline allows it", async () => {
    server.queue(fail(429, "RATE_LIMITED", {}, { "retry-after": "90" }), ok({ items: [] }));
    const c = client({
      ...onSimulatedClock(),
    });
    // A create's deadline (20 minutes) is far longer than the client's default budget.
    await expect(c.listInstances({}, { deadlineMs: 20 * 60_000 })).resolves.toEqual([]);
    expect(sleeps).toEqual([90_005]);
  });

  test("a Retry-After longer than what is left of the deadline ends the retries at once with the 429", async () => {
    server.queue(fail(429, "RATE_LIMITED", {}, { "retry-after": "90" }));
    const e = (await client()
      .listOffers(undefined, { deadlineMs: 60_000 })
      .catch((x: unknown) => x)) as ApiError;
    expect(e.code).toBe("RATE_LIMITED");
    expect(e.retryAfterMs).toBe(90_000);
    expect(server.seen).toHaveLength(1);
    expect(sleeps).toEqual([]);
  });

  test("a Retry-After that ends exactly at the deadline ends the retries at once, without waiting", async () => {
    server.queue(fail(429, "RATE_LIMITED", {}, { "retry-after": "5" }), ok({ items: [] }));
    const c = client({ ...onSimulatedClock(), random: () => 0 });
    const e = (await c.listOffers(undefined, { deadlineMs: 5000 }).catch((x: unknown) => x)) as ApiError;
    expect(e.code).toBe("RATE_LIMITED");
    expect(server.seen).toHaveLength(1);
    expect(sleeps).toEqual([]);
  });

  test("a timeout after a previous failure is retried when the attempt had its full time", async () => {
    server.queue(fail(500, "INTERNAL"), hang, ok({ items: [] }));
    const c = client({ timeoutMs: 100, retry: { baseDelayMs: 1, maxDelayMs: 1, deadlineMs: 30_000 } });
    await expect(c.listOffers()).resolves.toEqual([]);
    expect(server.seen).toHaveLength(3);
  });

  test("an attempt that had its full time reports its own timeout, not the previous answer", async () => {
    // The deadline leaves the second attempt exactly the attempt timeout: it is not cut short.
    server.queue(fail(500, "INTERNAL"), hang);
    const c = client({
      ...onSimulatedClock(),
      random: () => 0,
      timeoutMs: 100,
      retry: { maxAttempts: 2, deadlineMs: 100 },
    });
    const e = await c.getInstance("i1").catch((x: unknown) => x);
    expect(e).toBeInstanceOf(TimeoutError);
    expect(server.seen).toHaveLength(2);
  });

  test("without maxAttempts, a call is retried until its deadline, not a fixed number of times", async () => {
    server.always(fail(500, "INTERNAL"));
    const c = client({
      ...onSimulatedClock(),
      random: () => 0.999,
      retry: { baseDelayMs: 100, maxDelayMs: 1000 },
    });
    const e = (await c.getInstance("i1", { deadlineMs: 20_000 }).catch((x: unknown) => x)) as ApiError;
    expect(e).toBeInstanceOf(ApiError);
    expect(e.code).toBe("INTERNAL");
    // 99 + 199 + 399 + 799, then 999 ms each, as long as the next wait fits in 20 s.
    expect(server.seen.length).toBe(sleeps.length + 1);
    expect(sleeps.slice(0, 5)).toEqual([99, 199, 399, 799, 999]);
    expect(sleeps.reduce((a, b) => a + b, 0)).toBeLessThan(20_000);
    expect(sleeps.reduce((a, b) => a + b, 0) + 999).toBeGreaterThanOrEqual(20_000);
  });

  test("maxAttempts, when given, still caps the attempts", async () => {
    server.always(fail(503, "SERVICE_UNAVAILABLE"));
    const e = (await client()
      .listOffers()
      .catch((x: unknown) => x)) as ApiError;
    expect(e.status).toBe(503);
    expect(server.seen).toHaveLength(4);
    expect(sleeps).toHaveLength(3);
    // Full jitter: each delay within the capped exponential.
    sleeps.forEach((d, i) => {
      expect(d).toBeGreaterThanOrEqual(0);
      expect(d).toBeLessThanOrEqual(Math.min(100, 10 * 2 ** i));
    });
  });

  test("the deadline cuts retries short", async () => {
    server.always(fail(503, "SERVICE_UNAVAILABLE", {}, { "retry-after": "5" }));
    const c = client({
      ...onSimulatedClock(),
      retry: { maxAttempts: 10, deadlineMs: 12_000 },
    });
    await expect(c.listOffers()).rejects.toThrow(ApiError);
    expect(server.seen).toHaveLength(3);
    expect(sleeps).toEqual([5125, 5125]);
  });

  test("an attempt the deadline cuts short reports the API's previous answer, not the time running out", async () => {
    server.queue(fail(500, "INTERNAL"));
    server.always(hang);
    const c = client({ timeoutMs: 30_000, retry: { baseDelayMs: 10, maxDelayMs: 10 } });
    const e = (await c.getInstance("i1", { deadlineMs: 300 }).catch((x: unknown) => x)) as ApiError;
    expect(e).toBeInstanceOf(ApiError);
    expect(e.code).toBe("INTERNAL");
    expect(server.seen).toHaveLength(2);
  });

  test("a per-call deadline longer than the client's default is the one kept", async () => {
    server.always(fail(503, "SERVICE_UNAVAILABLE", {}, { "retry-after": "5" }));
    const c = client({
      ...onSimulatedClock(),
      retry: { deadlineMs: 12_000 },
    });
    await expect(c.listOffers(undefined, { deadlineMs: 31_000 })).rejects.toThrow(ApiError);
    expect(server.seen).toHaveLength(7);
  });

  test("each wait is logged at debug with its delay, the time left and the reason", async () => {
    server.queue(
      fail(500, "INTERNAL"),
      fail(429, "RATE_LIMITED", {}, { "retry-after": "1" }),
      ok(makeInstance()),
    );
    await client().getInstance("i1");
    const waits = logs.filter((l) => l.msg === "retrying");
    expect(waits.map((l) => l.level)).toEqual(["debug", "debug"]);
    expect(waits[0]?.fields).toMatchObject({
      endpoint: "GET /v1/instances/{id}",
      attempt: 1,
      delayMs: 5,
      retryAfterMs: null,
      reason: expect.stringContaining("500 INTERNAL"),
    });
    expect(waits[1]?.fields).toMatchObject({ attempt: 2, delayMs: 1005, retryAfterMs: 1000 });
    expect(waits[1]?.fields.remainingMs).toEqual(expect.any(Number));
  });

  test.each([
    [500, "INTERNAL"],
    [502, "BAD_GATEWAY"],
    [503, "SERVICE_UNAVAILABLE"],
    [504, "GATEWAY_TIMEOUT"],
  ])("%i is retried for GET and DELETE", async (status, code) => {
    server.queue(fail(status, code), ok({ items: [] }));
    await client().listApiKeys();
    server.queue(fail(status, code), (_req, res) => {
      res.writeHead(204);
      res.end();
    });
    await client().revokeApiKey("k1");
    expect(server.seen.map((x) => x.method)).toEqual(["GET", "GET", "DELETE", "DELETE"]);
  });

  test("a dropped connection is retried for GET", async () => {
    server.queue(drop, ok(makeInstance()));
    await expect(client().getInstance("i1")).resolves.toMatchObject({ status: "running" });
    expect(server.seen).toHaveLength(2);
  });

  test("a dropped connection fails with NetworkError once attempts run out", async () => {
    server.always(drop);
    const e = await client({ retry: { maxAttempts: 2, baseDelayMs: 1 } })
      .getInstance("i1")
      .catch((x: unknown) => x);
    expect(e).toBeInstanceOf(NetworkError);
    expect(server.seen).toHaveLength(2);
  });

  test("refused connections are retried even for deploy: the request never left", async () => {
    const port = new URL(server.url).port;
    await server.stop();
    const c = client({ baseUrl: `http://127.0.0.1:${port}`, retry: { maxAttempts: 3, baseDelayMs: 1 } });
    const e = await c.deployInstance(deployBody).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(NetworkError);
    expect((e as NetworkError).errorCode).toBe("ECONNREFUSED");
    expect(sleeps).toHaveLength(2);
    await server.start();
  });

  test("a connection error names the API's address and where it was configured", async () => {
    const port = new URL(server.url).port;
    await server.stop();
    const base = `http://127.0.0.1:${port}`;
    const c = client({ baseUrl: base, baseUrlSource: "GPURENTAL_BASE_URL", retry: { maxAttempts: 1 } });
    const e = (await c.listOffers().catch((x: unknown) => x)) as NetworkError;
    expect(e.message).toBe(
      `GET /v1/offers: cannot connect to ${base} (GPURENTAL_BASE_URL): connect ECONNREFUSED 127.0.0.1:${port}`,
    );
    await server.start();
    server.always(hang);
    const t = (await client({ baseUrlSource: "base_url", timeoutMs: 50, retry: { maxAttempts: 1 } })
      .getInstance("i1")
      .catch((x: unknown) => x)) as TimeoutError;
    expect(t.message).toBe(`GET /v1/instances/{id}: no response from ${server.url} (base_url) within 50 ms`);
    server.always(drop);
    const lost = (await client({ baseUrlSource: "base_url" })
      .deployInstance(deployBody)
      .catch((x: unknown) => x)) as AmbiguousRequestError;
    expect(lost.message).toContain(`the connection to ${server.url} (base_url) failed`);
  });
});

describe("non-idempotent requests are never resent once they may have landed", () => {
  test("a dropped deploy is ambiguous and sent once", async () => {
    server.always(drop);
    const e = (await client()
      .deployInstance(deployBody)
      .catch((x: unknown) => x)) as AmbiguousRequestError;
    expect(e).toBeInstanceOf(AmbiguousRequestError);
    expect(e.reason).toBe("connection");
    expect(e.endpoint).toBe("POST /v1/instances");
    expect(server.seen).toHaveLength(1);
  });

  test.each([500, 502, 504])("a %i on deploy is ambiguous", async (status) => {
    server.always(fail(status, "X"));
    const e = (await client()
      .deployInstance(deployBody)
      .catch((x: unknown) => x)) as AmbiguousRequestError;
    expect(e).toBeInstanceOf(AmbiguousRequestError);
    expect(e.reason).toBe("status");
    expect(e.status).toBe(status);
    expect(e.cause).toBeInstanceOf(ApiError);
    expect(server.seen).toHaveLength(1);
  });

  test("a deploy that times out is ambiguous", async () => {
    server.always(hang);
    const e = (await client({ timeoutMs: 100 })
      .deployInstance(deployBody)
      .catch((x: unknown) => x)) as AmbiguousRequestError;
    expect(e).toBeInstanceOf(AmbiguousRequestError);
    expect(e.reason).toBe("timeout");
    expect(server.seen).toHaveLength(1);
  });

  test("429 and 503 on deploy are refusals and retried", async () => {
    server.queue(
      fail(429, "RATE_LIMITED", {}, { "retry-after": "1" }),
      fail(503, "SERVICE_UNAVAILABLE"),
      ok(makeInstance(), 201),
    );
    await expect(client().deployInstance(deployBody)).resolves.toMatchObject({ id: makeInstance().id });
    expect(server.seen).toHaveLength(3);
    expect(sleeps[0]).toBe(1005);
  });

  test.each([
    ["stop", (c: GpurentalClient) => c.stopInstance("i1")],
    ["start", (c: GpurentalClient) => c.startInstance("i1")],
    ["createApiKey", (c: GpurentalClient) => c.createApiKey({ name: "ci" })],
    ["createBillingOrder", (c: GpurentalClient) => c.createBillingOrder({ amount_micro: 1 })],
  ])("%s is not resent after a drop", async (_name, call) => {
    server.always(drop);
    await expect(call(client())).rejects.toThrow(AmbiguousRequestError);
    expect(server.seen).toHaveLength(1);
  });

  test("503 START_UNAVAILABLE on start is retried", async () => {
    server.queue(fail(503, "START_UNAVAILABLE"), ok(makeInstance({ status: "starting" })));
    await expect(client().startInstance("i1")).resolves.toMatchObject({ status: "starting" });
    expect(server.seen).toHaveLength(2);
  });

  test("a GET that times out is retried, then TimeoutError", async () => {
    server.always(hang);
    const e = await client({ timeoutMs: 50, retry: { maxAttempts: 2, baseDelayMs: 1 } })
      .getInstance("i1")
      .catch((x: unknown) => x);
    expect(e).toBeInstanceOf(TimeoutError);
    expect(server.seen).toHaveLength(2);
  });
});

describe("DELETE reconciliation", () => {
  test("destroy resent after a drop returns the destroyed instance instead of 409", async () => {
    server.queue(
      drop,
      fail(409, "INVALID_STATE"),
      ok(makeInstance({ status: "destroyed", allowed_actions: [], access_token: null })),
    );
    const inst = await client().destroyInstance("i1");
    expect(inst.status).toBe("destroyed");
    expect(server.seen.map((s) => s.method)).toEqual(["DELETE", "DELETE", "GET"]);
  });

  test("a first-try 409 INVALID_STATE on destroy is still an error", async () => {
    server.queue(fail(409, "INVALID_STATE"));
    await expect(client().destroyInstance("i1")).rejects.toMatchObject({ code: "INVALID_STATE" });
    expect(server.seen).toHaveLength(1);
  });

  test("revoke resent after a drop treats 404 as revoked", async () => {
    server.queue(drop, fail(404, "API_KEY_NOT_FOUND"));
    await expect(client().revokeApiKey("k1")).resolves.toBeUndefined();
  });

  test("a 404 on revoke after a 503 is an error: the 503 said the first attempt was not acted on", async () => {
    server.queue(fail(503, "SERVICE_UNAVAILABLE"), fail(404, "API_KEY_NOT_FOUND"));
    await expect(client().revokeApiKey("k1")).rejects.toMatchObject({
      code: "API_KEY_NOT_FOUND",
      status: 404,
    });
    expect(server.seen).toHaveLength(2);
  });

  test("a first-try 404 on revoke is an error", async () => {
    server.queue(fail(404, "API_KEY_NOT_FOUND"));
    await expect(client().revokeApiKey("k1")).rejects.toMatchObject({
      code: "API_KEY_NOT_FOUND",
      status: 404,
    });
  });
});
