// Entry point of the example CDKTF app (see cdktf.json at the repository root). Environment:
//   GPURENTAL_BASE_URL, GPURENTAL_TOKEN, GPURENTAL_ORG_ID   read by the provider when Terraform runs it
//   GPURENTAL_SSH_KEY_ID                                    your SSH key's id (optional)
//   GPURENTAL_CDKTF_BACKEND                                 "local" (default) or "pg": the state in PostgreSQL
//   GPURENTAL_CDKTF_STATE                                   local: state file (default ./terraform.gpu-workstation.tfstate)
//   GPURENTAL_CDKTF_PG_SCHEMA                               pg: schema of the state (default gpu_workstation);
//                                                           the server comes from PG_CONN_STR, read by terraform
//   GPURENTAL_GPU_MODEL                                     GPU model to rent (default "RTX 4090")
import { resolve } from "node:path";
import { App } from "cdktf";
import { GpuWorkstationStack } from "./stack";

const backend = process.env.GPURENTAL_CDKTF_BACKEND || "local";
if (backend !== "local" && backend !== "pg") {
  throw new Error(`GPURENTAL_CDKTF_BACKEND must be "local" or "pg", got ${JSON.stringify(backend)}`);
}

const app = new App();
new GpuWorkstationStack(app, "gpu-workstation", {
  ...(backend === "pg"
    ? { postgres: { schemaName: process.env.GPURENTAL_CDKTF_PG_SCHEMA || undefined } }
    : { statePath: resolve(process.env.GPURENTAL_CDKTF_STATE ?? "terraform.gpu-workstation.tfstate") }),
  gpuModel: process.env.GPURENTAL_GPU_MODEL || undefined,
  sshKeyId: process.env.GPURENTAL_SSH_KEY_ID || undefined,
});
app.synth();
