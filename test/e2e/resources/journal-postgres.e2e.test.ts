import type { RunResult, TerraformHarness } from "../harness";
import { findPostgres, type PostgresServer, postgresRequired, startPostgres } from "../postgres";
import { deploysEver, KEY_NAME, paidConfig, roomyOffer, slowCreating } from "./accounting";
import {
  alive,
  expectCode,
  liveInstances,
  output,
  providerPids,
  resetSuite,
  type Suite,
  startSuite,
  stopSuite,
  TERRAFORM_BLOCK,
  until,
} from "./helpers";
import { ResidentDirs } from "./residents";

// The deploy journal in PostgreSQL, with the real terraform, the `pg` backend and the journal in
// the same database (a private server, ../postgres.ts): CI runners are working directories of one
// harness with only the configuration. A runner lost mid-apply (terraform and its provider killed
// with SIGKILL while instances are creating) leaves nothing the next runner does not adopt or
// revoke; workspaces never see each other's entries; a database that goes down stops the deploys.
//
// Without PostgreSQL's server programs the suite is skipped with one line saying why, unless
// GPURENTAL_REQUIRE_POSTGRES=1 (set by .ci/run) makes that a failure.

jest.setTimeout(300_000);

const install = findPostgres();
if (install.missing && !postgresRequired()) {
  process.stderr.write(`test/e2e/resources/journal-postgres.e2e.test.ts skipped: ${install.missing}\n`);
}
const describeWithPostgres = install.binDir || postgresRequired() ? describe : describe.skip;

/** The journal's password in its URL: the test cluster trusts loopback, so any is accepted. */
const PASSWORD = "journal-pw-5f0c9e1a";

let s: Suite;
let pg: PostgresServer | undefined;
let offerId: string;
const residents = new ResidentDirs();
let runners = 0;

/** The journal URL: the state's database, with a password that must never be shown. */
function journalUrl(): string {
  return `postgres://tf:${PASSWORD}@127.0.0.1:${pg!.port}/tfstate?sslmode=disable`;
}

/** `body` with the state in PostgreSQL (PG_CONN_STR). */
function pgConfig(body: string): string {
  return `${TERRAFORM_BLOCK.replace("terraform {", 'terraform {\n  backend "pg" {}')}
provider "gpurental" {}

${body}
`;
}

/** A new runner: a working directory with only `config`, initialized. */
async function runner(config: string, env: NodeJS.ProcessEnv = {}): Promise<TerraformHarness> {
  const r = s.tf.workingDir(`runner-${++runners}`);
  Object.assign(r.env, env);
  r.write({ "main.tf": config });
  expectCode(await r.run(["init", "-input=false"]), 0);
  return r;
}

/** Runs SQL against the journal's database. */
function sql(query: string): Promise<string> {
  return pg!.query(query);
}

/** How many deploys (instance entries) the journal holds the answer of. */
async function journalAnswers(): Promise<number> {
  const n = await sql(
    `select count(*) from gpurental_journal.records a join gpurental_journal.records s
       on s.state_key = a.state_key and s.record->>'entry' = a.record->>'entry'
     where a.record->>'op' = 'answered' and s.record->>'op' = 'sent' and s.record->>'kind' = 'instance'`,
  ).catch(() => "0");
  return Number(n);
}

