import { type FakeBackend, startFakeBackend } from "../../src/fake-backend";
import { call, deploy, errorOf, useFake } from "./helpers";

async function until(cond: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * Deploys with a client that gives up once the fake holds the request (so the request surely
 * reached it whole); resolves to the error the client saw.
 */
async function deployGivingUp(fb: FakeBackend, label: string): Promise<string> {
  const c = fb.credentials;
  if (!c) throw new Error("no credentials");
  const held = fb.lateCommitsPending();
  const ac = new AbortController();
  const seen = fetch(`${fb.url}/v1/instances`, {
    method: "POST",
    headers: { authorization: `Bearer ${c.admin_session_token}`, "content-type": "application/json" },
    body: JSON.stringify({ offer_id: c.offer_id, template_id: c.template_id, disk_gb: 50, label }),
    signal: ac.signal,
  }).then(
    () => "answered",
    (err: Error) => err.name,
  );
  await until(() => fb.lateCommitsPending() > held);
  ac.abort();
  return seen;
}

describe("late-commit fault: the server commits a held request whatever the client does", () => {
  const { fb, creds } = useFake();
  const admin = () => creds().admin_session_token;
  const labels = () =>
    fb()
      .listInstances(creds().org_id)
      .map((i) => i.label);

  test("a client that waits gets the normal answer once the delay is over", async () => {
    fb().addFault({ route: "POST /v1/instances", kind: "late-commit", delayMs: 200, times: 1 });
    const t0 = Date.now();
    const a = await deploy(fb(), creds(), admin(), { label: "patient" });
    expect([a.status, a.body.label]).toEqual([201, "patient"]);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(190);
    expect(fb().lateCommitsPending()).toBe(0);
  });

  test("a client that gave up: nothing during the delay, the instance exists after it", async () => {
    fb().addFault({ route: "POST /v1/instances", kind: "late-commit", delayMs: 1500, times: 1 });
    expect(await deployGivingUp(fb(), "late")).toBe("AbortError");
    // Held: not committed, so a client listing to reconcile sees nothing yet.
    expect(fb().lateCommitsPending()).toBe(1);
    const during = await call(fb(), "GET", "/v1/instances", { token: admin() });
    expect(during.body.items).toEqual([]);
    await until(() => fb().lateCommitsPending() === 0);
    expect(labels()).toEqual(["late"]);
    const after = await call(fb(), "GET", "/v1/instances", { token: admin() });
    expect(after.body.items.map((i: { label: string }) => i.label)).toEqual(["late"]);
  });

  test("flushLateCommits commits held requests now and resolves once they have landed", async () => {
    fb().addFault({ route: "POST /v1/instances", kind: "late-commit", delayMs: 600_000 });
    expect(await deployGivingUp(fb(), "one")).toBe("AbortError");
    expect(await deployGivingUp(fb(), "two")).toBe("AbortError");
    expect(fb().lateCommitsPending()).toBe(2);
    expect(labels()).toEqual([]);
    expect(await fb().flushLateCommits()).toBe(2);
    expect(labels().sort()).toEqual(["one", "two"]);
    expect(fb().lateCommitsPending()).toBe(0);
  });

  test("a held deploy is checked when it commits: a refusal then leaves nothing", async () => {
    fb().addFault({ route: "POST /v1/instances", kind: "late-commit", delayMs: 600_000, times: 1 });
    expect(await deployGivingUp(fb(), "refused")).toBe("AbortError");
    fb().setBalance(creds().org_id, 0);
    expect(await fb().flushLateCommits()).toBe(1);
    expect(labels()).toEqual([]);
  });

  test("with lost-response too, the commit happens and no client ever hears of it", async () => {
    fb().addFault({ route: "POST /v1/instances", kind: "late-commit", delayMs: 100, times: 1 });
    fb().addFault({ route: "POST /v1/instances", kind: "lost-response", times: 1 });
    await expect(deploy(fb(), creds(), admin(), { label: "silent" })).rejects.toThrow();
    expect(labels()).toEqual(["silent"]);
  });

  test("a reset drops held requests: nothing lands in the new state", async () => {
    fb().addFault({ route: "POST /v1/instances", kind: "late-commit", delayMs: 600_000 });
    expect(await deployGivingUp(fb(), "old world")).toBe("AbortError");
    const fresh = fb().seedDemo();
    expect(fb().lateCommitsPending()).toBe(0);
    expect(await fb().flushLateCommits()).toBe(0);
    expect(fb().listInstances(fresh.org_id)).toEqual([]);
  });

  test("a late-commit fault needs delayMs in range", () => {
    expect(() => fb().addFault({ route: "POST /v1/instances", kind: "late-commit" })).toThrow(
      "a late-commit fault needs delayMs from 0 to 2147483647, got undefined",
    );
    expect(() => fb().addFault({ route: "POST /v1/instances", kind: "late-commit", delayMs: -1 })).toThrow(
      "got -1",
    );
  });
});

describe("late-commit through the control API (a fake driven from another process)", () => {
  const { fb, creds } = useFake();
  const ctl = (method: string, path: string, body?: unknown) =>
    call(fb(), method, `/_control${path}`, { body, headers: { "x-control-token": fb().controlToken } });

  test("POST /faults installs it, GET /faults counts held requests, POST /late-commits/flush lands them", async () => {
    const f = await ctl("POST", "/faults", {
      route: "POST /v1/instances",
      kind: "late-commit",
      delayMs: 600_000,
      times: 1,
    });
    expect(f.status).toBe(201);
    expect(await deployGivingUp(fb(), "remote")).toBe("AbortError");
    const listed = await ctl("GET", "/faults");
    expect(listed.body).toEqual({ items: [], late_commits_pending: 1 });
    expect((await ctl("POST", "/late-commits/flush")).body).toEqual({ committed: 1 });
    expect((await ctl("GET", "/faults")).body.late_commits_pending).toBe(0);
    const list = await call(fb(), "GET", "/v1/instances", { token: creds().admin_session_token });
    expect(list.body.items.map((i: { label: string }) => i.label)).toEqual(["remote"]);
  });

  test("interrupting an apply: creating lasts until the transition mode changes, then lands at once", async () => {
    const token = creds().admin_session_token;
    expect((await ctl("PUT", "/transitions", { mode: { afterMs: 600_000 } })).status).toBe(200);
    const d = await deploy(fb(), creds(), token);
    await new Promise((r) => setTimeout(r, 100));
    expect((await call(fb(), "GET", `/v1/instances/${d.body.id}`, { token })).body.status).toBe("creating");
    expect((await ctl("PUT", "/transitions", { mode: "immediate" })).status).toBe(200);
    expect((await call(fb(), "GET", `/v1/instances/${d.body.id}`, { token })).body.status).toBe("running");
  });

  test("a late-commit without delayMs is refused naming the field", async () => {
    const a = await ctl("POST", "/faults", { route: "POST /v1/instances", kind: "late-commit" });
    expect([a.status, errorOf(a).code]).toEqual([422, "CONTROL_ERROR"]);
    expect(errorOf(a).message).toContain("delayMs");
    const b = await ctl("POST", "/faults", { route: "/v1/x", kind: "late-commit", delayMs: 1e12 });
    expect([b.status, errorOf(b).field, errorOf(b).limit]).toEqual([422, "delayMs", 2_147_483_647]);
  });
});

describe("late-commit across the request time limits and shutdown", () => {
  test("a held request is complete, so the request time limit never cuts it", async () => {
    const fb = await startFakeBackend({ seed: "demo", requestTimeouts: { headersMs: 100, requestMs: 200 } });
    try {
      const c = fb.credentials;
      if (!c) throw new Error("no credentials");
      fb.addFault({ route: "POST /v1/instances", kind: "late-commit", delayMs: 700 });
      const a = await deploy(fb, c, c.admin_session_token);
      expect(a.status).toBe(201);
    } finally {
      await fb.close();
    }
  });

  test("closing the fake commits what it holds instead of waiting out the delay", async () => {
    const fb = await startFakeBackend({ seed: "demo" });
    const c = fb.credentials;
    if (!c) throw new Error("no credentials");
    fb.addFault({ route: "POST /v1/instances", kind: "late-commit", delayMs: 600_000 });
    expect(await deployGivingUp(fb, "at close")).toBe("AbortError");
    await fb.close();
    expect(fb.listInstances(c.org_id).map((i) => i.label)).toEqual(["at close"]);
  });
});
