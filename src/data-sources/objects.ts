import type {
  ApiKey,
  Instance,
  InstanceOffer,
  InstanceTemplate,
  Offer,
  SshKey,
  Template,
} from "../api/schemas";
import { attr, t } from "../framework";
import type { Attributes, Known, ObjectTypeOf } from "../framework/schema";
import { instanceToModel } from "../resources/instance/model";

// The objects the data sources return (offers, templates, SSH keys, API keys, instances) as schema
// fragments with their descriptions, and the one function per object that maps an API record onto
// it. A fragment holds every attribute except `id`, so a single-object data source can make `id` its
// required argument while a list data source nests the fragment with a computed `id`.
//
// Every attribute here is computed. Fields docs/api-shapes.md adds beyond the contract are optional in
// the client's schemas; a server that leaves one out yields null, never a failed read.

/** The value of a computed object attribute: known values, any of them possibly null. */
export type ObjectValue<A extends Attributes> = Known<ObjectTypeOf<A>>;

const str = (description: string) => attr.string({ computed: true, description });
const num = (description: string) => attr.number({ computed: true, description });
const bool = (description: string) => attr.bool({ computed: true, description });

// ---------------------------------------------------------------------------------------------
// Offers

/** The machine an offer runs on. */
export const machineAttributes = {
  id: str("ID of the machine."),
  disk_gb: num("Total disk of the machine in GB; `disk_gb` of an instance may not exceed it."),
  available_disk_gb: num("Disk in GB still free to commit on the machine."),
  cuda_version: str('CUDA version the machine runs, e.g. `"12.4"`.'),
  vm_capable: bool("Whether the machine can run templates of mode `vm`."),
  architecture: str('CPU architecture of the machine, e.g. `"x86_64"`.'),
  gpu_release_supported: bool(
    "Whether the machine can release a stopped instance's GPUs when the balance runs out.",
  ),
} satisfies Attributes;

/** A GPU offer, without its id. */
export const offerAttributes = {
  gpu_model: str('GPU model, e.g. `"RTX 4090"`.'),
  num_gpus: num("Number of GPUs the offer rents together."),
  price_per_hour_micro: num("GPU price per hour while running, in micro-yuan (1 ¥ = 1,000,000)."),
  storage_price_per_gb_hour_micro: num("Disk price per GB and hour while stopped, in micro-yuan."),
  hold_price_per_hour_micro: num(
    "Price per hour of holding the GPUs of a stopped instance, in micro-yuan; null where a stopped instance pays storage only.",
  ),
  availability: str(
    "`available`, `sold_out` or `withdrawn`. Only `available` offers with free units can be rented.",
  ),
  free_units: num("Units of this offer that can still be rented."),
  next_maintenance: str(
    "When the machine is next booked offline (RFC 3339), or null. A deploy close to it may be refused (`MACHINE_IN_MAINTENANCE`; the fake backend refuses within 24 hours), so `offer_filter` tries such offers last.",
  ),
  region: str('Region of the machine, e.g. `"cn-east-1"`.'),
  created_at: str("When the offer was published (RFC 3339)."),
  machine: attr.single(machineAttributes, { computed: true, description: "The machine the offer runs on." }),
} satisfies Attributes;

/** An offer as a nested object, with its id. */
export const offerObjectAttributes = {
  id: str(
    "ID of the offer. `gpurental_instance` can pin it as `offer_id`, but usually its `offer_filter` should choose instead: see that resource.",
  ),
  ...offerAttributes,
} satisfies Attributes;

/** Maps an API offer (full, or abbreviated as embedded in an instance) onto {@link offerObjectAttributes}. */
export function offerToObject(o: Offer | InstanceOffer): ObjectValue<typeof offerObjectAttributes> {
  const m = o.machine;
  return {
    id: o.id,
    gpu_model: o.gpu_model ?? null,
    num_gpus: o.num_gpus ?? null,
    price_per_hour_micro: o.price_per_hour_micro ?? null,
    storage_price_per_gb_hour_micro: o.storage_price_per_gb_hour_micro ?? null,
    hold_price_per_hour_micro: o.hold_price_per_hour_micro ?? null,
    availability: o.availability ?? null,
    free_units: o.free_units ?? null,
    next_maintenance: o.next_maintenance ?? null,
    region: o.region ?? null,
    created_at: o.created_at ?? null,
    machine: m
      ? {
          id: m.id ?? null,
          disk_gb: m.disk_gb,
          available_disk_gb: m.available_disk_gb ?? null,
          cuda_version: m.cuda_version ?? null,
          vm_capable: m.vm_capable ?? null,
          architecture: m.architecture ?? null,
          gpu_release_supported: m.gpu_release_supported ?? null,
        }
      : null,
  };
}

