import type { ChildProcess } from "node:child_process";
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { buildSync } from "esbuild";
import { type DemoCredentials, type FakeBackend, startFakeBackend } from "../../src/fake-backend";
import { COMPACT_MIN_BYTES, COMPACT_RATIO, readStateFile } from "../../src/fake-backend/state/state-file";
import { type ProcessExit, startProcess } from "../../src/testing/child-process";
import { call, createKey, deploy } from "./helpers";

describe("persistence: a restart with the same state file loses nothing", () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "gpurental-fake-"));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test("keys, sessions, instances, ledger and balance survive a restart", async () => {
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

/** The state as it is after loading `file` in a fresh fake (which is closed again). */
async function reload(file: string, logger?: (l: string) => void) {
  const fb = await startFakeBackend({ stateFile: file, logger });
  try {
    return JSON.parse(JSON.stringify(fb.state()));
  } finally {
    await fb.close();
  }
}

/** Grows the demo state to about `bytes` with template readmes (1 KB each). */
function grow(fb: FakeBackend, bytes: number): void {
  for (let i = 0; i < bytes / 1024; i++) fb.createTemplate({ name: `t${i}`, readme: "r".repeat(1000) });
}

describe("state file: a write appends what changed; compaction keeps the file near the state's size", () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "gpurental-log-"));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test("with 1 MB of state a small change adds a small record, and the file loads to the same state", async () => {
    const file = join(dir, "big.json");
    const fb = await startFakeBackend({ seed: "demo", stateFile: file });
    try {
      const c = fb.credentials as DemoCredentials;
      grow(fb, 1024 * 1024);
      await fb.close();
      // Reopened, the file is one snapshot; from there each change appends one record.
      const again = await startFakeBackend({ stateFile: file });
      const before = statSync(file).size;
      expect(before).toBeGreaterThan(1024 * 1024);
      again.setBalance(c.org_id, 42_000_000);
      const after = statSync(file).size;
      expect(after - before).toBeGreaterThan(0);
      expect(after - before).toBeLessThan(1024);
      const lines = readFileSync(file, "utf8").split("\n");
      expect(lines).toHaveLength(3); // snapshot, one record, and the final newline
      expect(lines[1]).toMatch(/^[0-9a-f]{8} \{"top":/);
      // Loaded from snapshot + record while the writer still runs.
      const loaded = await reload(file);
      expect(loaded.orgs[c.org_id].balance_micro).toBe(42_000_000);
      await again.close();
    } finally {
      await fb.close();
    }
  });

  test("the log is compacted into a new snapshot once it outgrows the snapshot; nothing is lost", async () => {
    const file = join(dir, "compact.json");
    const fb = await startFakeBackend({ seed: "demo", stateFile: file });
    const c = fb.credentials as DemoCredentials;
    let largest = 0;
    for (let i = 0; i < 600; i++) {
      fb.createOrg({ name: `org ${i} ${"x".repeat(200)}` });
      largest = Math.max(largest, statSync(file).size);
    }
    const snapshot = readFileSync(file, "utf8").split("\n")[0] ?? "";
    // Compactions happened along the way: the snapshot holds orgs created after the start.
    expect(snapshot).toContain('"name":"org 0 ');
    // Never more than the snapshot plus the log's allowance plus one record.
    expect(largest).toBeLessThan(
      Buffer.byteLength(snapshot) * (1 + COMPACT_RATIO) + COMPACT_MIN_BYTES + 4096,
    );
    const mem = JSON.parse(JSON.stringify(fb.state()));
    const loaded = await reload(file);
    expect(Object.keys(loaded.orgs)).toHaveLength(600 + 2);
    expect(loaded.orgs).toEqual(mem.orgs);
    expect(loaded.orgs[c.org_id]).toBeDefined();
    await fb.close();
  });

  test("a reset is written as a fresh snapshot", async () => {
    const file = join(dir, "reset.json");
    const fb = await startFakeBackend({ seed: "demo", stateFile: file });
    fb.createOrg({ name: "before reset" });
    fb.reset();
    fb.createOrg({ name: "after reset" });
    const loaded = await reload(file);
    expect(Object.values(loaded.orgs).map((o) => (o as { name: string }).name)).toEqual(["after reset"]);
    await fb.close();
  });

  test("a state file deleted while the fake runs is written whole again on the next change", async () => {
    const file = join(dir, "deleted.json");
    const fb = await startFakeBackend({ seed: "demo", stateFile: file });
    const c = fb.credentials as DemoCredentials;
    rmSync(file);
    fb.createOrg({ name: "after the delete" });
    const loaded = await reload(file);
    expect(loaded.orgs[c.org_id]).toBeDefined();
    expect(Object.values(loaded.orgs).map((o) => (o as { name: string }).name)).toContain("after the delete");
    expect(statSync(file).mode & 0o777).toBe(0o600);
    await fb.close();
  });
});

