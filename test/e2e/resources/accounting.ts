import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runStrays, STRAYS_EXIT } from "../../../src/cli/account/strays";
import { testIO } from "../commands/io";
import type { RunResult } from "../harness";
import {
  alive,
  apply,
  expectCode,
  journalAnswers,
  liveInstances,
  output,
  plan,
  providerPids,
  type Suite,
  stateResources,
  TERRAFORM_BLOCK,
  until,
} from "./helpers";

// What "every paid instance is accounted for" means to the suites that interrupt an apply
// (interruptions.e2e.test.ts, one provider process per launch; resident-interruptions.e2e.test.ts,
// the resident provider process): instances and keys counted in the backend and in the state, the
// state a user puts back after Terraform was cut short, and the apply that must converge by
// adopting, never deploying twice, followed by a destroy that leaves nothing.

/** The name of the API key the interrupted configurations hold beside their instances. */
export const KEY_NAME = "ci-journal-e2e";
/** The secret env value of the interrupted instances, which no output may show. */
export const SECRET_ENV_VALUE = "journal-secret-7d1e";

/**
 * Gives the organization enough for an hour of ten instances' burn (the deploy balance rule) and
 * adds an offer with room for 20; returns the offer's id.
 */
export function roomyOffer(s: Suite): string {
  s.backend.setBalance(s.creds.org_id, 1_000_000_000);
  const machine = s.backend.createMachine({ disk_gb: 20_000, available_disk_gb: 20_000, registered: true });
  return s.backend.createOffer({
    machine_id: machine.id,
    gpu_model: "RTX 4090",
    num_gpus: 1,
    free_units: 20,
  }).id;
}

/** A configuration of one API key and `count` instances on `offerId`. */
export function paidConfig(s: Suite, offerId: string, count: number): string {
  return `resource "gpurental_api_key" "ci" {
  name = "${KEY_NAME}"
  kind = "team"
}

resource "gpurental_instance" "gpu" {
  count       = ${count}
  offer_id    = "${offerId}"
  template_id = "${s.creds.template_id}"
  disk_gb     = 50
  label       = "journal"
  secret_env  = { TOKEN = "${SECRET_ENV_VALUE}" }
}`;
}

/** The organization's API keys of the configuration that are not revoked. */
function liveKeys(s: Suite): string[] {
  return Object.values(s.backend.state().api_keys)
    .filter((k) => k.org_id === s.creds.org_id && k.name === KEY_NAME && k.revoked_at === null)
    .map((k) => k.id);
}

/** Instances and keys: in the backend, in the state, and those the backend bills outside the state. */
export async function counts(s: Suite) {
  const state = await stateResources(s);
  const inState = Object.values(state)
    .filter((r) => r.type === "gpurental_instance")
    .map((r) => r.values.id as string);
  const keysInState = Object.values(state)
    .filter((r) => r.type === "gpurental_api_key")
    .map((r) => r.values.id as string);
  const backend = liveInstances(s).map((i) => i.id);
  return {
    backend: backend.length,
    state: inState.length,
    untracked: backend.filter((id) => !inState.includes(id)).length,
    keys: liveKeys(s).length,
    keysInState: keysInState.length,
    strayKeys: liveKeys(s).filter((id) => !keysInState.includes(id)).length,
  };
}

/** Every instance the organization ever had deployed, destroyed ones included. */
export function deploysEver(s: Suite): number {
  return s.backend.listInstances(s.creds.org_id).length;
}

/** Instances are created but stay in `creating` until the transitions are made immediate again. */
export function slowCreating(s: Suite): void {
  s.backend.setTransitions({ afterMs: 600_000 });
}

/**
 * Terraform exits at a second interrupt even while it writes the state ("data loss may have
 * occurred"), and the local state it was writing can be left cut short. What a user does then:
 * put back terraform.tfstate.backup, which Terraform wrote before (it may already hold instances
 * of this apply), or, without one, remove the cut file. Says which, or null when the state is whole.
 */
