import { request } from "node:http";
import { connect } from "node:net";
import { type FakeBackend, startFakeBackend } from "../../src/fake-backend";
import { call, createKey, deploy, errorOf, runningInstance, useFake } from "./helpers";

describe("robustness: one error shape for every bad request", () => {
  const { fb, creds } = useFake();
  const admin = () => creds().admin_session_token;

  test("malformed JSON is 400 INVALID_JSON with request_id repeating X-Request-Id", async () => {
    const a = await call(fb(), "POST", "/v1/instances", { token: admin(), rawBody: '{"offer_id": ' });
    expect(a.status).toBe(400);
    expect(errorOf(a)).toMatchObject({ code: "INVALID_JSON", message: expect.any(String) });
    expect(errorOf(a).request_id).toBe(a.headers.get("x-request-id"));
  });

  test("wrong types are 422 VALIDATION_ERROR naming the field", async () => {
    const a = await deploy(fb(), creds(), admin(), { offer_id: 42 });
    expect(errorOf(a)).toMatchObject({ code: "VALIDATION_ERROR", field: "offer_id", value: 42 });
    const arr = await call(fb(), "POST", "/v1/instances", { token: admin(), body: [1, 2] });
    expect(errorOf(arr)).toMatchObject({ code: "VALIDATION_ERROR", field: "body" });
    const missing = await call(fb(), "POST", "/v1/instances", { token: admin() });
    expect(errorOf(missing)).toMatchObject({ code: "VALIDATION_ERROR", field: "body" });
    const env = await deploy(fb(), creds(), admin(), {
      env_overrides: [{ key: "A", value: 1, secret: false }],
    });
    expect(errorOf(env)).toMatchObject({ code: "VALIDATION_ERROR", field: "env_overrides.0.value" });
    // An env value may be a secret whatever its type: it is never repeated back.
    const secretEnv = await deploy(fb(), creds(), admin(), {
      env_overrides: [{ key: "PIN", value: 48151623, secret: true }],
    });
    expect(errorOf(secretEnv)).not.toHaveProperty("value");
    expect(JSON.stringify(secretEnv.body)).not.toContain("48151623");
  });

  test("a body over 1 MiB is 413 PAYLOAD_TOO_LARGE", async () => {
    const a = await call(fb(), "POST", "/v1/api-keys", {
      token: admin(),
      rawBody: JSON.stringify({ name: "x".repeat(1024 * 1024 + 10) }),
    });
    expect(a.status).toBe(413);
    expect(errorOf(a).code).toBe("PAYLOAD_TOO_LARGE");
  });

  test("a body without a JSON content type is 415 UNSUPPORTED_MEDIA_TYPE", async () => {
    const a = await call(fb(), "POST", "/v1/api-keys", {
      token: admin(),
      rawBody: "name=x",
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect([a.status, errorOf(a).code]).toEqual([415, "UNSUPPORTED_MEDIA_TYPE"]);
  });

  test("unknown routes are 404 NOT_FOUND; known paths with another method are 405 METHOD_NOT_ALLOWED", async () => {
    const a = await call(fb(), "GET", "/v1/nothing-here", { token: admin() });
    expect([a.status, errorOf(a).code]).toEqual([404, "NOT_FOUND"]);
    const b = await call(fb(), "PATCH", "/v1/instances/00000000-0000-4000-8000-000000000001", {
      token: admin(),
    });
    expect([b.status, errorOf(b).code]).toEqual([405, "METHOD_NOT_ALLOWED"]);
    expect(b.headers.get("allow")).toContain("GET");
    // Trailing slashes are not normalised, and an empty id is no id.
    for (const [method, path] of [
      ["GET", "/v1/instances/"],
      ["DELETE", "/v1/instances/"],
      ["GET", "/v1/api-keys/"],
    ]) {
      const c = await call(fb(), method!, path!, { token: admin() });
      expect([path, c.status, errorOf(c).code]).toEqual([path, 404, "NOT_FOUND"]);
    }
  });

  test("POST stop with a JSON content type and an empty body is accepted", async () => {
    const id = await runningInstance(fb(), creds());
    const a = await call(fb(), "POST", `/v1/instances/${id}/stop`, {
      token: admin(),
      headers: { "content-type": "application/json" },
      rawBody: "",
    });
    expect(a.status).toBe(200);
  });

  test("documented order: the token, X-Org-Id and the route's permission come before an unreadable body", async () => {
    const bad = { rawBody: '{"name": ' };
    const noToken = await call(fb(), "POST", "/v1/api-keys", bad);
    expect([noToken.status, errorOf(noToken).code]).toEqual([401, "TOKEN_INVALID"]);
    const otherOrg = await call(fb(), "POST", "/v1/api-keys", {
      ...bad,
      token: admin(),
      headers: { "x-org-id": "00000000-0000-4000-8000-00000000ffff" },
    });
    expect([otherOrg.status, errorOf(otherOrg).code]).toEqual([403, "ORG_MISMATCH"]);
    const { secret } = await createKey(fb(), admin());
    const viaKey = await call(fb(), "POST", "/v1/api-keys", { ...bad, token: secret });
    expect([viaKey.status, errorOf(viaKey).code]).toEqual([403, "ADMIN_REQUIRED"]);
    const member = await call(fb(), "POST", "/v1/billing/orders", {
      rawBody: "amount=1",
      headers: { "content-type": "text/plain" },
      token: creds().member_session_token,
    });
    expect([member.status, errorOf(member).code]).toEqual([403, "ADMIN_REQUIRED"]);
    // Once those pass, the body itself is refused.
    const admins = await call(fb(), "POST", "/v1/api-keys", { ...bad, token: admin() });
    expect([admins.status, errorOf(admins).code]).toEqual([400, "INVALID_JSON"]);
    const form = await call(fb(), "POST", "/v1/api-keys", {
      rawBody: "name=x",
      headers: { "content-type": "text/plain" },
      token: admin(),
    });
    expect([form.status, errorOf(form).code]).toEqual([415, "UNSUPPORTED_MEDIA_TYPE"]);
  });

  test("a validation message names the field, the limit and the value", async () => {
    const a = await deploy(fb(), creds(), admin(), { disk_gb: 5 });
    expect(errorOf(a)).toMatchObject({ field: "disk_gb", limit: 10, value: 5 });
    expect(errorOf(a).message).toMatch(/^disk_gb: .*>=10; got 5$/);
    const order = await call(fb(), "POST", "/v1/billing/orders", {
      token: admin(),
      body: { amount_micro: 1e300 },
    });
    expect(errorOf(order)).toMatchObject({ field: "amount_micro", limit: 1_000_000_000_000 });
  });

  test("a refused value is repeated back only when it is a short scalar that holds no credential", async () => {
    const refused = async (over: Record<string, unknown>) =>
      errorOf(await deploy(fb(), creds(), admin(), over));
    expect(await refused({ disk_gb: true })).toMatchObject({ field: "disk_gb", value: true });
    expect((await refused({ disk_gb: true })).message).toMatch(/^disk_gb: .*; got true$/);
    expect(await refused({ offer_id: null })).toMatchObject({ field: "offer_id", value: null });
    const longest = "x".repeat(64);
    expect(await refused({ offer_id: longest })).toMatchObject({ field: "offer_id", value: longest });
    // Longer values, and values holding a credential prefix anywhere, are named but not repeated.
    for (const offer_id of ["x".repeat(65), `gpr_${"a".repeat(48)}`, "my gps_token"]) {
      const e = await refused({ offer_id });
      expect(e).toMatchObject({ code: "VALIDATION_ERROR", field: "offer_id" });
      expect(e).not.toHaveProperty("value");
      expect(e.message).toBe("offer_id: must be a UUID");
    }
    // An env entry's key is repeated; its value never is, whatever it is.
    expect(await refused({ env_overrides: [{ key: "", value: "v", secret: false }] })).toMatchObject({
      field: "env_overrides.0.key",
      value: "",
    });
    const env = await refused({ env_overrides: [{ key: "K", value: 7, secret: false }] });
    expect(env).not.toHaveProperty("value");
    expect(env.message).toMatch(/^env_overrides\.0\.value: [^;]+$/);
  });

  test("include_destroyed takes true, 1, false or 0, and nothing else", async () => {
    const id = await runningInstance(fb(), creds());
    await call(fb(), "DELETE", `/v1/instances/${id}`, { token: admin() });
    expect(fb().instance(id)?.status).toBe("destroyed");
    const listed = async (q: string) =>
      (await call(fb(), "GET", `/v1/instances${q}`, { token: admin() })).body.items.map(
        (i: { id: string }) => i.id,
      );
    expect(await listed("?include_destroyed=true")).toEqual([id]);
    expect(await listed("?include_destroyed=1")).toEqual([id]);
    expect(await listed("?include_destroyed=false")).toEqual([]);
    expect(await listed("?include_destroyed=0")).toEqual([]);
    expect(await listed("")).toEqual([]);
    const bad = await call(fb(), "GET", "/v1/instances?include_destroyed=yes", { token: admin() });
    expect(errorOf(bad)).toMatchObject({
      code: "VALIDATION_ERROR",
      field: "include_destroyed",
      value: "yes",
    });
  });

  test("an invite names an email or a phone", async () => {
    const none = await call(fb(), "POST", "/v1/orgs/current/invites", {
      token: admin(),
      body: { role: "member" },
    });
    expect([none.status, errorOf(none).code, errorOf(none).message]).toEqual([
      422,
      "VALIDATION_ERROR",
      "body: email or phone is required",
    ]);
    for (const body of [{ email: "new@demo.example" }, { phone: "+4912345678" }]) {
      const ok = await call(fb(), "POST", "/v1/orgs/current/invites", { token: admin(), body });
      expect(ok.status).toBe(201);
    }
  });

  test("a query parameter given twice is a VALIDATION_ERROR saying so", async () => {
    const a = await call(fb(), "GET", "/v1/offers?num_gpus=1&num_gpus=2", { token: admin() });
    expect([a.status, errorOf(a).code, errorOf(a).field]).toEqual([422, "VALIDATION_ERROR", "num_gpus"]);
    expect(errorOf(a).message).toBe("num_gpus: given 2 times; give it once");
  });

  test("a path that is not valid URL encoding, or an absurdly long id, answers in the one error shape", async () => {
    const a = await call(fb(), "GET", "/v1/instances/%E0%A4%A", { token: admin() });
    expect([a.status, errorOf(a).code]).toEqual([400, "BAD_REQUEST"]);
    expect(errorOf(a).request_id).toBe(a.headers.get("x-request-id"));
    const long = await call(fb(), "GET", `/v1/instances/${"a".repeat(500)}`, { token: admin() });
    expect([long.status, errorOf(long).code]).toEqual([404, "INSTANCE_NOT_FOUND"]);
    const absurd = await call(fb(), "GET", `/v1/instances/${"a".repeat(5000)}`, { token: admin() });
    expect([absurd.status, errorOf(absurd).code]).toEqual([404, "NOT_FOUND"]);
  });

  test.each(["__proto__", "constructor", "toString"])(
    "an id named like an object member (%s) is unknown on every by-id route",
    async (id) => {
      const cases: [string, string, string][] = [
        ["GET", `/v1/offers/${id}`, "OFFER_NOT_FOUND"],
        ["GET", `/v1/templates/${id}`, "TEMPLATE_NOT_FOUND"],
        ["POST", `/v1/templates/${id}/duplicate`, "TEMPLATE_NOT_FOUND"],
        ["GET", `/v1/instances/${id}`, "INSTANCE_NOT_FOUND"],
        ["POST", `/v1/instances/${id}/stop`, "INSTANCE_NOT_FOUND"],
        ["DELETE", `/v1/instances/${id}`, "INSTANCE_NOT_FOUND"],
        ["GET", `/v1/instances/${id}/logs`, "INSTANCE_NOT_FOUND"],
        ["DELETE", `/v1/api-keys/${id}`, "API_KEY_NOT_FOUND"],
      ];
      for (const [method, path, code] of cases) {
        const a = await call(fb(), method, path, { token: admin() });
        expect([method, path, a.status, errorOf(a).code]).toEqual([method, path, 404, code]);
      }
    },
  );

  test("nothing crashes the server: a burst of garbage, then a normal request", async () => {
    const garbage = ["{", "[", "null", '"str"', "1e999", '{"disk_gb":{}}', "\u0000"];
    for (const raw of garbage) {
      const a = await call(fb(), "POST", "/v1/instances", { token: admin(), rawBody: raw });
      expect(a.status).toBeGreaterThanOrEqual(400);
      expect(a.status).toBeLessThan(500);
      expect(typeof errorOf(a).code).toBe("string");
    }
    expect((await call(fb(), "GET", "/v1/offers", { token: admin() })).status).toBe(200);
  });
});

/** One answer read from a raw socket. */
interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  /** The bytes after the headers, up to Content-Length (fewer if the connection ended first). */
  body: Buffer;
}

/** Splits what a connection received into answers, each body cut at its Content-Length. */
function parseAnswers(all: Buffer): RawAnswer[] {
  const answers: RawAnswer[] = [];
  let at = 0;
  while (at < all.length) {
    const split = all.indexOf("\r\n\r\n", at);
    if (split < 0)
      throw new Error(`not an HTTP answer: ${JSON.stringify(all.subarray(at).toString("latin1"))}`);
    const [statusLine, ...lines] = all.subarray(at, split).toString("latin1").split("\r\n");
    const headers: Record<string, string> = {};
    for (const l of lines) {
      const i = l.indexOf(":");
      headers[l.slice(0, i).toLowerCase()] = l.slice(i + 1).trim();
    }
    const length = Number(headers["content-length"] ?? 0);
    answers.push({
      status: Number(statusLine?.split(" ")[1]),
      headers,
      body: all.subarray(split + 4, split + 4 + length),
    });
    at = split + 4 + length;
  }
  return answers;
}

/**
 * Writes `parts` on a fresh connection, `gapMs` apart, and collects the answers until the server
 * closes. With `readLast` the client reads nothing until it has written everything, as many HTTP
 * clients do. `ended` is true when the server closed cleanly (FIN), not with a reset.
 */
function rawExchange(
  url: string,
  parts: (string | Buffer)[],
  opts: { gapMs?: number; readLast?: boolean } = {},
): Promise<{ answers: RawAnswer[]; ended: boolean }> {
  const { port, hostname } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    let ended = false;
    socket.on("data", (d) => chunks.push(d));
    socket.on("end", () => {
      ended = true;
    });
    socket.on("error", () => {});
    if (opts.readLast) socket.pause();
    socket.on("connect", async () => {
      for (const p of parts) {
        if (socket.destroyed) break;
        await new Promise<void>((r) => socket.write(p, () => r()));
        if (opts.gapMs) await new Promise((r) => setTimeout(r, opts.gapMs));
      }
      socket.resume();
    });
    const giveUp = setTimeout(() => socket.destroy(), 15_000);
    socket.on("close", () => {
      clearTimeout(giveUp);
      resolve({ answers: parseAnswers(Buffer.concat(chunks)), ended });
    });
  });
}

