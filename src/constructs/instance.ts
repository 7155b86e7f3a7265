import {
  Annotations,
  conditional,
  Fn,
  type ITerraformDependable,
  Op,
  type TerraformProvider,
  Token,
} from "cdktf";
import { Construct } from "constructs";
import { z } from "zod";
import { dataGpurentalInstance, instance } from "../bindings/cdktf";
import { terminalText } from "../display";
import { characters, ENV_LIMITS, OVERLAY_KEYS } from "../resources/instance/env";
import {
  apiId,
  boundedInteger,
  boundedString,
  dependsOnProp,
  duration,
  isUnresolved,
  OFFER_FILTER_PROPS,
  type OfferFilterProps,
  objectProp,
  offerFilterShape,
  oneOf,
  type PropList,
  problems,
  providerProp,
  readProps,
  referenceId,
  referenceProvider,
  show,
  unlessToken,
} from "./validation";

/** The power state an instance should be kept in. */
export type DesiredStatus = "running" | "stopped";

/** How long Terraform waits for each step; Terraform durations such as "20m" or "1h". */
export interface InstanceTimeouts {
  /**
   * Deploy until running.
   * @default the provider's default
   */
  readonly create?: string;
  /**
   * A stop or start through desiredStatus; leave room for a stop the host takes up to 30 minutes to confirm.
   * @default the provider's default
   */
  readonly update?: string;
  /**
   * Destroy until gone.
   * @default the provider's default
   */
  readonly delete?: string;
}

/** What every instance reference offers, whether created here or looked up by id. */
export interface IInstance {
  /** The instance's id. */
  readonly instanceId: string;
  /** Status: creating, starting, running, stopping, stopped, destroying, destroyed or error. */
  readonly status: string;
  /** `ssh -p <port> <user>@<host>`, the command that opens a shell on the instance. */
  readonly sshCommand: string;
  /** JupyterLab address with its token, null until reported (Jupyter templates). Sensitive: it carries the access token. */
  readonly jupyterUrl: string;
  /** JupyterLab address with the token masked ("token=…"), empty until reported; not sensitive, safe to show. */
  readonly jupyterAddress: string;
  /** Access token (JupyterLab token, app bearer key). Sensitive: mark outputs that carry it. */
  readonly accessToken: string;
  /** Money spent on the instance so far, in micro-yuan. */
  readonly spendMicro: number;
}

/**
 * Settings of {@link Instance}. Every setting but desiredStatus, timeouts and offer replaces the
 * instance when changed; a changed offer filter replaces it only when it no longer matches.
 */
