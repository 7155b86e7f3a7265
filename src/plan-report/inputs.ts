import { Diagnostics } from "../framework/diagnostics";
import type { Attribute, Attributes } from "../framework/schema";
import { offerFilterAttributes } from "../market/offer-filter";
import type { OfferFilter } from "../market/offer-selection";
import type { Micro } from "../report/money";
import { apiKeyResource } from "../resources/api-key/resource";
import { instanceSchema } from "../resources/instance/schema";
import type { JsonObject, JsonValue } from "../tfstate/json";
import type { ResourceChange } from "../tfstate/plan";

// What a plan says about one gpurental_instance or gpurental_api_key, read out of the JSON values
// Terraform wrote for it, honouring what Terraform marks unknown (until apply) or sensitive. A
// number the cost is made from is held to the range the provider's schema gives it (disk_gb 10 to
// 20000, offer_filter.num_gpus 1 to 1024): the provider refuses anything else at plan, so a plan
// holding it was not made by Terraform, and its cost is not known rather than negative or huge.

/** The resource types a plan report is about. */
export const INSTANCE_TYPE = "gpurental_instance";
export const API_KEY_TYPE = "gpurental_api_key";

/**
 * A whole number read from plan JSON: every number a report reads (disks, counts, micro amounts) is
 * one. A fraction, or a value past 2^53 (no disk or count is that large), is left out as not
 * known, as a bigint is: the report's amounts are bigints made from these.
 */
export function num(v: JsonValue | undefined): number | undefined {
  if (typeof v === "number" && Number.isSafeInteger(v)) return v;
  return undefined;
}

/** A number of plan JSON held to an attribute's schema: its value, or why the schema refuses it. */
export interface Ranged {
  value?: number;
  /** The schema's own words, e.g. `disk_gb must be a whole number from 10 to 20000; got -5.` */
  problem?: string;
}

/** A plan value of a number attribute, checked with the validators the provider's schema gives it. */
export function ranged(attribute: Attribute, name: string, v: JsonValue | undefined): Ranged {
  if (v === undefined || v === null) return {};
  if (typeof v !== "number" && typeof v !== "bigint") {
    return { problem: `${name} must be a number; got ${JSON.stringify(v)}.` };
  }
  const n = Number(v);
  const diags = new Diagnostics();
  for (const validator of attribute.validators) validator.validate(n, { path: [], diags });
  const refused = diags.items.find((d) => d.severity === "error");
  if (refused) return { problem: refused.detail || `${name} is out of range; got ${String(v)}.` };
  if (!Number.isSafeInteger(n) || (typeof v === "bigint" && BigInt(n) !== v)) {
    return { problem: `${name} must be a whole number; got ${String(v)}.` };
  }
  return { value: n };
}

/**
 * An amount of micro units a price is given in (an offer's, or the snapshot in a state): a whole
 * number from 0 to 2^53 - 1, or undefined. A negative price would lower the burn the gates judge.
 */
export function priceMicro(v: unknown): Micro | undefined {
  const m =
    typeof v === "bigint" ? v : typeof v === "number" && Number.isSafeInteger(v) ? BigInt(v) : undefined;
  return m !== undefined && m >= 0n && m <= BigInt(Number.MAX_SAFE_INTEGER) ? m : undefined;
}

/** A string read from plan JSON. */
export function str(v: JsonValue | undefined): string | undefined {
  return typeof v === "string" ? v : undefined;
}

/** The top-level attributes that are sensitive, or hold a sensitive attribute. */
function sensitiveOf(attributes: Attributes): ReadonlySet<string> {
  const holds = (a: Attribute): boolean =>
    a.sensitive || Object.values(a.nested?.attributes ?? {}).some((n) => holds(n));
  return new Set(
    Object.entries(attributes)
      .filter(([, a]) => holds(a))
      .map(([name]) => name),
  );
}

/**
 * The attributes the provider's schema marks sensitive, by resource type (`access_token`,
 * `secret_env`, an API key's `secret`, ...): their values are never shown, whatever the plan marks.
 * A plan's own markers can be missing (a plan JSON written by hand or by another tool).
 */
export const SENSITIVE_ATTRIBUTES: Readonly<Record<string, ReadonlySet<string>>> = {
  [INSTANCE_TYPE]: sensitiveOf(instanceSchema.attributes),
  [API_KEY_TYPE]: sensitiveOf(apiKeyResource.schema.attributes),
};

/** Whether the provider's schema marks an attribute of a change's resource type sensitive. */
function secret(c: ResourceChange, attribute: string): boolean {
  return SENSITIVE_ATTRIBUTES[c.type]?.has(attribute) ?? false;
}

/** Whether an attribute is marked (unknown, or sensitive) as a whole. */
function marked(markers: JsonObject, attribute: string): boolean {
  return markers[attribute] === true;
}

