import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import {
  control,
  expectCode,
  liveInstances,
  output,
  resetSuite,
  type Suite,
  startSuite,
  stateOf,
  stopSuite,
  writeConfig,
} from "./helpers";

// secret_env_wo through the real terraform CLI (1.11 or later) against the fake backend: the values
// reach the instance (the fake's /_control/instances/:id/env) and appear nowhere Terraform writes or
// prints: state, a saved plan as `terraform show -json` renders it, and TF_LOG=trace output. Only a
// new secret_env_wo_version replaces the instance; new values alone plan nothing; import and
// refresh never touch them.

jest.setTimeout(300_000);

let s: Suite;

beforeAll(async () => {
  s = await startSuite();
});
afterAll(() => stopSuite(s));
beforeEach(() => resetSuite(s));

const FIRST = "wo-first-5e0c93b7a1";
const SECOND = "wo-second-b27f4d18c6";
const ALL = [FIRST, SECOND];

function config(version: number): string {
  return `variable "api_token" {
  type      = string
  sensitive = true
  ephemeral = true
}

resource "gpurental_instance" "a" {
  offer_id              = "${s.creds.offer_id}"
  template_id           = "${s.creds.template_id}"
  disk_gb               = 50
  env                   = { MODE = "train" }
  secret_env_wo         = { API_TOKEN = var.api_token }
  secret_env_wo_version = ${version}
}`;
}

/** Ephemeral variables are given again to every command, a saved plan's apply included. */
const withToken = (token: string) => ({ TF_VAR_api_token: token });

/** The env the fake backend's instance runs with, read through its control API. */
async function instanceEnv(
  id: string,
): Promise<Array<{ key: string; value: string | null; secret: boolean }>> {
  return ((await control(s, "GET", `/instances/${id}/env`)) as { env: never[] }).env;
}

/** Every file terraform left in the working directory (state, backups, lock, saved plans' JSON). */
function workDirText(): string {
  const texts: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const p = join(dir, name);
      if (name === ".terraform") continue; // the provider mirror's symlinks
      if (statSync(p).isDirectory()) walk(p);
      else texts.push(readFileSync(p, "latin1"));
    }
  };
  walk(s.tf.workDir);
  return texts.join("\n");
}

function expectNoSecret(where: string, text: string): void {
  for (const secret of ALL) {
    if (text.includes(secret)) throw new Error(`${where} holds the write-only value ${secret}`);
  }
}

test("the values reach the instance and appear nowhere in plan, state or trace logs", async () => {
  writeConfig(s, config(1));
  const trace = { ...withToken(FIRST), TF_LOG: "trace" };
  const planned = expectCode(await s.tf.run(["plan", "-input=false", "-out=tfplan"], trace), 0);
  expect(planned.stdout).toMatch(/secret_env_wo\s+= \(write-only attribute\)/);
  expect(output(planned)).toContain("[TRACE]");
  expectNoSecret("plan output under TF_LOG=trace", output(planned));
  const shown = await s.tf.ok(["show", "-json", "tfplan"], withToken(FIRST));
  expectNoSecret("terraform show -json of the saved plan", shown.stdout);
  const change = (
    JSON.parse(shown.stdout) as { resource_changes: Array<{ change: { after: Record<string, unknown> } }> }
  ).resource_changes[0]!.change.after;
  expect(change).toMatchObject({ secret_env_wo_version: 1 });

  const applied = expectCode(await s.tf.run(["apply", "-input=false", "tfplan"], trace), 0);
  expectNoSecret("apply output under TF_LOG=trace", output(applied));

  const inst = await stateOf(s, "gpurental_instance.a");
  expect(inst).toMatchObject({ secret_env_wo: null, secret_env_wo_version: 1, env: { MODE: "train" } });
  expect(await instanceEnv(inst.id as string)).toEqual(
    expect.arrayContaining([
      { key: "API_TOKEN", value: FIRST, secret: true },
      { key: "MODE", value: "train", secret: false },
    ]),
  );
  expectNoSecret("terraform show -json of the state", (await s.tf.ok(["show", "-json"])).stdout);
  expectNoSecret("the working directory (state, backups, saved plan)", workDirText());

  // A refresh and a plan with the same values: nothing to do, still nothing stored.
  expectCode(await s.tf.run(["plan", "-input=false", "-detailed-exitcode"], withToken(FIRST)), 0);
  expectCode(
    await s.tf.run(["apply", "-input=false", "-auto-approve", "-refresh-only"], withToken(FIRST)),
    0,
  );
  expectNoSecret("the state after a refresh", workDirText());
  expectCode(await s.tf.run(["destroy", "-input=false", "-auto-approve"], withToken(FIRST)), 0);
  expect(liveInstances(s)).toHaveLength(0);
});

