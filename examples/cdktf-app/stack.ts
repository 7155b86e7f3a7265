import { LocalBackend, TerraformOutput, TerraformStack } from "cdktf";
import type { Construct } from "constructs";
// Outside this repository, import these from "gpurental".
import { ApiKey, GpurentalProvider, Instance, TemplateLookup, type TemplateMode } from "../../src";

/** Settings of {@link GpuWorkstationStack}. */
export interface GpuWorkstationStackProps {
  /**
   * Where Terraform keeps the stack's state. Relative paths are taken from the stack's synthesized
   * folder (cdktf.out/stacks/<stack>), so pass an absolute path.
   */
  readonly statePath: string;
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
    // The state sits outside cdktf.out, so cleaning the synthesized output never loses track of
    // rented (and billed) instances.
    new LocalBackend(this, { path: props.statePath });
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
