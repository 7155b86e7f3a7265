import { readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { runStrays, STRAYS_EXIT } from "../../../src/cli/account/strays";
import { journalFiles, readJournalFile } from "../../../src/journal";
import { testIO } from "../commands/io";
import {
  alive,
  control,
  expectCode,
  liveInstances,
  output,
  providerPids,
  resetSuite,
  type Suite,
  startSuite,
  stateOf,
  stopSuite,
  until,
  writeConfig,
} from "./helpers";
import { expectServedByResident, ResidentDirs } from "./residents";

// Ephemeral resources and a state without access tokens, with the real terraform CLI (1.11) and
// the fake backend. A run creates a team key for itself (ephemeral "gpurental_api_key"), configures
// a provider alias with it, deploys an instance that receives the key through secret_env_wo and
// keeps its own access secrets out of the state (store_access_secrets = false), and hands that
// instance's access token to a second instance's write-only argument (ephemeral
// "gpurental_instance_access"). No key secret and no access token may appear in the state, in a
// saved plan as `terraform show -json` renders it, or in TF_LOG=trace output; every key the run
// created is revoked when the run ends: after a success, a failure, a single Ctrl-C, and (by the
// next run) after the provider was killed.

jest.setTimeout(300_000);

let s: Suite;
/** The resident directory of the test that runs with the resident provider process. */
const residents = new ResidentDirs();

beforeAll(async () => {
  s = await startSuite();
});
afterEach(() => residents.stop(s?.tf));
afterAll(async () => {
  await residents.stop(s?.tf);
  await stopSuite(s);
  residents.remove();
});
beforeEach(() => {
  resetSuite(s);
  rmSync(join(s.tf.workDir, ".terraform", "gpurental-journal"), { recursive: true, force: true });
  for (const f of ["tfplan"]) rmSync(join(s.tf.workDir, f), { force: true });
});

const KEY_NAME = "run-key-ephemeral-e2e";
const SECRET_PATTERN = /gpr_[0-9a-f]{48}/;

/** The run key, a provider alias configured with it, and `body`. */
function withRunKey(body: string): string {
  return `ephemeral "gpurental_api_key" "run" {
  name = "${KEY_NAME}"
  kind = "team"
}

provider "gpurental" {
  alias = "run"
  token = ephemeral.gpurental_api_key.run.secret
}

${body}`;
}

function fullConfig(): string {
  return withRunKey(`resource "gpurental_instance" "a" {
  provider              = gpurental.run
  offer_id              = "${s.creds.offer_id}"
  template_id           = "${s.creds.jupyter_template_id}"
  disk_gb               = 50
  store_access_secrets  = false
  secret_env_wo         = { RUN_KEY = ephemeral.gpurental_api_key.run.secret }
  secret_env_wo_version = 1
}

ephemeral "gpurental_instance_access" "a" {
  instance_id = gpurental_instance.a.id
}

resource "gpurental_instance" "b" {
  offer_id              = "${s.creds.offer_id}"
  template_id           = "${s.creds.template_id}"
  disk_gb               = 30
  store_access_secrets  = false
  secret_env_wo         = { A_TOKEN = ephemeral.gpurental_instance_access.a.access_token }
  secret_env_wo_version = 1
}

output "a_jupyter" {
  value = gpurental_instance.a.jupyter_address
}

output "a_ssh" {
  value = "ssh -p \${gpurental_instance.a.ssh_port} \${gpurental_instance.a.ssh_user}@\${gpurental_instance.a.ssh_host}"
}`);
}

/** The run keys in the backend: all of them, and those not revoked. */
function runKeys() {
  const all = Object.values(s.backend.state().api_keys).filter(
    (k) => k.org_id === s.creds.org_id && k.name === KEY_NAME,
  );
  return { all, live: all.filter((k) => k.revoked_at === null) };
}

async function instanceEnv(id: string): Promise<Array<{ key: string; value: string | null }>> {
  return ((await control(s, "GET", `/instances/${id}/env`)) as { env: never[] }).env;
}

/** Every file terraform left in the working directory (state, backups, saved plan). */
function workDirText(): string {
  const texts: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const p = join(dir, name);
      if (name === ".terraform") continue;
      if (statSync(p).isDirectory()) walk(p);
      else texts.push(readFileSync(p, "latin1"));
    }
  };
  walk(s.tf.workDir);
  return texts.join("\n");
}

function expectNone(where: string, text: string, secrets: readonly string[]): void {
  for (const secret of secrets) {
    if (text.includes(secret)) throw new Error(`${where} holds a secret (${secret.slice(0, 8)}…)`);
  }
  const key = SECRET_PATTERN.exec(text);
  if (key) throw new Error(`${where} holds an API key secret (${key[0].slice(0, 8)}…)`);
}

