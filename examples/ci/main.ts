// The infrastructure the example pipeline deploys (./pipeline.sh, .github/workflows/gpurental.yml):
// a CDKTF app with one stack, two GPU instances chosen by a market filter, its state in PostgreSQL.
// It names no credential and no server: the provider reads GPURENTAL_BASE_URL and GPURENTAL_TOKEN,
// and Terraform's pg backend PG_CONN_STR, when the pipeline runs terraform (docs/ci.md says why a
// variable would leak them into saved plans).

import { GpurentalProvider, Instance, TemplateLookup } from "@gpurental/gpurental";
import { App, PgBackend, type PgBackendConfig, TerraformOutput, TerraformStack } from "cdktf";

/** One instance of the fleet. */
interface Machine {
  /** Construct id, also the instance's label. */
  readonly name: string;
  readonly gpuModel: string;
  /** Highest GPU price per hour to rent at, in micro-yuan (1 ¥ = 1,000,000). */
  readonly maxPricePerHourMicro: number;
  readonly diskGb: number;
}

const fleet: readonly Machine[] = [
  { name: "train", gpuModel: "RTX 4090", maxPricePerHourMicro: 3_000_000, diskGb: 100 },
  { name: "eval", gpuModel: "RTX 3090", maxPricePerHourMicro: 2_000_000, diskGb: 50 },
];

const app = new App();
const stack = new TerraformStack(app, "gpu-fleet");

// No connStr: Terraform reads PG_CONN_STR. cdktf types connStr as required, hence the cast.
const state: Omit<PgBackendConfig, "connStr"> = { schemaName: "gpu_fleet" };
new PgBackend(stack, state as PgBackendConfig);

new GpurentalProvider(stack, "gpurental");
const template = new TemplateLookup(stack, "template", { mode: "ssh" });

for (const m of fleet) {
  const instance = new Instance(stack, m.name, {
    offer: { gpuModel: m.gpuModel, numGpus: 1, maxPricePerHourMicro: m.maxPricePerHourMicro },
    templateId: template.templateId,
    diskGb: m.diskGb,
    label: m.name,
  });
  new TerraformOutput(stack, `${m.name}_ssh`, { value: instance.sshCommand });
}

app.synth();
