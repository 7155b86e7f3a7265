import { z } from "zod";

// Records are parsed with plain `z.object`, which drops keys it does not know: the server may add
// fields without breaking older clients. Fields the contract (api-contract.md) names are required and
// typed strictly; fields only docs/api-shapes.md adds are optional so a server that omits them still
// parses. Identifiers are checked as non-empty strings rather than UUIDs: the contract promises UUIDs,
// but a stricter check would only turn a cosmetic server change into an outage.

const id = z.string().min(1);
const timestamp = z.iso.datetime({ offset: true });
const micro = z.number().int();

/** Every status an instance can be in (contract 2.2, 3.2). */
export const InstanceStatusSchema = z.enum([
  "creating",
  "starting",
  "running",
  "stopping",
  "stopped",
  "destroying",
  "destroyed",
  "error",
]);
/** An instance status (contract 2.2). */
export type InstanceStatus = z.infer<typeof InstanceStatusSchema>;
/** All instance statuses, in lifecycle order. */
export const INSTANCE_STATUSES: readonly InstanceStatus[] = InstanceStatusSchema.options;

/** An action the API accepts on an instance in its current state. */
export const InstanceActionSchema = z.enum(["start", "stop", "destroy"]);
/** An action listed in `allowed_actions`. */
export type InstanceAction = z.infer<typeof InstanceActionSchema>;

/** API key kind (contract 2.1). */
export const ApiKeyKindSchema = z.enum(["personal", "team"]);
/** API key kind: personal keys die with their creator's membership, team keys do not. */
export type ApiKeyKind = z.infer<typeof ApiKeyKindSchema>;

/** An API key as listed; never carries the secret (contract 2.1). */
export const ApiKeySchema = z.object({
  id,
  name: z.string(),
  kind: ApiKeyKindSchema,
  prefix: z.string(),
  creator_email: z.string(),
  creator_id: id,
  created_at: timestamp,
  last_used_at: timestamp.nullable(),
  creator_is_member: z.boolean(),
});
/** An API key record. */
export type ApiKey = z.infer<typeof ApiKeySchema>;

/** Response of POST /v1/api-keys: the key and its secret, which is never returned again. */
export const CreatedApiKeySchema = z.object({ key: ApiKeySchema, secret: z.string().min(1) });
/** A freshly created API key with its one-time secret. */
export type CreatedApiKey = z.infer<typeof CreatedApiKeySchema>;

/** Offer availability (docs/api-shapes.md). */
export const OfferAvailabilitySchema = z.enum(["available", "sold_out", "withdrawn"]);
/** Offer availability; an offer is rentable when `available` and `free_units` > 0. */
export type OfferAvailability = z.infer<typeof OfferAvailabilitySchema>;

/** The machine an offer runs on; `disk_gb` is the contract's, the rest docs/api-shapes.md's. */
export const MachineSchema = z.object({
  id: id.optional(),
  disk_gb: z.number().int(),
  available_disk_gb: z.number().int().optional(),
  cuda_version: z.string().optional(),
  vm_capable: z.boolean().optional(),
  architecture: z.string().optional(),
  gpu_release_supported: z.boolean().optional(),
});
/** A machine record embedded in an offer. */
export type Machine = z.infer<typeof MachineSchema>;

/** A GPU offer (contract 2.3: id, machine.disk_gb, availability, next_maintenance). */
export const OfferSchema = z.object({
  id,
  availability: OfferAvailabilitySchema,
  next_maintenance: timestamp.nullable(),
  machine: MachineSchema,
  gpu_model: z.string().optional(),
  num_gpus: z.number().int().optional(),
  price_per_hour_micro: micro.optional(),
  storage_price_per_gb_hour_micro: micro.optional(),
  hold_price_per_hour_micro: micro.nullable().optional(),
  free_units: z.number().int().optional(),
  region: z.string().optional(),
  created_at: timestamp.optional(),
});
/** A GPU offer record. */
export type Offer = z.infer<typeof OfferSchema>;

/** The offer embedded in an instance; abbreviated to `{id, gpu_model, num_gpus}` in deploy responses. */
export const InstanceOfferSchema = OfferSchema.partial().extend({ id });
/** An offer as embedded in an instance. */
export type InstanceOffer = z.infer<typeof InstanceOfferSchema>;

/** Template mode (contract 2.3). */
export const TemplateModeSchema = z.enum(["ssh", "jupyter", "vm"]);
/** Template mode. */
export type TemplateMode = z.infer<typeof TemplateModeSchema>;

/** One environment variable of a template. */
export const TemplateEnvVarSchema = z.object({
  key: z.string(),
  value: z.string().nullable(),
  secret: z.boolean().optional(),
});
/** A template environment entry. */
export type TemplateEnvVar = z.infer<typeof TemplateEnvVarSchema>;

/** Template visibility (docs/api-shapes.md). */
export const TemplateVisibilitySchema = z.enum(["system", "public", "private"]);
/** Template visibility. */
export type TemplateVisibility = z.infer<typeof TemplateVisibilitySchema>;

/** A template (contract 2.3 names cuda_max, mode, architecture, coming_soon, active, readme, onstart, env). */
export const TemplateSchema = z.object({
  id,
  mode: TemplateModeSchema,
  cuda_max: z.string().nullable(),
  architecture: z.string(),
  coming_soon: z.boolean(),
  active: z.boolean(),
  readme: z.string().nullable(),
  onstart: z.string().nullable(),
  env: z.array(TemplateEnvVarSchema),
  hash_id: z.string().optional(),
  name: z.string().optional(),
  image: z.string().optional(),
  recommended: z.boolean().optional(),
  visibility: TemplateVisibilitySchema.optional(),
  owner_org_id: id.nullable().optional(),
  uses_private_registry: z.boolean().optional(),
  open_port: z.number().int().nullable().optional(),
  created_at: timestamp.optional(),
});
/** A template record. */
export type Template = z.infer<typeof TemplateSchema>;