export interface InstanceProps {
  /**
   * The market filter the offer is chosen by when the instance is created or replaced: the
   * cheapest matching offer a deploy of this template and disk would not be refused on. The chosen
   * offer is kept; offers appearing, getting cheaper, selling out or being withdrawn change nothing.
   * Set either this or offerId.
   * @default none: offerId is set instead
   */
  readonly offer?: OfferFilterProps;
  /**
   * The one offer to rent, pinned: changing it replaces the instance (and destroys its disk), and
   * once it sells out or is withdrawn a replacement cannot be created on it. Set either this or offer.
   * @default none: offer is set instead
   */
  readonly offerId?: string;
  /** The template to run (see {@link TemplateLookup}). */
  readonly templateId: string;
  /**
   * Disk size in GB, 10 to 20000 and at most what the machine has left.
   * @default 50
   */
  readonly diskGb?: number;
  /**
   * Label shown in the console, at most 64 characters.
   * @default no label
   */
  readonly label?: string;
  /**
   * One of your SSH keys to authorize on the instance.
   * @default no key (SSH logins are then impossible)
   */
  readonly sshKeyId?: string;
  /**
   * Environment variables set over the template's.
   * @default none
   */
  readonly env?: Readonly<Record<string, string>>;
  /**
   * Environment variables whose values are secret: hidden in Terraform's output, but kept in the
   * state in clear text. Prefer secretEnvWo with Terraform 1.11 or later. Pass values from a
   * sensitive TerraformVariable: literals are written into cdk.tf.json (the construct warns).
   * @default none
   */
  readonly secretEnv?: Readonly<Record<string, string>>;
  /**
   * Secret environment variables that are never stored (write-only, Terraform 1.11 or later):
   * sent when the instance is deployed, null in the plan and the state. Pass the values from an
   * ephemeral, sensitive TerraformVariable (`variable.addOverride("ephemeral", true)`): a plain
   * variable's value is kept in the plan file cdktf deploy saves, and a literal is written into
   * cdk.tf.json (the construct warns). Needs secretEnvWoVersion.
   * @default none
   */
  readonly secretEnvWo?: Readonly<Record<string, string>>;
  /**
   * Required with secretEnvWo: a whole number, kept in the state. Terraform cannot see write-only
   * values change, so changing secretEnvWo alone does nothing; change this number to replace the
   * instance (destroying its disk) with the current secretEnvWo values.
   * @default none
   */
  readonly secretEnvWoVersion?: number;
  /**
   * Template variables to drop.
   * @default none
   */
  readonly unsetEnv?: readonly string[];
  /**
   * Whether the access token and the addresses that carry it (accessToken, jupyterUrl, openUrl)
   * are kept in the state. With false they are null in every plan and state, and a run reads them
   * with the `gpurental_instance_access` ephemeral resource (see the README's "Secrets and the
   * state" for how to declare one from CDKTF); jupyterAddress and sshCommand keep working.
   * @default true
   */
  readonly storeAccessSecrets?: boolean;
  /**
   * Keep the instance running or stopped; changing it stops or starts in place.
   * @default "running"
   */
  readonly desiredStatus?: DesiredStatus;
  /**
   * How long to wait for create, update and delete.
   * @default the provider's defaults
   */
  readonly timeouts?: InstanceTimeouts;
  /**
   * The provider to rent with.
   * @default the stack's default gpurental provider
   */
  readonly provider?: TerraformProvider;
  /**
   * Resources to create first.
   * @default none
   */
  readonly dependsOn?: ITerraformDependable[];
}

/** Default disk size of {@link Instance}, in GB. */
export const DEFAULT_DISK_GB = 50;

/** The props of {@link InstanceProps}, for {@link problems}. */
const PROPS = {
  offer: OFFER_FILTER_PROPS,
  offerId: true,
  templateId: "required",
  diskGb: true,
  label: true,
  sshKeyId: true,
  env: true,
  secretEnv: true,
  secretEnvWo: true,
  secretEnvWoVersion: true,
  unsetEnv: true,
  storeAccessSecrets: true,
  desiredStatus: true,
  timeouts: { create: true, update: true, delete: true },
  provider: true,
  dependsOn: true,
} as const satisfies PropList<InstanceProps>;

// Loose, so the env props (checked together below) stay in the value the object check sees.
const schema = z
  .looseObject({
    offer: objectProp("offer", offerFilterShape("offer.")).optional(),
    offerId: apiId("offerId").optional(),
    templateId: apiId("templateId"),
    diskGb: boundedInteger("diskGb", 10, 20000, "GB").optional(),
    label: boundedString("label", 0, 64).optional(),
    sshKeyId: apiId("sshKeyId").optional(),
    secretEnvWoVersion: boundedInteger("secretEnvWoVersion", 0, Number.MAX_SAFE_INTEGER, "").optional(),
    desiredStatus: oneOf("desiredStatus", ["running", "stopped"]).optional(),
    storeAccessSecrets: unlessToken(
      z.boolean({ error: "storeAccessSecrets must be true or false" }),
    ).optional(),
    provider: providerProp,
    dependsOn: dependsOnProp,
    timeouts: objectProp("timeouts", {
      create: duration("timeouts.create").optional(),
      update: duration("timeouts.update").optional(),
      delete: duration("timeouts.delete").optional(),
    }).optional(),
  })
  .check((ctx) => {
    const props = ctx.value as InstanceProps;
    if ((props.offer === undefined) === (props.offerId === undefined)) {
      ctx.issues.push({
        code: "custom",
        message:
          props.offer === undefined
            ? "set offer (a market filter: { gpuModel, numGpus, maxPricePerHourMicro }) or offerId (a pinned offer)"
            : "set only one of offer and offerId: offer chooses the offer when the instance is created, offerId pins one",
        input: undefined,
      });
    }
    if (props.secretEnvWo !== undefined && props.secretEnvWoVersion === undefined) {
      ctx.issues.push({
        code: "custom",
        message:
          "secretEnvWo needs secretEnvWoVersion (e.g. 1): its values are never stored, so only a change of that number redeploys the instance with new ones",
        input: undefined,
      });
    }
    for (const message of envProblems(props)) {
      ctx.issues.push({ code: "custom", message, input: undefined });
    }
  });

