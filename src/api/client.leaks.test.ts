import { inspect } from "node:util";
import { client, drop, fail, logs, ok, server, TOKEN } from "../testing/scripted-server";
import { ApiError, NetworkError, ResponseValidationError } from "./errors";
import { makeInstance } from "./testing/fixtures";

// Transport-level behaviour (dropped connections, timeouts, odd bodies) against a tiny scripted
// server; behaviour of the real API is tested against the fake backend in client.fake-backend.test.ts.

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

  test("not even in part, where a page that is no JSON is cut to 200 characters", async () => {
    // A credential of no known shape is found by its value only: masked before the page is cut.
    const secret = "opaque-credential-4f1e9a7c2b8d6e03";
    server.queue((_req, res) => {
      res.writeHead(502, { "content-type": "text/html" });
      res.end(`${"x".repeat(190)}${secret} and more of the page`);
    });
    const err = await client({ token: secret, retry: { maxAttempts: 1 } })
      .getInstance("i1")
      .catch((x: unknown) => x);
    expect(err).toBeInstanceOf(ApiError);
    for (const text of renderings(err)) expect(text).not.toContain(secret.slice(0, 10));
  });

  test("nor a deploy's secret environment values, when the server quotes the request back", async () => {
    const secretValue = "S3cretValueXyz42";
    const echo = (body: string) => `bad env ${body}`;
    server.queue(
      (_req, res, body) => {
        res.writeHead(422, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { code: "VALIDATION_ERROR", message: echo(body), env: body } }));
      },
      (_req, res, body) => {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ ...makeInstance(), status: body }));
      },
    );
    const c = client({ retry: { maxAttempts: 1 } });
    const deploy = () =>
      c
        .deployInstance({
          offer_id: "o1",
          template_id: "t1",
          disk_gb: 20,
          env_overrides: [
            { key: "DB_PASS", value: secretValue, secret: true },
            { key: "PLAIN", value: "plain-value-123", secret: false },
          ],
        })
        .catch((x: unknown) => x);
    const errors = [await deploy(), await deploy()];
    expect(errors[0]).toBeInstanceOf(ApiError);
    expect(errors[1]).toBeInstanceOf(ResponseValidationError);
    for (const err of errors) {
      for (const text of renderings(err)) expect(text).not.toContain(secretValue);
    }
    // What is not secret stays readable, so the error still says what was refused.
    expect((errors[0] as ApiError).message).toContain("plain-value-123");
    expect(JSON.stringify(logs)).not.toContain(secretValue);
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
