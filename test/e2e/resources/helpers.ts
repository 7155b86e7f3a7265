import { copyFileSync, existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { rootCertificates } from "node:tls";
import { Agent, fetch as undiciFetch } from "undici";
import { NODE_SCRIPT } from "../../../src/cli/provider/provider";
import { type DemoCredentials, type FakeBackend, startFakeBackend } from "../../../src/fake-backend";
import { TEST_API_HOST } from "../../../src/testing/test-proxy";
import { type RunResult, type StateResource, TerraformHarness } from "../harness";

// Shared set-up of the resource suites: one fake backend in-process on port 0 and one terraform
// working directory per suite (one `terraform init`), with the provider pointed at the backend
// through its environment variables. Each test starts from an empty state and a freshly seeded
// backend. The backend serves HTTPS with a private CA of its own (GPURENTAL_CA_CERT_FILE), so
// every suite built on this one proves the provider over TLS: no plain-HTTP path can hide.

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
  const backend = await startFakeBackend({
    port: 0,
    seed: "demo",
    transitions: "immediate",
    tls: true,
    // The name a test proxy resolves to 127.0.0.1 (loopback itself is never proxied).
    tlsNames: [TEST_API_HOST],
  });
  // The harness installs the shipped provider (src/executable/main.ts and the definition in src/provider.ts).
  const tf = await TerraformHarness.create();
  trustBackend(tf, backend);
  tf.env.GPURENTAL_BASE_URL = backend.url;
  tf.write({ "main.tf": `${TERRAFORM_BLOCK}\nprovider "gpurental" {}\n` });
  await tf.ok(["init", "-input=false"]);
  const suite: Suite = { tf, backend, creds: backend.credentials! };
  return suite;
}

const trusted = new Set<string>();
let agent: Agent | undefined;

/** Writes the backend's CA beside the harness and points the provider (and backendFetch) at it. */
export function trustBackend(tf: TerraformHarness, backend: FakeBackend): void {
  if (!backend.caCertPem) return;
  const file = join(tf.root, `ca-${trusted.size}.pem`);
  writeFileSync(file, backend.caCertPem);
  tf.env.GPURENTAL_CA_CERT_FILE = file;
  if (!trusted.has(backend.caCertPem)) {
    trusted.add(backend.caCertPem);
    // A new agent for the new set; the old one is left to finish what it is doing.
    agent = undefined;
  }
}

/** The /v1 client options of a test's own calls to the suite's backend: its address and CA. */
export function suiteClientOptions(s: Suite, token: string) {
  const ca = s.tf.env.GPURENTAL_CA_CERT_FILE;
  return {
    baseUrl: s.backend.url,
    token,
    network: { env: {}, ...(ca ? { caCertFile: { value: ca, source: "GPURENTAL_CA_CERT_FILE" } } : {}) },
  };
}

/** fetch for the tests' own calls to a fake backend, trusting the CAs of the backends started here. */
export function backendFetch(url: string, init: Parameters<typeof undiciFetch>[1] = {}) {
  agent ??= new Agent({ connect: { ca: [...rootCertificates, ...trusted] } });
  return undiciFetch(url, { ...init, dispatcher: agent });
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
export function plan(
  s: Suite,
  extra: readonly string[] = [],
  env: NodeJS.ProcessEnv = {},
): Promise<RunResult> {
  return s.tf.run(["plan", "-input=false", "-detailed-exitcode", ...extra], env);
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
  const res = await backendFetch(`${s.backend.url}/_control${path}`, {
    method,
    headers: { "x-control-token": s.backend.controlToken, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const answer: unknown = await res.json();
  if (!res.ok)
    throw new Error(`${method} /_control${path} answered ${res.status}: ${JSON.stringify(answer)}`);
  return answer;
}

/** Waits until `cond` holds; throws naming `what` after `ms`. */
export async function until(cond: () => boolean, what: string, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Whether process `pid` is running. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * The pids of the provider processes terraform (pid `parent`) started: the provider executable, or
 * the Node.js script the npm provider's launcher runs in its place (NODE_SCRIPT).
 */
export function providerPids(parent: number): number[] {
  const pids: number[] = [];
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (ppid !== parent) continue;
      const cmdline = readFileSync(`/proc/${d}/cmdline`, "utf8");
      if (cmdline.includes("terraform-provider-gpurental") || cmdline.includes(NODE_SCRIPT))
        pids.push(Number(d));
    } catch {
      // Gone meanwhile.
    }
  }
  return pids;
}

/** How many instance deploys the deploy journal of working directory `workDir` holds the answer of. */
export function journalAnswers(workDir: string): number {
  const dir = join(workDir, ".terraform", "gpurental-journal");
  let files: string[];
  try {
    files = readdirSync(dir).filter((f) => f.endsWith(".jsonl"));
  } catch {
    return 0;
  }
  const deploys = new Set<string>();
  let n = 0;
  for (const f of files) {
    for (const line of readFileSync(join(dir, f), "utf8").split("\n")) {
      let rec: { op?: string; entry?: string; kind?: string };
      try {
        rec = JSON.parse(line) as typeof rec;
      } catch {
        continue; // a line being written
      }
      if (rec.op === "sent" && rec.kind === "instance" && rec.entry) deploys.add(rec.entry);
      if (rec.op === "answered" && rec.entry && deploys.has(rec.entry)) n++;
    }
  }
  return n;
}
