import { readFileSync, writeFileSync } from "node:fs";
import { type AddressInfo, createServer } from "node:net";
import { GpurentalClient } from "../api/client";
import {
  ApiError,
  NetworkError,
  RequestAbortedError,
  ResponseValidationError,
  TimeoutError,
} from "../api/errors";
import type { Instance } from "../api/schemas";
import { currentRun, DeployJournal, locateJournal, type RunIdentity } from "../journal";
import { useFakeBackend } from "../testing/fake-backend";
import {
  adoptFromJournal,
  type DeployEnv,
  DeployOutcomeUnknownError,
  DeployReconcileError,
  deployJournaled,
  pendingDeployQueues,
} from "./instance-deploy";
import type { InstanceApi } from "./instance-model";

// Sending a deploy through the journal, and adopting what an earlier one left, without Terraform:
// the journal a reader finds afterwards, the instances on the fake backend, the errors and the
// warnings. Time that the code sleeps through is a fake clock, moved by the sleeps themselves.
// The parts that need no backend (matching, fingerprints, notes): instance-deploy.pure.test.ts.

const fake = useFakeBackend({ workDir: "test" });

/** A process of another boot: gone, so its entries can be adopted. */
const goneRun: RunIdentity = { id: "gone-run", pid: 1, boot: "a-boot-before-a-restart" };

/** A client; with `stop`, one the provider builds, whose calls Terraform's stop ends. */
function client(token = fake.creds.admin_session_token, stop?: AbortSignal): GpurentalClient {
  return new GpurentalClient({
    baseUrl: fake.url,
    token,
    signal: stop,
    dispatcher: fake.agent,
    retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 5 },
    sleep: async () => {},
  });
}

function journalOf(run: RunIdentity, now: () => number = Date.now): DeployJournal {
  return new DeployJournal(locateJournal({ cwd: fake.workDir, env: {} }), { run, now });
}

const FP = "fingerprint-of-the-configuration";

/** A deploy environment whose clock moves only when the code sleeps; the sleeps are recorded. */
function deployEnv(over: Partial<DeployEnv> = {}) {
  const clock = { t: Date.now(), sleeps: [] as number[] };
  const env: DeployEnv = {
    client: client(),
    deadline: clock.t + 60_000,
    sleep: async (ms) => {
      clock.sleeps.push(ms);
      clock.t += ms;
    },
    now: () => clock.t,
    settings: {
      journal: journalOf(currentRun()),
      reconcileTimeoutMs: 5000,
      partial: false,
      account: { base_url: fake.url, org_id: null },
    },
    fingerprint: FP,
    ...over,
  };
  return { env, clock };
}

const body = (over: Record<string, unknown> = {}) => ({
  offer_id: fake.creds.offer_id,
  template_id: fake.creds.template_id,
  disk_gb: 50,
  label: "deploy-test",
  ...over,
});

const live = () => fake.backend.listInstances(fake.creds.org_id).filter((i) => i.status !== "destroyed");

/** The entries of the working directory's journal, as a reader of the file finds them. */
const entries = () => journalOf(currentRun()).entries();

/** A deploy sent by a process that is gone, at `sentAt`, whose answer never came. */
function lostEntry(sentAt: number, request = body()): string {
  return journalOf(goneRun, () => sentAt).sent("instance", FP, request, []);
}