/**
 * The only answer of an exchange is in the documented shape, its body exactly as long as its
 * Content-Length, and the connection closed cleanly; returns the message.
 */
function expectShaped(x: { answers: RawAnswer[]; ended: boolean }, status: number, code: string): string {
  expect(x.answers).toHaveLength(1);
  expect(x.ended).toBe(true);
  return expectAnswer(x.answers[0] as RawAnswer, status, code);
}

function expectAnswer(a: RawAnswer, status: number, code: string): string {
  expect(a.status).toBe(status);
  expect(a.body.length).toBe(Number(a.headers["content-length"]));
  expect(a.headers["content-type"]).toMatch(/^application\/json/);
  expect(a.headers["x-request-id"]).toMatch(/^[0-9a-f-]{36}$/);
  const body = JSON.parse(a.body.toString("utf8"));
  expect(body.error).toEqual({ code, message: expect.any(String), request_id: a.headers["x-request-id"] });
  return body.error.message;
}

describe("requests the HTTP parser refuses or that stall: the one error shape on a raw socket", () => {
  let fb: FakeBackend;
  let token = "";
  beforeAll(async () => {
    // Short limits so that the stalled cases answer quickly (defaults: 10 s and 30 s).
    fb = await startFakeBackend({ seed: "demo", requestTimeouts: { headersMs: 400, requestMs: 800 } });
    token = fb.credentials?.admin_session_token ?? "";
  });
  afterAll(() => fb.close());
  const deployHead = (extra: string) =>
    `POST /v1/instances HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\n${extra}\r\n`;
  const deployJson = () =>
    JSON.stringify({
      offer_id: fb.credentials?.offer_id,
      template_id: fb.credentials?.template_id,
      disk_gb: 50,
    });

  test("a 70 KB header is 431 HEADERS_TOO_LARGE, whole even for a client that reads only after writing", async () => {
    const head = `GET /v1/offers HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(20 * 1024)}`;
    const rest = `${"a".repeat(50 * 1024)}\r\n\r\n`;
    const eager = await rawExchange(fb.url, [head + rest]);
    expect(expectShaped(eager, 431, "HEADERS_TOO_LARGE")).toBe("The request line and headers exceed 16 KiB");
    // The server refuses at 16 KiB while the client is still sending: it must drain the rest, not
    // reset the connection under an answer the client has not read yet.
    const lazy = await rawExchange(fb.url, [head, rest.repeat(20)], { gapMs: 100, readLast: true });
    expectShaped(lazy, 431, "HEADERS_TOO_LARGE");
  });

  test("bad chunked encoding is 400 BAD_REQUEST and creates nothing", async () => {
    const a = await rawExchange(fb.url, [
      `${deployHead("Transfer-Encoding: chunked\r\n")}zz\r\n{}\r\n0\r\n\r\n`,
    ]);
    expect(expectShaped(a, 400, "BAD_REQUEST")).toBe(
      "The request is not valid HTTP/1.1: Invalid character in chunk size",
    );
    const json = deployJson();
    // A chunk longer than its announced size.
    const b = await rawExchange(fb.url, [
      `${deployHead("Transfer-Encoding: chunked\r\n")}2\r\n${json}\r\n0\r\n\r\n`,
    ]);
    expectShaped(b, 400, "BAD_REQUEST");
    expect(fb.listInstances()).toEqual([]);
  });

  test("Content-Length with Transfer-Encoding is 400 BAD_REQUEST saying so, and creates nothing", async () => {
    const json = deployJson();
    const a = await rawExchange(fb.url, [
      `${deployHead(`Content-Length: ${json.length}\r\nTransfer-Encoding: chunked\r\n`)}${json.length.toString(16)}\r\n${json}\r\n0\r\n\r\n`,
    ]);
    expect(expectShaped(a, 400, "BAD_REQUEST")).toContain("Transfer-Encoding");
    expect(fb.listInstances()).toEqual([]);
  });

  test("TLS bytes on the plain HTTP port are 400 BAD_REQUEST naming the mistake", async () => {
    // The start of a TLS 1.2 ClientHello record.
    const hello = Buffer.from(`160301020001000001fc0303${"00".repeat(64)}`, "hex");
    const a = await rawExchange(fb.url, [hello]);
    expect(expectShaped(a, 400, "BAD_REQUEST")).toBe(
      "This port speaks plain HTTP; TLS was sent to it (use http://, not https://)",
    );
  });

  test("a body over 1 MiB is 413 in the one shape, whole even for a client that reads only after writing", async () => {
    const head = `POST /v1/api-keys HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\n`;
    const chunk = "a".repeat(100_000);
    const sized = await rawExchange(
      fb.url,
      [`${head}Content-Length: 3000000\r\n\r\n`, ...Array(30).fill(chunk)],
      {
        gapMs: 10,
        readLast: true,
      },
    );
    expect(expectShaped(sized, 413, "PAYLOAD_TOO_LARGE")).toBe("The request body exceeds 1 MiB");
    const chunked = await rawExchange(
      fb.url,
      [
        `${head}Transfer-Encoding: chunked\r\n\r\n`,
        ...Array(15).fill(`${chunk.length.toString(16)}\r\n${chunk}\r\n`),
        "0\r\n\r\n",
      ],
      { gapMs: 10, readLast: true },
    );
    expectShaped(chunked, 413, "PAYLOAD_TOO_LARGE");
  });

  test("an HTTP/1.1 request without Host is 400 BAD_REQUEST in the one shape", async () => {
    const a = await rawExchange(fb.url, [
      `GET /v1/offers HTTP/1.1\r\nAuthorization: Bearer ${token}\r\nConnection: close\r\n\r\n`,
    ]);
    expect(expectShaped(a, 400, "BAD_REQUEST")).toBe("An HTTP/1.1 request needs a Host header");
  });

  test("an Expect other than 100-continue is 417 EXPECTATION_FAILED in the one shape, and creates nothing", async () => {
    const json = deployJson();
    const a = await rawExchange(fb.url, [
      `${deployHead(`Content-Length: ${json.length}\r\nExpect: fancy\r\n`)}`,
      json,
    ]);
    expect(expectShaped(a, 417, "EXPECTATION_FAILED")).toBe("Only Expect: 100-continue is supported");
    expect(fb.listInstances()).toEqual([]);
  });

  test("bytes the parser refuses after a request it read wait for that request's answer, whole, then get theirs", async () => {
    fb.addFault({ route: "GET /v1/catalog/status", kind: "latency", latencyMs: 300, times: 1 });
    const a = await rawExchange(fb.url, [
      `GET /v1/catalog/status HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\n\r\nNOT HTTP AT ALL\r\n\r\n`,
    ]);
    expect(a.answers.map((x) => x.status)).toEqual([200, 400]);
    const first = a.answers[0] as RawAnswer;
    expect(first.body.length).toBe(Number(first.headers["content-length"]));
    expect(JSON.parse(first.body.toString("utf8"))).toMatchObject({ status: "ok" });
    expectAnswer(a.answers[1] as RawAnswer, 400, "BAD_REQUEST");
    expect(a.ended).toBe(true);
  });

  test("headers that never end get 408 REQUEST_TIMEOUT", async () => {
    const a = await rawExchange(fb.url, ["GET /v1/offers HTTP/1.1\r\nHost: x\r\n"]);
    expect(expectShaped(a, 408, "REQUEST_TIMEOUT")).toBe(
      "The request was not complete in time (headers within 400 ms, the whole request within 800 ms)",
    );
  });

  test("a body that never ends gets 408 REQUEST_TIMEOUT and creates nothing", async () => {
    const json = deployJson();
    const a = await rawExchange(fb.url, [
      `${deployHead(`Content-Length: ${json.length}\r\n`)}${json.slice(0, 20)}`,
    ]);
    expectShaped(a, 408, "REQUEST_TIMEOUT");
    expect(fb.listInstances()).toEqual([]);
  });

  test("a request that arrives while the fake shuts down is 503 in the one shape", async () => {
    const other = await startFakeBackend({ seed: "demo" });
    other.addFault({ route: "GET /v1/catalog/status", kind: "latency", latencyMs: 1500, times: 1 });
    const auth = `Authorization: Bearer ${other.credentials?.admin_session_token}\r\n`;
    const first = `GET /v1/catalog/status HTTP/1.1\r\nHost: x\r\n${auth}\r\n`;
    // The second request comes on the same connection once closing has begun.
    const second = `GET /v1/offers HTTP/1.1\r\nHost: x\r\n${auth}Connection: close\r\n\r\n`;
    const closed = new Promise((r) => setTimeout(r, 300)).then(() => other.close());
    const x = await rawExchange(other.url, [first, second], { gapMs: 600 });
    await closed;
    expect(x.answers.map((a) => a.status)).toEqual([200, 503]);
    expectAnswer(x.answers[1] as RawAnswer, 503, "SERVICE_UNAVAILABLE");
  });

  test("after all of that the server still answers", async () => {
    const a = await call(fb, "GET", "/v1/offers", { token });
    expect(a.status).toBe(200);
  });
});

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