export function putBackCutState(s: Suite): "backup" | "removed" | null {
  const path = join(s.tf.workDir, "terraform.tfstate");
  if (!existsSync(path)) return null;
  try {
    JSON.parse(readFileSync(path, "utf8"));
    return null;
  } catch {
    // Cut short: fall through.
  }
  if (existsSync(`${path}.backup`)) {
    copyFileSync(`${path}.backup`, path);
    return "backup";
  }
  rmSync(path);
  return "removed";
}

/** The instances the backend bills that the state does not hold. */
export async function untrackedIds(s: Suite): Promise<string[]> {
  const inState = new Set(Object.values(await stateResources(s)).map((r) => r.values.id));
  return liveInstances(s)
    .map((i) => i.id)
    .filter((id) => !inState.has(id));
}

/**
 * The apply after an interruption (with `env`): converges on `count` instances and the key, each
 * instance of `adopted` adopted from the deploy journal rather than deployed again, nothing billed
 * outside the state, and (`deploys`) as many deployed ever; then a destroy that leaves nothing.
 * Returns the apply's result.
 */
export async function convergeAndDestroy(
  s: Suite,
  count: number,
  adopted: readonly string[],
  env: NodeJS.ProcessEnv = {},
  /** Instances deployed ever (destroyed ones included) once the apply converged, when known. */
  deploys?: number,
): Promise<RunResult> {
  s.backend.setTransitions("immediate");
  const again = expectCode(await apply(s, [], env), 0);
  const text = output(again);
  for (const id of adopted)
    expect(text).toMatch(new RegExp(`Adopted instance ${id}, deployed at \\d{4}-\\d\\d-\\d\\dT`));
  expect(await counts(s)).toEqual({
    backend: count,
    state: count,
    untracked: 0,
    keys: 1,
    keysInState: 1,
    strayKeys: 0,
  });
  // Counted over every instance ever deployed, not only live ones: nothing was deployed twice.
  if (deploys !== undefined) expect(deploysEver(s)).toBe(deploys);
  expectCode(await s.tf.run(["destroy", "-auto-approve", "-input=false"]), 0);
  expect(await counts(s)).toEqual({
    backend: 0,
    state: 0,
    untracked: 0,
    keys: 0,
    keysInState: 0,
    strayKeys: 0,
  });
  return again;
}

/**
 * `terraform state rm` of one instance in configuration A (count = 4), then an import of it in
 * configuration B (another working directory, `b` under the harness's root): A's next apply never
 * adopts it back (it deploys a new one for the address its configuration still has, as the plan
 * says), and A's destroy leaves B's instance alone. Run with the harness's provider mode.
 */
export async function stateRmThenImportElsewhere(s: Suite, offerId: string): Promise<void> {
  s.tf.write({ "main.tf": mainTf(paidConfig(s, offerId, 4)) });
  expectCode(await apply(s), 0);
  const state = await stateResources(s);
  const moved = Object.values(state).find((r) => r.address === "gpurental_instance.gpu[3]")!.values
    .id as string;
  expectCode(await s.tf.run(["state", "rm", "gpurental_instance.gpu[3]"]), 0);

  const b = join(s.tf.root, "b");
  mkdirSync(b, { recursive: true });
  writeFileSync(
    join(b, "main.tf"),
    mainTf(`import {
  to = gpurental_instance.moved
  id = "${moved}"
}

resource "gpurental_instance" "moved" {
  offer_id    = "${offerId}"
  template_id = "${s.creds.template_id}"
  disk_gb     = 50
  label       = "journal"
  secret_env  = { TOKEN = "${SECRET_ENV_VALUE}" }
}`),
  );
  const inB = (args: string[]) => s.tf.spawn([`-chdir=${b}`, ...args, "-no-color"]).result;
  expectCode(await inB(["init", "-input=false"]), 0);
  const imported = output(expectCode(await inB(["apply", "-auto-approve", "-input=false"]), 0));
  expect(imported).toContain("1 imported, 0 added");
  expect(deploysEver(s)).toBe(4);

  // A: the removed address is deployed anew, as the plan says; the instance B holds is not adopted.
  const p = output(expectCode(await plan(s, ["-no-color"]), 2));
  expect(p).not.toMatch(/Will adopt|Will look for/);
  expect(p).toContain("Plan: 1 to add, 0 to change, 0 to destroy.");
  const again = output(expectCode(await apply(s, ["-no-color"]), 0));
  expect(again).not.toContain("Adopted instance");
  expect(deploysEver(s)).toBe(5);
  expect((await stateResources(s))["gpurental_instance.gpu[3]"]?.values.id).not.toBe(moved);

  // A's destroy leaves B's instance alone; B still holds it, with no change to plan.
  expectCode(await s.tf.run(["destroy", "-auto-approve", "-input=false"]), 0);
  expect(liveInstances(s).map((i) => i.id)).toEqual([moved]);
  expectCode(await inB(["plan", "-input=false", "-detailed-exitcode"]), 0);
  expectCode(await inB(["destroy", "-auto-approve", "-input=false"]), 0);
  expect(liveInstances(s)).toHaveLength(0);
  rmSync(b, { recursive: true, force: true });
}

