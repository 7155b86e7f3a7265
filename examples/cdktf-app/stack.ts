import { LocalBackend, PgBackend, type PgBackendConfig, TerraformOutput, TerraformStack } from "cdktf";
import type { Construct } from "constructs";
// Outside this repository, import these from "@gpurental/gpurental".
import { ApiKey, GpurentalProvider, Instance, TemplateLookup, type TemplateMode } from "../../src";

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
  readonly postgres?: PostgresStateProps;
  /**
   * GPU model to rent.
   * @default "RTX 4090"
   */
  readonly gpuModel?: string;
  /**
   * GPUs per instance.
   * @default 1
   */
  readonly numGpus?: number;
  /**
   * Highest GPU price per hour to rent at, in micro-yuan (1 ¥ = 1,000,000).
   * @default 3_000_000 (¥3.00/h)
   */
  readonly maxPricePerHourMicro?: number;
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
}

/** Where in PostgreSQL a stack's state lives; the server itself is named at run time. */
export interface PostgresStateProps {
  /**
   * Schema of the state table; one per stack, so that stacks sharing a database never share a state.
   * @default "gpu_workstation"
   */
  readonly schemaName?: string;
}

/**
 * A team API key for CI jobs and a GPU instance on the cheapest matching offer, with the outputs a
 * person needs to reach it. The instance gets a market filter rather than an offer id: the offer
 * is chosen when the instance is created and kept, so the market moving (a cheaper offer, the
 * chosen one selling out) never replaces it. The provider takes its settings from
 * GPURENTAL_BASE_URL, GPURENTAL_TOKEN and GPURENTAL_ORG_ID when Terraform runs it, so no
 * credential is written into the synthesized configuration.
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
      // No connection string here: Terraform reads it from PG_CONN_STR (and libpq's PG* variables)
      // when it runs, so the database password stays out of cdk.tf.json, of .terraform/ and of
      // saved plans, which all keep a backend's configuration. (cdktf types connStr as required,
      // hence the cast; Terraform itself takes it from the environment when it is absent.)
      const pg: Omit<PgBackendConfig, "connStr"> = {
        schemaName: props.postgres.schemaName ?? "gpu_workstation",
      };
      new PgBackend(this, pg as PgBackendConfig);
    } else {
      // The state sits outside cdktf.out, so cleaning the synthesized output never loses track of
      // rented (and billed) instances.
      new LocalBackend(this, { path: props.statePath });
    }
    new GpurentalProvider(this, "gpurental");

    const template = new TemplateLookup(this, "template", { mode: props.templateMode ?? "jupyter" });

    this.apiKey = new ApiKey(this, "ci_key", { name: "ci-pipelines", kind: "team" });
    this.instance = new Instance(this, "workstation", {
      offer: {
        gpuModel: props.gpuModel ?? "RTX 4090",
        numGpus: props.numGpus ?? 1,
        maxPricePerHourMicro: props.maxPricePerHourMicro ?? 3_000_000,
      },
      templateId: template.templateId,
      diskGb: props.diskGb ?? 50,
      label: "cdktf-workstation",
      sshKeyId: props.sshKeyId,
      env: { TZ: "UTC" },
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