describe("deployJournaled", () => {
  test("a deploy is journaled before it is sent, without env values, and completed with its instance", async () => {
    const existing = await client().deployInstance(body());
    // Only instances the request could be taken for are recorded as there before it.
    await client().deployInstance(body({ label: "another" }));
    const { env } = deployEnv();
    const got = await deployJournaled(
      {
        ...body(),
        ssh_key_id: fake.creds.ssh_key_id,
        env_overrides: [
          { key: "A", value: "1", secret: false },
          { key: "PASSWORD", value: "hunter2", secret: true },
        ],
      },
      env,
    );
    expect(got.instance.id).not.toBe(existing.id);
    const [e] = entries();
    expect(got.entry).toBe(e!.entry);
    expect(e).toMatchObject({
      kind: "instance",
      fingerprint: FP,
      request: {
        offer_id: fake.creds.offer_id,
        template_id: fake.creds.template_id,
        disk_gb: 50,
        label: "deploy-test",
        ssh_key_id: fake.creds.ssh_key_id,
        env_overrides: 2,
      },
      before: [existing.id],
      id: got.instance.id,
      closed: null,
    });
    expect(JSON.stringify(e)).not.toContain("hunter2");
  });

  test("deploys that could be taken for one another are sent one after another: the later one's listing counts the earlier one's instance as there before it", async () => {
    // The first deploy's answer is slow; a second deploy listing meanwhile would not see its
    // instance, and could take it for its own were its answer lost.
    fake.backend.addFault({ route: "POST /v1/instances", kind: "latency", latencyMs: 300, times: 1 });
    const [first, second] = await Promise.all([
      deployJournaled(body(), deployEnv().env),
      deployJournaled(body(), deployEnv().env),
    ]);
    const [a, b] = entries();
    expect(a).toMatchObject({ id: first.instance.id, before: [] });
    expect(b).toMatchObject({ id: second.instance.id, before: [first.instance.id] });
    expect(pendingDeployQueues()).toBe(0);
  });

  test("deploys that no instance could match both run side by side", async () => {
    fake.backend.addFault({ route: "POST /v1/instances", kind: "latency", latencyMs: 300, times: 2 });
    const deployed = await Promise.all([
      deployJournaled(body({ label: "left" }), deployEnv().env),
      deployJournaled(body({ label: "right" }), deployEnv().env),
      deployJournaled(body({ disk_gb: 60 }), deployEnv().env),
    ]);
    // Every deploy was sent before any answer came.
    const ops = readFileSync(journalOf(currentRun()).file, "utf8")
      .trim()
      .split("\n")
      .slice(1)
      .map((l) => (JSON.parse(l) as { op: string }).op);
    expect(ops).toEqual(["sent", "sent", "sent", "answered", "answered", "answered"]);
    expect(new Set(deployed.map((d) => d.instance.id)).size).toBe(3);
    expect(entries().every((e) => e.before.length === 0)).toBe(true);
    expect(pendingDeployQueues()).toBe(0);
  });

  test("a request without label, key or env is journaled with nulls and no overrides", async () => {
    const { env } = deployEnv();
    await deployJournaled(
      { offer_id: fake.creds.offer_id, template_id: fake.creds.template_id, disk_gb: 50 },
      env,
    );
    expect(entries()[0]!.request).toEqual({
      offer_id: fake.creds.offer_id,
      template_id: fake.creds.template_id,
      disk_gb: 50,
      label: null,
      ssh_key_id: null,
      env_overrides: 0,
    });
  });

  test("without a journal or a fingerprint nothing is written and the entry is null", async () => {
    const { env } = deployEnv({ fingerprint: null });
    expect((await deployJournaled(body(), env)).entry).toBeNull();
    const { env: env2 } = deployEnv();
    env2.settings = { ...env2.settings, journal: null };
    expect((await deployJournaled(body(), env2)).entry).toBeNull();
    expect(entries()).toEqual([]);
    expect(live()).toHaveLength(2);
  });

  test("a refused deploy closes its entry as unsent, with the code, and is thrown", async () => {
    const { env } = deployEnv();
    const err = await deployJournaled(
      body({ disk_gb: 1900, offer_id: fake.creds.small_disk_offer_id }),
      env,
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(entries()[0]!.closed).toMatchObject({ reason: "unsent", detail: "DISK_TOO_LARGE" });
    expect(live()).toHaveLength(0);
  });

  test("a deploy that never reached the server closes its entry as unsent, with the error's kind, and is not looked for", async () => {
    const { env } = deployEnv();
    // Nothing listens where this client sends its deploy: the connection is refused.
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, "127.0.0.1", r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const nowhere = new GpurentalClient({
      baseUrl: `http://127.0.0.1:${port}`,
      token: fake.creds.admin_session_token,
      dispatcher: fake.agent,
      retry: { maxAttempts: 1 },
    });
    env.client = { ...bound(env.client), deployInstance: nowhere.deployInstance.bind(nowhere) };
    const logs: string[] = [];
    env.log = (m) => logs.push(m);
    const err = await deployJournaled(body(), env).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NetworkError);
    expect(entries()[0]!.closed).toMatchObject({ reason: "unsent", detail: "NetworkError" });
    expect(logs).toEqual([]);
  });

  test("a deploy whose time ran out before it was sent closes its entry as unsent and is not looked for", async () => {
    const { env, clock } = deployEnv();
    const real = bound(env.client);
    // The listing before the deploy uses up the create's time.
    env.client = {
      ...real,
      listInstances: async (...a: Parameters<InstanceApi["listInstances"]>) => {
        const got = await real.listInstances(...a);
        clock.t = env.deadline;
        return got;
      },
    };
    const logs: string[] = [];
    env.log = (m) => logs.push(m);
    const err = await deployJournaled(body(), env).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TimeoutError);
    expect(entries()[0]!.closed).toMatchObject({ reason: "unsent", detail: "TimeoutError" });
    expect(logs).toEqual([]);
    expect(live()).toHaveLength(0);
  });

  test("an interrupted deploy is looked for over a short window of its own, even though Terraform's stop aborted the create's signal and the client's", async () => {
    const { env, clock } = deployEnv();
    const stop = new AbortController();
    env.signal = stop.signal;
    // As the provider builds it: every call of the client ends with Terraform's stop.
    const real = bound(client(fake.creds.admin_session_token, stop.signal));
    // Terraform's stop comes while the deploy is in flight; the deploy lands all the same.
    fake.backend.addFault({ route: "POST /v1/instances", kind: "lost-response", times: 1 });
    env.client = {
      ...real,
      deployInstance: async (...a: Parameters<InstanceApi["deployInstance"]>) => {
        const sent = real.deployInstance(a[0]);
        return sent.finally(() => stop.abort(new Error("stop")));
      },
    };
    const logs: string[] = [];
    env.log = (m) => logs.push(m);
    const got = await deployJournaled(body(), env);
    expect(got.instance.id).toBe(live()[0]!.id);
    expect(entries()[0]!.id).toBe(got.instance.id);
    expect(clock.sleeps).toEqual([]);
  });

  test("an interrupted deploy that did not land: outcome unknown after at most 3 s", async () => {
    const { env, clock } = deployEnv();
    env.client = {
      ...bound(env.client),
      deployInstance: async () => {
        throw new RequestAbortedError("POST /v1/instances");
      },
    };
    const logs: string[] = [];
    env.log = (m) => logs.push(m);
    const err = (await deployJournaled(body(), env).catch((e: unknown) => e)) as DeployOutcomeUnknownError;
    expect(err).toBeInstanceOf(DeployOutcomeUnknownError);
    expect(err.windowMs).toBe(3000);
    expect(clock.sleeps).toEqual([250, 500, 1000]);
    expect(logs).toEqual(["deploy answer lost (interrupted); reconciling by listing instances"]);
    // A shorter reconcile window is kept.
    const short = deployEnv();
    short.env.client = env.client;
    short.env.settings = { ...short.env.settings, reconcileTimeoutMs: 1000 };
    const err2 = (await deployJournaled(body(), short.env).catch(
      (e: unknown) => e,
    )) as DeployOutcomeUnknownError;
    expect(err2.windowMs).toBe(1000);
  });

  test("an instance another journal entry names is never taken for a lost deploy's", async () => {
    const { env } = deployEnv();
    const real = bound(env.client);
    const other = client();
    let theirs: Instance | undefined;
    // Another apply (another workspace's journal) deploys the same configuration meanwhile.
    env.client = {
      ...real,
      deployInstance: async (...a: Parameters<InstanceApi["deployInstance"]>) => {
        theirs = await other.deployInstance(a[0]);
        const j = new DeployJournal(locateJournal({ cwd: fake.workDir, env: { TF_WORKSPACE: "staging" } }), {
          run: goneRun,
        });
        j.answered(j.sent("instance", "another", body(), []), theirs.id);
        fake.backend.addFault({ route: "POST /v1/instances", kind: "lost-response", times: 1 });
        return real.deployInstance(...a);
      },
    };
    const got = await deployJournaled(body(), env);
    expect(live()).toHaveLength(2);
    expect(got.instance.id).not.toBe(theirs!.id);
  });

  test("an answer that cannot be read is not resent: the deploy is looked for by listing", async () => {
    // A template of a mode this provider does not know: the answers naming it do not parse.
    const odd = fake.backend.createTemplate({ name: "odd", mode: "telnet" as never, visibility: "public" });
    const { env } = deployEnv();
    const logs: string[] = [];
    env.log = (m) => logs.push(m);
    const err = await deployJournaled(body({ template_id: odd.id }), env).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ResponseValidationError);
    expect(logs).toEqual(["deploy answer lost (unreadable answer); reconciling by listing instances"]);
    expect(live()).toHaveLength(1);
    expect(entries()[0]).toMatchObject({ id: null, closed: null });
  });

  test("a lost answer with two new matching instances names both and adopts neither", async () => {
    const { env } = deployEnv();
    const real = env.client;
    const other = client();
    let theirs: Instance | undefined;
    // Another client deploys the same configuration while ours is in flight; our answer is lost.
    env.client = {
      ...bound(real),
      deployInstance: async (...a: Parameters<InstanceApi["deployInstance"]>) => {
        theirs = await other.deployInstance(a[0]);
        fake.backend.addFault({ route: "POST /v1/instances", kind: "lost-response", times: 1 });
        return real.deployInstance(...a);
      },
    };
    const logs: string[] = [];
    env.log = (m) => logs.push(m);
    const err = (await deployJournaled(body(), env).catch((e: unknown) => e)) as DeployReconcileError;
    expect(err).toBeInstanceOf(DeployReconcileError);
    expect(err.name).toBe("DeployReconcileError");
    const ids = live().map((i) => i.id);
    expect(ids).toHaveLength(2);
    expect(ids).toContain(theirs!.id);
    expect(err.candidates.map((i) => i.id).sort()).toEqual([...ids].sort());
    expect(err.message).toBe(
      `The deploy's answer was lost and 2 matching new instances appeared (${err.candidates.map((i) => i.id).join(", ")}); another client deployed the same configuration at the same time. Import the one that belongs here with terraform import and destroy the other.`,
    );
    expect(logs).toEqual(["deploy answer lost (connection); reconciling by listing instances"]);
    // The entry stays open without an id: neither instance is adopted from it.
    expect(entries()[0]).toMatchObject({ id: null, closed: null });
  });

  test("a lost answer that lands is recorded, and said in the log", async () => {
    fake.backend.addFault({ route: "POST /v1/instances", kind: "lost-response", times: 1 });
    const { env } = deployEnv();
    const logs: string[] = [];
    env.log = (m) => logs.push(m);
    const got = await deployJournaled(body(), env);
    expect(got.instance.id).toBe(live()[0]!.id);
    expect(entries()[0]).toMatchObject({ id: got.instance.id, closed: null });
    expect(logs).toEqual([
      "deploy answer lost (connection); reconciling by listing instances",
      `the lost deploy created instance ${got.instance.id}`,
    ]);
  });

  test("a lost answer that never lands: outcome unknown, pointing at the journal, looked for over the whole window", async () => {
    fake.backend.addFault({ route: "POST /v1/instances", kind: "drop", times: 1 });
    const { env, clock } = deployEnv();
    const err = (await deployJournaled(body(), env).catch((e: unknown) => e)) as DeployOutcomeUnknownError;
    expect(err).toBeInstanceOf(DeployOutcomeUnknownError);
    expect(err.name).toBe("DeployOutcomeUnknownError");
    expect(err.windowMs).toBe(5000);
    const file = env.settings.journal!.file;
    expect(err.journalFile).toBe(file);
    expect(err.message).toContain("within the reconcile window (5 s)");
    expect(err.message).toContain(
      `If it lands, the next terraform apply of this configuration adopts it from the deploy journal (${file}) instead of deploying another.`,
    );
    expect(err.message).not.toContain("terraform import");
    // Backing off from 250 ms to 2 s until the window (5 s) would be passed.
    expect(clock.sleeps).toEqual([250, 500, 1000, 2000]);
    expect(entries()[0]).toMatchObject({ id: null, closed: null });
    expect(live()).toHaveLength(0);
  });

  test("the window ends with the create's deadline when that comes first", async () => {
    fake.backend.addFault({ route: "POST /v1/instances", kind: "drop", times: 1 });
    const { env, clock } = deployEnv();
    // A wait that ends exactly at the window's end is still taken.
    env.deadline = clock.t + 750;
    const err = (await deployJournaled(body(), env).catch((e: unknown) => e)) as DeployOutcomeUnknownError;
    expect(err.windowMs).toBe(750);
    expect(clock.sleeps).toEqual([250, 500]);
  });

  test("outcome unknown names the failure, whatever was thrown", () => {
    const lost = new DeployOutcomeUnknownError("the socket closed", 90_000, null);
    expect(lost.message).toMatch(
      /^The deploy's outcome is unknown: its answer was lost \(the socket closed\) and no matching instance appeared within the reconcile window \(90 s\)\. It was not sent again, so that it cannot be paid for twice\. /,
    );
    expect(lost.message).toMatch(
      / A longer reconcile_timeout \(or GPURENTAL_RECONCILE_TIMEOUT\) waits longer for a slow server\.$/,
    );
    expect(lost.cause).toBe("the socket closed");
    expect(new DeployOutcomeUnknownError(new Error("reset"), 90_000, null).message).toContain(
      "its answer was lost (reset)",
    );
  });

  test("without a journal, outcome unknown says how to find and import the instance", async () => {
    fake.backend.addFault({ route: "POST /v1/instances", kind: "drop", times: 1 });
    const { env } = deployEnv();
    env.settings = { ...env.settings, journal: null, reconcileTimeoutMs: 120_000 };
    env.deadline = env.now() + 600_000;
    const err = (await deployJournaled(body(), env).catch((e: unknown) => e)) as DeployOutcomeUnknownError;
    expect(err.journalFile).toBeNull();
    expect(err.message).toContain("(2 min)");
    expect(err.message).toContain(
      "If it lands, list the organization's instances (data source gpurental_instances) and import it with terraform import.",
    );
  });
});