test("a run key, an alias, write-only hand-overs: no secret in state, saved plan or trace; every key revoked", async () => {
  writeConfig(s, fullConfig());
  const trace = { TF_LOG: "trace" };
  const planned = expectCode(await s.tf.run(["plan", "-input=false", "-out=tfplan"], trace), 0);
  expect(output(planned)).toContain("[TRACE]");
  // The plan opened a key for its own walk and revoked it when done.
  expect(runKeys().all.length).toBeGreaterThanOrEqual(1);
  expect(runKeys().live).toHaveLength(0);
  const shown = await s.tf.ok(["show", "-json", "tfplan"]);

  const applied = expectCode(await s.tf.run(["apply", "-input=false", "tfplan"], trace), 0);
  expect(runKeys().live).toHaveLength(0);

  const a = await stateOf(s, "gpurental_instance.a");
  const b = await stateOf(s, "gpurental_instance.b");
  const backendA = s.backend.instance(a.id as string)!;
  const token = backendA.access_token!;
  expect(token).toBeTruthy();
  // What the instances received: a's run key (a key that is now revoked), b's a's access token.
  const runKey = (await instanceEnv(a.id as string)).find((e) => e.key === "RUN_KEY")?.value;
  expect(runKey).toMatch(SECRET_PATTERN);
  expect((await instanceEnv(b.id as string)).find((e) => e.key === "A_TOKEN")?.value).toBe(token);
  // The alias deployed with the run's team key.
  expect(a.deployed_via_api_key).toMatchObject({ name: KEY_NAME, kind: "team" });
  expect(b.deployed_via_api_key).toBeNull();
  // Out of the state, with the address (token masked) and the SSH attributes kept.
  expect(a).toMatchObject({
    access_token: null,
    jupyter_url: null,
    open_url: null,
    store_access_secrets: false,
  });
  expect(a.jupyter_address).toContain("token=…");
  expect(a.ssh_port).toBeGreaterThan(0);
  const outputs = JSON.parse((await s.tf.ok(["output", "-json"])).stdout) as Record<
    string,
    { value: string }
  >;
  expect(outputs.a_jupyter!.value).toBe(a.jupyter_address);
  expect(outputs.a_ssh!.value).toBe(`ssh -p ${a.ssh_port} ${a.ssh_user}@${a.ssh_host}`);

  const jupyterUrl = (s.backend.renderInstance(a.id as string) as { jupyter_url: string | null }).jupyter_url;
  expect(jupyterUrl).toContain(token);
  const secrets = [token, runKey!, jupyterUrl!];
  expectNone("terraform show -json of the saved plan", shown.stdout, secrets);
  expectNone("plan output under TF_LOG=trace", output(planned), secrets);
  expectNone("apply output under TF_LOG=trace", output(applied), secrets);
  expectNone("terraform show -json of the state", (await s.tf.ok(["show", "-json"])).stdout, secrets);
  expectNone("the working directory (state, backup, saved plan)", workDirText(), secrets);

  // Refresh and plan: nothing to change, still nothing stored, still every key revoked.
  expectCode(await s.tf.run(["plan", "-input=false", "-detailed-exitcode"]), 0);
  expectCode(await s.tf.run(["apply", "-input=false", "-auto-approve", "-refresh-only"]), 0);
  expectNone("the state after a refresh", workDirText(), secrets);
  expect(runKeys().live).toHaveLength(0);

  expectCode(await s.tf.run(["destroy", "-input=false", "-auto-approve"]), 0);
  expect(liveInstances(s)).toHaveLength(0);
  expect(runKeys().live).toHaveLength(0);
  // Every run key's journal entry is closed as revoked: nothing is left for a later sweep.
  const entries = journalFiles(join(s.tf.workDir, ".terraform", "gpurental-journal")).flatMap((f) => [
    ...readJournalFile(f).entries.values(),
  ]);
  const runEntries = entries.filter((e) => e.kind === "api_key" && e.request.ephemeral === true);
  expect(runEntries.map((e) => e.id).sort()).toEqual(
    runKeys()
      .all.map((k) => k.id)
      .sort(),
  );
  expect(runEntries.every((e) => e.closed?.reason === "revoked")).toBe(true);
});

test("store_access_secrets = false survives an import: the apply that imports stores no secret", async () => {
  const body = `resource "gpurental_instance" "n" {
  offer_id             = "${s.creds.offer_id}"
  template_id          = "${s.creds.jupyter_template_id}"
  disk_gb              = 40
  store_access_secrets = false
}`;
  writeConfig(s, body);
  expectCode(await s.tf.run(["apply", "-input=false", "-auto-approve"]), 0);
  const id = (await stateOf(s, "gpurental_instance.n")).id as string;
  const token = s.backend.instance(id)!.access_token!;
  await s.tf.ok(["state", "rm", "gpurental_instance.n"]);
  writeConfig(s, `${body}\n\nimport {\n  to = gpurental_instance.n\n  id = "${id}"\n}`);
  const imported = expectCode(await s.tf.run(["apply", "-input=false", "-auto-approve", "-no-color"]), 0);
  expect(imported.stdout).toContain("1 imported, 0 added, 1 changed, 0 destroyed");
  const n = await stateOf(s, "gpurental_instance.n");
  expect(n).toMatchObject({ id, access_token: null, jupyter_url: null, open_url: null });
  expect(n.jupyter_address).toContain("token=…");
  expectNone("the state after the import", workDirText(), [token]);
  expectCode(await s.tf.run(["plan", "-input=false", "-detailed-exitcode"]), 0);
  expectCode(await s.tf.run(["destroy", "-input=false", "-auto-approve"]), 0);
});