describe("state file: older files, torn and damaged records", () => {
  let dir: string;
  let snapshot: string;
  let orgId: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "gpurental-load-"));
    const fb = await startFakeBackend({ seed: "demo" });
    orgId = fb.credentials?.org_id ?? "";
    // Exactly what the previous release wrote: the whole state, one line, no newline.
    snapshot = JSON.stringify(fb.state());
    await fb.close();
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test("a whole-snapshot file of the previous release loads, and is rewritten 0600 in today's form", async () => {
    const file = join(dir, "old.json");
    writeFileSync(file, snapshot, { mode: 0o644 });
    chmodSync(file, 0o644);
    const fb = await startFakeBackend({ stateFile: file });
    try {
      expect(fb.state().orgs[orgId]?.name).toBe("Demo Lab");
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(readFileSync(file, "utf8").endsWith("}\n")).toBe(true);
    } finally {
      await fb.close();
    }
    // A hand-edited, pretty-printed one too.
    const pretty = join(dir, "pretty.json");
    writeFileSync(pretty, JSON.stringify(JSON.parse(snapshot), null, 2));
    expect((await reload(pretty)).orgs[orgId].name).toBe("Demo Lab");
  });

  /** A valid change record line setting the demo org's balance. */
  async function recordLine(balance: number): Promise<string> {
    const file = join(dir, `rec-${balance}.json`);
    writeFileSync(file, snapshot);
    const fb = await startFakeBackend({ stateFile: file });
    fb.setBalance(orgId, balance);
    const line = readFileSync(file, "utf8").split("\n")[1] ?? "";
    await fb.close();
    return line;
  }

  test("a torn last record is ignored and said so; the records before it are kept", async () => {
    const good = await recordLine(7_000_000);
    const torn = (await recordLine(9_000_000)).slice(0, 40);
    for (const [name, tail] of [
      ["cut", torn],
      ["bad checksum", `00000000${good.slice(8)}\n`],
    ]) {
      const file = join(dir, `torn-${name}.json`);
      writeFileSync(file, `${snapshot}\n${good}\n${tail}`);
      const notes: string[] = [];
      const loaded = await reload(file, (l) => notes.push(l));
      expect(loaded.orgs[orgId].balance_micro).toBe(7_000_000);
      const at = Buffer.byteLength(`${snapshot}\n${good}\n`);
      expect(notes).toEqual([
        expect.stringContaining(`state file ${file}: ignored an incomplete last change record at byte ${at}`),
      ]);
      // Loading rewrote the file without the torn record.
      expect(readFileSync(file, "utf8").split("\n")).toHaveLength(2);
    }
  });

  test("killed at any byte of an append or a compaction, the file loads with every change acknowledged before", async () => {
    const file = join(dir, "every-byte.json");
    const fb = await startFakeBackend({ seed: "demo", stateFile: file });
    const c = fb.credentials as DemoCredentials;
    const initial = fb.balance(c.org_id);
    // Each change is acknowledged once its record is in the file: note the size at that moment.
    const acked: { size: number; balance: number }[] = [];
    for (let i = 1; i <= 4; i++) {
      fb.setBalance(c.org_id, i * 1_000_000);
      acked.push({ size: statSync(file).size, balance: i * 1_000_000 });
    }
    const whole = readFileSync(file);
    // A kill can only leave a prefix of what was appended (one file, appends only): try them all.
    const cut = join(dir, "every-byte-cut.json");
    for (let end = whole.indexOf(10) + 1; end <= whole.length; end++) {
      writeFileSync(cut, whole.subarray(0, end));
      const loaded = readStateFile(cut);
      const expected = acked.filter((a) => a.size <= end).at(-1)?.balance ?? initial;
      expect([end, loaded?.state.orgs[c.org_id]?.balance_micro]).toEqual([end, expected]);
    }
    // A compaction writes a new snapshot aside and renames it: killed before the rename, the file
    // is untouched and a leftover temporary file changes nothing.
    writeFileSync(`${file}.999999.tmp`, whole.subarray(0, 100));
    expect(readStateFile(file)?.state.orgs[c.org_id]?.balance_micro).toBe(4_000_000);
    await fb.close();
  });

  test("a damaged record with records after it is an error naming the file and the byte offset", async () => {
    const good = await recordLine(7_000_000);
    const file = join(dir, "damaged.json");
    const damaged = good.replace("7000000", "7000001");
    writeFileSync(file, `${snapshot}\n${good}\n${damaged}\n${good}\n`);
    const at = Buffer.byteLength(`${snapshot}\n${good}\n`);
    await expect(startFakeBackend({ stateFile: file })).rejects.toThrow(
      `state file ${file}: change record at byte ${at} is damaged (its checksum does not match) and records follow it; truncate the file to ${at} bytes to keep the state up to there, or move it away to start empty`,
    );
    // The file is left as it was for the user to look at.
    expect(readFileSync(file, "utf8")).toBe(`${snapshot}\n${good}\n${damaged}\n${good}\n`);
  });

  test("a checksummed record of the wrong shape is refused like a damaged one", async () => {
    const { createHash } = await import("node:crypto");
    const json = JSON.stringify({
      top: { clock_offset_ms: 0, settled_at: 0, seq: 1, transitions: "immediate" },
      put: { nope: {} },
    });
    const line = `${createHash("sha256").update(json).digest("hex").slice(0, 8)} ${json}`;
    const file = join(dir, "shape.json");
    writeFileSync(file, `${snapshot}\n${line}\n${line}\n`);
    await expect(startFakeBackend({ stateFile: file })).rejects.toThrow("is damaged (unknown field nope)");
  });
});