/** The client's methods, bound, to replace one of them. */
function bound(c: InstanceApi): InstanceApi {
  return {
    listInstances: c.listInstances.bind(c),
    getInstance: c.getInstance.bind(c),
    stopInstance: c.stopInstance.bind(c),
    startInstance: c.startInstance.bind(c),
    destroyInstance: c.destroyInstance.bind(c),
    listOffers: c.listOffers.bind(c),
    getTemplate: c.getTemplate.bind(c),
    deployInstance: c.deployInstance.bind(c),
  };
}

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
    // A -target run leaves an entry handed to Terraform alone: its plan may not have claimed it.
    expect(
      await adoptFromJournal(deployEnv({ settings: { ...deployEnv().env.settings, partial: true } }).env),
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

describe("journal writes after the request that fail are logged, never failing what already happened", () => {
  /** Makes the journal unwritable for this provider: a newer provider's format version. */
  function spoilJournal(): void {
    const file = journalOf(currentRun()).file;
    const [header, ...rest] = readFileSync(file, "utf8").split("\n");
    writeFileSync(file, [JSON.stringify({ ...JSON.parse(header!), version: 99 }), ...rest].join("\n"));
  }

  let written: string[];
  beforeEach(() => {
    written = [];
    jest.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    });
  });
  afterEach(() => jest.restoreAllMocks());

  const warnings = () =>
    written
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l["@level"] === "warn")
      .map((l) => [l["@message"], String(l.error).includes("newer provider")]);

  /**
   * A deploy environment whose client spoils the journal each time `at` is called, just before the
   * real call (and, for a `lost` deploy, loses its answer): the journal's writes after it fail.
   */
  function spoiledEnv(at: "deployInstance" | "listInstances", lost = false): DeployEnv {
    const { env } = deployEnv();
    const real = bound(env.client);
    const spoilFirst =
      <A extends unknown[], R>(call: (...a: A) => Promise<R>) =>
      async (...a: A): Promise<R> => {
        spoilJournal();
        if (lost) fake.backend.addFault({ route: "POST /v1/instances", kind: "lost-response", times: 1 });
        return call(...a);
      };
    env.client =
      at === "deployInstance"
        ? { ...real, deployInstance: spoilFirst(real.deployInstance) }
        : { ...real, listInstances: spoilFirst(real.listInstances) };
    return env;
  }

  test("the answer of a deploy", async () => {
    const env = spoiledEnv("deployInstance");
    const got = await deployJournaled(body(), env);
    expect(got.instance.id).toBe(live()[0]!.id);
    expect(warnings()).toEqual([["deploy journal: could not record a deploy's answer", true]]);
  });

  test("the instance a lost deploy created", async () => {
    const env = spoiledEnv("deployInstance", true);
    const got = await deployJournaled(body(), env);
    expect(got.instance.id).toBe(live()[0]!.id);
    expect(warnings()).toEqual([["deploy journal: could not record a deploy's instance", true]]);
  });

  test("a refused deploy", async () => {
    const env = spoiledEnv("deployInstance");
    const err = await deployJournaled(
      body({ disk_gb: 1900, offer_id: fake.creds.small_disk_offer_id }),
      env,
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(warnings()).toEqual([["deploy journal: could not record a refused deploy", true]]);
  });

  test("the instance an adopted entry's deploy created", async () => {
    lostEntry(Date.now() - 60_000);
    const inst = await client().deployInstance(body());
    const env = spoiledEnv("listInstances");
    const got = await adoptFromJournal(env);
    expect(got).toMatchObject({ kind: "adopted", instance: { id: inst.id } });
    expect(warnings()).toEqual([["deploy journal: could not record an adopted instance", true]]);
  });

  test("a deploy that left nothing", async () => {
    lostEntry(Date.now() - 60_000);
    const env = spoiledEnv("listInstances");
    const got = await adoptFromJournal(env);
    expect(got.kind === "none" && got.diagnostics.map((d) => d.summary)).toEqual([
      expect.stringMatching(/never appeared$/),
    ]);
    expect(warnings()).toEqual([["deploy journal: could not record a deploy that left nothing", true]]);
  });
});