test("new values alone plan no change; a new secret_env_wo_version replaces the instance with them", async () => {
  writeConfig(s, config(1));
  expectCode(await s.tf.run(["apply", "-input=false", "-auto-approve"], withToken(FIRST)), 0);
  const first = await stateOf(s, "gpurental_instance.a");

  // Terraform cannot see a write-only value change: the documented behaviour.
  const quiet = expectCode(
    await s.tf.run(["plan", "-input=false", "-detailed-exitcode"], withToken(SECOND)),
    0,
  );
  expect(quiet.stdout).toContain("No changes.");

  writeConfig(s, config(2));
  const replace = expectCode(
    await s.tf.run(["plan", "-input=false", "-detailed-exitcode"], withToken(SECOND)),
    2,
  );
  expect(replace.stdout).toMatch(/gpurental_instance\.a must be replaced/);
  expect(replace.stdout).toMatch(/~ secret_env_wo_version\s+= 1 -> 2 # forces replacement/);
  expectCode(await s.tf.run(["apply", "-input=false", "-auto-approve"], withToken(SECOND)), 0);
  const second = await stateOf(s, "gpurental_instance.a");
  expect(second.id).not.toBe(first.id);
  expect(s.backend.instance(first.id as string)?.status).toBe("destroyed");
  expect(await instanceEnv(second.id as string)).toContainEqual({
    key: "API_TOKEN",
    value: SECOND,
    secret: true,
  });
  expectNoSecret("the working directory", workDirText());
  expectCode(await s.tf.run(["destroy", "-input=false", "-auto-approve"], withToken(SECOND)), 0);
});

test("import and refresh never read or store them; the version is adopted in place", async () => {
  writeConfig(s, config(1));
  expectCode(await s.tf.run(["apply", "-input=false", "-auto-approve"], withToken(FIRST)), 0);
  const inst = await stateOf(s, "gpurental_instance.a");
  await s.tf.ok(["state", "rm", "gpurental_instance.a"]);
  await s.tf.ok(["import", "-input=false", "gpurental_instance.a", inst.id as string], withToken(FIRST));
  expect(await stateOf(s, "gpurental_instance.a")).toMatchObject({
    id: inst.id,
    secret_env_wo: null,
    secret_env_wo_version: null,
  });

  const first = expectCode(
    await s.tf.run(["plan", "-input=false", "-detailed-exitcode"], withToken(FIRST)),
    2,
  );
  expect(first.stdout).toMatch(/gpurental_instance\.a will be updated in-place/);
  expect(first.stdout).not.toMatch(/must be replaced/);
  expectCode(await s.tf.run(["apply", "-input=false", "-auto-approve"], withToken(FIRST)), 0);
  expect(liveInstances(s).map((i) => i.id)).toEqual([inst.id]);
  expect(await stateOf(s, "gpurental_instance.a")).toMatchObject({
    secret_env_wo: null,
    secret_env_wo_version: 1,
  });
  expectNoSecret("the working directory after import", workDirText());
  expectCode(await s.tf.run(["destroy", "-input=false", "-auto-approve"], withToken(FIRST)), 0);
});

test("why the docs ask for an ephemeral variable: a plain one is kept in the saved plan", async () => {
  writeConfig(s, config(1).replace("  ephemeral = true\n", ""));
  expectCode(await s.tf.run(["plan", "-input=false", "-out=tfplan"], withToken(FIRST)), 0);
  const shown = await s.tf.ok(["show", "-json", "tfplan"]);
  expect(shown.stdout).toContain(FIRST); // the plan's variables, not the resource's values
  const after = (JSON.parse(shown.stdout) as { resource_changes: Array<{ change: { after: unknown } }> })
    .resource_changes[0]!.change.after;
  expect(JSON.stringify(after)).not.toContain(FIRST);
});
