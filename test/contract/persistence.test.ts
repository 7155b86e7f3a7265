import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startFakeBackend } from "../../src/fake-backend";
import { call, createKey, deploy } from "./helpers";

describe("persistence: a restart with the same state file loses nothing", () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "gpurental-fake-"));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test("keys, sessions, instances, ledger and balance survive; the file is written atomically", async () => {
    const stateFile = join(dir, "state.json");
    const first = await startFakeBackend({ seed: "demo", stateFile });
    const c = first.credentials;
    if (!c) throw new Error("no credentials");
    const key = await createKey(first, c.admin_session_token, "team", "survivor");
    const d = await deploy(first, c, key.secret, { label: "kept" });
    expect(d.status).toBe(201);
    await call(first, "GET", `/v1/instances/${d.body.id}`, { token: key.secret });
    first.clock.advance(3_600_000);
    const spendBefore = first.instance(d.body.id)?.spend_micro;
    const balanceBefore = first.balance(c.org_id);
    await first.close();

    expect(readdirSync(dir)).toEqual(["state.json"]);
    expect(statSync(stateFile).mode & 0o777).toBe(0o600);
    const raw = readFileSync(stateFile, "utf8");
    expect(raw).not.toContain(key.secret);
    expect(raw).not.toContain(c.admin_session_token);

    const second = await startFakeBackend({ stateFile });
    try {
      // The same secrets still authenticate: their hashes were persisted.
      const got = await call(second, "GET", `/v1/instances/${d.body.id}`, { token: key.secret });
      expect(got.status).toBe(200);
      expect(got.body).toMatchObject({ label: "kept", status: "running" });
      expect(got.body.spend_micro).toBeGreaterThanOrEqual(spendBefore ?? 0);
      const me = await call(second, "GET", "/v1/me", { token: c.admin_session_token });
      expect(me.status).toBe(200);
      expect(me.body.organization.balance_micro).toBeLessThanOrEqual(balanceBefore);
      // The fake clock continues from where it was (the hour advanced before the restart).
      expect(second.clock.now().getTime()).toBeGreaterThanOrEqual(Date.now() + 3_600_000 - 1000);
      const keys = await call(second, "GET", "/v1/api-keys", { token: c.admin_session_token });
      expect(keys.body.items[0]).toMatchObject({ id: key.id, name: "survivor" });
      // Changes after the restart are persisted too.
      await call(second, "POST", `/v1/instances/${d.body.id}/stop`, { token: key.secret });
    } finally {
      await second.close();
    }
    const third = await startFakeBackend({ stateFile, seed: "demo" });
    try {
      expect(third.instance(d.body.id)?.status).toBe("stopped");
      // Seeding "demo" over a restored state keeps the state and re-issues session tokens.
      const c3 = third.credentials;
      expect(c3?.org_id).toBe(c.org_id);
      expect((await call(third, "GET", "/v1/me", { token: c3?.admin_session_token })).status).toBe(200);
    } finally {
      await third.close();
    }
  });

  test("a state file that can no longer be written is a 500 in the one error shape, and the server lives on", async () => {
    const sub = mkdtempSync(join(dir, "vanishing-"));
    const fb = await startFakeBackend({ seed: "demo", stateFile: join(sub, "state.json") });
    const c = fb.credentials;
    if (!c) throw new Error("no credentials");
    rmSync(sub, { recursive: true, force: true });
    try {
      const a = await call(fb, "POST", "/v1/api-keys", { token: c.admin_session_token, body: { name: "x" } });
      expect(a.status).toBe(500);
      expect(a.body.error).toMatchObject({
        code: "INTERNAL",
        message: "The fake backend could not save its state file (ENOENT)",
        request_id: a.headers.get("x-request-id"),
      });
      // Once the directory is back, the pending change is saved and requests succeed again.
      mkdirSync(sub);
      const b = await call(fb, "GET", "/v1/offers", { token: c.admin_session_token });
      expect(b.status).toBe(200);
      expect(JSON.parse(readFileSync(join(sub, "state.json"), "utf8")).version).toBe(1);
    } finally {
      await fb.close();
    }
  });

  test("in-process without a state file keeps state in memory only", async () => {
    const before = readdirSync(dir).length;
    const fb = await startFakeBackend({ seed: "demo" });
    await fb.close();
    expect(readdirSync(dir).length).toBe(before);
  });
});
