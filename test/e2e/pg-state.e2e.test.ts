import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { build } from "esbuild";
import { type DemoCredentials, type FakeBackend, startFakeBackend } from "../../src/fake-backend";
import { type ProcessResult, runProcess } from "../../src/testing/child-process";
import { cdktfCliEnv } from "../cdktf/cli-env";
import { type RunResult, TerraformHarness } from "./harness";
import { findPostgres, type PostgresServer, postgresRequired, startPostgres } from "./postgres";

// Team pipelines share their state in PostgreSQL: Terraform's `pg` backend on a private server
// (./postgres.ts), the real terraform, the provider against the in-process fake backend. Several
// working directories of one harness stand for CI runners of the same pipeline; each has only the
// configuration, no state of its own. Then the example CDKTF app with PgBackend through `cdktf
// deploy`, `diff` and `destroy` on two runners. The steps run in order and build on each other.
//
// Without PostgreSQL's server programs the suite is skipped with one line saying why, unless
// GPURENTAL_REQUIRE_POSTGRES=1 (set by .ci/run) makes that a failure.

jest.setTimeout(180_000);

const ROOT = join(__dirname, "..", "..");
const CDKTF = join(
  dirname(require.resolve("cdktf-cli/package.json", { paths: [ROOT] })),
  "bundle",
  "bin",
  "cdktf",
);

const install = findPostgres();
if (install.missing && !postgresRequired()) {
  process.stderr.write(`test/e2e/pg-state.e2e.test.ts skipped: ${install.missing}\n`);
}
const describeWithPostgres = install.binDir || postgresRequired() ? describe : describe.skip;

let pg: PostgresServer | undefined;
let fake: FakeBackend;
let creds: DemoCredentials;
let tf: TerraformHarness;
/** Template of every instance; an offer of its own so the counts below are the suite's alone. */
let templateId: string;

/** The pipeline's configuration: `count` instances, state in PostgreSQL named by PG_CONN_STR. */
function configuration(count: number): string {
  return `terraform {
  backend "pg" {}
  required_providers {
    gpurental = { source = "gpurental/gpurental" }
  }
}

provider "gpurental" {}

resource "gpurental_instance" "gpu" {
  count        = ${count}
  offer_filter = { gpu_model = "L40S", num_gpus = 1 }
  template_id  = "${templateId}"
  disk_gb      = 50
  label        = "runner-\${count.index}"
}
`;
}

/** A new runner: a working directory with only the configuration, initialized against PostgreSQL. */
async function runner(name: string, count: number): Promise<TerraformHarness> {
  const r = tf.workingDir(name);
  r.write({ "main.tf": configuration(count) });
  await r.ok(["init", "-input=false"]);
  return r;
}

/** `terraform apply` started now, not awaited. */
function startApply(r: TerraformHarness, extra: string[] = []) {
  return r.spawn(["apply", "-no-color", "-auto-approve", "-input=false", ...extra]);
}

function expectCode(r: RunResult, code: number): RunResult {
  if (r.code !== code) {
    throw new Error(
      `expected exit code ${code}, got ${r.code}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`,
    );
  }
  return r;
}

/** Instances of the suite's offer that are not destroyed, in the fake backend's own records. */
function live() {
  return fake.listInstances(creds.org_id).filter((i) => i.status !== "destroyed");
}

/** Polls until `check` holds; the suite's timeout ends a wait that never does. */
async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((r) => setTimeout(r, 100));
}

/** Lets every instance waiting in a transition land (transitions are manual while a step holds the lock). */
function completeAll(): void {
  for (const i of live()) fake.completeTransition(i.id);
}

describeWithPostgres("Terraform state in PostgreSQL", () => {
  beforeAll(async () => {
    if (!install.binDir) {
      throw new Error(`GPURENTAL_REQUIRE_POSTGRES=1, and PostgreSQL is missing: ${install.missing}`);
    }
    [pg, fake, tf] = await Promise.all([
      startPostgres(install),
      startFakeBackend({ port: 0, seed: "demo", transitions: "immediate" }),
      TerraformHarness.create(),
    ]);
    creds = fake.credentials!;
    templateId = creds.template_id;
    const machine = fake.createMachine({ disk_gb: 4000 });
    fake.createOffer({
      machine_id: machine.id,
      gpu_model: "L40S",
      free_units: 16,
      price_per_hour_micro: 1_000_000,
    });
    Object.assign(tf.env, {
      GPURENTAL_BASE_URL: fake.url,
      GPURENTAL_TOKEN: creds.admin_session_token,
      PG_CONN_STR: pg.connStr(),
    });
  });

  afterAll(async () => {
    await pg?.stop();
    await fake?.close();
    tf?.cleanup();
  });

  describe("shared by several runners of a pipeline", sharedByRunners);
  describe("the example CDKTF app with PgBackend", cdktfApp);
});

