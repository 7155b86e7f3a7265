import type { GpurentalClient } from "../../api/client";
import type { Instance, InstanceStatus } from "../../api/schemas";
import type { OfferFilter } from "../../market/offer-selection";

// The state of gpurental_instance as plain TypeScript, independent of how the framework encodes
// values, and the one function that maps an API instance onto it.

/** The client methods the instance lifecycle uses (deploys, waits, power changes, destroy). */
export type InstanceApi = Pick<
  GpurentalClient,
  | "deployInstance"
  | "listInstances"
  | "getInstance"
  | "stopInstance"
  | "startInstance"
  | "destroyInstance"
  | "listOffers"
  | "getTemplate"
>;

/** The user's arguments of gpurental_instance that are sent to the API or drive its lifecycle. */
export interface InstanceArgs {
  /** The pinned offer; null when offer_filter chooses one at create time. */
  offer_id: string | null;
  /** The market filter the offer is chosen by at create time; null when offer_id is pinned. */
  offer_filter: OfferFilter | null;
  template_id: string;
  disk_gb: number;
  label: string | null;
  ssh_key_id: string | null;
  /** As configured: a null value is an entry that is not set (EnvMap in env.ts). */
  env: Record<string, string | null> | null;
  secret_env: Record<string, string | null> | null;
  /**
   * The write-only secrets, present only in the arguments of a deploy (taken from the
   * configuration); never part of a state.
   */
  secret_env_wo?: Record<string, string | null> | null;
  /** The number whose change redeploys with new secret_env_wo values; stored like any argument. */
  secret_env_wo_version?: number | null;
  unset_env: (string | null)[] | null;
  desired_status: DesiredStatus;
}

/** The power state a user asks for. */
export type DesiredStatus = "running" | "stopped";

/** The API key that deployed an instance, as kept in state. */
export interface DeployedViaApiKeyModel {
  id: string;
  name: string;
  kind: string;
  prefix: string;
  revoked: boolean;
}

/**
 * What the instance's embedded offer says about the offer it rents: the facts an offer_filter is
 * judged by, kept in state so a changed filter is judged without asking the market.
 */
export interface OfferSnapshot {
  gpu_model: string | null;
  num_gpus: number | null;
  region: string | null;
}

/** Every computed attribute of gpurental_instance (contract 2.2). */
export interface InstanceComputed {
  id: string;
  offer: OfferSnapshot | null;
  status: InstanceStatus;
  ssh_host: string;
  ssh_port: number;
  ssh_user: string;
  jupyter_url: string | null;
  open_url: string | null;
  access_token: string | null;
  error_code: string | null;
  error_message: string | null;
  allowed_actions: string[];
  gpus_released: boolean;
  gpu_release: string | null;
  gpu_release_requested_at: string | null;
  price_per_hour_micro: number;
  storage_price_per_gb_hour_micro: number;
  hold_price_per_hour_micro: number | null;
  stop_hold_price_per_hour_micro: number | null;
  suspended_hold_price_per_hour_micro: number | null;
  stop_releases_gpus: boolean;
  created_at: string | null;
  started_at: string | null;
  status_changed_at: string | null;
  destroyed_at: string | null;
  spend_micro: number;
  deployed_by: string;
  deployed_via_api_key: DeployedViaApiKeyModel | null;
}

/** The state of gpurental_instance without its timeouts (which the framework carries through). */
export type InstanceModel = InstanceArgs & InstanceComputed;

/** The names of the computed attributes, in schema order. */
export const INSTANCE_COMPUTED_ATTRIBUTES: readonly (keyof InstanceComputed)[] = [
  "id",
  "offer",
  "status",
  "ssh_host",
  "ssh_port",
  "ssh_user",
  "jupyter_url",
  "open_url",
  "access_token",
  "error_code",
  "error_message",
  "allowed_actions",
  "gpus_released",
  "gpu_release",
  "gpu_release_requested_at",
  "price_per_hour_micro",
  "storage_price_per_gb_hour_micro",
  "hold_price_per_hour_micro",
  "stop_hold_price_per_hour_micro",
  "suspended_hold_price_per_hour_micro",
  "stop_releases_gpus",
  "created_at",
  "started_at",
  "status_changed_at",
  "destroyed_at",
  "spend_micro",
  "deployed_by",
  "deployed_via_api_key",
];

/**
 * Computed attributes fixed when the instance is rented: a stop or start never changes them, so
 * an update keeps their prior values in the plan. Every other computed attribute moves with the
 * status or with time, and is planned unknown when desired_status changes.
 */
