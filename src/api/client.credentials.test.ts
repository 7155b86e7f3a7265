import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { inspect } from "node:util";
import { Agent } from "undici";
import { GpurentalClient } from "./client";
import { ApiError, ResponseValidationError } from "./errors";
import { CREDENTIAL_TEXTS, CREDENTIAL_VALUES, CREDENTIALS } from "./testing/credentials";

// The client's sinks (its errors, however they are printed, and its log lines) against a server
// that echoes a credential of every kind in every place an answer has: the error message, the
// error's other fields, a body that does not fit its schema, and a proxy's HTML page. The real
// API's answers are tested against the fake backend in client.fake-backend.test.ts; this server
// plays a misbehaving API or proxy.

const everyText = CREDENTIAL_TEXTS.map(([, text]) => text).join(" | ");
const everyValue = Object.assign({}, ...CREDENTIAL_VALUES.map(([, value]) => value)) as Record<
  string,
  unknown
>;
const secrets = [
  ...new Set([...CREDENTIAL_TEXTS, ...CREDENTIAL_VALUES].map(([, , secret]) => secret)),
  CREDENTIALS.session,
];

let server: Server;
let url: string;
let agent: Agent;
let answer: { status: number; type: string; body: string };

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(answer.status, { "content-type": answer.type, "x-request-id": "req-echo" });
      res.end(answer.body);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
});

beforeEach(() => {
  agent = new Agent({ keepAliveTimeout: 10 });
});
afterEach(() => agent.close());

/** Runs a failing call; returns every rendering of its error and the log lines it wrote. */
async function failedCall(call: (c: GpurentalClient) => Promise<unknown>) {
  const logs: unknown[] = [];
  const c = new GpurentalClient({
    baseUrl: url,
    token: CREDENTIALS.session,
    dispatcher: agent,
    retry: { maxAttempts: 1 },
    logger: (level, msg, fields) => logs.push({ level, msg, fields }),
  });
  const err = await call(c).then(
    () => {
      throw new Error("the call succeeded");
    },
    (e: unknown) => e,
  );
  const rendered = [
    String(err),
    (err as Error).stack,
    inspect(err, { depth: 20, showHidden: true }),
    JSON.stringify(err),
    JSON.stringify(logs),
    inspect(c, { depth: 20, showHidden: true }),
  ].join("\n");
  return { err, rendered, logs };
}

function expectNoCredential(rendered: string): void {
  for (const secret of secrets)
    expect({ secret, leaked: rendered.includes(secret) }).toEqual({ secret, leaked: false });
}

test("an error answer echoing credentials in its message and fields", async () => {
  answer = {
    status: 422,
    type: "application/json",
    body: JSON.stringify({ error: { code: "VALIDATION_ERROR", message: everyText, ...everyValue } }),
  };
  const { err, rendered, logs } = await failedCall((c) => c.getMe());
  expect(err).toBeInstanceOf(ApiError);
  expect((err as ApiError).code).toBe("VALIDATION_ERROR");
  expect(logs.length).toBeGreaterThan(0);
  expectNoCredential(rendered);
});

test("a success answer that does not fit its schema and echoes credentials", async () => {
  answer = {
    status: 200,
    type: "application/json",
    body: JSON.stringify({
      user: { id: 7, note: everyText },
      organization: everyValue,
      token: CREDENTIALS.keySecret,
    }),
  };
  const { err, rendered } = await failedCall((c) => c.getMe());
  expect(err).toBeInstanceOf(ResponseValidationError);
  expectNoCredential(rendered);
});

test("a proxy's HTML page echoing credentials", async () => {
  answer = { status: 502, type: "text/html", body: `<html><body>${everyText}</body></html>` };
  const { err, rendered } = await failedCall((c) => c.listOffers());
  expect(err).toBeInstanceOf(ApiError);
  expect((err as ApiError).status).toBe(502);
  expectNoCredential(rendered);
});
