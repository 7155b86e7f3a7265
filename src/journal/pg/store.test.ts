import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "pg";
import { appendRaw, journalIn, journalServer, rawRecords, STORE_KINDS } from "../../testing/journal-stores";
import { instanceStateText } from "../../testing/saved-state";
import { DeployJournal, JournalError, locateJournal, type RunIdentity } from "..";
import { currentRun } from "../run";
import { PgStore, stateKeyOf } from "./store";
import { parseJournalUrl } from "./url";

// What only the PostgreSQL store has: its schema, created and versioned; its lock, one row per
// state, which other states never wait for and which makes a take happen once however runs race;
// transactions that a killed writer leaves undone; and a database out of reach, which fails reads
// and writes with an error naming the database (no password), the setting and the reason. The
// journal's meaning over this store is store.test.ts's, run against both.

const withPostgres = STORE_KINDS.includes("postgresql");
const describePg = withPostgres ? describe : describe.skip;

const PASSWORD = "pw-never-shown-3a9c";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "gpurental-journal-pg-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const gone: RunIdentity = { id: "gone", pid: 1, boot: "before-a-restart" };

function url(port = journalServer().port, extra = "") {
  return parseJournalUrl(
    `postgres://tf:${PASSWORD}@127.0.0.1:${port}/tfstate?sslmode=disable${extra}`,
    "the GPURENTAL_JOURNAL_URL environment variable",
  );
}

async function sql<T extends Record<string, unknown>>(text: string, values: unknown[] = []): Promise<T[]> {
  const c = new Client({ connectionString: journalServer().connStr() });
  await c.connect();
  try {
    return (await c.query(text, values)).rows as T[];
  } finally {
    await c.end();
  }
}