function sharedByRunners(): void {
  let a: TerraformHarness;
  let b: TerraformHarness;

  beforeAll(async () => {
    if (!pg) return; // the suite's own set-up failed and says why
    a = await runner("runner-a", 2);
    b = await runner("runner-b", 2);
  });

  test("two runners share one state: what one applies, the other plans nothing for", async () => {
    const applied = expectCode(await a.run(["apply", "-auto-approve", "-input=false"]), 0);
    expect(applied.stdout).toContain("Apply complete! Resources: 2 added");
    expect(live()).toHaveLength(2);
    // The second runner has no state file of its own, and still sees both instances.
    expect(existsSync(join(b.workDir, "terraform.tfstate"))).toBe(false);
    expectCode(await b.run(["plan", "-input=false", "-detailed-exitcode"]), 0);

    // The change merged: the other runner applies it, the first sees it.
    for (const r of [a, b]) r.write({ "main.tf": configuration(3) });
    expect(expectCode(await b.run(["apply", "-auto-approve", "-input=false"]), 0).stdout).toContain(
      "Resources: 1 added, 0 changed, 0 destroyed",
    );
    expectCode(await a.run(["plan", "-input=false", "-detailed-exitcode"]), 0);
    expect(live()).toHaveLength(3);
    expect(await pg!.query("select name from terraform_remote_state.states")).toBe("default");
  });

  test("two applies at the same moment: one holds the lock, the other fails at once, nothing is deployed twice", async () => {
    for (const r of [a, b]) r.write({ "main.tf": configuration(5) });
    // New instances stay `creating` until completed here, so the holder keeps the lock.
    fake.setTransitions("manual");
    const runs = [startApply(a), startApply(b)];
    const first = await Promise.race(runs.map((run, i) => run.result.then((result) => ({ i, result }))));
    const holder = runs[1 - first.i]!;
    // The first to end is the one that did not get the lock, while the holder still waits.
    expect(first.result.code).toBe(1);
    expect(first.result.stderr).toContain("Error acquiring the state lock");
    expect(holder.exitCode).toBeNull();
    await until(() => live().filter((i) => i.status === "creating").length === 2);
    completeAll();
    expect(expectCode(await holder.result, 0).stdout).toContain("Resources: 2 added");
    expect(live()).toHaveLength(5);
    // Both runners now plan nothing.
    for (const r of [a, b]) expectCode(await r.run(["plan", "-input=false", "-detailed-exitcode"]), 0);
  });

  test("with -lock-timeout the second apply waits for the first, then finds nothing left to do", async () => {
    for (const r of [a, b]) r.write({ "main.tf": configuration(6) });
    const first = startApply(a);
    await until(() => live().some((i) => i.status === "creating"));
    let waiting = "";
    const second = startApply(b, ["-lock-timeout=120s"]);
    second.stdout!.on("data", (d) => {
      waiting += d;
    });
    await until(() => waiting.includes("Acquiring state lock. This may take a few moments..."));
    expect(second.exitCode).toBeNull();
    completeAll();
    expect(expectCode(await first.result, 0).stdout).toContain("Resources: 1 added");
    // It read the state only once it held the lock: the instance the first apply created is in it.
    const waited = expectCode(await second.result, 0);
    expect(waited.stdout).toContain("No changes.");
    expect(waited.stdout).toContain("Resources: 0 added, 0 changed, 0 destroyed");
    expect(live()).toHaveLength(6);
    fake.setTransitions("immediate");
  });

  test("the state survives the runner's directory: a fresh one sees every instance and plans nothing", async () => {
    rmSync(a.workDir, { recursive: true, force: true });
    const fresh = await runner("runner-c", 6);
    expectCode(await fresh.run(["plan", "-input=false", "-detailed-exitcode"]), 0);
    const listed = expectCode(await fresh.run(["state", "list"]), 0)
      .stdout.trim()
      .split("\n");
    expect(listed).toHaveLength(6);
    const inState = (await fresh.state()).values?.root_module?.resources?.map((r) => r.values.id);
    expect(new Set(inState)).toEqual(new Set(live().map((i) => i.id)));

    expect(expectCode(await fresh.run(["destroy", "-auto-approve", "-input=false"]), 0).stdout).toContain(
      "Resources: 6 destroyed",
    );
    expect(live()).toEqual([]);
  });

  test("a runner killed while it holds the lock leaves no lock behind", async () => {
    const killed = tf.workingDir("runner-d");
    killed.write({ "main.tf": configuration(1) });
    await killed.ok(["init", "-input=false"]);
    fake.setTransitions("manual");
    // Killed processes leave their files behind (the provider's plugin socket): keep them in the suite's root.
    const tmp = join(tf.root, "killed-tmp");
    mkdirSync(tmp);
    const run = killed.spawn(
      ["apply", "-no-color", "-auto-approve", "-input=false"],
      { TMPDIR: tmp },
      { processGroup: true },
    );
    await until(() => live().some((i) => i.status === "creating"));
    // A cancelled CI job: terraform and its provider end at once, with no chance to unlock.
    process.kill(-run.pid!, "SIGKILL");
    await run.result;
    // The pg backend's lock is a PostgreSQL advisory lock held by terraform's session: it ended
    // with the process, so the next runner gets the lock (no force-unlock). The timeout only
    // covers the server noticing the closed connection; a lock left behind would outlast it.
    const next = await b.run(["plan", "-input=false", "-detailed-exitcode", "-lock-timeout=10s"]);
    expect(next.stderr).not.toContain("Error acquiring the state lock");
    expect(next.code).not.toBe(1);
    fake.setTransitions("immediate");
  });
}