// ---------------------------------------------------------------------------------------------
// Templates

/** One environment variable of a template. */
export const templateEnvAttributes = {
  key: str("Name of the variable."),
  value: str(
    "Value of the variable; null for secret variables, whose values the provider never exposes, and for variables without a value.",
  ),
  secret: bool("Whether the value is secret."),
} satisfies Attributes;

/** A template, without its id. */
export const templateAttributes = {
  hash_id: str('Short public identifier of the template, e.g. `"t-4f2a9c"`.'),
  name: str("Display name of the template."),
  mode: str("`ssh`, `jupyter` or `vm`. A `vm` template needs a VM-capable machine."),
  image: str("Container or VM image the template runs."),
  cuda_max: str(
    "Newest machine CUDA version the template supports, or null for no limit; a newer machine is refused (`TEMPLATE_CUDA_TOO_NEW`).",
  ),
  architecture: str("CPU architecture the template is built for; only `x86_64` can be deployed."),
  coming_soon: bool("Whether the template is announced but cannot be deployed yet."),
  active: bool("Whether the template can be deployed; inactive templates are refused."),
  recommended: bool("Whether the template is on the recommended tab."),
  visibility: str("`system`, `public` or `private`."),
  owner_org_id: str("Organization that owns a public or private template; null for system templates."),
  uses_private_registry: bool(
    "Whether the image is pulled from a private registry with the owner's credentials.",
  ),
  env: attr.listNested(templateEnvAttributes, {
    computed: true,
    description:
      "Environment variables the template sets; `env` of `gpurental_instance` is merged over them.",
  }),
  open_port: num("Port the console's open button leads to, or null."),
  readme: str("The template's readme (Markdown); null inside an instance."),
  onstart: str("Script the template runs at start; null inside an instance."),
  created_at: str("When the template was created (RFC 3339)."),
} satisfies Attributes;

/** A template as a nested object, with its id. */
export const templateObjectAttributes = {
  id: str("ID of the template; pass it as `template_id` of `gpurental_instance`."),
  ...templateAttributes,
} satisfies Attributes;

/** Maps an API template (full, or as embedded in an instance) onto {@link templateObjectAttributes}. */
export function templateToObject(
  tpl: Template | InstanceTemplate,
): ObjectValue<typeof templateObjectAttributes> {
  return {
    id: tpl.id,
    hash_id: tpl.hash_id ?? null,
    name: tpl.name ?? null,
    mode: tpl.mode ?? null,
    image: tpl.image ?? null,
    cuda_max: tpl.cuda_max ?? null,
    architecture: tpl.architecture ?? null,
    coming_soon: tpl.coming_soon ?? null,
    active: tpl.active ?? null,
    recommended: tpl.recommended ?? null,
    visibility: tpl.visibility ?? null,
    owner_org_id: tpl.owner_org_id ?? null,
    uses_private_registry: tpl.uses_private_registry ?? null,
    // A secret variable's value could be a registry password or token: it stays out of the
    // state and plan output, and only its key and flag are shown.
    env: (tpl.env ?? []).map((e) => ({
      key: e.key,
      value: e.secret === true ? null : e.value,
      secret: e.secret ?? false,
    })),
    open_port: tpl.open_port ?? null,
    readme: tpl.readme ?? null,
    onstart: tpl.onstart ?? null,
    created_at: tpl.created_at ?? null,
  };
}

// ---------------------------------------------------------------------------------------------
// SSH keys and API keys

/** An SSH key as a nested object. */
export const sshKeyObjectAttributes = {
  id: str("ID of the SSH key; pass it as `ssh_key_id` of `gpurental_instance`."),
  name: str("Name of the key."),
  fingerprint: str("Fingerprint of the public key."),
  public_key: str("The public key in OpenSSH format."),
  created_at: str("When the key was added (RFC 3339)."),
} satisfies Attributes;

