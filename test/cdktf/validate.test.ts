import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { TerraformOutput, TerraformStack, Testing } from "cdktf";
import { GpuWorkstationStack } from "../../examples/cdktf-app/stack";
import { ApiKey, GpurentalProvider, Instance, OfferLookup, TemplateLookup } from "../../src";
import { installProvider } from "../../src/cli/provider/provider";
import { version } from "../../src/version";

// The expressions the constructs write (for-expressions over data sources, postconditions with
// `self`, the masked Jupyter address) checked by the real terraform against the provider's real
// schema: `terraform init` from a private mirror, then `terraform validate`.

jest.setTimeout(120_000);

const run = promisify(execFile);
let work: string;
let env: NodeJS.ProcessEnv;

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), "gpurental-validate-"));
  const installed = installProvider({ dir: join(work, "mirror"), version });
  writeFileSync(join(work, "terraform.rc"), installed.cliConfig);
  env = {
    ...process.env,
    TF_CLI_CONFIG_FILE: join(work, "terraform.rc"),
    CHECKPOINT_DISABLE: "1",
    GPURENTAL_PROVIDER_CODE_CACHE_DIR: join(work, "code-cache"),
    GPURENTAL_PROVIDER_RESIDENT: "off",
  };
  delete env.TF_PLUGIN_CACHE_DIR;
});

afterAll(() => rmSync(work, { recursive: true, force: true }));

async function validate(stack: TerraformStack): Promise<{ valid: boolean; diagnostics: unknown[] }> {
  const dir = Testing.fullSynth(stack);
  const stackDir = join(dir, "stacks", stack.node.id);
  const terraform = process.env.TERRAFORM_BINARY_NAME || "terraform";
  await run(terraform, ["init", "-backend=false", "-input=false", "-no-color"], { cwd: stackDir, env });
  const { stdout } = await run(terraform, ["validate", "-json", "-no-color"], { cwd: stackDir, env }).catch(
    (err: { stdout?: string }) => ({ stdout: err.stdout ?? "{}" }),
  );
  rmSync(dir, { recursive: true, force: true });
  return JSON.parse(stdout) as { valid: boolean; diagnostics: unknown[] };
}

it("the example stack is valid Terraform for the provider", async () => {
  const app = Testing.app();
  const stack = new GpuWorkstationStack(app, "example", { statePath: join(work, "state.tfstate") });
  await expect(validate(stack)).resolves.toMatchObject({ valid: true, diagnostics: [] });
});

it("references to existing objects and every instance setting are valid Terraform", async () => {
  const app = Testing.app();
  const stack = new TerraformStack(app, "existing");
  new GpurentalProvider(stack, "gpurental", { baseUrl: "http://127.0.0.1:1" });
  const key = ApiKey.fromApiKeyId(stack, "key", "00000000-0000-4000-8000-0000000000aa");
  const old = Instance.fromInstanceId(stack, "old", "00000000-0000-4000-8000-0000000000bb");
  const offer = new OfferLookup(stack, "offer", { gpuModel: "RTX 4090", numGpus: 2 });
  const template = new TemplateLookup(stack, "template", { mode: "ssh", tab: "all" });
  const gpu = new Instance(stack, "gpu", {
    offerId: offer.offerId,
    templateId: template.templateId,
    diskGb: 100,
    label: key.name,
    env: { TZ: "UTC" },
    secretEnv: { HF_TOKEN: "hf_x" },
    unsetEnv: ["DEBUG"],
    desiredStatus: "stopped",
    timeouts: { create: "30m", update: "45m", delete: "10m" },
  });
  const market = new Instance(stack, "market", {
    offer: { gpuModel: "RTX 4090", numGpus: 1, maxPricePerHourMicro: 3_000_000, region: "cn-east-1" },
    templateId: template.templateId,
    label: "",
  });
  const deployable = new OfferLookup(stack, "deployable", {
    gpuModel: "RTX 4090",
    deployableWith: { templateId: template.templateId, diskGb: 100 },
  });
  new TerraformOutput(stack, "market_offer", { value: market.offerId });
  new TerraformOutput(stack, "market_gpu", { value: market.gpuModel });
  new TerraformOutput(stack, "cheapest", { value: deployable.offerId });
  new TerraformOutput(stack, "cheapest_price", { value: deployable.pricePerHourMicro });
  new TerraformOutput(stack, "old_ssh", { value: old.sshCommand });
  new TerraformOutput(stack, "old_jupyter", { value: old.jupyterAddress });
  new TerraformOutput(stack, "prefix", { value: key.prefix });
  new TerraformOutput(stack, "jupyter", { value: gpu.jupyterAddress });
  new TerraformOutput(stack, "token", { value: gpu.accessToken, sensitive: true });
  await expect(validate(stack)).resolves.toMatchObject({ valid: true, diagnostics: [] });
});
