import type { Instance } from "../../api/schemas";
import { type CtyValue, isUnknown, type NumberValue, toNumber, type Unknown } from "../../framework";
import { toOfferFilter } from "../../market/offer-filter";
import {
  type DesiredStatus,
  type InstanceArgs,
  type InstanceModel,
  instanceToModel,
  type PriorArgs,
} from "./model";
import type { InstancePlan, InstanceState } from "./schema";

// The conversion between the framework values of gpurental_instance (plan, state) and the plain
// model the lifecycle works on.

type Plan = InstancePlan;
type State = InstanceState;

export function known<T>(v: T | Unknown): v is T {
  return !isUnknown(v);
}

/**
 * The plain arguments of a wholly known plan or state (a plan's offer_id is unknown with a filter);
 * the write-only secrets come from the configuration, when the arguments are for a deploy.
 */
export function toArgs(p: Plan | State, config?: Plan): InstanceArgs {
  const strMap = (m: unknown): Record<string, string> | null =>
    m === null || m === undefined ? null : { ...(m as Record<string, string>) };
  const filter = toOfferFilter(p.offer_filter as CtyValue) ?? null;
  return {
    offer_id: filter || !known(p.offer_id) ? null : (p.offer_id as string | null),
    offer_filter: filter,
    template_id: p.template_id as string,
    disk_gb: toNumber(p.disk_gb as NumberValue),
    label: (p.label as string | null) ?? null,
    ssh_key_id: (p.ssh_key_id as string | null) ?? null,
    env: strMap(p.env),
    secret_env: strMap(p.secret_env),
    ...(config ? { secret_env_wo: strMap(config.secret_env_wo) } : {}),
    secret_env_wo_version:
      p.secret_env_wo_version === null ? null : toNumber(p.secret_env_wo_version as NumberValue),
    unset_env:
      p.unset_env === null || p.unset_env === undefined ? null : [...(p.unset_env as string[])].sort(),
    desired_status: ((p.desired_status as string | null) ?? "running") as DesiredStatus,
  };
}

/** What a state recorded that the API does not return, from a state that may be partial (after an import). */
export function priorArgs(s: State): PriorArgs {
  return {
    ssh_key_id: s.ssh_key_id,
    env: s.env ? { ...s.env } : null,
    secret_env: s.secret_env ? { ...s.secret_env } : null,
    secret_env_wo_version: s.secret_env_wo_version === null ? null : toNumber(s.secret_env_wo_version),
    unset_env: s.unset_env ? [...s.unset_env].sort() : null,
    desired_status: s.desired_status === "stopped" ? "stopped" : "running",
    offer_filter: toOfferFilter(s.offer_filter) ?? null,
    // A state holding only an id (just imported) has read nothing yet: the API's label is taken.
    label: s.template_id === null ? undefined : s.label,
    offer_id: s.offer_id,
    offer: s.offer
      ? {
          gpu_model: s.offer.gpu_model,
          num_gpus: s.offer.num_gpus === null ? null : toNumber(s.offer.num_gpus),
          region: s.offer.region,
        }
      : null,
  };
}

/** The attributes that carry the access token, kept out of the state by `store_access_secrets = false`. */
export const ACCESS_SECRETS = ["access_token", "jupyter_url", "open_url"] as const;

/**
 * `jupyter_url` with the access token masked: the token wherever it appears, and whatever else
 * could be a credential (a `token` or `access_token` parameter in any case, a user and password)
 * even when it is not that token. The attribute is not sensitive: it is shown in every plan.
 */
export function maskedJupyterAddress(url: string | null, token: string | null): string | null {
  if (url === null) return null;
  const masked = url
    .replace(/^([a-z][a-z0-9+.-]*:\/\/)[^@/?#]*@/i, "$1…@")
    .replace(/([?&#;](?:access_)?token=)[^&#;]*/gi, "$1…");
  return token ? masked.split(token).join("…") : masked;
}

/** Whether a stored state keeps the access secrets: null is a state from before the argument existed, or just imported. */
export function storesSecrets(s: State): boolean {
  return s.store_access_secrets !== false;
}

/** The state value of a model; the timeouts come from the plan or prior state. */
export function toState(
  m: InstanceModel,
  store: boolean | null,
  keep: boolean = store !== false,
): Omit<State, "timeouts"> {
  return {
    ...m,
    ...(keep ? {} : { access_token: null, jupyter_url: null, open_url: null }),
    store_access_secrets: store,
    jupyter_address: maskedJupyterAddress(m.jupyter_url, m.access_token),
    // Write-only: never part of a state, whatever the model carries.
    secret_env_wo: null,
    secret_env_wo_version: m.secret_env_wo_version ?? null,
    offer_filter: m.offer_filter
      ? {
          gpu_model: m.offer_filter.gpu_model,
          num_gpus: m.offer_filter.num_gpus,
          max_price_per_hour_micro: m.offer_filter.max_price_per_hour_micro ?? null,
          region: m.offer_filter.region ?? null,
        }
      : null,
    allowed_actions: [...m.allowed_actions],
  };
}

/**
 * The state of an instance a listing found (`terraform query` with `include_resource`): what an
 * import's first read records, without the access secrets (a listing is discovery: the import
 * reads them if the state is to keep them).
 */
export function listedInstanceState(api: Instance): Omit<State, "timeouts"> {
  return toState(instanceToModel(api, {}), null, false);
}
