// Entry point of the example CDK Terrain app (see cdktf.json in this folder). Environment:
//   GPURENTAL_BASE_URL, GPURENTAL_TOKEN, GPURENTAL_ORG_ID   read by the provider when Terraform runs it
//   GPURENTAL_SSH_KEY_ID                                    your SSH key's id (optional)
//   GPURENTAL_CDKTF_BACKEND                                   "local" (default) or "pg": the state in PostgreSQL
//   GPURENTAL_CDKTF_STATE                                     local: state file (default ./terraform.gpu-workstation.tfstate)
//   GPURENTAL_CDKTF_PG_SCHEMA                                 pg: schema of the state (default gpu_workstation);
//                                                           the server comes from PG_CONN_STR, read by terraform
//   GPURENTAL_GPU_MODEL                                     GPU model to rent (default "RTX 4090")
//   GPURENTAL_DESIRED_STATUS                                "running" (default) or "stopped"
//   GPURENTAL_SECRET_ENV                                    comma-separated names of write-only secret env
//                                                           variables, each read from TF_VAR_<name in lower case>
//   GPURENTAL_SECRET_ENV_VERSION                            their version (default 1)
import { resolve } from "node:path";
import { App } from "cdktn";
import { GpuWorkstationStack } from "./stack";

const backend = process.env.GPURENTAL_CDKTF_BACKEND || "local";
if (backend !== "local" && backend !== "pg") {
  throw new Error(`GPURENTAL_CDKTF_BACKEND must be "local" or "pg", got ${JSON.stringify(backend)}`);
}
const desired = process.env.GPURENTAL_DESIRED_STATUS || "running";
if (desired !== "running" && desired !== "stopped") {
  throw new Error(`GPURENTAL_DESIRED_STATUS must be "running" or "stopped", got ${JSON.stringify(desired)}`);
}
const secretEnv = (process.env.GPURENTAL_SECRET_ENV ?? "").split(",").filter((name) => name !== "");

const app = new App();
new GpuWorkstationStack(app, "gpu-workstation", {
  ...(backend === "pg"
    ? { postgres: { schemaName: process.env.GPURENTAL_CDKTF_PG_SCHEMA || undefined } }
    : { statePath: resolve(process.env.GPURENTAL_CDKTF_STATE ?? "terraform.gpu-workstation.tfstate") }),
  gpuModel: process.env.GPURENTAL_GPU_MODEL || undefined,
  sshKeyId: process.env.GPURENTAL_SSH_KEY_ID || undefined,
  desiredStatus: desired,
  secretEnv,
  secretEnvVersion: Number(process.env.GPURENTAL_SECRET_ENV_VERSION || 1),
});
app.synth();