/** Maps an API SSH key onto {@link sshKeyObjectAttributes}. */
export function sshKeyToObject(k: SshKey): ObjectValue<typeof sshKeyObjectAttributes> {
  return {
    id: k.id,
    name: k.name,
    fingerprint: k.fingerprint,
    public_key: k.public_key ?? null,
    created_at: k.created_at ?? null,
  };
}

/** An API key as a nested object; the secret is never listed. */
export const apiKeyObjectAttributes = {
  id: str("ID of the API key; `gpurental_api_key` imports by it."),
  name: str("Name of the key."),
  kind: str("`personal` (revoked when its creator leaves the organization) or `team`."),
  prefix: str("The first 12 characters of the secret, to recognise the key by; the rest is never shown."),
  creator_email: str(
    "Email of the key's creator, or their phone number with country code if they have no email.",
  ),
  creator_id: str("User ID of the key's creator."),
  created_at: str("When the key was created (RFC 3339)."),
  last_used_at: str("When the key last made a request (RFC 3339), or null if never."),
  creator_is_member: bool(
    "Whether the creator is still a member of the organization (false for a team key whose creator left).",
  ),
} satisfies Attributes;

/** Maps an API key record onto {@link apiKeyObjectAttributes}. */
export function apiKeyToObject(k: ApiKey): ObjectValue<typeof apiKeyObjectAttributes> {
  return {
    id: k.id,
    name: k.name,
    kind: k.kind,
    prefix: k.prefix,
    creator_email: k.creator_email,
    creator_id: k.creator_id,
    created_at: k.created_at,
    last_used_at: k.last_used_at,
    creator_is_member: k.creator_is_member,
  };
}

// ---------------------------------------------------------------------------------------------
// Instances

/**
 * Descriptions of the instance fields of contract 2.2, shared by the `gpurental_instance` resource
 * and the instance data sources so both document an attribute in the same words.
 */
export const INSTANCE_DESCRIPTIONS = {
  id: "ID of the instance.",
  offer_id: "ID of the offer the instance rents.",
  template_id: "ID of the template the instance runs.",
  disk_gb: "Disk size in GB; billed per GB and hour while the instance is stopped.",
  label: "Label shown in the console, or null.",
  status:
    "Current status: `creating`, `starting`, `running`, `stopping`, `stopped`, `destroying`, `destroyed` or `error`.",
  ssh_host: "Public IP address of the host; SSH connects directly, never through a relay.",
  ssh_port: "SSH port assigned to the instance (never 22).",
  ssh_user: "User to log in as over SSH.",
  jupyter_url:
    "JupyterLab address with the access token included, once a jupyter template reports it; otherwise null. Sensitive because it carries the token.",
  open_url:
    "Address of the template's open button, once reported; otherwise null. Sensitive because it may carry the access token in a `?token=` query.",
  access_token:
    "The instance access token: the JupyterLab token, the bearer key of the template's app ports and the password of accounts the template creates. null when the template uses none, and after the instance is destroyed.",
  error_code:
    "Why the instance is in `error` (`provision_failed`, `workload_completed`, `workload_gone`), or why a stop or start did not land (`stop_timed_out`, `start_timed_out`, `gpus_unavailable`); otherwise null.",
  error_message: "Human-readable explanation of `error_code`, or null.",
  allowed_actions: "Actions the API accepts in the current status: any of `start`, `stop`, `destroy`.",
  gpus_released:
    "Whether the GPUs of the stopped instance were released when the balance ran out; a start then needs the same GPUs to be free again.",
  gpu_release:
    "`pending`, `released` or `unsupported` once the platform decides to release the GPUs; null otherwise, and again once the balance is positive.",
  gpu_release_requested_at: "When the GPU release was decided (RFC 3339), or null.",
  price_per_hour_micro: "GPU price per hour, snapshotted from the offer when rented, in micro-yuan.",
  storage_price_per_gb_hour_micro: "Disk price per GB and hour, snapshotted when rented, in micro-yuan.",
  hold_price_per_hour_micro:
    "Price per hour of holding the GPUs, in micro-yuan; null where a stopped instance pays storage only.",
  stop_hold_price_per_hour_micro:
    "Hold price per hour of an instance stopped on request, in micro-yuan; null where a stopped instance pays storage only.",
  suspended_hold_price_per_hour_micro:
    "Hold price per hour of an instance stopped because the balance ran out, in micro-yuan; null where a stopped instance pays storage only.",
  stop_releases_gpus: "Whether a requested stop releases the GPUs; when false a stop keeps them reserved.",
  created_at: "When the instance was created (RFC 3339).",
  started_at: "When the workload first ran (RFC 3339), or null.",
  status_changed_at: "When the status last changed (RFC 3339).",
  destroyed_at: "When the instance was destroyed (RFC 3339), or null.",
  spend_micro:
    "Charges settled so far, in micro-yuan; equals the sum of the instance's billing transactions.",
  deployed_by:
    "Email (or phone number) of the member who deployed the instance; for a team API key, the key's name followed by its prefix in parentheses.",
  deployed_via_api_key: "The API key that deployed the instance, or null for console deploys.",
} as const;