function mainTf(body: string): string {
  return `${TERRAFORM_BLOCK}\nprovider "gpurental" {}\n\n${body}\n`;
}

/**
 * A deploy the server commits long after the reconcile window: the apply that gives it up deploys
 * another, and once the late one lands, every plan, apply and destroy warns naming it, its cost per
 * hour and what to do, and `gpurental strays` names it a late arrival, until it is destroyed.
 */
export async function lateArrivalIsNeverSilent(s: Suite, offerId: string): Promise<void> {
  s.tf.write({ "main.tf": mainTf(paidConfig(s, offerId, 3)) });
  s.backend.addFault({ route: "POST /v1/instances", kind: "late-commit", delayMs: 15_000, times: 1 });
  const env = { GPURENTAL_REQUEST_TIMEOUT: "1s", GPURENTAL_RECONCILE_TIMEOUT: "2s" };
  const first = await apply(s, [], env);
  expect(first.code).toBe(1);
  expect(output(first)).toContain("Deploy outcome unknown");
  // Before the late commit lands: the lost deploy is given up (its window has passed) and another
  // is deployed.
  const second = output(expectCode(await apply(s, [], env), 0));
  expect(second).toContain("never appeared");
  expect(s.backend.lateCommitsPending()).toBe(1);
  expect(await counts(s)).toMatchObject({ backend: 3, state: 3, untracked: 0 });
  await s.backend.flushLateCommits();
  const [late] = await untrackedIds(s);
  expect(late).toBeDefined();
  expect(deploysEver(s)).toBe(4);

  const warned = (r: RunResult) => {
    const text = output(r).replace(/\s+/g, " ");
    expect(text).toContain(
      `Instance ${late} landed after its deploy was given up: ¥2.51/h, held by no state`,
    );
    expect(text).toContain("gpurental strays --destroy");
    expect(text).toContain(`id = "${late}"`);
  };
  warned(expectCode(await plan(s), 0));
  warned(expectCode(await apply(s), 0));
  const io = testIO(s.tf.env, s.tf.root);
  expect(await runStrays([s.tf.workDir], {}, io)).toBe(STRAYS_EXIT.found);
  expect(io.out).toContain("Late arrivals of given-up deploys (1):");
  expect(io.out).toContain(`${late}: landed after the deploy journal gave up its deploy sent at`);
  // The destroy leaves it (no state holds it) and says so.
  warned(expectCode(await s.tf.run(["destroy", "-auto-approve", "-input=false"]), 0));
  expect(liveInstances(s).map((i) => i.id)).toEqual([late]);
  // Resolved: destroyed by gpurental strays --destroy; the warning stops.
  const destroy = testIO(s.tf.env, s.tf.root);
  expect(await runStrays([s.tf.workDir], { destroy: true, yes: true, wait: true }, destroy)).toBe(
    STRAYS_EXIT.none,
  );
  expect(liveInstances(s)).toHaveLength(0);
  expect(output(expectCode(await plan(s), 2))).not.toContain("landed after its deploy was given up");
}

