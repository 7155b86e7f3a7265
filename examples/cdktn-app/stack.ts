import {
  LocalBackend,
  PgBackend,
  type PgBackendConfig,
  TerraformOutput,
  TerraformStack,
  TerraformVariable,
} from "cdktn";
import type { Construct } from "constructs";
// Outside this repository, import these from "@gpurental/gpurental/cdktn".
import { ApiKey, GpurentalProvider, Instance, TemplateLookup, type TemplateMode } from "../../src/cdktn";

/** Settings of {@link GpuWorkstationStack}. */
export interface GpuWorkstationStackProps {
  /**
   * Where Terraform keeps the stack's state, in a local file. Relative paths are taken from the
   * stack's synthesized folder (cdktf.out/stacks/<stack>), so pass an absolute path. Give either
   * this or `postgres`.
   */
  readonly statePath?: string;
  /**
   * Keep the state in PostgreSQL instead (Terraform's `pg` backend), shared by every machine that
   * deploys the stack and locked while one of them changes it. Give either this or `statePath`.
   */
  readonly postgres?: { readonly schemaName?: string };
  /**
   * GPU model to rent.
   * @default "RTX 4090"
   */
  readonly gpuModel?: string;
  /**
   * Template mode; "jupyter" gets a JupyterLab address as well as SSH.
   * @default "jupyter"
   */
  readonly templateMode?: TemplateMode;
  /**
   * Disk size in GB.
   * @default 50
   */
  readonly diskGb?: number;
  /**
   * ID of one of your SSH keys (see the gpurental_ssh_keys data source).
   * @default no key
   */
  readonly sshKeyId?: string;
  /**
   * The power state to keep the instance in; "stopped" stops it in place (the disk is kept).
   * @default "running"
   */
  readonly desiredStatus?: "running" | "stopped";
  /**
   * Names of secret environment variables for the instance. Each gets a sensitive, ephemeral
   * Terraform variable of its name in lower case (`HF_TOKEN` -> `TF_VAR_hf_token` at deploy time);
   * the values are write-only: never in cdk.tf.json, a saved plan or the state.
   * @default none
   */
  readonly secretEnv?: readonly string[];
  /**
   * Version of the secret values; change it to redeploy the instance with new ones.
   * @default 1
   */
  readonly secretEnvVersion?: number;
}

/**
 * The example app of examples/cdktf-app on CDK Terrain: a team API key for CI jobs and a GPU
 * instance on the cheapest matching offer, with the outputs a person needs to reach it. Only the
 * imports differ from the CDK for Terraform app, plus the optional write-only secret env.
 */
export class GpuWorkstationStack extends TerraformStack {
  /** The rented instance. */
  public readonly instance: Instance;
  /** The team API key. */
  public readonly apiKey: ApiKey;

  /** Declares the stack. */
  public constructor(scope: Construct, id: string, props: GpuWorkstationStackProps) {
    super(scope, id);
    if ((props.statePath === undefined) === (props.postgres === undefined)) {
      throw new Error(`${id}: give either statePath or postgres, the place of the stack's state`);
    }
    if (props.postgres) {
      // The server comes from PG_CONN_STR at run time, so its password stays out of cdk.tf.json.
      const pg: Omit<PgBackendConfig, "connStr"> = {
        schemaName: props.postgres.schemaName ?? "gpu_workstation",
      };
      new PgBackend(this, pg as PgBackendConfig);
    } else {
      new LocalBackend(this, { path: props.statePath });
    }
    new GpurentalProvider(this, "gpurental");

    const template = new TemplateLookup(this, "template", { mode: props.templateMode ?? "jupyter" });
    const secretEnvWo: Record<string, string> = {};
    for (const name of props.secretEnv ?? []) {
      const variable = new TerraformVariable(this, name.toLowerCase(), { type: "string", sensitive: true });
      // Terraform keeps an ephemeral variable's value out of saved plans (cdktn deploy saves one);
      // cdktn 0.24's TerraformVariable has no option for it yet.
      variable.addOverride("ephemeral", true);
      secretEnvWo[name] = variable.stringValue;
    }

    this.apiKey = new ApiKey(this, "ci_key", { name: "ci-pipelines", kind: "team" });
    this.instance = new Instance(this, "workstation", {
      offer: { gpuModel: props.gpuModel ?? "RTX 4090", numGpus: 1, maxPricePerHourMicro: 3_000_000 },
      templateId: template.templateId,
      diskGb: props.diskGb ?? 50,
      label: "cdktn-workstation",
      sshKeyId: props.sshKeyId,
      env: { TZ: "UTC" },
      desiredStatus: props.desiredStatus,
      ...(props.secretEnv?.length ? { secretEnvWo, secretEnvWoVersion: props.secretEnvVersion ?? 1 } : {}),
      timeouts: { create: "20m" },
    });

    const outputs: Array<[string, unknown, string, boolean?]> = [
      ["instance_id", this.instance.instanceId, "ID of the instance."],
      ["instance_status", this.instance.status, "Status of the instance after the apply."],
      ["ssh_command", this.instance.sshCommand, "Command that opens a shell on the instance."],
      ["jupyter_address", this.instance.jupyterAddress, "JupyterLab address; its token is the access token."],
      ["offer_id", this.instance.offerId, "ID of the offer the instance rents, chosen when it was created."],
      ["offer_gpu_model", this.instance.gpuModel, "GPU model of the rented offer."],
      [
        "price_per_hour_micro",
        this.instance.pricePerHourMicro,
        "GPU price per hour while running, in micro-yuan.",
      ],
      ["ci_key_prefix", this.apiKey.prefix, "Prefix of the CI key's secret, safe to show."],
      ["ci_key_secret", this.apiKey.secret, "Secret of the CI key; store it in your CI system.", true],
      ["access_token", this.instance.accessToken, "Access token of the instance (JupyterLab token).", true],
      ["jupyter_url", this.instance.jupyterUrl, "JupyterLab address with its token.", true],
    ];
    for (const [name, value, description, sensitive] of outputs) {
      new TerraformOutput(this, name, { value, description, sensitive });
    }
  }
}