/** The API key recorded on an instance. */
export const deployedViaApiKeyAttributes = {
  id: str("ID of the API key."),
  name: str("Name of the API key."),
  kind: str("`personal` or `team`."),
  prefix: str("The first 12 characters of the key's secret."),
  revoked: bool("Whether the key has been revoked since."),
} satisfies Attributes;

const d = INSTANCE_DESCRIPTIONS;

/** An instance, without its id: every field of contract 2.2 plus the embedded offer and template. */
export const instanceAttributes = {
  offer_id: str(d.offer_id),
  template_id: str(d.template_id),
  disk_gb: num(d.disk_gb),
  label: str(d.label),
  status: str(d.status),
  ssh_host: str(d.ssh_host),
  ssh_port: num(d.ssh_port),
  ssh_user: str(d.ssh_user),
  jupyter_url: attr.string({ computed: true, sensitive: true, description: d.jupyter_url }),
  open_url: attr.string({ computed: true, sensitive: true, description: d.open_url }),
  access_token: attr.string({ computed: true, sensitive: true, description: d.access_token }),
  error_code: str(d.error_code),
  error_message: str(d.error_message),
  allowed_actions: attr.list(t.string, { computed: true, description: d.allowed_actions }),
  gpus_released: bool(d.gpus_released),
  gpu_release: str(d.gpu_release),
  gpu_release_requested_at: str(d.gpu_release_requested_at),
  price_per_hour_micro: num(d.price_per_hour_micro),
  storage_price_per_gb_hour_micro: num(d.storage_price_per_gb_hour_micro),
  hold_price_per_hour_micro: num(d.hold_price_per_hour_micro),
  stop_hold_price_per_hour_micro: num(d.stop_hold_price_per_hour_micro),
  suspended_hold_price_per_hour_micro: num(d.suspended_hold_price_per_hour_micro),
  stop_releases_gpus: bool(d.stop_releases_gpus),
  created_at: str(d.created_at),
  started_at: str(d.started_at),
  status_changed_at: str(d.status_changed_at),
  destroyed_at: str(d.destroyed_at),
  spend_micro: num(d.spend_micro),
  deployed_by: str(d.deployed_by),
  deployed_via_api_key: attr.single(deployedViaApiKeyAttributes, {
    computed: true,
    description: d.deployed_via_api_key,
  }),
  offer: attr.single(offerObjectAttributes, {
    computed: true,
    description: "The offer the instance rents, as embedded in the instance (some fields may be null).",
  }),
  template: attr.single(templateObjectAttributes, {
    computed: true,
    description:
      "The template the instance runs, as embedded in the instance; `readme` and `onstart` are null.",
  }),
} satisfies Attributes;

/** An instance as a nested object, with its id. */
export const instanceObjectAttributes = {
  id: str(d.id),
  ...instanceAttributes,
} satisfies Attributes;

/**
 * Maps an API instance onto {@link instanceObjectAttributes}: the resource's own mapping for the
 * fields both share, so the resource and the data sources cannot drift apart, plus the embedded
 * offer and template.
 */
export function instanceToObject(i: Instance): ObjectValue<typeof instanceObjectAttributes> {
  // The arguments only the resource has (the API does not return them) are left out.
  const {
    ssh_key_id,
    env,
    secret_env,
    secret_env_wo_version,
    unset_env,
    desired_status,
    offer_filter,
    ...fields
  } = instanceToModel(i, {});
  return { ...fields, offer: offerToObject(i.offer), template: templateToObject(i.template) };
}