export const INSTANCE_STABLE_ATTRIBUTES: readonly (keyof InstanceComputed)[] = [
  "id",
  // The offer an instance rents never changes; neither do its model, GPU count and region.
  "offer",
  // The host and the port are assigned to the instance when it is rented (contract 2.2).
  "ssh_host",
  "ssh_port",
  "ssh_user",
  "price_per_hour_micro",
  "storage_price_per_gb_hour_micro",
  "created_at",
  "deployed_by",
];

/**
 * The desired_status a refreshed instance stands for. A settled or settling power state is taken
 * as is (so an auto-stopped instance reads as stopped and the next plan starts it); statuses that
 * say nothing about power (creating, error, destroying) keep what the state had.
 */
export function desiredStatusOf(status: InstanceStatus, prior: DesiredStatus): DesiredStatus {
  switch (status) {
    case "running":
    case "starting":
      return "running";
    case "stopped":
    case "stopping":
      return "stopped";
    default:
      return prior;
  }
}

/** What the state had before, for the arguments the API does not return. */
export interface PriorArgs {
  ssh_key_id?: string | null | undefined;
  env?: Record<string, string | null> | null | undefined;
  secret_env?: Record<string, string | null> | null | undefined;
  secret_env_wo_version?: number | null | undefined;
  unset_env?: (string | null)[] | null | undefined;
  desired_status?: DesiredStatus | undefined;
  offer_filter?: OfferFilter | null | undefined;
  /** The label as configured: "" and null both mean none, and the API may return either. */
  label?: string | null | undefined;
  /** The offer last recorded and its snapshot, which fills in facts the API's embedded offer leaves out. */
  offer_id?: string | null | undefined;
  offer?: OfferSnapshot | null | undefined;
}

/** The label to record: the configured one when it and the API's both mean "no label". */
function labelOf(api: string | null, prior: string | null | undefined): string | null {
  if ((api === null || api === "") && (prior === null || prior === "")) return prior;
  return api;
}

/**
 * The snapshot of the offer an instance rents. Deploy responses abbreviate the embedded offer, and
 * a server may leave fields out, so facts already recorded for the same offer are kept.
 */
export function offerSnapshotOf(api: Instance, prior: PriorArgs): OfferSnapshot {
  const o = api.offer;
  const before = prior.offer_id === o.id ? prior.offer : null;
  return {
    gpu_model: o.gpu_model ?? before?.gpu_model ?? null,
    num_gpus: o.num_gpus ?? before?.num_gpus ?? null,
    region: o.region ?? before?.region ?? null,
  };
}

/**
 * Maps an API instance onto the resource state. The API does not return ssh_key_id, the env
 * overrides (nor the version of the write-only ones) nor the offer filter, so those keep the prior
 * (planned or stored) values; everything else comes from the API. The write-only secrets are never
 * part of it.
 */
export function instanceToModel(api: Instance, prior: PriorArgs, desired?: DesiredStatus): InstanceModel {
  const via = api.deployed_via_api_key;
  return {
    offer_id: api.offer.id,
    offer_filter: prior.offer_filter ?? null,
    template_id: api.template.id,
    disk_gb: api.disk_gb,
    label: labelOf(api.label, prior.label),
    ssh_key_id: prior.ssh_key_id ?? null,
    env: prior.env ?? null,
    secret_env: prior.secret_env ?? null,
    secret_env_wo_version: prior.secret_env_wo_version ?? null,
    unset_env: prior.unset_env ?? null,
    desired_status: desired ?? desiredStatusOf(api.status, prior.desired_status ?? "running"),
    id: api.id,
    offer: offerSnapshotOf(api, prior),
    status: api.status,
    ssh_host: api.ssh_host,
    ssh_port: api.ssh_port,
    ssh_user: api.ssh_user,
    jupyter_url: api.jupyter_url,
    open_url: api.open_url,
    access_token: api.access_token,
    error_code: api.error_code,
    error_message: api.error_message,
    allowed_actions: [...api.allowed_actions],
    gpus_released: api.gpus_released,
    gpu_release: api.gpu_release,
    gpu_release_requested_at: api.gpu_release_requested_at,
    price_per_hour_micro: api.price_per_hour_micro,
    storage_price_per_gb_hour_micro: api.storage_price_per_gb_hour_micro,
    hold_price_per_hour_micro: api.hold_price_per_hour_micro,
    stop_hold_price_per_hour_micro: api.stop_hold_price_per_hour_micro,
    suspended_hold_price_per_hour_micro: api.suspended_hold_price_per_hour_micro,
    stop_releases_gpus: api.stop_releases_gpus,
    created_at: api.created_at,
    started_at: api.started_at,
    status_changed_at: api.status_changed_at,
    destroyed_at: api.destroyed_at,
    spend_micro: api.spend_micro,
    deployed_by: api.deployed_by,
    deployed_via_api_key: via
      ? { id: via.id, name: via.name, kind: via.kind, prefix: via.prefix, revoked: via.revoked }
      : null,
  };
}
