import { getEventListeners } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { inspect } from "node:util";
import { Agent } from "undici";
import { version } from "../version";
import { GpurentalClient, type LogLevel } from "./client";
import {
  AmbiguousRequestError,
  ApiError,
  ClientConfigError,
  NetworkError,
  RequestAbortedError,
  ResponseValidationError,
  TimeoutError,
} from "./errors";
import { makeInstance } from "./testing/fixtures";

// Transport-level behaviour (dropped connections, timeouts, odd bodies) against a tiny scripted
// server; behaviour of the real API is tested against the fake backend in client.fake-backend.test.ts.

const TOKEN = `gpr_${"ab12".repeat(12)}`;
const ORG = "00000000-0000-4000-8000-0000000000a1";

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: string;
}

type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void;

class ScriptedServer {
  readonly seen: Seen[] = [];
  private readonly script: Handler[] = [];
  private fallback: Handler = (_req, res) =>
    json(res, 500, { error: { code: "INTERNAL", message: "unscripted" } });
  private server!: Server;
  url = "";

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      let body = "";
      req.on("data", (c: Buffer) => {
        body += c.toString("utf8");
      });
      req.on("end", () => {
        this.seen.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers, body });
        const h = this.script.shift() ?? this.fallback;
        h(req, res, body);
      });
    });
    await new Promise<void>((r) => this.server.listen(0, "127.0.0.1", r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Queues handlers for the next requests, in order. */
  queue(...handlers: Handler[]): this {
    this.script.push(...handlers);
    return this;
  }

  always(h: Handler): this {
    this.fallback = h;
    return this;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}

function json(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "x-request-id": "req-1", ...headers });
  res.end(text);
}

const ok =
  (body: unknown, status = 200): Handler =>
  (_req, res) =>
    json(res, status, body);
const fail =
  (
    status: number,
    code: string,
    extra: Record<string, unknown> = {},
    headers: Record<string, string> = {},
  ): Handler =>
  (_req, res) =>
    json(res, status, { error: { code, message: `${code} happened`, ...extra } }, headers);
const drop: Handler = (req) => req.socket.destroy();
const hang: Handler = () => {};

let server: ScriptedServer;
let agent: Agent;
let sleeps: number[];
let logs: { level: LogLevel; msg: string; fields: Record<string, unknown> }[];

function client(extra: Partial<ConstructorParameters<typeof GpurentalClient>[0]> = {}): GpurentalClient {
  return new GpurentalClient({
    baseUrl: server.url,
    token: TOKEN,
    dispatcher: agent,
    retry: { maxAttempts: 4, baseDelayMs: 10, maxDelayMs: 100, deadlineMs: 30_000 },
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    // Half of each jitter range: a Retry-After of 2 s waits 2005 ms, backoff n waits half its cap.
    random: () => 0.5,
    logger: (level, msg, fields) => logs.push({ level, msg, fields }),
    ...extra,
  });
}

beforeEach(async () => {
  server = new ScriptedServer();
  await server.start();
  // A fresh agent per test: no keep-alive socket outlives the server it was opened to.
  agent = new Agent({ keepAliveTimeout: 10 });
  sleeps = [];
  logs = [];
});

afterEach(async () => {
  await agent.close();
  await server.stop();
});

const deployBody = { offer_id: "o-1", template_id: "t-1", disk_gb: 50 };