/** An attribute of the planned values when it is known at plan time. */
export function knownAfter(c: ResourceChange, attribute: string): JsonValue | undefined {
  if (!c.after || marked(c.afterUnknown, attribute)) return undefined;
  return c.after[attribute];
}

/** A text attribute for display: `(sensitive)` when Terraform or the provider's schema marks it so. */
export function shownText(c: ResourceChange, attribute: string): string | null {
  const side = c.after && !marked(c.afterUnknown, attribute) ? c.after : c.before;
  const sensitive = side === c.after ? c.afterSensitive : c.beforeSensitive;
  if (marked(sensitive, attribute) || secret(c, attribute)) return "(sensitive)";
  return str(side?.[attribute]) ?? null;
}

/** The offer_filter of planned values, when set and known; `problems` says which part the schema refuses. */
export function plannedFilter(c: ResourceChange, problems: string[] = []): OfferFilter | undefined {
  const f = knownAfter(c, "offer_filter");
  if (f === null || f === undefined || typeof f !== "object" || Array.isArray(f)) return undefined;
  const o = f as JsonObject;
  const gpuModel = str(o.gpu_model);
  const numGpus = ranged(offerFilterAttributes.num_gpus, "offer_filter.num_gpus", o.num_gpus);
  const maxPrice = ranged(
    offerFilterAttributes.max_price_per_hour_micro,
    "offer_filter.max_price_per_hour_micro",
    o.max_price_per_hour_micro,
  );
  for (const r of [numGpus, maxPrice]) if (r.problem) problems.push(r.problem);
  if (numGpus.problem || maxPrice.problem) return undefined;
  if (gpuModel === undefined || numGpus.value === undefined) return undefined;
  return {
    gpu_model: gpuModel,
    num_gpus: numGpus.value,
    max_price_per_hour_micro: maxPrice.value ?? null,
    region: str(o.region) ?? null,
  };
}

/** What a create (or the create half of a replacement) will send, as far as the plan knows it. */
export interface PlannedDeploy {
  /** The pinned offer, or null with a filter (or while unknown). */
  offer_id: string | null;
  offer_filter: OfferFilter | null;
  template_id: string | null;
  /** Undefined while unknown, or when the schema refuses the value (see `problems`). */
  disk_gb: number | undefined;
  ssh_key_id: string | null;
  /** The power state asked for once deployed. */
  desired_status: "running" | "stopped";
  /**
   * Values the provider's schema refuses (a disk_gb out of range): no plan Terraform made holds
   * one, and the deploy's cost is not known.
   */
  problems: string[];
}

/** The deploy a change plans. */
export function plannedDeploy(c: ResourceChange): PlannedDeploy {
  const problems: string[] = [];
  const filter = plannedFilter(c, problems) ?? null;
  const disk = ranged(instanceSchema.attributes.disk_gb, "disk_gb", knownAfter(c, "disk_gb"));
  if (disk.problem) problems.push(disk.problem);
  return {
    offer_id: filter ? null : (str(knownAfter(c, "offer_id")) ?? null),
    offer_filter: filter,
    template_id: str(knownAfter(c, "template_id")) ?? null,
    disk_gb: disk.value,
    ssh_key_id: str(knownAfter(c, "ssh_key_id")) ?? null,
    desired_status: str(knownAfter(c, "desired_status")) === "stopped" ? "stopped" : "running",
    problems,
  };
}

/** Whether a change is about a gpurental_instance that creates one (create or replacement). */
export function deploys(c: ResourceChange): boolean {
  return (
    c.mode === "managed" && c.type === INSTANCE_TYPE && (c.action === "create" || c.action === "replace")
  );
}

/**
 * Replacement reasons in words: `disk_gb 50 → 100` for each path that forces it. The value of an
 * attribute the provider's schema marks sensitive is never shown, nor the keys inside it, whatever
 * the plan marks: `secret_env (sensitive) → (sensitive)`.
 */
export function replaceReasons(c: ResourceChange): string[] {
  const shown = (
    side: JsonObject | null,
    sensitive: JsonObject,
    unknown: JsonObject | undefined,
    key: string,
  ) => {
    if (marked(sensitive, key) || secret(c, key)) return "(sensitive)";
    if (unknown && marked(unknown, key)) return "(known after apply)";
    const v = side?.[key];
    if (v === undefined || v === null) return "null";
    if (typeof v === "object") return "(changed)";
    return String(v);
  };
  return c.replacePaths.map((p) => {
    const key = String(p[0]);
    if (p.length > 1) return secret(c, key) ? `${key} changes` : `${p.join(".")} changes`;
    const before = shown(c.before, c.beforeSensitive, undefined, key);
    const after = shown(c.after, c.afterSensitive, c.afterUnknown, key);
    return before === "(changed)" || after === "(changed)" ? `${key} changes` : `${key} ${before} → ${after}`;
  });
}