function envProblems(props: InstanceProps): string[] {
  const out: string[] = [];
  const groups: Array<[string, string[], Array<[string, string]>]> = [];
  for (const prop of ["env", "secretEnv", "secretEnvWo"] as const) {
    const map: unknown = props[prop];
    if (map === undefined || Token.isUnresolved(map)) continue;
    if (map === null || typeof map !== "object" || Array.isArray(map)) {
      out.push(
        `${prop} must be a map of names to values, got ${prop === "env" ? show(map) : `a ${typeof map}`}`,
      );
      continue;
    }
    const entries = Object.entries(map as Record<string, string>);
    groups.push([prop, entries.map(([k]) => k), entries]);
  }
  const unset: unknown = props.unsetEnv;
  if (unset !== undefined && !Token.isUnresolved(unset)) {
    if (!Array.isArray(unset)) {
      out.push(`unsetEnv must be a list of variable names, got ${show(unset)}`);
    } else {
      const names: string[] = [];
      // A null element is no name, as the provider reads it.
      for (const name of unset as unknown[]) {
        if (name === null || name === undefined) continue;
        if (typeof name !== "string") out.push(`unsetEnv must hold variable names, got ${show(name)}`);
        else names.push(name);
      }
      groups.push(["unsetEnv", names, []]);
    }
  }
  const total = groups.reduce((n, [, keys]) => n + keys.length, 0);
  if (total > ENV_LIMITS.entries) {
    out.push(
      `env, secretEnv, secretEnvWo and unsetEnv must have at most ${ENV_LIMITS.entries} entries together, got ${total}`,
    );
  }
  const seen = new Map<string, string>();
  for (const [prop, keys, entries] of groups) {
    for (const key of keys) {
      if (Token.isUnresolved(key)) continue;
      if (key.length === 0 || characters(key) > ENV_LIMITS.keyLength) {
        out.push(
          `${prop} keys must have 1 to ${ENV_LIMITS.keyLength} characters, got ${characters(key)} (${show(key)})`,
        );
      }
      if (key.includes("=") || key.includes("\0")) {
        out.push(
          `${prop} keys must not contain "=" (it separates a name from its value) or NUL (it ends the entry), got ${show(key)}`,
        );
      }
      const first = seen.get(key);
      if (first !== undefined) out.push(`${show(key)} is in both ${first} and ${prop}; use only one of them`);
      else seen.set(key, prop);
    }
    for (const [key, value] of entries) {
      if (isUnresolved(value) || value === null) continue;
      if (typeof value !== "string" || characters(value) > ENV_LIMITS.valueLength) {
        // A secret's value is never quoted, whatever it is: its length or its type only.
        const got =
          typeof value === "string"
            ? `${characters(value)} characters`
            : prop === "env"
              ? show(value)
              : `a ${Array.isArray(value) ? "list" : typeof value}`;
        out.push(
          `${prop}.${terminalText(key, { maxLength: 64 })} must be a string of at most ${ENV_LIMITS.valueLength} characters, got ${got}`,
        );
      } else if (value.includes("\0")) {
        // As the provider refuses it; the value itself is never quoted.
        out.push(
          `${prop}.${terminalText(key, { maxLength: 64 })} must not contain a NUL character: an environment variable ends at the first NUL, so the instance would see only the part before it`,
        );
      }
    }
  }
  return out;
}

/**
 * Warnings for secret props whose values are literals, which cdktf writes into cdk.tf.json in
 * clear text. Names the keys, never the values.
 */
