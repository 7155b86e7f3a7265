import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { LocalBackend, TerraformOutput, TerraformStack, Testing } from "cdktf";
import { GpurentalClient } from "../../src/api/client";
import { installProvider } from "../../src/cli/provider/provider";
import { ApiKey, GpurentalProvider, Instance, OfferLookup, TemplateLookup } from "../../src/constructs";
import { DEMO_IDS, type FakeBackend, startFakeBackend } from "../../src/fake-backend";
import { version } from "../../src/version";

// The read side of the constructs with the real terraform against the in-process fake backend:
// the offer and template lookups, and references to an API key and an instance created outside
// Terraform, resolved through data sources; a missing key fails the plan with its postcondition.

jest.setTimeout(120_000);

const run = promisify(execFile);
const terraform = process.env.TERRAFORM_BINARY_NAME || "terraform";
let work: string;
let fake: FakeBackend;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "gpurental-refs-"));
  const installed = installProvider({ dir: join(work, "mirror"), version });
  writeFileSync(join(work, "terraform.rc"), installed.cliConfig);
  fake = await startFakeBackend({ seed: "demo" });
  const creds = fake.credentials!;
  env = {
    ...process.env,
    TF_CLI_CONFIG_FILE: join(work, "terraform.rc"),
    CHECKPOINT_DISABLE: "1",
    GPURENTAL_PROVIDER_CODE_CACHE_DIR: join(work, "code-cache"),
    GPURENTAL_PROVIDER_RESIDENT: "off",
    GPURENTAL_BASE_URL: fake.url,
    GPURENTAL_TOKEN: creds.admin_session_token,
    GPURENTAL_ORG_ID: creds.org_id,
  };
  delete env.TF_PLUGIN_CACHE_DIR;
  delete env.TF_LOG;
});

afterAll(async () => {
  await fake.close();
  rmSync(work, { recursive: true, force: true });
});

/** Synthesizes `stack`, then `terraform init` and `apply`; returns the outputs or the error output. */
async function apply(stack: TerraformStack): Promise<{ outputs?: Record<string, unknown>; error?: string }> {
  const dir = Testing.fullSynth(stack);
  const cwd = join(dir, "stacks", stack.node.id);
  try {
    await run(terraform, ["init", "-input=false", "-no-color"], { cwd, env });
    try {
      await run(terraform, ["apply", "-auto-approve", "-input=false", "-no-color"], { cwd, env });
    } catch (err) {
      return { error: String((err as { stderr?: string }).stderr ?? err) };
    }
    const { stdout } = await run(terraform, ["output", "-json"], { cwd, env });
    const raw = JSON.parse(stdout) as Record<string, { value: unknown }>;
    return { outputs: Object.fromEntries(Object.entries(raw).map(([k, v]) => [k, v.value])) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

it("resolves lookups and existing objects through data sources", async () => {
  const creds = fake.credentials!;
  const client = new GpurentalClient({ baseUrl: fake.url, token: creds.admin_session_token });
  const created = await client.createApiKey({ name: "made-elsewhere", kind: "team" });
  const inst = await client.deployInstance({
    offer_id: creds.offer_id,
    template_id: creds.jupyter_template_id,
    disk_gb: 20,
    label: "made-elsewhere",
  });

  const app = Testing.app();
  const stack = new TerraformStack(app, "refs");
  new LocalBackend(stack, { path: join(work, "refs.tfstate") });
  new GpurentalProvider(stack, "gpurental");
  const offer = new OfferLookup(stack, "offer", { gpuModel: "rtx 4090" });
  const template = new TemplateLookup(stack, "template", { mode: "ssh" });
  const key = ApiKey.fromApiKeyId(stack, "key", created.key.id);
  const existing = Instance.fromInstanceId(stack, "existing", inst.id);
  new TerraformOutput(stack, "offer_id", { value: offer.offerId });
  new TerraformOutput(stack, "offer_price", { value: offer.pricePerHourMicro });
  new TerraformOutput(stack, "template_id", { value: template.templateId });
  new TerraformOutput(stack, "key_prefix", { value: key.prefix });
  new TerraformOutput(stack, "key_kind", { value: key.kind });
  new TerraformOutput(stack, "status", { value: existing.status });
  new TerraformOutput(stack, "ssh", { value: existing.sshCommand });
  new TerraformOutput(stack, "jupyter", { value: existing.jupyterAddress });

  const result = await apply(stack);
  expect(result.error).toBeUndefined();
  expect(result.outputs).toEqual({
    // The RTX 4090 offer at ¥2.3/h goes into maintenance within 24 hours: the next cheapest wins.
    offer_id: DEMO_IDS.offer,
    offer_price: 2_500_000,
    template_id: DEMO_IDS.templateSsh,
    key_prefix: created.key.prefix,
    key_kind: "team",
    status: "running",
    ssh: `ssh -p ${inst.ssh_port} ${inst.ssh_user}@${inst.ssh_host}`,
    jupyter: expect.stringMatching(/^https?:\/\/\S+\?token=…$/),
  });
  expect(String(result.outputs?.jupyter)).not.toContain(inst.access_token ?? "no token");
});

it("fails the plan with a clear message when a referenced API key does not exist", async () => {
  const app = Testing.app();
  const stack = new TerraformStack(app, "missing");
  new LocalBackend(stack, { path: join(work, "missing.tfstate") });
  new GpurentalProvider(stack, "gpurental");
  const key = ApiKey.fromApiKeyId(stack, "key", "00000000-0000-4000-8000-0000000000ff");
  new TerraformOutput(stack, "key_prefix", { value: key.prefix });
  const result = await apply(stack);
  expect(result.error).toContain("No API key with id 00000000-0000-4000-8000-0000000000ff is listed");
});