/** Polls an async condition; fails naming `what` after `ms`. */
async function eventually(cond: () => Promise<boolean>, what: string, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Starts `terraform apply` in `r` and, once `ready` holds, kills terraform and the provider it
 * started with SIGKILL together, as a lost runner goes: no Ctrl-C, no Shutdown, nothing saved.
 */
async function loseRunner(r: TerraformHarness, ready: () => Promise<boolean>, what: string): Promise<void> {
  const run = r.spawn(["apply", "-auto-approve", "-input=false", "-no-color"]);
  try {
    await eventually(ready, what);
  } catch (err) {
    run.kill("SIGKILL");
    const res = await run.result;
    throw new Error(`${(err as Error).message}\n${output(res)}`);
  }
  const pids = providerPids(run.pid!);
  expect(pids.length).toBeGreaterThan(0);
  run.kill("SIGKILL");
  for (const pid of pids) if (alive(pid)) process.kill(pid, "SIGKILL");
  const res = await run.result;
  expect(res.signal).toBe("SIGKILL");
  await until(() => pids.every((p) => !alive(p)), "the killed provider to be gone", 10_000);
}

/** API keys of the configuration that are not revoked. */
function liveKeys(name = KEY_NAME) {
  return Object.values(s.backend.state().api_keys).filter(
    (k) => k.org_id === s.creds.org_id && k.name === name && k.revoked_at === null,
  );
}

/** The instance ids a runner's state holds. */
async function stateIds(r: TerraformHarness): Promise<string[]> {
  const st = await r.state();
  return (st.values?.root_module?.resources ?? [])
    .filter((x) => x.type === "gpurental_instance")
    .map((x) => x.values.id as string);
}

/**
 * Makes the database refuse the state's writes, as one that goes away right after the apply would:
 * Terraform writes a pg backend's state only once the provider's run ended.
 */
function refuseStateWrites(): Promise<string> {
  return sql(`create function terraform_remote_state.refuse() returns trigger language plpgsql
                as $$ begin raise exception 'the state write was refused'; end $$;
              create trigger refuse before insert or update on terraform_remote_state.states
                for each row execute function terraform_remote_state.refuse()`);
}
const ALLOW_STATE_WRITES = "drop trigger refuse on terraform_remote_state.states";

function expectNoPassword(r: RunResult): void {
  expect(output(r)).not.toContain(PASSWORD);
}

describeWithPostgres("the deploy journal in PostgreSQL", () => {
  beforeAll(async () => {
    if (!install.binDir) {
      throw new Error(`GPURENTAL_REQUIRE_POSTGRES=1, and PostgreSQL is missing: ${install.missing}`);
    }
    [pg, s] = await Promise.all([startPostgres(install), startSuite()]);
    Object.assign(s.tf.env, {
      PG_CONN_STR: pg.connStr(),
      GPURENTAL_JOURNAL_URL: journalUrl(),
      GPURENTAL_JOURNAL_TIMEOUT: "3s",
    });
  });
  afterAll(async () => {
    await residents.stop(undefined);
    await pg?.stop();
    await stopSuite(s);
    residents.remove();
  });
  beforeEach(async () => {
    if (!pg) return;
    resetSuite(s);
    offerId = roomyOffer(s);
    // Each test starts from an empty state and journal (the database is the suite's).
    await sql(
      "drop schema if exists gpurental_journal cascade; drop schema if exists terraform_remote_state cascade",
    );
  });

  test("a runner lost while 6 instances are creating: a fresh runner adopts all 6, 6 deploys ever, and destroy leaves none", async () => {
    const config = pgConfig(paidConfig(s, offerId, 6));
    const r1 = await runner(config);
    slowCreating(s);
    await loseRunner(
      r1,
      async () => liveInstances(s).length === 6 && (await journalAnswers()) === 6,
      "6 instances creating, their answers in the journal",
    );
    const paid = liveInstances(s).map((i) => i.id);
    expect(paid).toHaveLength(6);

    // Runner 2: only the configuration. The state holds none of them; the journal all.
    const r2 = await runner(config);
    expect(await stateIds(r2)).toEqual([]);
    s.backend.setTransitions("immediate");
    const p = expectCode(await r2.run(["plan", "-input=false", "-no-color"]), 0);
    for (const id of paid) expect(output(p)).toContain(`Will adopt instance ${id}`);
    expectNoPassword(p);
    const a = expectCode(await r2.run(["apply", "-auto-approve", "-input=false", "-no-color"]), 0);
    for (const id of paid) expect(output(a)).toMatch(new RegExp(`Adopted instance ${id}, deployed at`));
    expectNoPassword(a);
    expect(deploysEver(s)).toBe(6);
    expect((await stateIds(r2)).sort()).toEqual([...paid].sort());
    // The key runner 1 created and never saved is revoked; runner 2's own is the only one left.
    expect(liveKeys()).toHaveLength(1);

    expectCode(await r2.run(["destroy", "-auto-approve", "-input=false"]), 0);
    expect(liveInstances(s)).toHaveLength(0);
    expect(liveKeys()).toHaveLength(0);
    expect(deploysEver(s)).toBe(6);
  });

  test("the state's write fails after an apply: a fresh runner adopts what it deployed, and a later state rm is respected", async () => {
    const config = pgConfig(paidConfig(s, offerId, 2));
    const r1 = await runner(config);
    await refuseStateWrites();
    const failed = await r1.run(["apply", "-auto-approve", "-input=false", "-no-color"]);
    expect(failed.code).toBe(1);
    expect(output(failed)).toContain("errored.tfstate");
    const paid = liveInstances(s).map((i) => i.id);
    expect(paid).toHaveLength(2);
    // The run settled at its Shutdown, in time, before the write: the two instances and the key
    // closed against the state it read then (none), to open again should that write fail.
    const pending = await sql(
      `select count(*) from gpurental_journal.records
        where record->>'op' = 'closed' and record->'state'->>'pending' = 'true'`,
    );
    expect(Number(pending)).toBe(3);
    await sql(ALLOW_STATE_WRITES);

    // Runner 2: only the configuration. No state holds them; the journal says what was deployed.
    const r2 = await runner(config);
    expect(await stateIds(r2)).toEqual([]);
    const p = expectCode(await r2.run(["plan", "-input=false", "-no-color"]), 0);
    expect(output(p)).toContain("An apply's state write failed: 3 objects it created are in no state");
    for (const id of paid) expect(output(p)).toContain(`Will adopt instance ${id}`);
    const a = expectCode(await r2.run(["apply", "-auto-approve", "-input=false", "-no-color"]), 0);
    for (const id of paid) expect(output(a)).toContain(`Adopted instance ${id}`);
    expectNoPassword(a);
    expect(deploysEver(s)).toBe(2);
    expect((await stateIds(r2)).sort()).toEqual([...paid].sort());
    // The key runner 1 created and no state got is revoked; runner 2's own is the only one left.
    expect(liveKeys()).toHaveLength(1);

    // This time the write went through: a `terraform state rm` afterwards is the user's word.
    const removed = (await r2.state()).values?.root_module?.resources?.find(
      (x) => x.address === "gpurental_instance.gpu[1]",
    )?.values.id;
    expect(paid).toContain(removed);
    expectCode(await r2.run(["state", "rm", "gpurental_instance.gpu[1]"]), 0);
    const again = expectCode(await r2.run(["apply", "-auto-approve", "-input=false", "-no-color"]), 0);
    expect(output(again)).not.toContain("Adopted instance");
    expect(deploysEver(s)).toBe(3);
    expectCode(await r2.run(["destroy", "-auto-approve", "-input=false"]), 0);
    // What the state no longer held is left running, as the user asked.
    expect(liveInstances(s).map((i) => i.id)).toEqual([removed]);
  });

  test("Ctrl-C once with a pg backend: the stop's write saves both instances, and a state rm right after is respected", async () => {
    const r = await runner(pgConfig(paidConfig(s, offerId, 2)));
    slowCreating(s);
    const run = r.spawn(["apply", "-auto-approve", "-input=false", "-no-color"], {}, { processGroup: true });
    try {
      await eventually(
        async () => liveInstances(s).length === 2 && liveKeys().length === 1,
        "2 instances creating and the key created",
      );
    } catch (err) {
      run.kill("SIGKILL");
      throw new Error(`${(err as Error).message}\n${output(await run.result)}`);
    }
    run.interrupt();
    const stopped = await run.result;
    expect(stopped.code).toBe(1);
    expect(output(stopped)).toContain("kept, not replaced");
    const kept = await stateIds(r);
    expect(kept.sort()).toEqual(
      liveInstances(s)
        .map((i) => i.id)
        .sort(),
    );
    // Before any plan, the user removes one from the state: theirs to run outside it. The stopped
    // run settled at its Shutdown against the state it read then, so the journal does not take it
    // back.
    const removed = (await r.state()).values?.root_module?.resources?.find(
      (x) => x.address === "gpurental_instance.gpu[1]",
    )?.values.id;
    expectCode(await r.run(["state", "rm", "gpurental_instance.gpu[1]"]), 0);
    s.backend.setTransitions("immediate");
    const a = expectCode(await r.run(["apply", "-auto-approve", "-input=false", "-no-color"]), 0);
    expect(output(a)).not.toContain("Adopted instance");
    expect(deploysEver(s)).toBe(3);
    expectCode(await r.run(["destroy", "-auto-approve", "-input=false"]), 0);
    expect(liveInstances(s).map((i) => i.id)).toEqual([removed]);
  });

  test("the state's write fails with the file journal: the same runner's next apply, even with -target, adopts", async () => {
    const r = await runner(pgConfig(paidConfig(s, offerId, 1)), { GPURENTAL_JOURNAL_URL: undefined });
    delete r.env.GPURENTAL_JOURNAL_URL;
    await refuseStateWrites();
    expect((await r.run(["apply", "-auto-approve", "-input=false", "-no-color"])).code).toBe(1);
    const paid = liveInstances(s).map((i) => i.id);
    expect(paid).toHaveLength(1);
    await sql(ALLOW_STATE_WRITES);
    // A -target plan skips what it does not target, so it claims nothing there; the state it reads
    // tells that the instance is in no state, and that is enough to adopt it.
    const a = expectCode(
      await r.run(["apply", "-auto-approve", "-input=false", "-no-color", "-target=gpurental_instance.gpu"]),
      0,
    );
    // (Settled at Shutdown, the next command warns that they are in no state; a settle cut short by
    // Terraform's kill, on a busy machine, leaves them open: adopted all the same.)
    expect(output(a)).toContain(`Adopted instance ${paid[0]}`);
    expect(deploysEver(s)).toBe(1);
    // Its create revoked the key the failed write lost (no state holds it); the full apply creates
    // the configuration's own.
    expect(liveKeys()).toHaveLength(0);
    expectCode(await r.run(["apply", "-auto-approve", "-input=false", "-no-color"]), 0);
    expect(deploysEver(s)).toBe(1);
    expect(liveKeys()).toHaveLength(1);
    expectCode(await r.run(["destroy", "-auto-approve", "-input=false"]), 0);
    expect(liveInstances(s)).toHaveLength(0);
  });

  test("a runner lost with an ephemeral API key open: the next runner revokes it, and adopts the instance", async () => {
    const name = "run-key-journal-pg";
    const config = pgConfig(`ephemeral "gpurental_api_key" "run" {
  name = "${name}"
  kind = "team"
}

provider "gpurental" {
  alias = "run"
  token = ephemeral.gpurental_api_key.run.secret
}

resource "gpurental_instance" "slow" {
  provider    = gpurental.run
  offer_id    = "${offerId}"
  template_id = "${s.creds.template_id}"
  disk_gb     = 20
}`);
    const r1 = await runner(config);
    slowCreating(s);
    await loseRunner(
      r1,
      async () => liveInstances(s).length === 1 && (await journalAnswers()) === 1,
      "the instance creating",
    );
    const [left] = liveKeys(name);
    expect(left).toBeDefined();

    const r2 = await runner(config);
    s.backend.setTransitions("immediate");
    expectCode(await r2.run(["plan", "-input=false", "-no-color"]), 0);
    expect(s.backend.state().api_keys[left!.id]!.revoked_at).not.toBeNull();
    expectCode(await r2.run(["apply", "-auto-approve", "-input=false"]), 0);
    expect(deploysEver(s)).toBe(1);
    expectCode(await r2.run(["destroy", "-auto-approve", "-input=false"]), 0);
    expect(liveInstances(s)).toHaveLength(0);
    expect(liveKeys(name)).toHaveLength(0);
  });

  test("a runner lost with the resident provider process on: the next runner adopts what its session deployed", async () => {
    const config = pgConfig(paidConfig(s, offerId, 3));
    const r1 = await runner(config);
    residents.use(r1, "pgj");
    r1.env.GPURENTAL_PROVIDER_RESIDENT = "on";
    slowCreating(s);
    await loseRunner(
      r1,
      async () => liveInstances(s).length === 3 && (await journalAnswers()) === 3,
      "3 instances creating under a resident session",
    );
    const paid = liveInstances(s).map((i) => i.id);
    // The resident process outlives the killed launch; the next runner is another machine.
    const r2 = await runner(config);
    s.backend.setTransitions("immediate");
    const a = expectCode(await r2.run(["apply", "-auto-approve", "-input=false", "-no-color"]), 0);
    for (const id of paid) expect(output(a)).toContain(`Adopted instance ${id}`);
    expect(deploysEver(s)).toBe(3);
    expectCode(await r2.run(["destroy", "-auto-approve", "-input=false"]), 0);
    expect(liveInstances(s)).toHaveLength(0);
    await residents.stop(r1);
  });

  test("four runners on four workspaces apply at once: no entry crosses workspaces, no duplicate, no orphan", async () => {
    const config = pgConfig(
      paidConfig(s, offerId, 3)
        .replace(/^resource "gpurental_api_key"[\s\S]*?\n}\n\n/, "")
        .replace('label       = "journal"', "label       = terraform.workspace"),
    );
    const spaces = ["w1", "w2", "w3", "w4"];
    // The pg backend creates workspaces under one lock of its own: one after the other.
    const rs: TerraformHarness[] = [];
    for (const ws of spaces) {
      const r = await runner(config);
      expectCode(await r.run(["workspace", "new", ws]), 0);
      rs.push(r);
    }
    // Every lock of a workspace in the pg backend also takes its workspace-creation lock for a
    // moment, so two runners locking different workspaces at once can refuse each other: Terraform
    // retries a refused lock only under -lock-timeout, as docs/ci.md tells runners to set.
    const lock = "-lock-timeout=120s";
    const applied = await Promise.all(rs.map((r) => r.run(["apply", "-auto-approve", "-input=false", lock])));
    for (const a of applied) expectCode(a, 0);
    expect(deploysEver(s)).toBe(12);
    const held = await Promise.all(rs.map(stateIds));
    const all = held.flat();
    expect(new Set(all).size).toBe(12);
    expect(
      liveInstances(s)
        .map((i) => i.id)
        .sort(),
    ).toEqual([...all].sort());
    // Each workspace's journal names only the instances its own state holds.
    const rows = (
      await sql(
        "select j.workspace || ' ' || (r.record->>'id') from gpurental_journal.records r join gpurental_journal.journals j using (state_key) where r.record ? 'id'",
      )
    )
      .split("\n")
      .filter(Boolean)
      .map((l) => l.split(" ") as [string, string]);
    expect(rows).toHaveLength(12);
    for (const [ws, id] of rows) expect(held[spaces.indexOf(ws)]).toContain(id);
    for (const [i, ws] of spaces.entries()) {
      const labels = liveInstances(s)
        .filter((x) => held[i]!.includes(x.id))
        .map((x) => x.label);
      expect(labels).toEqual([ws, ws, ws]);
    }
    await Promise.all(
      rs.map(async (r) => expectCode(await r.run(["destroy", "-auto-approve", "-input=false", lock]), 0)),
    );
    expect(liveInstances(s)).toHaveLength(0);
  });

  test("the database down before a create: the apply fails naming the journal and its setting, and sends no deploy", async () => {
    // The state stays local here: only the journal's database goes down.
    const config = `${TERRAFORM_BLOCK}\nprovider "gpurental" {}\n\n${paidConfig(s, offerId, 2)}\n`;
    const r = await runner(config, { TF_LOG_PROVIDER: "trace" });
    await pg!.halt();
    try {
      const a = await r.run(["apply", "-auto-approve", "-input=false", "-no-color"]);
      expect(a.code).toBe(1);
      const text = output(a).replace(/\s+/g, " ");
      expect(text).toContain("The deploy journal in PostgreSQL could not be");
      expect(text).toContain("the database could not be reached");
      expect(text).toContain("set by the GPURENTAL_JOURNAL_URL environment variable");
      expect(text).toContain("postgres://***@127.0.0.1:");
      expectNoPassword(a);
      expect(deploysEver(s)).toBe(0);
    } finally {
      await pg!.resume();
    }
  });

  test("the database down mid-apply: no deploy is sent after the last record the journal committed", async () => {
    const config = `${TERRAFORM_BLOCK}\nprovider "gpurental" {}\n\n${paidConfig(s, offerId, 8).replace(/^resource "gpurental_api_key"[\s\S]*?\n}\n\n/, "")}\n`;
    // A deploy whose answer the journal could not record is looked for briefly by the next apply.
    const r = await runner(config, { GPURENTAL_RECONCILE_TIMEOUT: "2s" });
    // One deploy at a time, each answered a second late, so the database goes down mid-way.
    s.backend.addFault({ route: "POST /v1/instances", kind: "latency", latencyMs: 1000 });
    const run = r.spawn(["apply", "-auto-approve", "-input=false", "-no-color", "-parallelism=1"]);
    await until(() => liveInstances(s).length >= 2, "2 deploys");
    await pg!.halt();
    const res = await run.result;
    await pg!.resume();
    expect(res.code).toBe(1);
    // The create planned next (its final plan) or its record: nothing is sent without either.
    expect(output(res).replace(/\s+/g, " ")).toMatch(
      /The deploy journal in PostgreSQL could not be (read|written)/,
    );
    expectNoPassword(res);
    const sent = Number(
      await sql(
        "select count(*) from gpurental_journal.records where record->>'op' in ('sent', 'entry') and record->>'kind' = 'instance'",
      ),
    );
    expect(deploysEver(s)).toBeLessThan(8);
    expect(deploysEver(s)).toBe(sent);

    // With the database back, the next apply converges on 8, adopting what no state holds.
    s.backend.clearFaults();
    expectCode(await r.run(["apply", "-auto-approve", "-input=false"]), 0);
    expect(deploysEver(s)).toBe(8);
    expect(liveInstances(s)).toHaveLength(8);
    expectCode(await r.run(["destroy", "-auto-approve", "-input=false"]), 0);
    expect(liveInstances(s)).toHaveLength(0);
  });

  test("with the file journal in automation, a fresh runner's plan says once that a lost run would go unseen", async () => {
    const config = pgConfig(paidConfig(s, offerId, 3));
    const r = await runner(config, { GPURENTAL_JOURNAL_URL: undefined });
    delete r.env.GPURENTAL_JOURNAL_URL;
    const p = expectCode(await r.run(["plan", "-input=false", "-no-color"]), 0);
    const said = output(p).split("A run of this state that was lost would go unseen here").length - 1;
    expect(said).toBe(1);
    expect(output(p).replace(/\s+/g, " ")).toContain("set GPURENTAL_JOURNAL_URL (or journal_url)");
    expect(output(p)).toContain("gpurental strays");
    // With a history, or with the shared store, it is not said.
    expectCode(await r.run(["apply", "-auto-approve", "-input=false"]), 0);
    r.write({ "main.tf": pgConfig(paidConfig(s, offerId, 4)) });
    const again = expectCode(await r.run(["plan", "-input=false", "-no-color"]), 0);
    expect(output(again)).not.toContain("would go unseen");
    const shared = await runner(pgConfig(paidConfig(s, offerId, 5)));
    expect(output(expectCode(await shared.run(["plan", "-input=false", "-no-color"]), 0))).not.toContain(
      "would go unseen",
    );
    expectCode(await r.run(["destroy", "-auto-approve", "-input=false"]), 0);
    expect(liveInstances(s)).toHaveLength(0);
  });
});