function literalSecrets(props: InstanceProps): string[] {
  const out: string[] = [];
  for (const [prop, advice] of [
    ["secretEnv", "a sensitive TerraformVariable"],
    ["secretEnvWo", 'an ephemeral, sensitive TerraformVariable (variable.addOverride("ephemeral", true))'],
  ] as const) {
    const map: unknown = props[prop];
    if (map === undefined || map === null || typeof map !== "object" || Token.isUnresolved(map)) continue;
    const keys = Object.entries(map as Record<string, unknown>)
      .filter(([, v]) => typeof v === "string" && v.length > 0 && !isUnresolved(v))
      .map(([k]) => terminalText(k, { maxLength: 64 }));
    if (keys.length === 0) continue;
    out.push(
      `${prop} holds literal values (${keys.join(", ")}), which will be written into the synthesized configuration (cdk.tf.json) in clear text; pass them from ${advice} instead`,
    );
  }
  return out;
}

/** Attribute getters shared by a created instance and one looked up by id. */
interface InstanceAttributes {
  readonly id: string;
  readonly status: string;
  readonly sshHost: string;
  readonly sshPort: number;
  readonly sshUser: string;
  readonly jupyterUrl: string;
  readonly openUrl: string;
  readonly accessToken: string;
  readonly spendMicro: number;
}

function sshCommandOf(a: InstanceAttributes): string {
  return `ssh -p ${Token.asString(a.sshPort)} ${a.sshUser}@${a.sshHost}`;
}

// The API puts the access token into jupyter_url, so the provider marks it sensitive. The address
// without the token is what people want to see; the null test is unmarked too, because a
// conditional on a sensitive value would make the whole result sensitive again.
function maskedJupyterUrl(url: string): string {
  return Token.asString(
    conditional(
      Fn.nonsensitive(Op.eq(url, Token.nullValue())),
      "",
      Fn.nonsensitive(Fn.replace(url, "/token=[^&#]*/", "token=…")),
    ),
  );
}

/** A rented GPU instance, deployed from an offer and a template and kept in its desired power state. */
export class Instance extends Construct implements IInstance {
  /** The gpurental_instance resource underneath. */
  public readonly resource: instance.Instance;
  /** The settings as given, a null one left out: null is unset, as in Terraform. */
  public readonly props: InstanceProps;

  /** References an existing instance by id through the gpurental_instance data source. */
  public static fromInstanceId(
    scope: Construct,
    id: string,
    instanceId: string,
    provider?: TerraformProvider,
  ): IInstance {
    return new ExistingInstance(scope, id, instanceId, provider);
  }

  /** Rents the instance. */
  public constructor(scope: Construct, id: string, props: InstanceProps) {
    super(scope, id);
    const read = readProps(props, PROPS);
    this.props = read;
    // "Default" keeps the resource's Terraform address the construct's own id (gpurental_instance.<id>).
    const filter = read.offer;
    this.resource = new instance.Instance(this, "Default", {
      offerId: read.offerId,
      offerFilter: filter && {
        gpuModel: filter.gpuModel,
        numGpus: filter.numGpus ?? 1,
        maxPricePerHourMicro: filter.maxPricePerHourMicro,
        region: filter.region,
      },
      templateId: read.templateId,
      diskGb: read.diskGb ?? DEFAULT_DISK_GB,
      label: read.label,
      sshKeyId: read.sshKeyId,
      // Passed as given: a map may be a token (a variable's value) that copying would break.
      env: read.env,
      secretEnv: read.secretEnv,
      secretEnvWo: read.secretEnvWo,
      secretEnvWoVersion: read.secretEnvWoVersion,
      unsetEnv: read.unsetEnv as string[] | undefined,
      desiredStatus: read.desiredStatus,
      storeAccessSecrets: read.storeAccessSecrets,
      timeouts: read.timeouts,
      provider: read.provider,
      dependsOn: read.dependsOn,
    });
    for (const prop of ["env", "secretEnv", "secretEnvWo", "unsetEnv"] as const) {
      const value: unknown = read[prop];
      // A value of the wrong shape is the validation's to report (envProblems).
      if (value === null || typeof value !== "object" || Token.isUnresolved(value)) continue;
      const keys: unknown[] = Array.isArray(value) ? value : Object.keys(value);
      for (const key of keys) {
        if (typeof key === "string" && OVERLAY_KEYS.includes(key)) {
          Annotations.of(this).addWarning(
            `${prop} sets ${key}, which the platform always sets itself; the entry has no effect`,
          );
        }
      }
    }
    for (const warning of literalSecrets(read)) Annotations.of(this).addWarning(warning);
    this.node.addValidation({ validate: () => problems("Instance", schema, props, PROPS) });
  }

