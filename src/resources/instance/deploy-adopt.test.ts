import { readFileSync, writeFileSync } from "node:fs";
import type { Instance } from "../../api/schemas";
import { currentRun, DeployJournal, locateJournal } from "../../journal";
import {
  body,
  bound,
  client,
  deployEnv,
  entries,
  FP,
  fake,
  goneRun,
  journalOf,
  live,
  lostEntry,
} from "../../testing/instance-deploy";
import { adoptFromJournal } from "./deploy";
import type { InstanceApi } from "./model";

// Sending a deploy through the journal, and adopting what an earlier one left, without Terraform:
// the journal a reader finds afterwards, the instances on the fake backend, the errors and the
// warnings. Time that the code sleeps through is a fake clock, moved by the sleeps themselves.
// The parts that need no backend (matching, fingerprints, notes): instance-deploy.pure.test.ts.

describe("adoptFromJournal", () => {
  test("an entry whose instance no longer exists is closed as destroyed, and the next entry is adopted", async () => {
    const sender = journalOf(goneRun);
    const vanished = sender.sent("instance", FP, body(), []);
    sender.answered(vanished, "inst_that_never_existed");
    const inst = await client().deployInstance(body());
    const kept = sender.sent("instance", FP, body(), []);
    sender.answered(kept, inst.id);
    const { env } = deployEnv();
    const got = await adoptFromJournal(env);
    expect(got).toMatchObject({ kind: "adopted", instance: { id: inst.id } });
    if (got.kind !== "adopted") throw new Error("not adopted");
    // An entry with an id that is gone is no deploy that never appeared: no note of it.
    expect(got.diagnostics.map((d) => d.summary)).toEqual([
      `Adopted instance ${inst.id}, deployed at ${inst.created_at}`,
    ]);
    expect(got.diagnostics[0]!.detail).toContain("was interrupted before Terraform heard of it");
    const byEntry = new Map(entries().map((e) => [e.entry, e]));
    expect(byEntry.get(vanished)!.closed?.reason).toBe("destroyed");
    expect(byEntry.get(kept)!.closed).toBeNull();
  });

  test("an instance destroyed or being destroyed is not adopted", async () => {
    const c = client();
    const sender = journalOf(goneRun);
    // Destroyed first: going back to immediate transitions would finish a destroy left pending.
    for (const status of ["destroyed", "destroying"]) {
      fake.backend.setTransitions(status === "destroying" ? "manual" : "immediate");
      const inst = await c.deployInstance(body());
      if (status === "destroying") fake.backend.completeTransition(inst.id);
      await c.destroyInstance(inst.id);
      expect(fake.backend.instance(inst.id)!.status).toBe(status);
      sender.answered(sender.sent("instance", FP, body(), []), inst.id);
    }
    expect(live().map((i) => i.status)).toEqual(["destroying"]);
    const got = await adoptFromJournal(deployEnv().env);
    expect(got).toEqual({ kind: "none", diagnostics: [] });
    expect(entries().map((e) => e.closed?.reason)).toEqual(["destroyed", "destroyed"]);
  });

  test("an instance that cannot be read is an error naming it, and nothing is adopted or closed", async () => {
    const inst = await client().deployInstance(body());
    const sender = journalOf(goneRun);
    sender.answered(sender.sent("instance", FP, body(), []), inst.id);
    const { env } = deployEnv({ client: client("gps_not-a-valid-session-token") });
    const got = await adoptFromJournal(env);
    if (got.kind !== "error") throw new Error(`expected an error, got ${got.kind}`);
    expect(got.diagnostic.severity).toBe("error");
    expect(got.diagnostic.summary).toBe("Could not read an instance the deploy journal holds");
    expect(got.diagnostic.detail).toMatch(
      new RegExp(
        `^An interrupted apply deployed instance ${inst.id} for this configuration; it could not be read \\(GET /v1/instances/\\{id\\}: 401 TOKEN_INVALID: .*\\), so nothing was deployed in its place\\. Run terraform apply again\\.$`,
      ),
    );
    expect(entries()[0]!.closed).toBeNull();
  });

  test("a lost answer whose instances cannot be listed is an error, and nothing is deployed", async () => {
    const sentAt = Date.now() - 60_000;
    lostEntry(sentAt);
    const { env } = deployEnv({ client: client("gps_not-a-valid-session-token") });
    const got = await adoptFromJournal(env);
    if (got.kind !== "error") throw new Error(`expected an error, got ${got.kind}`);
    expect(got.diagnostic.summary).toBe("Could not list instances for the deploy journal");
    expect(got.diagnostic.detail).toMatch(
      new RegExp(
        `^An interrupted apply sent a deploy for this configuration at ${new Date(sentAt).toISOString()} whose answer was lost; the instances could not be listed to find it \\(GET /v1/instances: 401 TOKEN_INVALID: .*\\), so nothing was deployed\\. Run terraform apply again\\.$`,
      ),
    );
    expect(entries()[0]!.closed).toBeNull();
    expect(live()).toHaveLength(0);
  });

  test("a lost answer with two matching instances is an error naming both", async () => {
    const sentAt = Date.now() - 60_000;
    lostEntry(sentAt);
    const c = client();
    const a = await c.deployInstance(body());
    const b = await c.deployInstance(body());
    // Named in the order the API lists them.
    const listed = (await c.listInstances()).map((i) => i.id).filter((id) => id === a.id || id === b.id);
    const { env } = deployEnv();
    const got = await adoptFromJournal(env);
    if (got.kind !== "error") throw new Error(`expected an error, got ${got.kind}`);
    expect(got.diagnostic).toEqual({
      severity: "error",
      summary: "Several instances may be the one an interrupted deploy created",
      detail: `A deploy of this configuration sent at ${new Date(sentAt).toISOString()} lost its answer, and 2 matching instances appeared since (${listed.join(", ")}). Import the one that belongs here with terraform import; nothing was deployed.`,
    });
    expect(live()).toHaveLength(2);
  });

  test("a lost answer whose instance landed is adopted and recorded in its entry", async () => {
    lostEntry(Date.now() - 60_000);
    const inst = await client().deployInstance(body());
    const got = await adoptFromJournal(deployEnv().env);
    if (got.kind !== "adopted") throw new Error(`expected an adoption, got ${got.kind}`);
    expect(got.instance.id).toBe(inst.id);
    expect(got.diagnostics[0]!.detail).toContain("was left without the deploy's answer");
    expect(entries()[0]).toMatchObject({ id: inst.id, closed: null });
  });

  test("a young entry is waited for, backing off, until its instance lands", async () => {
    const { env, clock } = deployEnv();
    lostEntry(clock.t);
    const c = client();
    let inst: Instance | undefined;
    env.sleep = async (ms) => {
      clock.sleeps.push(ms);
      clock.t += ms;
      if (clock.sleeps.length === 3) inst = await c.deployInstance(body());
    };
    const got = await adoptFromJournal(env);
    expect(got).toMatchObject({ kind: "adopted", instance: { id: inst!.id } });
    expect(clock.sleeps).toEqual([250, 500, 1000]);
  });

  test("an entry with nothing to find is given up when its window has passed: closed as abandoned, with a warning", async () => {
    const { env, clock } = deployEnv();
    env.settings = { ...env.settings, reconcileTimeoutMs: 10_000 };
    const sentAt = clock.t;
    const entry = lostEntry(sentAt);
    const got = await adoptFromJournal(env);
    const at = new Date(sentAt).toISOString();
    expect(got).toEqual({
      kind: "none",
      diagnostics: [
        {
          severity: "warning",
          summary: `A deploy sent at ${at} never appeared`,
          detail: `An earlier apply sent a deploy of this configuration at ${at} and lost its answer; no matching instance has appeared since, so a new one is deployed. Should the old deploy still land, it is an instance no state holds: gpurental strays lists such instances. Deploy journal entry ${entry}.`,
        },
      ],
    });
    // The reconcile window (10 s) from when it was sent, backing off to 2 s, the last wait ending
    // with the window, and one listing after it.
    expect(clock.sleeps).toEqual([250, 500, 1000, 2000, 2000, 2000, 2000, 250]);
    expect(entries()[0]!.closed?.reason).toBe("abandoned");
  });

  test("a young entry the create's deadline cuts short is an error, kept in the journal, and nothing is deployed", async () => {
    const { env, clock } = deployEnv();
    env.deadline = clock.t + 3000;
    const sentAt = clock.t;
    const entry = lostEntry(sentAt);
    const got = await adoptFromJournal(env);
    // Each wait leaves a second for one more listing before the deadline: 250 + 500 + 1000 ms, and
    // not the 2 s wait that would end at 3.75 s.
    expect(clock.sleeps).toEqual([250, 500, 1000]);
    const until = new Date(sentAt + 5000).toISOString();
    expect(got).toEqual({
      kind: "error",
      diagnostic: {
        severity: "error",
        summary: "An earlier deploy of this configuration may still land",
        detail: `An earlier apply sent a deploy for this configuration at ${new Date(sentAt).toISOString()} and lost its answer, and no instance of it has appeared yet. It may still land until ${until}, later than this create's deadline leaves time to look, so nothing was deployed and the deploy journal keeps it. Run terraform apply again (after ${until} it is given up if nothing landed), or give the create a longer timeout. Deploy journal entry ${entry}.`,
      },
      diagnostics: [],
    });
    expect(entries()[0]!.closed).toBeNull();
    expect(live()).toHaveLength(0);
  });

  test("a window that ends less than a second before the deadline cannot be waited out: an error, the entry kept", async () => {
    const { env, clock } = deployEnv();
    // Waits of 250, 500, 1000 and 2000 ms reach 3.75 s; the 1.25 s left of the 5 s window would
    // leave no second for the listing after it before the deadline at 5.5 s.
    env.deadline = clock.t + 5500;
    lostEntry(clock.t);
    expect((await adoptFromJournal(env)).kind).toBe("error");
    expect(clock.sleeps).toEqual([250, 500, 1000, 2000]);
    expect(entries()[0]!.closed).toBeNull();
  });

  test("an error keeps the notes of the entries given up before it", async () => {
    const { env, clock } = deployEnv();
    env.deadline = clock.t + 3000;
    const old = clock.t - 10_000;
    lostEntry(old);
    lostEntry(clock.t);
    const got = await adoptFromJournal(env);
    expect(got.kind).toBe("error");
    expect(got.diagnostics.map((d) => d.summary)).toEqual([
      `A deploy sent at ${new Date(old).toISOString()} never appeared`,
    ]);
  });

  test("an entry sent at a time that cannot be read is given up after one listing", async () => {
    const { env, clock } = deployEnv();
    const entry = lostEntry(clock.t);
    const file = journalOf(currentRun()).file;
    const at = new Date(clock.t).toISOString();
    writeFileSync(file, readFileSync(file, "utf8").replace(`"at":"${at}"`, '"at":"not a time"'));
    expect(entries()[0]!.sent_at).toBe("not a time");
    const got = await adoptFromJournal(env);
    expect(got.kind).toBe("none");
    expect(clock.sleeps).toEqual([]);
    expect(entries().find((e) => e.entry === entry)!.closed?.reason).toBe("abandoned");
  });

  test("an entry sent in the future (another machine's clock) is waited for one window at most", async () => {
    const { env, clock } = deployEnv();
    lostEntry(clock.t + 3_600_000);
    expect((await adoptFromJournal(env)).kind).toBe("none");
    expect(clock.sleeps).toEqual([250, 500, 1000, 2000, 1250]);
    expect(entries()[0]!.closed?.reason).toBe("abandoned");
  });

  test("a wait that leaves exactly a second for the listing before the deadline is taken", async () => {
    const { env, clock } = deployEnv();
    env.deadline = clock.t + 1750;
    lostEntry(clock.t);
    expect((await adoptFromJournal(env)).kind).toBe("error");
    expect(clock.sleeps).toEqual([250, 500]);
  });

  test("a wait that ends exactly at the entry's window's end is still taken", async () => {
    const { env, clock } = deployEnv();
    env.settings = { ...env.settings, reconcileTimeoutMs: 750 };
    lostEntry(clock.t);
    expect((await adoptFromJournal(env)).kind).toBe("none");
    expect(clock.sleeps).toEqual([250, 500]);
  });

  test("an old entry with nothing to find is given up after one listing", async () => {
    const { env, clock } = deployEnv();
    lostEntry(clock.t - 10_000);
    const inst = await client().deployInstance(body());
    const second = journalOf(goneRun);
    second.answered(second.sent("instance", FP, body(), []), inst.id);
    const got = await adoptFromJournal(env);
    expect(clock.sleeps).toEqual([]);
    // The abandoned one is said first, then the adoption of the next.
    expect(got.kind).toBe("adopted");
    if (got.kind !== "adopted") return;
    expect(got.diagnostics.map((d) => d.summary)).toEqual([
      `A deploy sent at ${new Date(clock.t - 10_000).toISOString()} never appeared`,
      `Adopted instance ${inst.id}, deployed at ${inst.created_at}`,
    ]);
  });

  test("the adoption note says how the earlier apply ended", async () => {
    const inst = await client().deployInstance(body());
    const answeredAt = Date.now() - 60_000;
    const sender = journalOf(goneRun, () => answeredAt);
    const entry = sender.sent("instance", FP, body(), []);
    sender.answered(entry, inst.id);
    sender.handed(entry);
    // A -target run that saves its state elsewhere (-state) leaves an entry handed to Terraform
    // alone: its plan may not have claimed it, and the state that would tell is not read.
    const elsewhere = new DeployJournal(locateJournal({ cwd: fake.workDir, env: {}, stateElsewhere: true }), {
      run: currentRun(),
    });
    expect(
      await adoptFromJournal(
        deployEnv({ settings: { ...deployEnv().env.settings, journal: elsewhere, partial: true } }).env,
      ),
    ).toEqual({
      kind: "none",
      diagnostics: [],
    });
    const got = await adoptFromJournal(deployEnv().env);
    if (got.kind !== "adopted") throw new Error(`expected an adoption, got ${got.kind}`);
    expect(got.diagnostics).toEqual([
      {
        severity: "warning",
        summary: `Adopted instance ${inst.id}, deployed at ${inst.created_at}`,
        detail: `An earlier apply deployed instance ${inst.id} for this configuration at ${inst.created_at} but was stopped before Terraform saved it in the state. It is adopted instead of deploying another, and is billed from when it started running (status now: running). Deploy journal: ${entry}.`,
      },
    ]);
    // Its id was known: the entry keeps the answer it had.
    expect(entries()[0]).toMatchObject({ id: inst.id, answered_at: new Date(answeredAt).toISOString() });
  });

  test("an instance without a creation time is said to be deployed when its deploy was sent", async () => {
    const inst = await client().deployInstance(body());
    const sentAt = Date.now() - 60_000;
    const sender = journalOf(goneRun, () => sentAt);
    sender.answered(sender.sent("instance", FP, body(), []), inst.id);
    const { env } = deployEnv();
    const real = bound(env.client);
    // The contract allows a null created_at; the fake backend always sets one.
    env.client = {
      ...real,
      getInstance: async (...a: Parameters<InstanceApi["getInstance"]>) => ({
        ...(await real.getInstance(...a)),
        created_at: null,
      }),
    };
    const got = await adoptFromJournal(env);
    const at = new Date(sentAt).toISOString();
    expect(got.kind === "adopted" && got.diagnostics.map((d) => d.summary)).toEqual([
      `Adopted instance ${inst.id}, deployed at ${at}`,
    ]);
    expect(got.kind === "adopted" && got.diagnostics[0]!.detail).toContain(
      `for this configuration at ${at} but`,
    );
  });

  test("without a journal or a fingerprint nothing is adopted", async () => {
    const inst = await client().deployInstance(body());
    const sender = journalOf(goneRun);
    sender.answered(sender.sent("instance", FP, body(), []), inst.id);
    expect(await adoptFromJournal(deployEnv({ fingerprint: null }).env)).toEqual({
      kind: "none",
      diagnostics: [],
    });
    const { env } = deployEnv();
    env.settings = { ...env.settings, journal: null };
    expect(await adoptFromJournal(env)).toEqual({ kind: "none", diagnostics: [] });
    expect(entries()[0]!.taken).toBeNull();
  });
});