describe("state file: kill -9 in the middle of a burst of writes loses no acknowledged write", () => {
  const root = resolve(__dirname, "../..");
  let dir: string;
  let bundle: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "gpurental-kill-"));
    // The command runs from an esbuild bundle, as in cli.test.ts.
    bundle = join(dir, "cli.js");
    buildSync({
      stdin: {
        contents: [
          `import { Command } from "commander";`,
          `import { register } from ${JSON.stringify(join(root, "src/cli/fake-backend"))};`,
          `const program = new Command("gpurental");`,
          "register(program);",
          "program.parseAsync(process.argv);",
        ].join("\n"),
        resolveDir: root,
        loader: "ts",
      },
      bundle: true,
      platform: "node",
      outfile: bundle,
      logLevel: "silent",
    });
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  async function startChild(
    state: string,
    creds: string,
  ): Promise<{ child: ChildProcess; exited: Promise<ProcessExit>; c: DemoCredentials }> {
    rmSync(creds, { force: true });
    const { child, stdout, exited } = startProcess(process.execPath, [
      bundle,
      "fake-backend",
      "--seed",
      "demo",
      "--quiet",
      "--transitions",
      "immediate",
      "--state-file",
      state,
      "--credentials",
      creds,
    ]);
    const end = Date.now() + 20_000;
    while (!stdout().includes("credentials written")) {
      if (Date.now() > end || child.exitCode !== null) throw new Error(`child did not start: ${stdout()}`);
      await new Promise((r) => setTimeout(r, 25));
    }
    return { child, exited, c: JSON.parse(readFileSync(creds, "utf8")) };
  }

  test("three rounds of writes from 8 clients, each ended by SIGKILL: every acknowledged write is loaded", async () => {
    const state = join(dir, "state.json");
    const creds = join(dir, "creds.json");
    const acked = { keys: new Set<string>(), revoked: new Set<string>(), orgs: new Set<string>(), topUps: 0 };
    let balanceFloor = 0;
    for (const killAt of [300, 700, 500]) {
      const { child, exited, c } = await startChild(state, creds);
      const session = {
        authorization: `Bearer ${c.admin_session_token}`,
        "content-type": "application/json",
      };
      const control = { "x-control-token": c.control_token, "content-type": "application/json" };
      if (balanceFloor === 0) {
        const me = (await (await fetch(`${c.base_url}/v1/me`, { headers: session })).json()) as {
          organization: { balance_micro: number };
        };
        balanceFloor = me.organization.balance_micro;
      }
      let acks = 0;
      let killed = false;
      const worker = async (w: number) => {
        for (let i = 0; !killed; i++) {
          try {
            const kind = (w + i) % 4;
            if (kind === 0) {
              const r = await fetch(`${c.base_url}/v1/api-keys`, {
                method: "POST",
                headers: session,
                body: JSON.stringify({ name: `k${w}-${i}` }),
              });
              if (r.status === 201) acked.keys.add(((await r.json()) as { key: { id: string } }).key.id);
            } else if (kind === 1) {
              const open = [...acked.keys].filter((k) => !acked.revoked.has(k));
              const id = open[(w * 7919 + i) % Math.max(open.length, 1)];
              if (!id) continue;
              const r = await fetch(`${c.base_url}/v1/api-keys/${id}`, {
                method: "DELETE",
                headers: { authorization: session.authorization },
              });
              if (r.status === 204) acked.revoked.add(id);
            } else if (kind === 2) {
              const r = await fetch(`${c.base_url}/_control/orgs`, {
                method: "POST",
                headers: control,
                body: JSON.stringify({ name: `o${w}-${i} ${"x".repeat(300)}` }),
              });
              if (r.status === 200) acked.orgs.add(((await r.json()) as { id: string }).id);
            } else {
              const r = await fetch(`${c.base_url}/v1/billing/orders`, {
                method: "POST",
                headers: session,
                body: JSON.stringify({ amount_micro: 1 }),
              });
              if (r.status === 201) acked.topUps += 1;
            }
            acks += 1;
            if (acks >= killAt && !killed) {
              killed = true;
              child.kill("SIGKILL");
            }
          } catch {
            // A request in flight when the process died: never acknowledged.
          }
        }
      };
      await Promise.all([0, 1, 2, 3, 4, 5, 6, 7].map(worker));
      await exited;
    }
    const notes: string[] = [];
    const loaded = await reload(state, (l) => notes.push(l));
    for (const id of acked.keys) expect([id, loaded.api_keys[id] !== undefined]).toEqual([id, true]);
    for (const id of acked.revoked) expect([id, loaded.api_keys[id].revoked_at !== null]).toEqual([id, true]);
    for (const id of acked.orgs) expect([id, loaded.orgs[id] !== undefined]).toEqual([id, true]);
    const org = loaded.orgs["00000000-0000-4000-8000-000000000001"];
    expect(org.balance_micro).toBeGreaterThanOrEqual(balanceFloor + acked.topUps);
    expect(acked.keys.size + acked.orgs.size + acked.topUps).toBeGreaterThan(1000);
  });
});