describe("control API over HTTP", () => {
  const { fb } = useFake();
  const ctl = (method: string, path: string, body?: unknown, token?: string) =>
    call(fb(), method, `/_control${path}`, {
      body,
      headers: { "x-control-token": token ?? fb().controlToken },
    });

  test("a template env value of the wrong type is refused without being repeated back", async () => {
    const a = await ctl("POST", "/templates", {
      name: "t",
      env: [{ key: "PIN", value: 48151623, secret: true }],
    });
    expect(errorOf(a)).toMatchObject({ code: "VALIDATION_ERROR", field: "env.0.value" });
    expect(errorOf(a)).not.toHaveProperty("value");
    expect(JSON.stringify(a.body)).not.toContain("48151623");
    // Its key, which is no secret, is.
    const b = await ctl("POST", "/templates", { name: "t", env: [{ key: 7, value: "v" }] });
    expect(errorOf(b)).toMatchObject({ field: "env.0.key", value: 7 });
  });

  test("needs X-Control-Token", async () => {
    const a = await ctl("POST", "/reset", undefined, "wrong");
    expect([a.status, errorOf(a).code]).toEqual([401, "CONTROL_TOKEN_INVALID"]);
    const b = await call(fb(), "POST", "/_control/reset");
    expect(b.status).toBe(401);
  });

  test("seed, behaviour, transitions, clock, faults, balance and member removal", async () => {
    const seeded = await ctl("POST", "/seed/demo");
    expect(seeded.status).toBe(200);
    const c = seeded.body;
    expect(c.base_url).toBe(fb().url);
    expect((await ctl("PUT", "/transitions", { mode: "manual" })).status).toBe(200);
    const d = await call(fb(), "POST", "/v1/instances", {
      token: c.admin_session_token,
      body: { offer_id: c.offer_id, template_id: c.template_id, disk_gb: 20 },
    });
    expect(d.status).toBe(201);
    expect(
      (await call(fb(), "GET", `/v1/instances/${d.body.id}`, { token: c.admin_session_token })).body.status,
    ).toBe("creating");
    expect((await ctl("POST", `/instances/${d.body.id}/complete`)).body).toEqual({ completed: true });
    expect(
      (await call(fb(), "GET", `/v1/instances/${d.body.id}`, { token: c.admin_session_token })).body.status,
    ).toBe("running");
    const env = await ctl("GET", `/instances/${d.body.id}/env`);
    expect(env.body.env).toEqual(expect.arrayContaining([{ key: "GPU_COUNT", value: "1", secret: false }]));
    const beh = await ctl("PUT", `/machines/${"00000000-0000-4000-8000-000000000031"}/behaviour`, {
      unreachable: true,
    });
    expect(beh.body.unreachable).toBe(true);
    const bad = await ctl("PUT", `/machines/${"00000000-0000-4000-8000-000000000031"}/behaviour`, {
      nonsense: 1,
    });
    expect(bad.status).toBe(422);
    const before = Date.parse((await ctl("GET", "/clock")).body.now);
    const adv = await ctl("POST", "/clock/advance", { ms: 3_600_000 });
    expect(Date.parse(adv.body.now) - before).toBeGreaterThanOrEqual(3_600_000);
    const f = await ctl("POST", "/faults", { route: "GET /v1/offers", kind: "status", status: 502 });
    expect(f.status).toBe(201);
    expect((await call(fb(), "GET", "/v1/offers", { token: c.admin_session_token })).status).toBe(502);
    expect((await ctl("DELETE", `/faults/${f.body.id}`)).body).toEqual({ removed: true });
    expect((await ctl("PUT", `/orgs/${c.org_id}/balance`, { balance_micro: 123 })).body).toEqual({
      balance_micro: 123,
    });
    const top = await ctl("POST", `/orgs/${c.org_id}/top-up`, { amount_micro: 100_000_000 });
    expect(top.body.balance_micro).toBeGreaterThan(0);
    const key = await createKey(fb(), c.member_session_token);
    expect((await ctl("DELETE", `/orgs/${c.org_id}/members/${c.member_user_id}`)).body).toEqual({
      removed: true,
    });
    expect((await call(fb(), "GET", "/v1/offers", { token: key.secret })).status).toBe(401);
    expect((await ctl("POST", `/offers/${c.offer_id}/lose-next-race`)).status).toBe(200);
    const race = await call(fb(), "POST", "/v1/instances", {
      token: c.admin_session_token,
      body: { offer_id: c.offer_id, template_id: c.template_id, disk_gb: 20 },
    });
    expect(errorOf(race).code).toBe("OFFER_UNAVAILABLE");
    expect((await ctl("POST", "/reset")).status).toBe(200);
    expect((await call(fb(), "GET", "/v1/offers", { token: c.admin_session_token })).status).toBe(401);
  });

  test("PATCH /offers/:id moves the market: sell out, reprice, maintenance, withdraw", async () => {
    const c = fb().credentials!;
    const token = c.admin_session_token;
    const listed = async () =>
      (await call(fb(), "GET", "/v1/offers", { token })).body.items.map((o: { id: string }) => o.id);
    const sold = await ctl("PATCH", `/offers/${c.offer_id}`, { free_units: 0 });
    expect(sold.body).toMatchObject({ id: c.offer_id, free_units: 0, availability: "available" });
    expect(await listed()).not.toContain(c.offer_id);
    const deploy = await call(fb(), "POST", "/v1/instances", {
      token,
      body: { offer_id: c.offer_id, template_id: c.template_id, disk_gb: 20 },
    });
    expect(errorOf(deploy).code).toBe("OFFER_UNAVAILABLE");
    const back = await ctl("PATCH", `/offers/${c.offer_id}`, {
      free_units: 3,
      price_per_hour_micro: 1_900_000,
      next_maintenance: "2099-01-01T00:00:00.000Z",
    });
    expect(back.body).toMatchObject({
      free_units: 3,
      price_per_hour_micro: 1_900_000,
      next_maintenance: "2099-01-01T00:00:00.000Z",
    });
    expect(await listed()).toContain(c.offer_id);
    // An instance already rented keeps its price snapshot when the offer is repriced.
    const rented = await call(fb(), "POST", "/v1/instances", {
      token,
      body: { offer_id: c.offer_id, template_id: c.template_id, disk_gb: 20 },
    });
    await ctl("PATCH", `/offers/${c.offer_id}`, { price_per_hour_micro: 900_000 });
    const got = await call(fb(), "GET", `/v1/instances/${rented.body.id}`, { token });
    expect(got.body.price_per_hour_micro).toBe(1_900_000);
    const soon = new Date(Date.parse((await ctl("GET", "/clock")).body.now) + 3_600_000).toISOString();
    await ctl("PATCH", `/offers/${c.offer_id}`, { next_maintenance: soon });
    const refused = await call(fb(), "POST", "/v1/instances", {
      token,
      body: { offer_id: c.offer_id, template_id: c.template_id, disk_gb: 20 },
    });
    expect(errorOf(refused)).toMatchObject({ code: "MACHINE_IN_MAINTENANCE", next_maintenance: soon });
    await ctl("PATCH", `/offers/${c.offer_id}`, { availability: "withdrawn", next_maintenance: null });
    expect(await listed()).not.toContain(c.offer_id);
  });

  test("PATCH /offers/:id refuses unknown offers, unknown fields and values out of range", async () => {
    const c = fb().credentials!;
    const missing = await ctl("PATCH", "/offers/00000000-0000-4000-8000-00000000dddd", { free_units: 1 });
    expect([missing.status, errorOf(missing).code]).toEqual([404, "OFFER_NOT_FOUND"]);
    const unknownField = await ctl("PATCH", `/offers/${c.offer_id}`, { gpu_model: "H100" });
    expect([unknownField.status, errorOf(unknownField).code]).toEqual([422, "VALIDATION_ERROR"]);
    const negative = await ctl("PATCH", `/offers/${c.offer_id}`, { free_units: -1 });
    expect([negative.status, errorOf(negative).field, errorOf(negative).limit]).toEqual([
      422,
      "free_units",
      0,
    ]);
    const badState = await ctl("PATCH", `/offers/${c.offer_id}`, { availability: "gone" });
    expect(errorOf(badState).field).toBe("availability");
    const badTime = await ctl("PATCH", `/offers/${c.offer_id}`, { next_maintenance: "tomorrow" });
    expect(errorOf(badTime).field).toBe("next_maintenance");
    const noToken = await call(fb(), "PATCH", `/_control/offers/${c.offer_id}`, { body: { free_units: 1 } });
    expect(noToken.status).toBe(401);
  });

  test("out-of-range clock advances and latencies are refused naming the limit", async () => {
    const a = await ctl("POST", "/clock/advance", { ms: 1e300 });
    expect([a.status, errorOf(a).code, errorOf(a).field, errorOf(a).limit]).toEqual([
      422,
      "VALIDATION_ERROR",
      "ms",
      100 * 365 * 24 * 3_600_000,
    ]);
    const f = await ctl("POST", "/faults", { route: "/v1/offers", kind: "latency", latencyMs: 1e12 });
    expect([f.status, errorOf(f).field, errorOf(f).limit]).toEqual([422, "latencyMs", 2_147_483_647]);
    expect(() => fb().addFault({ route: "/v1/offers", kind: "latency", latencyMs: 1e12 })).toThrow(
      "a latency fault needs latencyMs from 0 to 2147483647, got 1000000000000",
    );
    const offers = await call(fb(), "GET", "/v1/catalog/status", {
      token: fb().credentials?.admin_session_token,
    });
    expect(offers.status).toBe(200);
  });

  test("seeding records one by one through the control API", async () => {
    await ctl("POST", "/reset");
    const org = (await ctl("POST", "/orgs", { name: "Acme", balance_micro: 50_000_000 })).body;
    const user = (await ctl("POST", "/users", { email: "a@acme.example" })).body;
    expect(
      (await ctl("POST", "/memberships", { org_id: org.id, user_id: user.id, role: "admin" })).status,
    ).toBe(200);
    const { token } = (await ctl("POST", "/sessions", { user_id: user.id, org_id: org.id })).body;
    const machine = (await ctl("POST", "/machines", { disk_gb: 1000 })).body;
    const offer = (await ctl("POST", "/offers", { machine_id: machine.id, price_per_hour_micro: 1_000_000 }))
      .body;
    const template = (await ctl("POST", "/templates", { name: "T", mode: "ssh" })).body;
    const key = (await ctl("POST", "/ssh-keys", { user_id: user.id, name: "k" })).body;
    const d = await call(fb(), "POST", "/v1/instances", {
      token,
      body: { offer_id: offer.id, template_id: template.id, disk_gb: 20, ssh_key_id: key.id },
    });
    expect(d.status).toBe(201);
    const unknown = await ctl("POST", "/sessions", { user_id: user.id, org_id: "nope" });
    expect([unknown.status, errorOf(unknown).code]).toEqual([422, "CONTROL_ERROR"]);
  });
});