describe("construction", () => {
  test.each([
    ["not a url", /baseUrl.*"not a url"/],
    ["ftp://example.com", /baseUrl must use http or https, got "ftp:\/\/example.com"/],
    ["", /baseUrl/],
    ["https://example.com/?x=1", /query or fragment/],
  ])("rejects baseUrl %j naming field and value", (baseUrl, message) => {
    let err: unknown;
    try {
      new GpurentalClient({ baseUrl, token: TOKEN });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ClientConfigError);
    expect((err as ClientConfigError).field).toBe("baseUrl");
    expect((err as Error).message).toMatch(message);
  });

  test("rejects an orgId that is not a UUID, naming the field and the value", () => {
    for (const orgId of ["org-1", "", "00000000-0000-4000-8000-00000000000g"]) {
      let err: unknown;
      try {
        new GpurentalClient({ baseUrl: "https://x.example", token: TOKEN, orgId });
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(ClientConfigError);
      expect((err as ClientConfigError).field).toBe("orgId");
      expect((err as Error).message).toBe(
        `orgId must be an organization ID (a UUID), got ${JSON.stringify(orgId)}`,
      );
    }
  });

  test("rejects an empty token without echoing it", () => {
    expect(() => new GpurentalClient({ baseUrl: "https://x.example", token: "" })).toThrow(/token must be/);
    expect(() => new GpurentalClient({ baseUrl: "https://x.example", token: "bad token" })).toThrow(
      ClientConfigError,
    );
  });

  test("normalises a trailing slash and keeps a path prefix", async () => {
    server.queue(ok({ items: [] }));
    const c = client({ baseUrl: `${server.url}/prefix/` });
    expect(c.baseUrl).toBe(`${server.url}/prefix`);
    await c.listApiKeys();
    expect(server.seen[0]?.url).toBe("/prefix/v1/api-keys");
  });
});

describe("requests", () => {
  test("sends auth, org, user agent, accept and content type", async () => {
    server.queue(ok(makeInstance(), 201));
    const c = client({ orgId: ORG, userAgent: "Terraform/1.9.0" });
    await c.deployInstance(deployBody);
    const s = server.seen[0]!;
    expect(s.method).toBe("POST");
    expect(s.url).toBe("/v1/instances");
    expect(s.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(s.headers["x-org-id"]).toBe(ORG);
    expect(s.headers["user-agent"]).toBe(`gpurental/${version} Terraform/1.9.0`);
    expect(s.headers.accept).toBe("application/json");
    expect(s.headers["content-type"]).toBe("application/json");
    expect(JSON.parse(s.body)).toEqual(deployBody);
  });

  test("GET has no content type and no X-Org-Id unless configured", async () => {
    server.queue(ok({ items: [] }));
    await client().listInstances();
    const s = server.seen[0]!;
    expect(s.headers["content-type"]).toBeUndefined();
    expect(s.headers["x-org-id"]).toBeUndefined();
    expect(s.headers["user-agent"]).toBe(`gpurental/${version}`);
  });

  test.each([
    [
      "listInstances",
      (c: GpurentalClient) => c.listInstances({ include_destroyed: true }),
      "/v1/instances?include_destroyed=true",
    ],
    [
      "getInstanceLogs",
      (c: GpurentalClient) => c.getInstanceLogs("i/1", { tail: 5 }),
      "/v1/instances/i%2F1/logs?tail=5",
    ],
    [
      "listOffers",
      (c: GpurentalClient) => c.listOffers({ gpu_model: "RTX 4090", num_gpus: 2, sort: "price_asc" }),
      "/v1/offers?gpu_model=RTX+4090&num_gpus=2&sort=price_asc",
    ],
    [
      "listTemplates",
      (c: GpurentalClient) => c.listTemplates({ tab: "recommended", mode: "ssh" }),
      "/v1/templates?tab=recommended&mode=ssh",
    ],
    [
      "listTransactions",
      (c: GpurentalClient) => c.listTransactions({ instance_id: "i1", limit: 3 }),
      "/v1/billing/transactions?instance_id=i1&limit=3",
    ],
    ["getSpendDaily", (c: GpurentalClient) => c.getSpendDaily({ days: 7 }), "/v1/billing/spend-daily?days=7"],
  ])("%s builds its path and query", async (_name, call, path) => {
    server.always((_req, res) => json(res, 200, { items: [], lines: [] }));
    await call(client());
    expect(server.seen[0]?.url).toBe(path);
  });

  test("a 204 resolves to undefined", async () => {
    server.queue((_req, res) => {
      res.writeHead(204);
      res.end();
    });
    await expect(client().revokeApiKey("k1")).resolves.toBeUndefined();
    expect(server.seen[0]?.method).toBe("DELETE");
  });

  test("unknown fields are tolerated and dropped", async () => {
    server.queue(ok({ ...makeInstance(), brand_new_field: 1 }));
    const inst = await client().getInstance("i1");
    expect(inst.status).toBe("running");
    expect("brand_new_field" in inst).toBe(false);
  });
});

describe("errors", () => {
  test("coded error with carried fields", async () => {
    server.queue(fail(422, "DISK_TOO_LARGE", { max_disk_gb: 500, request_id: "req-body" }));
    const err = await client()
      .deployInstance({ ...deployBody, disk_gb: 800 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    const e = err as ApiError;
    expect(e.status).toBe(422);
    expect(e.code).toBe("DISK_TOO_LARGE");
    expect(e.max_disk_gb).toBe(500);
    expect("balance_micro" in e).toBe(false);
    expect(e.requestId).toBe("req-1");
    expect(e.endpoint).toBe("POST /v1/instances");
    expect(e.message).toContain("DISK_TOO_LARGE");
    expect(server.seen).toHaveLength(1);
  });

  test("every carried field becomes a typed property", async () => {
    server.queue(
      fail(402, "INSUFFICIENT_BALANCE", {
        balance_micro: 1,
        required_micro: 2,
        available_disk_gb: 3,
        requested_disk_gb: 4,
        next_maintenance: "2026-11-22T09:00:00.000Z",
        limit: 25,
      }),
    );
    const e = (await client()
      .deployInstance(deployBody)
      .catch((x: unknown) => x)) as ApiError;
    expect([e.balance_micro, e.required_micro, e.available_disk_gb, e.requested_disk_gb, e.limit]).toEqual([
      1, 2, 3, 4, 25,
    ]);
    expect(e.next_maintenance).toBe("2026-11-22T09:00:00.000Z");
  });

  test("VALIDATION_ERROR carries field and value", async () => {
    server.queue(fail(422, "VALIDATION_ERROR", { field: "tail", value: 5000, limit: 1000 }));
    const e = (await client()
      .getInstanceLogs("i1", { tail: 5000 })
      .catch((x: unknown) => x)) as ApiError;
    expect(e.field).toBe("tail");
    expect(e.value).toBe(5000);
    expect(e.limit).toBe(1000);
    expect(e.endpoint).toBe("GET /v1/instances/{id}/logs");
  });

  test.each([
    ["an HTML body", "text/html", "<html>bad gateway</html>", 404, "NOT_FOUND"],
    ["an empty body", "text/plain", "", 409, "CONFLICT"],
    ["JSON without error", "application/json", '{"detail":"nope"}', 403, "FORBIDDEN"],
    ["an unknown status", "text/plain", "", 418, "HTTP_418"],
  ])("tolerates %s", async (_what, type, body, status, code) => {
    server.queue((_req, res) => {
      res.writeHead(status, { "content-type": type });
      res.end(body);
    });
    const e = (await client()
      .getInstance("i1")
      .catch((x: unknown) => x)) as ApiError;
    expect(e).toBeInstanceOf(ApiError);
    expect(e.status).toBe(status);
    expect(e.code).toBe(code);
    expect(e.requestId).toBeUndefined();
  });

  test("a response that does not fit names the endpoint and the field", async () => {
    server.queue(ok({ ...makeInstance(), status: "exploded" }));
    const e = (await client()
      .getInstance("i1")
      .catch((x: unknown) => x)) as ResponseValidationError;
    expect(e).toBeInstanceOf(ResponseValidationError);
    expect(e.endpoint).toBe("GET /v1/instances/{id}");
    expect(e.issues[0]?.path).toBe("status");
    expect(e.message).toMatch(/^GET \/v1\/instances\/\{id\}: .* at status/);
  });

  test("a missing contract field in a list item is reported with its index", async () => {
    const { ssh_port: _drop, ...noPort } = makeInstance();
    server.queue(ok({ items: [makeInstance(), noPort] }));
    const e = (await client()
      .listInstances()
      .catch((x: unknown) => x)) as ResponseValidationError;
    expect(e.endpoint).toBe("GET /v1/instances");
    expect(e.issues.map((i) => i.path)).toContain("items.1.ssh_port");
  });

  test("a 2xx body that is not JSON is a validation error", async () => {
    server.queue((_req, res) => {
      res.writeHead(200);
      res.end("<html>");
    });
    await expect(client().getMe()).rejects.toThrow(ResponseValidationError);
  });
});

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

describe("cancellation", () => {
  test("an aborted signal cancels the request in flight", async () => {
    server.always(hang);
    const ac = new AbortController();
    const p = client().getInstance("i1", { signal: ac.signal });
    setTimeout(() => ac.abort(), 50);
    const e = await p.catch((x: unknown) => x);
    expect(e).toBeInstanceOf(RequestAbortedError);
    expect((e as Error).name).toBe("AbortError");
  });

  test("a deploy aborted in flight is reported as aborted, not as a failed connection", async () => {
    server.always(hang);
    const ac = new AbortController();
    const p = client().deployInstance(deployBody, { signal: ac.signal });
    setTimeout(() => ac.abort(), 50);
    const e = await p.catch((x: unknown) => x);
    expect(e).toBeInstanceOf(RequestAbortedError);
    expect(server.seen).toHaveLength(1);
    expect(logs.filter((l) => l.msg === "connection failed")).toEqual([]);
  });

  test("an abort during a retry wait stops retrying", async () => {
    server.always(fail(503, "SERVICE_UNAVAILABLE"));
    const ac = new AbortController();
    const c = client({
      sleep: async () => {
        ac.abort();
        throw new Error("aborted");
      },
    });
    await expect(c.listOffers(undefined, { signal: ac.signal })).rejects.toThrow(RequestAbortedError);
    expect(server.seen).toHaveLength(1);
  });

  test("calls leave no listeners on the long-lived client signal", async () => {
    const ac = new AbortController();
    server.always(ok({ items: [] }));
    const c = client({ signal: ac.signal });
    for (let i = 0; i < 20; i++) await c.listOffers();
    await c.listOffers(undefined, { signal: new AbortController().signal });
    expect(getEventListeners(ac.signal, "abort")).toHaveLength(0);
  });

  test("the client-wide signal cancels every call", async () => {
    const ac = new AbortController();
    ac.abort();
    server.always(ok({ items: [] }));
    await expect(client({ signal: ac.signal }).listOffers()).rejects.toThrow(RequestAbortedError);
    expect(server.seen).toHaveLength(0);
  });

  test("a call that outlives the client's stop goes on, bounded by its own signal; without one it stops", async () => {
    const stop = new AbortController();
    stop.abort();
    server.always(ok({ items: [] }));
    const c = client({ signal: stop.signal });
    const own = new AbortController();
    await expect(c.listOffers(undefined, { signal: own.signal, outlivesStop: true })).resolves.toEqual([]);
    expect(server.seen).toHaveLength(1);
    await expect(c.listOffers(undefined, { outlivesStop: true })).rejects.toThrow(RequestAbortedError);
    own.abort();
    await expect(c.listOffers(undefined, { signal: own.signal, outlivesStop: true })).rejects.toThrow(
      RequestAbortedError,
    );
    expect(server.seen).toHaveLength(1);
  });
});

describe("credentials never leak", () => {
  function renderings(err: unknown): string[] {
    const e = err as Error;
    return [
      String(e),
      e.message,
      e.stack ?? "",
      inspect(e, { depth: 10, showHidden: true }),
      JSON.stringify(e),
    ];
  }

  test("not in errors, even when the server echoes the token", async () => {
    server.queue(
      fail(401, "TOKEN_INVALID", { token: TOKEN, hint: `Authorization: Bearer ${TOKEN}` }),
      (req) => req.socket.destroy(),
      (_req, res) => {
        res.writeHead(502, { "content-type": "text/plain" });
        res.end(`upstream rejected Bearer ${TOKEN}`);
      },
      ok({ ...makeInstance(), status: TOKEN }),
    );
    const c = client({ retry: { maxAttempts: 1 } });
    const errors = [
      await c.getInstance("i1").catch((x: unknown) => x),
      await c.getInstance("i1").catch((x: unknown) => x),
      await c.getInstance("i1").catch((x: unknown) => x),
      await c.getInstance("i1").catch((x: unknown) => x),
    ];
    expect(errors[0]).toBeInstanceOf(ApiError);
    expect(errors[1]).toBeInstanceOf(NetworkError);
    expect(errors[2]).toBeInstanceOf(ApiError);
    expect(errors[3]).toBeInstanceOf(ResponseValidationError);
    for (const err of errors) {
      for (const text of renderings(err)) expect(text).not.toContain(TOKEN);
    }
    expect(renderings(errors[2]).join("\n")).toContain("[REDACTED]");
  });

  test("not in logs", async () => {
    server.queue(fail(503, "SERVICE_UNAVAILABLE", { message_token: TOKEN }), drop, ok(makeInstance()));
    await client().getInstance("i1");
    expect(logs.length).toBeGreaterThan(3);
    const all = JSON.stringify(logs);
    expect(all).not.toContain(TOKEN);
    expect(all).toContain(`"authorization":"[REDACTED]"`);
    expect(logs.some((l) => l.msg === "retrying")).toBe(true);
  });

  test("not in the client's own renderings", () => {
    const c = client();
    expect(inspect(c, { showHidden: true, depth: 5 })).not.toContain(TOKEN);
    expect(JSON.stringify(c)).not.toContain(TOKEN);
    expect(String(Object.values(c))).not.toContain(TOKEN);
  });
});