  /** The instance's id. */
  public get instanceId(): string {
    return this.resource.id;
  }

  /** Status after the last apply or refresh. */
  public get status(): string {
    return this.resource.status;
  }

  /** Host name or address for SSH. */
  public get sshHost(): string {
    return this.resource.sshHost;
  }

  /** SSH port. */
  public get sshPort(): number {
    return this.resource.sshPort;
  }

  /** SSH user name. */
  public get sshUser(): string {
    return this.resource.sshUser;
  }

  /** `ssh -p <port> <user>@<host>`, the command that opens a shell on the instance. */
  public get sshCommand(): string {
    return sshCommandOf(this.resource);
  }

  /**
   * JupyterLab address with its token, null until reported (Jupyter templates), and null with
   * storeAccessSecrets false. Sensitive: it carries the access token.
   */
  public get jupyterUrl(): string {
    return this.resource.jupyterUrl;
  }

  /**
   * JupyterLab address with the token masked ("token=…"), null until reported; not sensitive,
   * safe to show, and kept whatever storeAccessSecrets says (the provider's jupyter_address).
   */
  public get jupyterAddress(): string {
    return this.resource.jupyterAddress;
  }

  /** Address of the template's open button, empty when it has none; null with storeAccessSecrets false. */
  public get openUrl(): string {
    return this.resource.openUrl;
  }

  /**
   * Access token (JupyterLab token, app bearer key); null with storeAccessSecrets false. Sensitive:
   * mark outputs that carry it.
   */
  public get accessToken(): string {
    return this.resource.accessToken;
  }

  /** Money spent on the instance so far, in micro-yuan. */
  public get spendMicro(): number {
    return this.resource.spendMicro;
  }

  /** Hourly GPU price while running, in micro-yuan, snapshotted when the offer was rented. */
  public get pricePerHourMicro(): number {
    return this.resource.pricePerHourMicro;
  }

  /** Id of the offer rented: the pinned one, or the one chosen by the offer filter at create time. */
  public get offerId(): string {
    return this.resource.offerId;
  }

  /** GPU model of the offer rented. */
  public get gpuModel(): string {
    return this.resource.offer.gpuModel;
  }

  /** Region of the offer rented. */
  public get region(): string {
    return this.resource.offer.region;
  }

  /** The API's error code when the instance is in error, else empty. */
  public get errorCode(): string {
    return this.resource.errorCode;
  }
}

class ExistingInstance extends Construct implements IInstance {
  public readonly instanceId: string;
  private readonly data: dataGpurentalInstance.DataGpurentalInstance;

  public constructor(scope: Construct, id: string, instanceId: string, provider?: TerraformProvider) {
    // Checked before the construct joins the tree: a refused reference leaves nothing behind.
    const reference = `Instance.fromInstanceId(${JSON.stringify(id)})`;
    const checkedId = referenceId(reference, instanceId);
    const checkedProvider = referenceProvider(reference, provider);
    super(scope, id);
    this.instanceId = checkedId;
    this.data = new dataGpurentalInstance.DataGpurentalInstance(this, "Default", {
      id: checkedId,
      provider: checkedProvider,
    });
  }

  public get status(): string {
    return this.data.status;
  }

  public get sshCommand(): string {
    return sshCommandOf(this.data);
  }

  public get jupyterUrl(): string {
    return this.data.jupyterUrl;
  }

  public get jupyterAddress(): string {
    return maskedJupyterUrl(this.data.jupyterUrl);
  }

  public get accessToken(): string {
    return this.data.accessToken;
  }

  public get spendMicro(): number {
    return this.data.spendMicro;
  }
}
