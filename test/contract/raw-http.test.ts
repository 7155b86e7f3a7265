import { connect } from "node:net";
import { type FakeBackend, startFakeBackend } from "../../src/fake-backend";
import { call } from "./helpers";

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