test("a failed apply still revokes the run's key", async () => {
  writeConfig(
    s,
    withRunKey(`resource "terraform_data" "fails" {
  provisioner "local-exec" {
    command     = "exit 3"
    environment = { RUN_KEY = ephemeral.gpurental_api_key.run.secret }
  }
}`),
  );
  const r = expectCode(await s.tf.run(["apply", "-input=false", "-auto-approve", "-no-color"]), 1);
  expect(output(r)).toContain("local-exec provisioner error");
  expect(runKeys().all.length).toBeGreaterThanOrEqual(1);
  expect(runKeys().live).toHaveLength(0);
});

test("with the resident provider process (the default at a terminal), a failed apply still revokes the run's key", async () => {
  const dir = residents.use(s.tf, "eph");
  writeConfig(
    s,
    withRunKey(`resource "terraform_data" "fails" {
  provisioner "local-exec" {
    command     = "exit 3"
    environment = { RUN_KEY = ephemeral.gpurental_api_key.run.secret }
  }
}`),
  );
  // The first launch starts the resident process; every launch of the apply is then its session.
  expectCode(await s.tf.run(["validate", "-no-color"]), 0);
  const r = expectCode(
    await s.tf.run(["apply", "-input=false", "-auto-approve", "-no-color"], { TF_LOG: "debug" }),
    1,
  );
  expectServedByResident(r, dir);
  expect(runKeys().all.length).toBeGreaterThanOrEqual(1);
  // The session's end closes what Terraform left open; the resident process outlives it.
  await until(() => runKeys().live.length === 0, "the run's key to be revoked", 10_000);
});

function slowConfig(): string {
  return withRunKey(`resource "gpurental_instance" "slow" {
  provider    = gpurental.run
  offer_id    = "${s.creds.offer_id}"
  template_id = "${s.creds.template_id}"
  disk_gb     = 20
}`);
}

test("a single Ctrl-C while the alias deploys: the run's key is revoked as Terraform stops", async () => {
  writeConfig(s, slowConfig());
  s.backend.setTransitions({ afterMs: 600_000 });
  const run = s.tf.spawn(["apply", "-auto-approve", "-input=false", "-no-color"], {}, { processGroup: true });
  await until(() => liveInstances(s).length === 1, "the instance to be creating");
  expect(runKeys().live).toHaveLength(1);
  run.interrupt();
  const r = await run.result;
  expect(r.code).not.toBe(0);
  await until(() => providerPids(run.pid!).length === 0, "the providers to exit", 10_000);
  expect(runKeys().live).toHaveLength(0);
  s.backend.setTransitions("immediate");
  expectCode(await s.tf.run(["destroy", "-input=false", "-auto-approve"]), 0);
});

test("kill -9 mid-apply: gpurental strays lists the left key, and the next run revokes it", async () => {
  writeConfig(s, slowConfig());
  s.backend.setTransitions({ afterMs: 600_000 });
  const run = s.tf.spawn(["apply", "-auto-approve", "-input=false", "-no-color"]);
  await until(() => liveInstances(s).length === 1, "the instance to be creating");
  const pids = providerPids(run.pid!);
  for (const pid of pids) process.kill(pid, "SIGKILL");
  await run.result;
  await until(() => pids.every((p) => !alive(p)), "the providers to die", 10_000);
  const [left] = runKeys().live;
  expect(left).toBeDefined();

  // No state holds it: the strays report names it.
  const io = testIO({ ...s.tf.env }, s.tf.root);
  expect(await runStrays([s.tf.workDir], { json: true }, io)).toBe(STRAYS_EXIT.found);
  const found = JSON.parse(io.out) as { api_keys: { id: string; name: string }[] };
  expect(found.api_keys.map((k) => k.id)).toContain(left!.id);

  // The next run of the configuration (a plan is enough) revokes it.
  s.backend.setTransitions("immediate");
  const p = await s.tf.run(["plan", "-input=false", "-no-color"]);
  expect(p.code).toBe(0);
  expect(s.backend.state().api_keys[left!.id]!.revoked_at).not.toBeNull();
  expect(runKeys().live).toHaveLength(0);
  // The instance the killed run deployed is adopted, then everything goes.
  expectCode(await s.tf.run(["apply", "-input=false", "-auto-approve"]), 0);
  expectCode(await s.tf.run(["destroy", "-input=false", "-auto-approve"]), 0);
  expect(liveInstances(s)).toHaveLength(0);
  expect(runKeys().live).toHaveLength(0);
});
