import { readFileSync } from "node:fs";
import { type AddressInfo, createServer } from "node:net";
import { GpurentalClient } from "../../api/client";
import {
  ApiError,
  NetworkError,
  RequestAbortedError,
  ResponseValidationError,
  TimeoutError,
} from "../../api/errors";
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
} from "../../testing/instance-deploy";
import {
  DeployOutcomeUnknownError,
  DeployReconcileError,
  deployJournaled,
  pendingDeployQueues,
} from "./deploy";
import type { InstanceApi } from "./model";

// Sending a deploy through the journal, and adopting what an earlier one left, without Terraform:
// the journal a reader finds afterwards, the instances on the fake backend, the errors and the
// warnings. Time that the code sleeps through is a fake clock, moved by the sleeps themselves.
// The parts that need no backend (matching, fingerprints, notes): instance-deploy.pure.test.ts.

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