describePg("the PostgreSQL store", () => {
  const location = (ws = "default") => locateJournal({ cwd: dir, env: { TF_WORKSPACE: ws } });
  const journal = (opts: { run?: RunIdentity; ws?: string; timeoutMs?: number; extra?: string } = {}) => {
    const loc = location(opts.ws);
    return new DeployJournal(loc, {
      run: opts.run ?? currentRun(),
      store: new PgStore(url(undefined, opts.extra), loc, { timeoutMs: opts.timeoutMs ?? 5_000 }),
    });
  };

  test("its schema is created on first use and versioned; a state's records are rows keyed as the file is named", async () => {
    const j = journal();
    const e = j.sent("instance", "sha256:x", { label: "a" });
    j.answered(e, "i-1");
    expect(await sql("select version from gpurental_journal.schema_version")).toEqual([{ version: 1 }]);
    const key = stateKeyOf(location());
    expect(key).toBe(
      location()
        .file.split("/")
        .pop()!
        .replace(/\.jsonl$/, ""),
    );
    const rows = await sql<{ op: string }>(
      "select record->>'op' as op from gpurental_journal.records where state_key = $1 order by seq",
      [key],
    );
    expect(rows.map((r) => r.op)).toEqual(["sent", "answered"]);
    const [state] = await sql(
      "select workspace, backend, header from gpurental_journal.journals where state_key = $1",
      [key],
    );
    expect(state).toMatchObject({ workspace: "default", backend: "local", header: { version: 1 } });
  });

  test("a schema newer than this provider is read, never written", async () => {
    const j = journal();
    j.sent("instance", "sha256:x", {});
    await sql("insert into gpurental_journal.schema_version (version) values (99)");
    try {
      // The schema is checked when a connection is made: another provider process's.
      const fresh = journal({ extra: "&application_name=later" });
      expect(fresh.entries()).toHaveLength(1);
      expect(() => fresh.sent("instance", "sha256:y", {})).toThrow(
        /schema is version 99, written by a newer provider/,
      );
    } finally {
      await sql("delete from gpurental_journal.schema_version where version = 99");
    }
  });

  test("a state whose row is locked is waited for, then given up; other states are written meanwhile", async () => {
    const first = journal({ ws: "locked" });
    first.sent("instance", "sha256:x", {});
    const holder = new Client({ connectionString: journalServer().connStr() });
    await holder.connect();
    try {
      await holder.query("begin");
      await holder.query("select 1 from gpurental_journal.journals where state_key = $1 for update", [
        stateKeyOf(location("locked")),
      ]);
      // Another workspace's writer does not wait.
      const other = journal({ ws: "free", timeoutMs: 1_000 });
      other.sent("instance", "sha256:x", {});
      expect(other.entries()).toHaveLength(1);
      // The locked one waits for its deadline, then fails, having written nothing.
      const blocked = journal({ ws: "locked", timeoutMs: 1_000 });
      expect(() => blocked.sent("instance", "sha256:z", {})).toThrow(/stayed locked by another run/);
      await holder.query("rollback");
      expect(journal({ ws: "locked" }).entries()).toHaveLength(1);
    } finally {
      await holder.end();
    }
  });

  test("an entry is taken by one run only, however two runs race for it", async () => {
    const old = journal({ run: gone });
    const e = old.sent("instance", "sha256:x", {});
    const mine = journal();
    // Both see the entry as adoptable before either takes it.
    expect(mine.adoptable("instance", "sha256:x").map((x) => x.entry)).toEqual([e]);
    // The other run (psql, another process) holds the state's row, then takes the entry a moment
    // later; this one's take, started in that moment, waits for the row and finds it taken.
    const key = stateKeyOf(location());
    const other: RunIdentity = { id: "rival", pid: process.pid, boot: currentRun().boot };
    const taken = JSON.stringify({ op: "taken", entry: e, run: other, at: new Date().toISOString() });
    const rival = spawn(
      "psql",
      [
        "-X",
        "-q",
        "-v",
        "ON_ERROR_STOP=1",
        "-d",
        `${journalServer().connStr()}&application_name=rival`,
        "-c",
        `begin;
         select 1 from gpurental_journal.journals where state_key = '${key}' for update;
         select pg_sleep(1);
         insert into gpurental_journal.records (state_key, seq, record)
           select state_key, seq + 1, '${taken}'::jsonb from gpurental_journal.journals where state_key = '${key}';
         update gpurental_journal.journals set seq = seq + 1 where state_key = '${key}';
         commit;`,
      ],
      { stdio: "ignore", env: { PATH: process.env.PATH } },
    );
    const done = new Promise((r) => rival.on("close", r));
    const deadline = Date.now() + 20_000;
    while (
      (
        await sql(
          "select 1 from pg_stat_activity where application_name = 'rival' and wait_event = 'PgSleep'",
        )
      ).length === 0
    ) {
      if (Date.now() > deadline) throw new Error("psql never held the row");
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(mine.take("instance", "sha256:x")).toBeNull();
    expect(mine.entries()[0]?.taken?.run.id).toBe("rival");
    await done;
  });

  test("a writer killed in the middle of a write leaves the journal readable and whole", async () => {
    const j = journal();
    const e = j.sent("instance", "sha256:x", {});
    const key = stateKeyOf(location());
    const killed = new Client({ connectionString: journalServer().connStr() });
    killed.on("error", () => {});
    await killed.connect();
    const [{ pid }] = (await killed.query("select pg_backend_pid() as pid")).rows as [{ pid: number }];
    // Halfway through a write: its record inserted, the state's seq not yet moved, no commit.
    await killed.query("begin");
    await killed.query("select 1 from gpurental_journal.journals where state_key = $1 for update", [key]);
    await killed.query(
      `insert into gpurental_journal.records (state_key, seq, record) values ($1, 1000, '{"op":"answered","entry":"${e}","id":"i-torn","at":"t"}')`,
      [key],
    );
    await sql("select pg_terminate_backend($1)", [pid]);
    await killed.end().catch(() => {});
    const fresh = journal();
    expect(fresh.entries().map((x) => [x.entry, x.id])).toEqual([[e, null]]);
    fresh.answered(e, "i-1");
    expect(journal().entries()[0]?.id).toBe("i-1");
  });

  test("a damaged row is skipped and said once; the rows around it still count", async () => {
    const j = journal();
    const a = j.sent("instance", "sha256:a", {});
    const key = stateKeyOf(location());
    // A sent record without its run, then a whole answer after it.
    await sql(
      `insert into gpurental_journal.records (state_key, seq, record)
         select state_key, seq + 1, '{"op":"sent","entry":"b","kind":"instance","fingerprint":"sha256:b","at":"t"}'::jsonb
         from gpurental_journal.journals where state_key = $1`,
      [key],
    );
    await sql("update gpurental_journal.journals set seq = seq + 1 where state_key = $1", [key]);
    const logged: Array<[string, string, Record<string, unknown> | undefined]> = [];
    const loc = location();
    const reader = new DeployJournal(loc, {
      run: currentRun(),
      store: new PgStore(url(), loc, { timeoutMs: 5_000, log: (l, m, f) => logged.push([l, m, f]) }),
    });
    reader.answered(a, "i-a");
    expect(reader.entries().map((e) => [e.entry, e.id])).toEqual([[a, "i-a"]]);
    reader.entries();
    expect(logged.filter(([level]) => level === "warn")).toEqual([
      [
        "warn",
        "deploy journal: skipped a damaged record; its row is kept",
        { journal: expect.stringContaining(key), problem: "record 2 is not a journal record" },
      ],
    ]);
  });

  test("a compaction keeps the rows this version cannot apply untouched, numbered after the entries", async () => {
    let t = Date.parse("2026-01-01T00:00:00Z");
    const loc = location();
    const key = stateKeyOf(loc);
    const j = journalIn("postgresql", loc, { run: currentRun(), now: () => t });
    // Another process, which read the journal before the compaction.
    const other = journalIn("postgresql", loc, { run: gone, now: () => t });
    const open = j.sent("instance", "sha256:open", {});
    // A number no double holds: a row written back from what the client read would differ.
    await appendRaw("postgresql", loc, ['{"op":"renewed","entry":"x","until":1e400}']);
    const [kept] = await sql<{ record: string }>(
      "select record::text as record from gpurental_journal.records where state_key = $1 order by seq desc limit 1",
      [key],
    );
    expect(other.entries()).toHaveLength(1);
    for (let i = 0; i < 40; i++) j.close(j.sent("instance", "sha256:x", {}), "destroyed");
    t += 8 * 24 * 3600_000;
    j.sent("instance", "sha256:y", {});
    const rows = await sql<{ seq: string; record: string }>(
      "select seq::text as seq, record::text as record from gpurental_journal.records where state_key = $1 order by seq",
      [key],
    );
    const [state] = await sql<{ seq: string }>(
      "select seq::text as seq from gpurental_journal.journals where state_key = $1",
      [key],
    );
    expect(rows.map((r) => (JSON.parse(r.record) as { op: string }).op)).toEqual([
      "entry",
      "entry",
      "renewed",
    ]);
    expect(rows.at(-1)?.record).toBe(kept?.record);
    expect(rows.map((r) => Number(r.seq) - Number(state?.seq))).toEqual([-2, -1, 0]);
    // Both go on from there.
    const later = other.sent("instance", "sha256:z", {});
    expect(j.entries().map((e) => e.entry)).toEqual([open, expect.any(String), later]);
    expect(other.entries()).toHaveLength(3);
  });

  test("a database out of reach fails reads and writes with the database, the setting and the reason, never the password", async () => {
    const closed = await new Promise<number>((resolve) => {
      const srv = createServer();
      srv.listen(0, "127.0.0.1", () => {
        const port = (srv.address() as { port: number }).port;
        srv.close(() => resolve(port));
      });
    });
    const loc = location();
    const logged: string[] = [];
    const j = new DeployJournal(loc, {
      store: new PgStore(url(closed), loc, {
        timeoutMs: 1_500,
        log: (_l, m, f) => logged.push(m, JSON.stringify(f)),
      }),
      log: (_l, m, f) => logged.push(m, JSON.stringify(f)),
    });
    let err: unknown;
    try {
      j.sent("instance", "sha256:x", {});
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(JournalError);
    const message = (err as Error).message;
    expect(message).toMatch(
      new RegExp(
        `^The deploy journal in PostgreSQL could not be written \\(the database could not be reached\\): cannot connect: connect ECONNREFUSED 127\\.0\\.0\\.1:${closed} \\(tried \\d+ times over \\d+ s without reaching it\\)\\. Database postgres://\\*\\*\\*@127\\.0\\.0\\.1:${closed}/tfstate\\?sslmode=disable, schema gpurental_journal, set by the GPURENTAL_JOURNAL_URL environment variable\\. No deploy or API key creation is sent without its record in the journal\\.$`,
      ),
    );
    // Once it has failed for a whole request's time, later requests try once: no second wait.
    const started = Date.now();
    expect(() => j.live()).toThrow(/could not be read \(the database could not be reached\)/);
    expect(Date.now() - started).toBeLessThan(1_500);
    expect(j.file).not.toContain(PASSWORD);
    expect(`${message}${logged.join("")}${j.file}`).not.toContain(PASSWORD);
    expect(`${message}`).not.toContain("tf:");
  });

  test("every store of the same database and state reads and takes from the same journal", () => {
    const a = journalIn("postgresql", location(), { run: gone });
    const e = a.sent("instance", "sha256:x", {});
    a.answered(e, "i-9");
    const b = journalIn("postgresql", location());
    expect(b.take("instance", "sha256:x")?.id).toBe("i-9");
    expect(b.referencedIds()).toContain("i-9");
  });

  test("a state's journal under an older key is moved into today's at its first use, then its rows go", async () => {
    const today = location();
    const older = { ...today, file: join(dir, "default-0123456789ab.jsonl") };
    // An interrupted run of an older version, under the older key.
    const old = journalIn("postgresql", older, { run: gone });
    old.answered(old.sent("instance", "sha256:x", {}), "i-7");
    // Read ahead, as the provider does while it is configured.
    const legacy = new PgStore(url(), older, {});
    await legacy.prime();
    const j = new DeployJournal(today, { store: new PgStore(url(), today, {}), legacy });
    expect(j.adoptable("instance", "sha256:x").map((x) => x.id)).toEqual(["i-7"]);
    const rows = await sql<{ state_key: string }>(
      "SELECT state_key FROM gpurental_journal.journals WHERE state_key = ANY($1) ORDER BY 1",
      [["default-0123456789ab", stateKeyOf(today)]],
    );
    expect(rows.map((r) => r.state_key)).toEqual([stateKeyOf(today)]);
  });

  test.each([
    [
      "a damaged row",
      '{"op":"sent","entry":"b","kind":"instance","fingerprint":"f","at":"t"}',
      "default-0123456789ab",
    ],
    ["a later version's row", '{"op":"renewed","entry":"b","until":"t"}', "default-0123456789ac"],
  ])("a journal under an older key with %s is moved, keeping only that row", async (_what, row, olderKey) => {
    const today = location();
    const older = { ...today, file: join(dir, `${olderKey}.jsonl`) };
    const old = journalIn("postgresql", older, { run: gone });
    old.answered(old.sent("instance", "sha256:x", {}), "i-7");
    await appendRaw("postgresql", older, [row]);
    const logged: string[] = [];
    const j = new DeployJournal(today, {
      store: new PgStore(url(), today, {}),
      legacy: new PgStore(url(), older, {}),
      log: (_level, message) => logged.push(message),
    });
    expect(j.adoptable("instance", "sha256:x").map((x) => x.id)).toEqual(["i-7"]);
    const rows = await sql<{ state_key: string }>(
      "SELECT state_key FROM gpurental_journal.journals WHERE state_key = ANY($1) ORDER BY 1",
      [[olderKey, stateKeyOf(today)]],
    );
    expect(rows.map((r) => r.state_key)).toEqual([olderKey, stateKeyOf(today)].sort());
    // Only what could not be moved stays there: moved again later, an entry today's journal has
    // closed and compacted away would come back.
    const left = await rawRecords("postgresql", older);
    expect(left.map((r) => JSON.parse(r))).toEqual([JSON.parse(row)]);
    const again = new DeployJournal(today, {
      store: new PgStore(url(), today, {}),
      legacy: new PgStore(url(), older, {}),
      log: (_level, message) => logged.push(message),
    });
    expect(again.entries().map((x) => x.id)).toEqual(["i-7"]);
    expect(await rawRecords("postgresql", older)).toEqual(left);
    expect(logged.filter((m) => m.includes("older"))).toEqual([
      "deploy journal: moved the entries an older version kept under another key",
    ]);
  });

  test("dropping a state's journal (its export) deletes nothing a run wrote after it was read", () => {
    const loc = location();
    journalIn("postgresql", loc, { run: gone }).sent("instance", "sha256:x", {});
    const store = new PgStore(url(), loc, {});
    expect(new DeployJournal(loc, { store }).entries()).toHaveLength(1);
    // A deploy's record, committed by a run in between.
    journalIn("postgresql", loc).sent("instance", "sha256:y", {});
    expect(() => store.drop()).toThrow(/changed after it was read.*Nothing was deleted/);
    expect(journalIn("postgresql", loc).entries()).toHaveLength(2);
    // Read again, it goes.
    expect(new DeployJournal(loc, { store }).entries()).toHaveLength(2);
    store.drop();
    expect(journalIn("postgresql", loc).entries()).toHaveLength(0);
  });

  test("read ahead while the provider is configured, the journal answers reads without the worker thread", async () => {
    const loc = location();
    const a = journalIn("postgresql", loc, { run: gone });
    a.answered(a.sent("instance", "sha256:x", {}), "i-1");
    const calls: string[] = [];
    const bridge = {
      call: (req: { kind: string }) => {
        calls.push(req.kind);
        throw new Error("no worker in this test");
      },
    } as unknown as NonNullable<ConstructorParameters<typeof PgStore>[2]>["bridge"];
    const store = new PgStore(url(), loc, { bridge });
    await store.prime();
    const j = new DeployJournal(loc, { store });
    expect(j.adoptable("instance", "sha256:x").map((e) => e.id)).toEqual(["i-1"]);
    expect(j.live()).toHaveLength(1);
    expect(calls).toEqual([]);
    // A write goes to the worker, always.
    expect(() => j.closeId("i-1", "claimed")).toThrow(JournalError);
    expect(calls).toEqual(["begin"]);
  });

  test("rows are read in the order they were written, past the ninth too, ahead and by the worker", async () => {
    // Row 10 sorts before row 2 as text: its record (an answer) must still follow the entry's `sent`.
    const loc = location();
    const a = journalIn("postgresql", loc, { run: gone });
    const sent = Array.from({ length: 9 }, () => a.sent("instance", "sha256:x", {}));
    a.answered(sent[1]!, "i-2");
    a.close(sent[2]!, "claimed");
    const ahead = new PgStore(url(), loc);
    await ahead.prime();
    const fresh = [new DeployJournal(loc, { store: ahead }), journalIn("postgresql", loc, { run: gone })];
    for (const j of fresh) {
      const entries = j.entries();
      expect(entries.map((e) => e.entry)).toEqual(sent);
      expect(entries[1]).toMatchObject({ id: "i-2" });
      expect(entries[2]!.closed).toMatchObject({ reason: "claimed" });
    }
  });

  test("a database user without the journal's grants is told what it needs", async () => {
    journal().sent("instance", "sha256:x", {});
    await sql("drop role if exists nojournal; create role nojournal login");
    const loc = location();
    const j = new DeployJournal(loc, {
      store: new PgStore(
        parseJournalUrl(
          `postgres://nojournal@127.0.0.1:${journalServer().port}/tfstate?sslmode=disable`,
          "journal_url in the provider block",
        ),
        loc,
        { timeoutMs: 5_000 },
      ),
    });
    expect(() => j.sent("instance", "sha256:y", {})).toThrow(
      /permission denied for schema gpurental_journal: the journal's database user needs USAGE on the schema gpurental_journal, .* set by journal_url in the provider block\./,
    );
  });
});

describePg("a pg backend's state, read in its database", () => {
  let schema: string;
  let n = 0;
  beforeEach(async () => {
    schema = `tfstate_${process.pid}_${++n}`;
    mkdirSync(join(dir, ".terraform"));
    writeFileSync(
      join(dir, ".terraform", "terraform.tfstate"),
      JSON.stringify({
        backend: { type: "pg", config: { conn_str: journalServer().connStr(), schema_name: schema } },
      }),
    );
    // The backend's table, as `terraform init` creates it.
    await sql(
      `create schema ${schema}; create table ${schema}.states (id bigserial primary key, name text unique, data text)`,
    );
  });
  afterEach(() => sql(`drop schema if exists ${schema} cascade`));

  /** Writes a workspace's state as the backend does: its lineage, serial and instance ids. */
  const writeState = (serial: number, ids: string[], lineage = "lineage-a", ws = "default") =>
    sql(
      `insert into ${schema}.states (name, data) values ($2, $1)
       on conflict (name) do update set data = excluded.data`,
      [instanceStateText(ids, { serial, lineage }), ws],
    );
  /** A run whose provider process and terraform are both gone (another pid, same boot). */
  const ended = (): RunIdentity => {
    const child = spawnSync(process.execPath, ["-e", "0"]);
    return {
      id: `ended-${child.pid}`,
      pid: child.pid!,
      boot: currentRun().boot,
      parent: { pid: child.pid!, start: "1" },
    };
  };
  /** A provider process of this terraform (the test's runner) that has exited: a sibling of the same apply. */
  const sibling = (): RunIdentity => ({ ...ended(), id: "sibling", parent: currentRun().parent ?? null });
  /** A journal of another process, which reads everything afresh. */
  const fresh = (opts: { run?: RunIdentity; stopped?: AbortSignal; ws?: string; now?: () => number } = {}) =>
    new DeployJournal(locateJournal({ cwd: dir, env: opts.ws ? { TF_WORKSPACE: opts.ws } : {} }), {
      run: opts.run ?? currentRun(),
      ...opts,
    });
  /** What the next command adopts: it settles what ended runs left pending first, as configure does. */
  const adoptable = (ws?: string) => {
    const j = fresh(ws ? { ws } : {});
    j.resolvePending();
    return j.adoptable("instance", "sha256:x").map((e) => e.id);
  };
  const handedBy = (j: DeployJournal, ids: string[], kind: "instance" | "api_key" = "instance") => {
    for (const id of ids) {
      const e = j.sent(kind, "sha256:x", {});
      j.answered(e, id);
      j.handed(e);
    }
  };

  test("a run's handed entries the state does not hold yet open again once the write failed, and stay open", async () => {
    await writeState(3, ["i-old"]);
    const j = fresh({ run: ended() });
    handedBy(j, ["i-old", "i-new"]);
    // The run ends (Shutdown): Terraform writes the state only after it.
    expect(j.settleHanded()).toBe(2);
    expect(j.entries().map((e) => [e.id, e.closed?.detail, e.closed?.state])).toEqual([
      ["i-old", "saved in the state", undefined],
      [
        "i-new",
        "handed to Terraform, whose run ended normally; open again should the state's write fail",
        { lineage: "lineage-a", serial: 3, pending: true },
      ],
    ]);
    // The write failed (the state is still serial 3): the next command opens it again, in a record.
    const next = fresh();
    expect(next.resolvePending().map((e) => e.id)).toEqual(["i-new"]);
    expect(next.entries().find((e) => e.id === "i-new")!.closed).toBeNull();
    // A state written since (another apply's, every 20 s of a long one) does not close it again.
    await writeState(4, ["i-old"]);
    expect(adoptable()).toEqual(["i-new"]);
    // Once a state holds it, it is that state's.
    await writeState(5, ["i-old", "i-new"]);
    expect(adoptable()).toEqual([]);
  });

  test("a write that went through closes them for good: a later state rm or a state put back changes nothing", async () => {
    await writeState(3, []);
    const j = fresh({ run: ended() });
    handedBy(j, ["i-1", "i-2"]);
    j.settleHanded();
    await writeState(4, ["i-1", "i-2"]);
    const next = fresh();
    expect(next.resolvePending()).toEqual([]);
    expect(next.entries().map((e) => [e.closed?.detail, e.closed?.state])).toEqual([
      ["saved in the state", undefined],
      ["saved in the state", undefined],
    ]);
    await writeState(5, ["i-1"]);
    expect(adoptable()).toEqual([]);
    await writeState(3, []);
    expect(adoptable()).toEqual([]);
  });

  test("another command's state written before the next configure (a taint): one serial later and without it, it is opened", async () => {
    await writeState(3, ["i-other"]);
    const j = fresh({ run: ended() });
    handedBy(j, ["i-1"]);
    j.settleHanded();
    // The run's own write would have been serial 4 and held i-1: this serial 4 is another command's.
    await writeState(4, ["i-other"]);
    expect(adoptable()).toEqual(["i-1"]);
  });

  test("two serials later without it, the state may be the run's write and a state rm after it: closed", async () => {
    await writeState(3, []);
    const j = fresh({ run: ended() });
    handedBy(j, ["i-1"]);
    j.settleHanded();
    await writeState(5, []);
    expect(adoptable()).toEqual([]);
    expect(fresh().entries()[0]!.closed?.detail).toBe("a later state was written");
  });

  test("a take whose adoption handed nothing settles nothing, whatever the clocks of the two runs say", async () => {
    await writeState(3, []);
    // The run that sent it, on a machine whose clock runs ten minutes ahead, was killed.
    const ahead = Date.now() + 600_000;
    const sender = fresh({ run: ended(), now: () => ahead });
    handedBy(sender, ["i-1"]);
    // The next run takes it, and its adoption fails (the instance could not be read).
    const run = { ...currentRun(), id: "taker" };
    const taker = fresh({ run });
    expect(taker.take("instance", "sha256:x")?.id).toBe("i-1");
    expect(taker.settleHanded()).toBe(0);
    expect(taker.entries()[0]!.closed).toBeNull();
  });

  test("a pending entry of a run whose terraform cannot be watched (no /proc) is settled a day after", async () => {
    await writeState(3, []);
    const t0 = Date.now();
    const blind: RunIdentity = { ...ended(), parent: null };
    const j = fresh({ run: blind, now: () => t0 });
    handedBy(j, ["i-1"]);
    j.settleHanded();
    const at = (t: number) => {
      const k = fresh({ now: () => t });
      k.resolvePending();
      return k.adoptable("instance", "sha256:x").map((e) => e.id);
    };
    expect(at(t0 + 3600_000)).toEqual([]);
    expect(at(t0 + 25 * 3600_000)).toEqual(["i-1"]);
  });

  test("a pending entry the state could not be read to settle is said, so that a plan leaves adoption to its apply", async () => {
    await writeState(3, []);
    const j = fresh({ run: ended() });
    handedBy(j, ["i-1"]);
    j.settleHanded();
    await sql(`alter table ${schema}.states rename to moved`);
    const next = fresh();
    expect(next.resolvePending()).toEqual([]);
    expect(next.pendingUnsettled).toBe(true);
    await sql(`alter table ${schema}.moved rename to states`);
    const later = fresh();
    expect(later.resolvePending().map((e) => e.id)).toEqual(["i-1"]);
    expect(later.pendingUnsettled).toBe(false);
  });

  test("while the terraform the run served lives (another provider process of the same apply), nothing is opened", async () => {
    await writeState(3, []);
    const j = fresh({ run: sibling() });
    handedBy(j, ["i-1"]);
    handedBy(j, ["k-1"], "api_key");
    j.settleHanded();
    const next = fresh();
    expect(next.resolvePending()).toEqual([]);
    expect(next.live()).toEqual([]);
    expect(adoptable()).toEqual([]);
  });

  test("a first apply, with no state yet: opened while there is none, closed once one is written", async () => {
    const j = fresh({ run: ended() });
    handedBy(j, ["i-1", "i-2"]);
    expect(j.settleHanded()).toBe(2);
    expect(j.entries()[0]!.closed?.state).toEqual({ lineage: "", serial: 0, pending: true });
    // errored.tfstate pushed before anything else ran: a state now exists, and holds them.
    await writeState(1, ["i-1", "i-2"]);
    expect(adoptable()).toEqual([]);
    expect(fresh().live()).toEqual([]);
  });

  test("a first apply whose write failed: the next command opens what it deployed", async () => {
    const j = fresh({ run: ended() });
    handedBy(j, ["i-1"]);
    j.settleHanded();
    expect(adoptable()).toEqual(["i-1"]);
  });

  test("another workspace: its empty row is no state yet; no row at all cannot be read", async () => {
    await sql(`insert into ${schema}.states (name, data) values ('pr-7', '')`);
    const j = fresh({ run: ended(), ws: "pr-7" });
    handedBy(j, ["i-1"]);
    j.settleHanded();
    expect(j.entries()[0]!.closed?.state).toEqual({ lineage: "", serial: 0, pending: true });
    expect(adoptable("pr-7")).toEqual(["i-1"]);
    const gone = fresh({ run: ended(), ws: "pr-8" });
    handedBy(gone, ["i-2"]);
    gone.settleHanded();
    expect(gone.entries()[0]!.closed).toMatchObject({
      detail: "handed to Terraform, whose run ended normally",
    });
    expect(gone.entries()[0]!.closed?.state).toBeUndefined();
  });

  test("a plan's claim of a pending entry makes it final", async () => {
    await writeState(3, []);
    const j = fresh({ run: ended() });
    handedBy(j, ["i-1"]);
    j.settleHanded();
    expect(fresh().closeId("i-1", "claimed")).toBe(1);
    expect(adoptable()).toEqual([]);
  });

  test("a stopped run settles as one that ended normally: what its write saved is kept, what it lost is adopted", async () => {
    await writeState(3, []);
    const stopped = new AbortController();
    const j = fresh({ run: ended(), stopped: stopped.signal });
    handedBy(j, ["i-1", "i-2"]);
    stopped.abort();
    expect(j.settleHanded()).toBe(2);
    // Terraform saved i-1 after the Ctrl-C, and i-2 was lost (a second Ctrl-C cut it short).
    await writeState(4, ["i-1"]);
    expect(adoptable()).toEqual(["i-2"]);
    // A `terraform state rm` of i-1 afterwards is the user's word.
    await writeState(5, []);
    expect(adoptable()).toEqual(["i-2"]);
  });

  test("what the state holds is never adopted, from an open entry of a stopped run too", async () => {
    const stopped = new AbortController();
    const j = fresh({ run: ended(), stopped: stopped.signal });
    handedBy(j, ["i-1", "i-2"]);
    stopped.abort();
    // The state cannot be read when the run ends (the database is out of reach): nothing settles.
    await sql(`alter table ${schema}.states rename to states_away`);
    expect(j.settleHanded()).toBe(0);
    await sql(`alter table ${schema}.states_away rename to states`);
    // Terraform saved i-1 after the Ctrl-C; the plan that would claim it never ran.
    await writeState(1, ["i-1"]);
    expect(adoptable()).toEqual(["i-2"]);
  });

  test.each([
    [
      "a row this version does not read",
      (s: string) => `update ${s}.states set data = '{"version": 4, "resour'`,
    ],
    ["no table (not the backend's place)", (s: string) => `drop table ${s}.states`],
  ])(
    "a state that cannot be read (%s) proves nothing: every handed entry closes, as with any remote backend",
    async (_what, broken) => {
      await writeState(3, []);
      await sql(broken(schema));
      const j = fresh({ run: ended() });
      handedBy(j, ["i-1"]);
      expect(j.settleHanded()).toBe(1);
      expect(j.entries()[0]!.closed).toMatchObject({
        detail: "handed to Terraform, whose run ended normally",
      });
      expect(j.entries()[0]!.closed?.state).toBeUndefined();
      expect(adoptable()).toEqual([]);
    },
  );

  test("a pending entry is kept by compaction past a week, until it is settled", async () => {
    await writeState(3, []);
    const t0 = Date.now();
    let t = t0;
    const j = fresh({ run: ended(), now: () => t });
    handedBy(j, ["i-1"]);
    j.settleHanded();
    t = t0 + 8 * 24 * 3600_000;
    j.close("no-such-entry", "abandoned");
    expect(j.entries().map((e) => e.id)).toEqual(["i-1"]);
    expect(adoptable()).toEqual(["i-1"]);
  });
});
