import { spawnSync } from "node:child_process";
import { appendFileSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { createHarness } from "../../framework/testing";
import {
  currentRun,
  type DeployJournal,
  journalFiles,
  locateJournal,
  newRun,
  parseJournal,
  type RunIdentity,
} from "../../journal";
import type { CtyValue } from "../../plugin/cty";
import { createProvider } from "../../provider";
import { useFakeBackend } from "../../testing/fake-backend";
import { journalIn, journalServer, STORE_KINDS, type StoreKind } from "../../testing/journal-stores";
import { instanceFingerprint } from "./deploy";

// The deploy journal through the provider, as Terraform drives it, against the in-process fake
// backend. Each "process" is a provider with a run identity of its own: one whose pid has exited
// stands for an apply that was interrupted or killed.

type Rec = Record<string, CtyValue>;

const fake = useFakeBackend({ workDir: "test" });

/** The store the providers of the running tests keep their journal in. */
let kind: StoreKind = "file";

/** A run identity whose process has exited: what an interrupted apply leaves behind. */
function deadRun(): RunIdentity {
  const child = spawnSync(process.execPath, ["-e", "0"]);
  return { id: `dead-${child.pid}`, pid: child.pid!, boot: currentRun().boot };
}

/**
 * A configured provider standing for one provider process (or one session of a resident provider
 * process: a run of its own, and `ended` aborted when its launch is gone).
 */
async function provider(
  run: RunIdentity,
  env: NodeJS.ProcessEnv = {},
  extra: Rec = {},
  ended?: AbortSignal,
): Promise<ReturnType<typeof createHarness>> {
  const h = fake.provider({
    env: kind === "postgresql" ? { GPURENTAL_JOURNAL_URL: journalServer().connStr(), ...env } : env,
    run,
    ...(ended ? { ended } : {}),
  });
  const diags = await h.configure({ base_url: fake.url, token: fake.creds.admin_session_token, ...extra });
  expect(diags.filter((d) => d.severity === "error")).toEqual([]);
  return h;
}

const config = (over: Rec = {}): Rec => ({
  offer_id: fake.creds.offer_id,
  template_id: fake.creds.template_id,
  disk_gb: 50,
  label: "journal",
  env: { A: "1" },
  secret_env: { PASSWORD: "hunter2-secret" },
  ...over,
});

const live = () => fake.backend.listInstances(fake.creds.org_id).filter((i) => i.status !== "destroyed");
const liveKeys = (name: string) =>
  Object.values(fake.backend.state().api_keys).filter(
    (k) => k.org_id === fake.creds.org_id && k.name === name && k.revoked_at === null,
  );

async function create(h: Awaited<ReturnType<typeof provider>>, cfg: Rec = config()) {
  const p = await h.plan("gpurental_instance", null, cfg);
  expect(p.diags.filter((d) => d.severity === "error")).toEqual([]);
  const a = await h.apply("gpurental_instance", null, p.planned, cfg, p.private);
  return { plan: p, apply: a };
}

/** The journals of the working directory (its files, or its default and staging states in PostgreSQL). */
function journals() {
  if (kind === "postgresql") {
    return ["default", "staging"].map((ws) => {
      const j = journalIn(kind, locateJournal({ cwd: fake.workDir, env: { TF_WORKSPACE: ws } }));
      const entries = new Map(j.entries().map((e) => [e.entry, e]));
      return { file: j.file, text: JSON.stringify([...entries.values()]), entries, header: null };
    });
  }
  return journalFiles(join(fake.workDir, ".terraform", "gpurental-journal")).map((f) => ({
    file: f,
    text: readFileSync(f, "utf8"),
    ...parseJournal(readFileSync(f, "utf8")),
  }));
}

/** The journal of the working directory's default state, as a process of `run` writes it. */
function journalOf(run: RunIdentity): DeployJournal {
  return journalIn(kind, locateJournal({ cwd: fake.workDir, env: {} }), { run });
}

/** Sends `body` to the fake backend's /v1 as its administrator, outside any provider; its JSON answer. */
async function adminCall<T>(method: "POST" | "DELETE", path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${fake.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${fake.creds.admin_session_token}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return (await res.json()) as T;
}

/**
 * What a provider killed (kill -9) while its instance was creating leaves: the instance, and a
 * journal entry sent and answered by a process that is gone, never handed to Terraform.
 */
async function killedDeploy(cfg: Rec = config(), answered = true): Promise<string> {
  const inst = await adminCall<{ id: string }>("POST", "/v1/instances", {
    offer_id: cfg.offer_id,
    template_id: cfg.template_id,
    disk_gb: cfg.disk_gb,
    label: cfg.label,
    env_overrides: [{ key: "A", value: "1", secret: false }],
  });
  const args = {
    offer_id: cfg.offer_id as string,
    offer_filter: null,
    template_id: cfg.template_id as string,
    disk_gb: cfg.disk_gb as number,
    label: cfg.label as string,
    ssh_key_id: null,
    env: cfg.env as Record<string, string>,
    secret_env: cfg.secret_env as Record<string, string>,
    unset_env: null,
    desired_status: "running" as const,
  };
  const journal = journalOf(deadRun());
  const fp = instanceFingerprint(args, { base_url: fake.url, org_id: null });
  const request = answered
    ? { offer_id: args.offer_id, label: args.label }
    : { offer_id: args.offer_id, template_id: args.template_id, disk_gb: args.disk_gb, label: args.label };
  const entry = journal.sent("instance", fp, request, []);
  if (answered) journal.answered(entry, inst.id);
  return inst.id;
}

/**
 * A Ctrl-C while the instance is creating: Terraform's stop reaches the provider mid-wait. With
 * `launchGone`, the launch of a resident session is killed instead: the session's `ended` signal
 * is aborted just before the stop.
 */
async function interruptedDeploy(run = deadRun(), cfg: Rec = config(), launchGone = false): Promise<string> {
  fake.backend.setTransitions("manual");
  const ended = new AbortController();
  const h = await provider(run, {}, {}, ended.signal);
  const p = await h.plan("gpurental_instance", null, cfg);
  const pending = h.apply("gpurental_instance", null, p.planned, cfg, p.private);
  const answered = () =>
    journals()
      .flatMap((j) => [...j.entries.values()])
      .find((e) => e.id && !e.handed_at);
  for (let i = 0; i < 200 && !answered(); i++) await new Promise((r) => setTimeout(r, 10));
  const id = answered()!.id!;
  if (launchGone) ended.abort();
  h.service.stop();
  await pending;
  fake.backend.setTransitions("immediate");
  return id;
}

// Over either store: the same adoptions, whichever keeps the journal.
describe.each(STORE_KINDS)("interrupted deploys are adopted, never duplicated (%s)", (store) => {
  beforeEach(() => {
    kind = store;
  });
  afterEach(() => {
    kind = "file";
  });

  test("after kill -9: the next create of the same configuration adopts the instance, warning with its id and deploy time", async () => {
    const id = await killedDeploy();
    expect(live()).toHaveLength(1);

    const next = await provider(currentRun());
    const { plan, apply } = await create(next);
    expect(plan.diags.map((d) => d.summary)).toContainEqual(
      expect.stringMatching(`^Will adopt instance ${id}`),
    );
    const adopted = apply.diags.find((d) => d.summary.startsWith(`Adopted instance ${id}, deployed at `));
    expect(adopted).toBeDefined();
    expect(adopted!.summary).toContain(new Date(fake.backend.instance(id)!.created_at!).toISOString());
    expect(apply.value).toMatchObject({ id, status: "running", label: "journal" });
    expect(live()).toHaveLength(1);
  });

  test("after Ctrl-C: the instance returned mid-wait but never saved is adopted", async () => {
    const id = await interruptedDeploy();
    const next = await provider(currentRun());
    const { apply } = await create(next);
    expect(apply.value!.id).toBe(id);
    expect(live()).toHaveLength(1);
  });

  test("count = N: as many plans tell of an adoption as there are entries, each of its own entry", async () => {
    const ids = [await killedDeploy(), await killedDeploy()];
    const next = await provider(currentRun());
    const warned: string[] = [];
    jest.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => {
      warned.push(String(chunk));
      return true;
    });
    const notes: string[][] = [];
    for (let i = 0; i < 3; i++) {
      const p = await next.plan("gpurental_instance", null, config());
      notes.push(p.diags.map((d) => d.summary).filter((s) => s.startsWith("Will adopt")));
    }
    jest.restoreAllMocks();
    expect(notes).toEqual([
      [expect.stringMatching(`^Will adopt instance ${ids[0]},`)],
      [expect.stringMatching(`^Will adopt instance ${ids[1]},`)],
      [],
    ]);
    // The third plan found no entry left for it: nothing went wrong, so nothing is logged.
    expect(warned).toEqual([]);
  });

  test.each([
    ["read (a refresh)", "read"],
    ["planned with -refresh=false", "plan"],
  ])(
    "a deploy whose answer the journal never recorded, %s where a state holds it, is that state's: no create adopts it",
    async (_how, how) => {
      // The journal was out of reach when the answer came: `sent` and no `answered`, and the
      // instance saved in a state (of a backend the provider cannot read) at another address.
      const inst = await killedDeploy(config(), false);
      const lost = journalOf(currentRun()).entries()[0]!.entry;
      const next = await provider(currentRun());
      const held = await next.import("gpurental_instance", inst);
      expect(held.diags.filter((d) => d.severity === "error")).toEqual([]);
      if (how === "read") {
        expect((await next.read("gpurental_instance", held.value!)).value).toMatchObject({ id: inst });
      } else {
        // The state an apply saved holds everything a read gives (an import's leaves most of it to
        // the read): read here by a provider of another workspace, whose journal is another.
        const elsewhere = await provider(currentRun(), { TF_WORKSPACE: "elsewhere" });
        const saved = (await elsewhere.read("gpurental_instance", held.value!)).value!;
        const p = await next.plan("gpurental_instance", saved, config());
        expect(p.diags.filter((d) => d.severity === "error")).toEqual([]);
      }
      expect(
        journalOf(currentRun())
          .entries()
          .find((e) => e.entry === lost),
      ).toMatchObject({
        id: inst,
        closed: { reason: "claimed", detail: "read in a state" },
      });
      // A create of the same configuration deploys its own, and looks for nothing.
      const { plan, apply } = await create(next);
      expect(plan.diags.map((d) => d.summary)).toEqual([]);
      expect(apply.value!.id).not.toBe(inst);
      expect(live()).toHaveLength(2);
    },
  );

  test("each journal counts its own: two sessions of one resident process both tell of the entry", async () => {
    const id = await killedDeploy();
    for (const session of [newRun(process.pid), newRun(process.pid)]) {
      const h = await provider(session);
      const p = await h.plan("gpurental_instance", null, config());
      expect(p.diags.map((d) => d.summary)).toContainEqual(
        expect.stringMatching(`^Will adopt instance ${id},`),
      );
    }
  });

  test("a resident session whose launch is gone records nothing more: its stopped create is not handed, and a -target apply adopts it", async () => {
    // The session's run has the pid of its launch, which is gone.
    const id = await interruptedDeploy(deadRun(), config(), true);
    const entry = journals()
      .flatMap((j) => [...j.entries.values()])
      .find((e) => e.id === id);
    // No "handed": Terraform, whose launch is gone, never got the instance.
    expect(entry).toMatchObject({ id, handed_at: null, closed: null });
    // Even where no state can be read (it is kept elsewhere: -state-out).
    const targeted = await provider(currentRun(), {
      TF_CLI_ARGS: "-target=gpurental_instance.a -state-out=elsewhere.tfstate",
    });
    const { apply } = await create(targeted);
    expect(apply.value!.id).toBe(id);
    expect(live()).toHaveLength(1);
  });

  test("a -target apply adopts an instance handed to Terraform before a Ctrl-C only when the state it reads lacks it", async () => {
    const id = await interruptedDeploy(deadRun());
    const entry = journals()
      .flatMap((j) => [...j.entries.values()])
      .find((e) => e.id === id);
    expect(entry?.handed_at).toEqual(expect.any(String));
    // The state is kept elsewhere (-state-out): only a full plan's claims would tell. Left alone.
    const elsewhere = await provider(currentRun(), {
      TF_CLI_ARGS: "-target=gpurental_instance.a -state-out=elsewhere.tfstate",
    });
    expect((await create(elsewhere)).apply.value!.id).not.toBe(id);
    expect(live()).toHaveLength(2);
    // The local state is read, and Terraform never saved it there (a second Ctrl-C): adopted.
    const targeted = await provider(currentRun(), { TF_CLI_ARGS: "-target=gpurental_instance.a" });
    expect((await create(targeted)).apply.value!.id).toBe(id);
    expect(live()).toHaveLength(2);
  });

  test("count = N: each create takes a different entry, and the rest are deployed", async () => {
    const ids = [await killedDeploy(), await killedDeploy()];
    const next = await provider(currentRun());
    const made = await Promise.all([0, 1, 2].map(() => create(next)));
    const got = made.map((m) => m.apply.value!.id as string);
    expect(new Set(got).size).toBe(3);
    expect(got).toEqual(expect.arrayContaining(ids));
    expect(live()).toHaveLength(3);
  });

  test("a different configuration, workspace or account never adopts it", async () => {
    const id = await killedDeploy();
    const other = await provider(currentRun());
    expect((await create(other, config({ label: "other" }))).apply.value!.id).not.toBe(id);
    const ws = await provider(currentRun(), { TF_WORKSPACE: "staging" });
    await create(ws);
    // The secret value is part of the configuration too.
    const secret = await provider(currentRun());
    await create(secret, config({ secret_env: { PASSWORD: "another" } }));
    expect(live()).toHaveLength(4);
    // And the journal holds no secret value.
    for (const j of journals()) expect(j.text).not.toContain("hunter2");
  });

  test("an instance a state holds is claimed by the plan and never adopted", async () => {
    const id = await interruptedDeploy();
    const planner = await provider(deadRun());
    const state = (await planner.read("gpurental_instance", { ...config(), id } as Rec)).value!;
    const p = await planner.plan("gpurental_instance", state, config());
    expect(p.diags.filter((d) => d.severity === "error")).toEqual([]);
    const next = await provider(currentRun());
    const { apply } = await create(next);
    expect(apply.value!.id).not.toBe(id);
    expect(live()).toHaveLength(2);
  });

  test("the apply adopts what its plan said and nothing else: a plan without adoption deploys", async () => {
    const next = await provider(currentRun());
    const p = await next.plan("gpurental_instance", null, config());
    expect(p.diags.map((d) => d.summary).filter((x) => x.startsWith("Will"))).toEqual([]);
    // An entry that becomes adoptable after the plan is not taken by its apply.
    const id = await killedDeploy();
    const a = await next.apply("gpurental_instance", null, p.planned, config(), p.private);
    expect(a.diags.filter((d) => d.severity === "error")).toEqual([]);
    expect(a.value!.id).not.toBe(id);
    expect(a.diags.map((d) => d.summary)).not.toContainEqual(expect.stringMatching(/^Adopted/));
  });

  test("an entry the plan adopts that a state claims before the apply fails the create; nothing is deployed", async () => {
    const id = await killedDeploy();
    const next = await provider(currentRun());
    const p = await next.plan("gpurental_instance", null, config());
    expect(p.diags.map((d) => d.summary)).toContainEqual(expect.stringMatching(`^Will adopt instance ${id}`));
    journalOf(currentRun()).closeId(id, "claimed");
    const a = await next.apply("gpurental_instance", null, p.planned, config(), p.private);
    expect(a.diags.map((d) => d.summary)).toContainEqual(
      "The instance this plan adopts is no longer available",
    );
    expect(live()).toHaveLength(1);
  });

  test("an id an import of the same plan claims is never adopted as well, in either order", async () => {
    // The import first: the create's plan does not promise it, and its entry is closed.
    const first = await killedDeploy();
    const a = await provider(currentRun());
    const imported = await a.import("gpurental_instance", first);
    expect(imported.diags.filter((d) => d.severity === "error")).toEqual([]);
    const p = await a.plan("gpurental_instance", null, config());
    expect(p.diags.map((d) => d.summary).filter((x) => x.startsWith("Will"))).toEqual([]);
    // The create first: the import fails the plan, and the next plan leaves the id to the import.
    const second = await killedDeploy();
    const b = await provider(currentRun());
    const q = await b.plan("gpurental_instance", null, config());
    expect(q.diags.map((d) => d.summary)).toContainEqual(
      expect.stringMatching(`^Will adopt instance ${second}`),
    );
    const clash = await b.import("gpurental_instance", second);
    expect(clash.diags.map((d) => d.summary)).toContainEqual(
      `Instance ${second} is both imported and adopted by a create of this plan`,
    );
    const c = await provider(currentRun());
    const r = await c.plan("gpurental_instance", null, config());
    expect(r.diags.map((d) => d.summary).filter((x) => x.startsWith("Will"))).toEqual([]);
  });

  test("an instance destroyed meanwhile is skipped and a new one deployed", async () => {
    const id = await interruptedDeploy();
    await adminCall("DELETE", `/v1/instances/${id}`);
    const next = await provider(currentRun());
    const { apply } = await create(next);
    expect(apply.value!.id).not.toBe(id);
  });

  test("the provider warns at configure about deploys no state can hold", async () => {
    const id = await killedDeploy();
    const h = createHarness(
      createProvider({
        cwd: fake.workDir,
        env: kind === "postgresql" ? { GPURENTAL_JOURNAL_URL: journalServer().connStr() } : {},
        run: currentRun(),
        clientOptions: { dispatcher: fake.agent },
      }),
    );
    const diags = await h.configure({ base_url: fake.url, token: fake.creds.admin_session_token });
    const w = diags.find((d) => d.summary.startsWith("The deploy journal holds 1 request"));
    expect(w?.severity).toBe("warning");
    expect(w?.detail).toContain(`instance ${id}`);
  });
});

describe("resend only what provably did not land", () => {
  test("a late commit beyond the window fails with outcome unknown, and the next apply adopts it once it lands", async () => {
    fake.backend.addFault({ route: "POST /v1/instances", kind: "late-commit", delayMs: 1500, times: 1 });
    fake.backend.addFault({ route: "POST /v1/instances", kind: "lost-response", times: 1 });
    const first = await provider(deadRun(), {
      GPURENTAL_RECONCILE_TIMEOUT: "300ms",
      GPURENTAL_REQUEST_TIMEOUT: "300ms",
    });
    const { apply } = await create(first);
    expect(apply.value).toBeNull();
    const d = apply.diags.find((x) => x.summary === "Deploy outcome unknown");
    expect(d?.detail).toContain("the next terraform apply of this configuration adopts it");
    expect(live()).toHaveLength(0);
    while (fake.backend.lateCommitsPending() > 0) await new Promise((r) => setTimeout(r, 20));
    expect(live()).toHaveLength(1);

    const next = await provider(currentRun());
    const again = await create(next);
    expect(again.apply.value!.id).toBe(live()[0]!.id);
    expect(again.apply.diags.map((x) => x.summary)).toContainEqual(
      expect.stringMatching(/^Adopted instance /),
    );
    expect(live()).toHaveLength(1);
  });

  test("a late commit within the window is adopted by the same apply", async () => {
    fake.backend.addFault({ route: "POST /v1/instances", kind: "late-commit", delayMs: 800, times: 1 });
    const h = await provider(currentRun(), {
      GPURENTAL_RECONCILE_TIMEOUT: "10s",
      GPURENTAL_REQUEST_TIMEOUT: "300ms",
    });
    const { apply } = await create(h);
    expect(apply.diags.filter((x) => x.severity === "error")).toEqual([]);
    expect(apply.value!.id).toBe(live()[0]!.id);
    expect(live()).toHaveLength(1);
  });

  test("reconcile_timeout must be a duration, named on its attribute", async () => {
    const h = createHarness(createProvider({ cwd: fake.workDir, env: {} }));
    const diags = await h.configure({
      base_url: fake.url,
      token: fake.creds.admin_session_token,
      reconcile_timeout: "soon",
    });
    expect(diags.map((d) => [d.summary, d.path])).toEqual([
      ["Invalid duration", [{ attribute: "reconcile_timeout" }]],
    ]);
    const env = createHarness(
      createProvider({ cwd: fake.workDir, env: { GPURENTAL_RECONCILE_TIMEOUT: "5 minutes" } }),
    );
    const d2 = await env.configure({ base_url: fake.url, token: fake.creds.admin_session_token });
    expect(d2[0]?.detail).toContain("GPURENTAL_RECONCILE_TIMEOUT environment variable");
  });
});

describe("API keys nobody holds are revoked", () => {
  const keyConfig: Rec = { name: "ci-journal", kind: "team" };

  test("a lost creation answer: the key it made is revoked and the creation sent once more", async () => {
    fake.backend.addFault({ route: "POST /v1/api-keys", kind: "lost-response", times: 1 });
    const h = await provider(currentRun());
    const p = await h.plan("gpurental_api_key", null, keyConfig);
    const a = await h.apply("gpurental_api_key", null, p.planned, keyConfig);
    expect(a.diags.filter((d) => d.severity === "error")).toEqual([]);
    expect(liveKeys("ci-journal").map((k) => k.id)).toEqual([a.value!.id]);
  });

  test("a key whose creation landed after the window is revoked by the next apply", async () => {
    fake.backend.addFault({ route: "POST /v1/api-keys", kind: "late-commit", delayMs: 800, times: 1 });
    fake.backend.addFault({ route: "POST /v1/api-keys", kind: "lost-response", times: 1 });
    const first = await provider(deadRun(), {
      GPURENTAL_RECONCILE_TIMEOUT: "200ms",
      GPURENTAL_REQUEST_TIMEOUT: "200ms",
    });
    const p = await first.plan("gpurental_api_key", null, keyConfig);
    const a = await first.apply("gpurental_api_key", null, p.planned, keyConfig);
    expect(a.diags.map((d) => d.summary)).toEqual(["API key creation outcome unknown"]);
    while (fake.backend.lateCommitsPending() > 0) await new Promise((r) => setTimeout(r, 20));
    expect(liveKeys("ci-journal")).toHaveLength(1);
    const lost = liveKeys("ci-journal")[0]!.id;

    const next = await provider(currentRun());
    const p2 = await next.plan("gpurental_api_key", null, keyConfig);
    const a2 = await next.apply("gpurental_api_key", null, p2.planned, keyConfig);
    expect(a2.diags.filter((d) => d.severity === "error")).toEqual([]);
    expect(liveKeys("ci-journal").map((k) => k.id)).toEqual([a2.value!.id]);
    expect(a2.value!.id).not.toBe(lost);
  });

  test.each([
    ["read (a refresh)", "read"],
    ["planned with -refresh=false", "plan"],
  ])(
    "a key whose creation answer the journal never recorded, %s where a state holds it, is never revoked",
    async (_how, how) => {
      // The journal was out of reach when the answer came: `sent` and `handed`, no id; the state saved it.
      const gone = journalOf(deadRun());
      const unanswered = gone.sent("api_key", "sha256:ci-journal", keyConfig, []);
      const { key } = await adminCall<{ key: { id: string } }>("POST", "/v1/api-keys", keyConfig);
      gone.handed(unanswered);
      const next = await provider(currentRun());
      const held = await next.import("gpurental_api_key", key.id);
      if (how === "read") {
        expect((await next.read("gpurental_api_key", held.value!)).value).toMatchObject({ id: key.id });
      } else {
        const p = await next.plan("gpurental_api_key", held.value!, keyConfig);
        expect(p.diags.filter((d) => d.severity === "error")).toEqual([]);
      }
      expect(
        journalOf(currentRun())
          .entries()
          .find((e) => e.entry === unanswered),
      ).toMatchObject({
        id: key.id,
        closed: { reason: "claimed", detail: "read in a state" },
      });
      // The next apply's sweep leaves it alone.
      const other: Rec = { name: "another", kind: "team" };
      const p = await next.plan("gpurental_api_key", null, other);
      await next.apply("gpurental_api_key", null, p.planned, other);
      expect(liveKeys("ci-journal").map((k) => k.id)).toEqual([key.id]);
    },
  );

  test("a key returned to Terraform and claimed by a plan is never revoked", async () => {
    const first = await provider(deadRun());
    const p = await first.plan("gpurental_api_key", null, keyConfig);
    const kept = (await first.apply("gpurental_api_key", null, p.planned, keyConfig)).value!;
    const planner = await provider(deadRun());
    await planner.plan("gpurental_api_key", kept, keyConfig);
    const next = await provider(currentRun());
    const other: Rec = { name: "another", kind: "team" };
    const p2 = await next.plan("gpurental_api_key", null, other);
    await next.apply("gpurental_api_key", null, p2.planned, other);
    expect(liveKeys("ci-journal").map((k) => k.id)).toEqual([kept.id]);
  });

  test("a key returned to Terraform but never claimed (state not saved) is revoked by the next apply", async () => {
    const first = await provider(deadRun());
    const p = await first.plan("gpurental_api_key", null, keyConfig);
    const lost = (await first.apply("gpurental_api_key", null, p.planned, keyConfig)).value!;
    const next = await provider(currentRun());
    const p2 = await next.plan("gpurental_api_key", null, keyConfig);
    const made = (await next.apply("gpurental_api_key", null, p2.planned, keyConfig)).value!;
    expect(liveKeys("ci-journal").map((k) => k.id)).toEqual([made.id]);
    expect(made.id).not.toBe(lost.id);
  });
});

describe("journal file", () => {
  test("a torn last line is skipped; entries are pruned to closed tombstones; the format is versioned", async () => {
    const id = await killedDeploy();
    const [j] = journals();
    expect(j!.header).toMatchObject({ format: "gpurental-deploy-journal", version: 1, workspace: "default" });
    appendFileSync(j!.file, '{"op":"answered","entry":"x"');
    const next = await provider(currentRun());
    const { apply } = await create(next);
    expect(apply.value!.id).toBe(id);
    const after = journals()[0]!;
    const entries = [...after.entries.values()];
    expect(entries.filter((e) => e.closed === null).map((e) => e.id)).toEqual([id]);
    // Destroying it closes its entries.
    await next.apply("gpurental_instance", apply.value!, null, null);
    expect([...journals()[0]!.entries.values()].every((e) => e.closed !== null)).toBe(true);
  });

  test("journal_dir moves the journal", async () => {
    const h = await provider(currentRun(), {}, { journal_dir: "state/journal" });
    await create(h);
    expect(journalFiles(join(fake.workDir, "state", "journal"))).toHaveLength(1);
    expect(journals()).toHaveLength(0);
  });
});
