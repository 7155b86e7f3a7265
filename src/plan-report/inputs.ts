import type { OfferFilter } from "../market/offer-selection";
import type { JsonObject, JsonValue } from "../tfstate/json";
import type { ResourceChange } from "../tfstate/plan";

// What a plan says about one gpurental_instance or gpurental_api_key, read out of the JSON values
// Terraform wrote for it, honouring what Terraform marks unknown (until apply) or sensitive.

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

/** A string read from plan JSON. */
export function str(v: JsonValue | undefined): string | undefined {
  return typeof v === "string" ? v : undefined;
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

/** A text attribute for display: `(sensitive)` when Terraform marks it so, on either side. */
export function shownText(c: ResourceChange, attribute: string): string | null {
  const side = c.after && !marked(c.afterUnknown, attribute) ? c.after : c.before;
  const sensitive = side === c.after ? c.afterSensitive : c.beforeSensitive;
  if (marked(sensitive, attribute)) return "(sensitive)";
  return str(side?.[attribute]) ?? null;
}

/** The offer_filter of planned values, when set and known. */
export function plannedFilter(c: ResourceChange): OfferFilter | undefined {
  const f = knownAfter(c, "offer_filter");
  if (f === null || f === undefined || typeof f !== "object" || Array.isArray(f)) return undefined;
  const o = f as JsonObject;
  const gpuModel = str(o.gpu_model);
  const numGpus = num(o.num_gpus);
  if (gpuModel === undefined || numGpus === undefined) return undefined;
  return {
    gpu_model: gpuModel,
    num_gpus: numGpus,
    max_price_per_hour_micro: num(o.max_price_per_hour_micro) ?? null,
    region: str(o.region) ?? null,
  };
}

/** What a create (or the create half of a replacement) will send, as far as the plan knows it. */
export interface PlannedDeploy {
  /** The pinned offer, or null with a filter (or while unknown). */
  offer_id: string | null;
  offer_filter: OfferFilter | null;
  template_id: string | null;
  disk_gb: number | undefined;
  ssh_key_id: string | null;
  /** The power state asked for once deployed. */
  desired_status: "running" | "stopped";
}

/** The deploy a change plans. */
export function plannedDeploy(c: ResourceChange): PlannedDeploy {
  const filter = plannedFilter(c) ?? null;
  return {
    offer_id: filter ? null : (str(knownAfter(c, "offer_id")) ?? null),
    offer_filter: filter,
    template_id: str(knownAfter(c, "template_id")) ?? null,
    disk_gb: num(knownAfter(c, "disk_gb")),
    ssh_key_id: str(knownAfter(c, "ssh_key_id")) ?? null,
    desired_status: str(knownAfter(c, "desired_status")) === "stopped" ? "stopped" : "running",
  };
}

/** Whether a change is about a gpurental_instance that creates one (create or replacement). */
export function deploys(c: ResourceChange): boolean {
  return (
    c.mode === "managed" && c.type === INSTANCE_TYPE && (c.action === "create" || c.action === "replace")
  );
}

/** Replacement reasons in words: `disk_gb 50 → 100` for each path that forces it. */
export function replaceReasons(c: ResourceChange): string[] {
  const shown = (
    side: JsonObject | null,
    sensitive: JsonObject,
    unknown: JsonObject | undefined,
    key: string,
  ) => {
    if (marked(sensitive, key)) return "(sensitive)";
    if (unknown && marked(unknown, key)) return "(known after apply)";
    const v = side?.[key];
    if (v === undefined || v === null) return "null";
    if (typeof v === "object") return "(changed)";
    return String(v);
  };
  return c.replacePaths.map((p) => {
    const key = String(p[0]);
    if (p.length > 1) return `${p.join(".")} changes`;
    const before = shown(c.before, c.beforeSensitive, undefined, key);
    const after = shown(c.after, c.afterSensitive, c.afterUnknown, key);
    return before === "(changed)" || after === "(changed)" ? `${key} changes` : `${key} ${before} → ${after}`;
  });
}
