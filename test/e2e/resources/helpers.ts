import { copyFileSync, existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { type DemoCredentials, type FakeBackend, startFakeBackend } from "../../../src/fake-backend";
import { type RunResult, type StateResource, TerraformHarness } from "../harness";

// Shared set-up of the resource suites: one fake backend in-process on port 0 and one terraform
// working directory per suite (one `terraform init`), with the provider pointed at the backend
// through its environment variables. Each test starts from an empty state and a freshly seeded
// backend.

/** A suite's terraform harness and fake backend. */
export interface Suite {
  tf: TerraformHarness;
  backend: FakeBackend;
  creds: DemoCredentials;
}

/** The terraform block every configuration starts with. */
export const TERRAFORM_BLOCK = `terraform {
  required_providers {
    gpurental = { source = "gpurental/gpurental" }
  }
}
`;

/** Creates the harness and the backend and runs `terraform init` once. */
export async function startSuite(): Promise<Suite> {
  const backend = await startFakeBackend({ port: 0, seed: "demo", transitions: "immediate" });
  // The harness installs the shipped provider (src/plugin/main.ts and the definition in src/provider.ts).
  const tf = await TerraformHarness.create();
  tf.env.GPURENTAL_BASE_URL = backend.url;
  tf.write({ "main.tf": `${TERRAFORM_BLOCK}\nprovider "gpurental" {}\n` });
  await tf.ok(["init", "-input=false"]);
  const suite: Suite = { tf, backend, creds: backend.credentials! };
  return suite;
}

/** Reseeds the backend, forgets the state and signs the provider in as the demo admin. */
export function resetSuite(s: Suite): void {
  s.creds = s.backend.seedDemo();
  s.backend.setTransitions("immediate");
  for (const f of ["terraform.tfstate", "terraform.tfstate.backup"])
    rmSync(join(s.tf.workDir, f), { force: true });
  s.tf.env.GPURENTAL_TOKEN = s.creds.admin_session_token;
  delete s.tf.env.GPURENTAL_ORG_ID;
  delete s.tf.env.TF_LOG;
}

/** Stops the backend and removes the temp directory. */
export async function stopSuite(s: Suite | undefined): Promise<void> {
  s?.tf.cleanup();
  await s?.backend.close();
}

/** Writes main.tf: the terraform block, a default provider block and `body`. */
export function writeConfig(s: Suite, body: string, providerBlock = 'provider "gpurental" {}'): void {
  s.tf.write({ "main.tf": `${TERRAFORM_BLOCK}\n${providerBlock}\n\n${body}\n` });
}

/** `terraform apply -auto-approve`. */
export function apply(
  s: Suite,
  extra: readonly string[] = [],
  env: NodeJS.ProcessEnv = {},
): Promise<RunResult> {
  return s.tf.run(["apply", "-auto-approve", "-input=false", ...extra], env);
}

/** `terraform plan -detailed-exitcode`: code 0 no changes, 2 changes, 1 error. */
export function plan(s: Suite, extra: readonly string[] = []): Promise<RunResult> {
  return s.tf.run(["plan", "-input=false", "-detailed-exitcode", ...extra]);
}

/** Fails with the whole output when a command did not end with `code`. */
export function expectCode(r: RunResult, code: number): RunResult {
  if (r.code !== code) {
    throw new Error(
      `expected exit code ${code}, got ${r.code}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`,
    );
  }
  return r;
}

/** The resources in state, by address. */
export async function stateResources(s: Suite): Promise<Record<string, StateResource>> {
  const st = await s.tf.state();
  const out: Record<string, StateResource> = {};
  for (const r of st.values?.root_module?.resources ?? []) out[r.address] = r;
  return out;
}

/** One resource's values in state. */
export async function stateOf(s: Suite, address: string): Promise<Record<string, unknown>> {
  const r = (await stateResources(s))[address];
  if (!r) throw new Error(`${address} is not in the state`);
  return r.values;
}

/** The organization's instances in the fake backend that are not destroyed. */
export function liveInstances(s: Suite, orgId?: string) {
  return s.backend.listInstances(orgId ?? s.creds.org_id).filter((i) => i.status !== "destroyed");
}

/** Copies the state file aside, or back. */
export function saveState(s: Suite, to: string): void {
  copyFileSync(join(s.tf.workDir, "terraform.tfstate"), join(s.tf.root, to));
}

/** Restores a state file saved with {@link saveState}. */
export function restoreState(s: Suite, from: string): void {
  const src = join(s.tf.root, from);
  if (!existsSync(src)) throw new Error(`no saved state ${from}`);
  copyFileSync(src, join(s.tf.workDir, "terraform.tfstate"));
}

/** Terraform's output of a command, both streams. */
export function output(r: RunResult): string {
  return `${r.stdout}\n${r.stderr}`;
}

/** Calls the fake backend's control API (`/_control<path>`) over HTTP; throws on a refusal. */
export async function control(s: Suite, method: string, path: string, body?: unknown): Promise<unknown> {
  const res = await fetch(`${s.backend.url}/_control${path}`, {
    method,
    headers: { "x-control-token": s.backend.controlToken, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const answer: unknown = await res.json();
  if (!res.ok)
    throw new Error(`${method} /_control${path} answered ${res.status}: ${JSON.stringify(answer)}`);
  return answer;
}