function cdktfApp(): void {
  let app: string;
  let env: NodeJS.ProcessEnv;

  /** A CI runner's checkout of the app: cdktf.json and the bundled app, nothing synthesized. */
  function checkout(name: string): string {
    const dir = join(tf.root, name);
    mkdirSync(dir);
    copyFileSync(app, join(dir, "app.js"));
    writeFileSync(
      join(dir, "cdktf.json"),
      JSON.stringify({ language: "typescript", app: "node app.js", projectId: "gpurental-pg-test" }),
    );
    return dir;
  }

  function cdktf(dir: string, args: string[]): Promise<ProcessResult> {
    return runProcess(process.execPath, [CDKTF, ...args], { cwd: dir, env });
  }

  async function ok(dir: string, args: string[]): Promise<string> {
    const r = await cdktf(dir, args);
    if (r.code !== 0) throw new Error(`cdktf ${args.join(" ")} exited ${r.code}\n${r.output}`);
    return r.output;
  }

  beforeAll(async () => {
    if (!pg) return; // the suite's own set-up failed and says why
    creds = fake.seedDemo();
    app = join(tf.root, "cdktf-app.js");
    await build({
      entryPoints: [join(ROOT, "examples", "cdktf-app", "main.ts")],
      outfile: app,
      bundle: true,
      platform: "node",
      target: "node20",
      packages: "external",
      logLevel: "silent",
    });
    env = cdktfCliEnv({
      HOME: tf.env.HOME,
      TMPDIR: tf.env.TMPDIR,
      TF_CLI_CONFIG_FILE: tf.env.TF_CLI_CONFIG_FILE,
      CDKTF_HOME: join(tf.root, "cdktf-home"),
      GPURENTAL_PROVIDER_CODE_CACHE_DIR: tf.env.GPURENTAL_PROVIDER_CODE_CACHE_DIR,
      GPURENTAL_BASE_URL: fake.url,
      GPURENTAL_TOKEN: creds.admin_session_token,
      GPURENTAL_SSH_KEY_ID: creds.ssh_key_id,
      GPURENTAL_CDKTF_BACKEND: "pg",
      PG_CONN_STR: pg.connStr(),
      // The bundled app leaves cdktf, constructs and zod to be required from this package.
      NODE_PATH: join(ROOT, "node_modules"),
    });
    for (const k of Object.keys(env)) if (env[k] === undefined) delete env[k];
  });

  test("deploys on one runner; another, with the lock file, plans nothing offline and destroys", async () => {
    const first = checkout("cdktf-runner-1");
    await ok(first, ["deploy", "gpu-workstation", "--auto-approve", "--skip-provider-lock"]);
    const stackDir = join(first, "cdktf.out", "stacks", "gpu-workstation");
    const synthesized = JSON.parse(readFileSync(join(stackDir, "cdk.tf.json"), "utf8"));
    expect(synthesized.terraform.backend).toEqual({ pg: { schema_name: "gpu_workstation" } });
    expect(JSON.stringify(synthesized)).not.toContain(pg!.connStr());
    expect(live().map((i) => i.label)).toEqual(["cdktf-workstation"]);
    expect(await pg!.query("select name from gpu_workstation.states")).toBe("default");
    expect(existsSync(join(first, "terraform.gpu-workstation.tfstate"))).toBe(false);

    // The lock file init wrote records the mirror's package hash; committed, it lets a fresh
    // runner skip cdktf's `terraform providers lock`, which would ask the public registry.
    const lock = readFileSync(join(stackDir, ".terraform.lock.hcl"), "utf8");
    expect(lock).toContain(tf.install.hash);
    expect(lock).toContain('constraints = "0.1.0"');
    rmSync(first, { recursive: true, force: true });

    const second = checkout("cdktf-runner-2");
    mkdirSync(join(second, "cdktf.out", "stacks", "gpu-workstation"), { recursive: true });
    writeFileSync(join(second, "cdktf.out", "stacks", "gpu-workstation", ".terraform.lock.hcl"), lock);
    const diff = await ok(second, ["diff", "gpu-workstation"]);
    expect(diff).toContain("No changes. Your infrastructure matches the configuration.");
    expect(diff).not.toContain("providers lock");

    await ok(second, ["destroy", "gpu-workstation", "--auto-approve", "--skip-synth"]);
    expect(live()).toEqual([]);
    // CHECKPOINT_DISABLE, DISABLE_VERSION_CHECK, CDKTF_DISABLE_PLUGIN_CACHE_ENV and CDKTF_HOME
    // kept terraform and cdktf out of HOME.
    expect(readdirSync(env.HOME!)).toEqual([]);
  });
}