describe("logging never shows tokens or secrets", () => {
  let fb: FakeBackend;
  const lines: string[] = [];
  beforeAll(async () => {
    fb = await startFakeBackend({ seed: "demo", logger: (l) => lines.push(l) });
  });
  afterAll(() => fb.close());

  test("one line per request with method, path, status and duration only", async () => {
    const c = fb.credentials;
    if (!c) throw new Error("no credentials");
    const key = await createKey(fb, c.admin_session_token);
    const d = await deploy(fb, c, key.secret, { template_id: c.jupyter_template_id });
    await call(fb, "GET", `/v1/instances/${d.body.id}?token=${key.secret}`, { token: key.secret });
    await call(fb, "GET", "/v1/me", { token: c.member_session_token });
    await call(fb, "POST", "/_control/reset", { headers: { "x-control-token": fb.controlToken } });
    // A raw request with the secret in an unusual header.
    await new Promise<void>((resolve) => {
      const req = request(`${fb.url}/v1/offers`, { headers: { "x-api-key": key.secret } }, (res) => {
        res.resume();
        res.on("end", () => resolve());
      });
      req.end();
    });
    const log = lines.join("\n");
    for (const secret of [
      key.secret,
      key.secret.slice(4),
      c.admin_session_token,
      c.member_session_token,
      fb.controlToken,
      d.body.access_token as string,
    ]) {
      expect(log).not.toContain(secret);
    }
    expect(lines.length).toBeGreaterThanOrEqual(6);
    for (const line of lines) expect(line).toMatch(/^(GET|POST|DELETE|PUT|PATCH) \/\S* \d{3} \d+\.\dms$/);
  });
});