/** The template embedded in an instance; readme and onstart are null there. */
export const InstanceTemplateSchema = TemplateSchema.partial().extend({ id });
/** A template as embedded in an instance. */
export type InstanceTemplate = z.infer<typeof InstanceTemplateSchema>;

/** The API key that deployed an instance (contract 2.2). */
export const DeployedViaApiKeySchema = z.object({
  id,
  name: z.string(),
  kind: ApiKeyKindSchema,
  prefix: z.string(),
  revoked: z.boolean(),
});
/** The deploying API key as recorded on an instance. */
export type DeployedViaApiKey = z.infer<typeof DeployedViaApiKeySchema>;

/** GPU release progress of a stopped instance after the balance ran out. */
export const GpuReleaseSchema = z.enum(["pending", "released", "unsupported"]);
/** GPU release progress. */
export type GpuRelease = z.infer<typeof GpuReleaseSchema>;

/** An instance with every field of contract 2.2; all are required because the contract says all are present. */
export const InstanceSchema = z.object({
  id,
  label: z.string().nullable(),
  status: InstanceStatusSchema,
  disk_gb: z.number().int(),
  price_per_hour_micro: micro,
  storage_price_per_gb_hour_micro: micro,
  ssh_host: z.string(),
  ssh_port: z.number().int(),
  ssh_user: z.string(),
  jupyter_url: z.string().nullable(),
  open_url: z.string().nullable(),
  access_token: z.string().nullable(),
  error_code: z.string().nullable(),
  error_message: z.string().nullable(),
  allowed_actions: z.array(InstanceActionSchema),
  gpus_released: z.boolean(),
  gpu_release: GpuReleaseSchema.nullable(),
  gpu_release_requested_at: timestamp.nullable(),
  hold_price_per_hour_micro: micro.nullable(),
  stop_hold_price_per_hour_micro: micro.nullable(),
  suspended_hold_price_per_hour_micro: micro.nullable(),
  stop_releases_gpus: z.boolean(),
  created_at: timestamp.nullable(),
  started_at: timestamp.nullable(),
  status_changed_at: timestamp.nullable(),
  destroyed_at: timestamp.nullable(),
  spend_micro: micro,
  deployed_by: z.string(),
  deployed_via_api_key: DeployedViaApiKeySchema.nullable(),
  offer: InstanceOfferSchema,
  template: InstanceTemplateSchema,
});
/** An instance record. */
export type Instance = z.infer<typeof InstanceSchema>;

/** An SSH key (contract 2.3: id, name, fingerprint). */
export const SshKeySchema = z.object({
  id,
  name: z.string(),
  fingerprint: z.string(),
  public_key: z.string().optional(),
  created_at: timestamp.optional(),
});
/** An SSH key record. */
export type SshKey = z.infer<typeof SshKeySchema>;

/** Ledger row kind (docs/api-shapes.md). */
export const TransactionKindSchema = z.enum(["gpu", "storage", "top_up"]);
/** Ledger row kind: gpu and storage are debits, top_up a credit. */
export type TransactionKind = z.infer<typeof TransactionKindSchema>;

// The contract shows no billing payloads; docs/api-shapes.md defines them. The fields a caller
// cannot do without are required, the descriptive ones optional.

/** A billing ledger row. `amount_micro` is positive for every kind. */
export const TransactionSchema = z.object({
  id,
  created_at: timestamp,
  kind: TransactionKindSchema,
  amount_micro: micro,
  instance_id: id.nullable().optional(),
  description: z.string().nullable().optional(),
  balance_after_micro: micro.optional(),
});
/** A billing transaction. */
export type Transaction = z.infer<typeof TransactionSchema>;

/** One day of spend. */
export const SpendDaySchema = z.object({ date: z.string(), spend_micro: micro });
/** Spend on one calendar day (`YYYY-MM-DD`). */
export type SpendDay = z.infer<typeof SpendDaySchema>;

/** A completed top-up (POST /v1/billing/orders). */
export const BillingOrderSchema = z.object({
  id,
  amount_micro: micro,
  status: z.string(),
  balance_micro: micro,
});
/** A top-up order. */
export type BillingOrder = z.infer<typeof BillingOrderSchema>;

/** Role of a member in an organization. */
export const RoleSchema = z.enum(["admin", "member"]);
/** Organization role. */
export type Role = z.infer<typeof RoleSchema>;

/** GET /v1/me: the signed-in user, the active organization and the user's role in it. */
export const MeSchema = z.object({
  user: z.object({ id, email: z.string().nullable(), phone: z.string().nullable().optional() }),
  organization: z.object({ id, name: z.string(), balance_micro: micro }),
  role: RoleSchema,
});
/** The signed-in caller. */
export type Me = z.infer<typeof MeSchema>;

/** A member of the current organization. */
export const MemberSchema = z.object({
  user_id: id,
  email: z.string().nullable(),
  phone: z.string().nullable().optional(),
  role: RoleSchema,
});
/** An organization member. */
export type Member = z.infer<typeof MemberSchema>;

/** Response of GET /v1/instances/{id}/logs. */
export const LogsSchema = z.object({ lines: z.array(z.string()) });
/** Instance log lines, most recent last. */
export type Logs = z.infer<typeof LogsSchema>;

/** Wraps an item schema in the `{items: [...]}` envelope every list endpoint uses. */
export function listOf<T extends z.ZodType>(item: T) {
  return z.object({ items: z.array(item) });
}
