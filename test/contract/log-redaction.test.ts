import { request } from "node:http";
import { type FakeBackend, startFakeBackend } from "../../src/fake-backend";
import { call, createKey, deploy } from "./helpers";

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
    // A token pasted where an id goes: refused, and neither the answer nor the log repeats it.
    const pasted = await call(fb, "GET", `/v1/instances/${key.secret}`, { token: key.secret });
    expect(pasted.status).toBe(404);
    expect(JSON.stringify(pasted.body)).not.toContain(key.secret);
    await call(fb, "POST", "/_control/reset", { headers: { "x-control-token": fb.controlToken } });
    // The control token, which has no credential prefix, pasted where an id goes.
    for (const id of [fb.controlToken, `${"q".repeat(100)}${fb.controlToken}${"w".repeat(100)}`])
      await call(fb, "POST", `/_control/orgs/${id}/balance`, {
        headers: { "x-control-token": fb.controlToken },
        body: { balance_micro: 1 },
      });
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
      fb.controlToken.slice(0, 16),
      fb.controlToken.slice(16, 32),
      fb.controlToken.slice(32),
      d.body.access_token as string,
    ]) {
      expect(log).not.toContain(secret);
    }
    expect(lines.length).toBeGreaterThanOrEqual(6);
    for (const line of lines)
      expect(line).toMatch(/^(GET|POST|DELETE|PUT|PATCH) \/\S*( characters\))? \d{3} \d+\.\dms$/);
  });
});