/**
 * terraform killed while 4 instances are creating leaves 4 deploys no state holds, which the next
 * apply would adopt; `gpurental strays --output-import` writes import blocks for them instead, and
 * the plan then shows 4 imports and 4 creates, no adoption, and the apply does exactly that: no
 * instance at two addresses, none adopted, 8 deployed in all.
 */
export async function straysImportBlocksApplied(s: Suite, offerId: string): Promise<void> {
  const instances = paidConfig(s, offerId, 4).replace(/^resource "gpurental_api_key"[\s\S]*?\n}\n\n/, "");
  s.tf.write({ "main.tf": mainTf(instances) });
  slowCreating(s);
  const run = s.tf.spawn(["apply", "-auto-approve", "-input=false", "-no-color"]);
  await until(() => liveInstances(s).length === 4, "4 instances creating");
  await until(() => journalAnswers(s.tf.workDir) === 4, "the journal to record 4 answers");
  const launched = providerPids(run.pid!);
  run.kill("SIGKILL");
  await run.result;
  await until(() => launched.every((p) => !alive(p)), "the provider launches to exit", 10_000);
  s.backend.setTransitions("immediate");
  expect(await counts(s)).toMatchObject({ backend: 4, state: 0, untracked: 4 });

  const io = testIO(s.tf.env, s.tf.workDir);
  expect(await runStrays([s.tf.workDir], { outputImport: "adopt.tf" }, io)).toBe(STRAYS_EXIT.found);
  expect(existsSync(join(s.tf.workDir, "adopt.tf"))).toBe(true);
  const p = output(expectCode(await plan(s), 2));
  expect(p).not.toMatch(/Will adopt|Will look for/);
  expect(p).toMatch(/Plan: 4 to import, 4 to add, 0 to change, 0 to destroy\./);
  const a = output(expectCode(await apply(s), 0));
  expect(a).not.toContain("Adopted instance");
  expect(a).toContain("Resources: 4 imported, 4 added, 0 changed, 0 destroyed.");
  const ids = Object.values(await stateResources(s))
    .filter((r) => r.type === "gpurental_instance")
    .map((r) => r.values.id as string);
  expect(new Set(ids).size).toBe(8);
  expect(deploysEver(s)).toBe(8);
  expect(await counts(s)).toMatchObject({ backend: 8, state: 8, untracked: 0 });
  expectCode(await s.tf.run(["destroy", "-auto-approve", "-input=false"]), 0);
  expect(liveInstances(s)).toHaveLength(0);
  rmSync(join(s.tf.workDir, "adopt.tf"), { force: true });
}

/**
 * A create timeout while 10 instances are creating: each is kept in the state with a warning, not
 * tainted; the next apply (the timeout still set) waits for them in place: 10 deploys in all.
 */
export async function createTimeoutKeeps(s: Suite, offerId: string): Promise<void> {
  s.tf.write({
    "main.tf": mainTf(
      paidConfig(s, offerId, 10).replace(
        '  label       = "journal"',
        '  label       = "journal"\n  timeouts    = { create = "3s" }',
      ),
    ),
  });
  slowCreating(s);
  const first = await apply(s, ["-no-color"]);
  expect(first.code).toBe(0);
  const text = output(first).replace(/\s+/g, " ");
  expect(text).toContain("The create's timeout ended while instance");
  expect(text).toContain("kept, not replaced");
  expect(text).not.toContain("continue waiting");
  expect(await counts(s)).toMatchObject({ backend: 10, state: 10, untracked: 0 });
  expect(deploysEver(s)).toBe(10);
  // Still creating: the next apply plans updates, never a replacement, and converges.
  await convergeAndDestroy(s, 10, [], {}, 10);
}
