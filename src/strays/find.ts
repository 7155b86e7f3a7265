import type { ApiKey, Instance } from "../api/schemas";
import { instanceHourlyBurn, type Micro, toMicro } from "../report/money";
import { objectId, type StateSnapshot } from "../tfstate/state";

// Which of the organization's instances and API keys no given state holds. Pure: the caller lists
// the organization (GET /v1/instances, GET /v1/api-keys) and reads the states; the API and the
// states are the only truth, nothing else (no journal, no cache) is consulted.
//
// Held means: a managed `gpurental_instance` / `gpurental_api_key` object with that id in any state,
// at any address (every module, every count and for_each key, deposed and tainted objects too,
// CDKTF's synthesized names alike), or an object a given plan imports. Destroyed instances are never
// strays (the API does not list them by default); destroying ones are on their way out and reported
// apart. The API key the command authenticates with is listed and marked, but never counted: a
// credential kept outside Terraform on purpose must not fail a nightly check, and it is never revoked.

/** The resource type of instances. */
export const INSTANCE_TYPE = "gpurental_instance";
/** The resource type of API keys. */
export const API_KEY_TYPE = "gpurental_api_key";

/** Which ids the states hold, each with the addresses (and states) holding it. */
export interface HeldObjects {
  instances: Map<string, string[]>;
  apiKeys: Map<string, string[]>;
}

/** Collects the ids of every instance and API key the states hold or a plan imports. */
export function heldObjects(states: readonly StateSnapshot[]): HeldObjects {
  const held: HeldObjects = { instances: new Map(), apiKeys: new Map() };
  const add = (type: string, id: string, where: string) => {
    const map = type === INSTANCE_TYPE ? held.instances : type === API_KEY_TYPE ? held.apiKeys : undefined;
    if (!map) return;
    map.set(id, [...(map.get(id) ?? []), where]);
  };
  for (const s of states) {
    for (const o of s.objects) {
      const id = objectId(o);
      if (id) add(o.type, id, `${o.address}${o.deposed ? ` (deposed ${o.deposed})` : ""} in ${s.source}`);
    }
    for (const i of s.imports) add(i.type, i.id, `${i.address} (imported by the plan) in ${s.source}`);
  }
  return held;
}

/** An instance no state holds. */
export interface StrayInstance {
  instance: Instance;
  /** Since created_at, at the time of the listing; undefined when the API gave no creation time. */
  ageMs: number | undefined;
  /** What it costs per hour now under the balance rule: GPU and disk while running, disk while stopped. */
  hourlyBurn: Micro;
  /** GPU price per hour, snapshotted when rented. */
  pricePerHour: Micro;
  /** Settled charges so far. */
  spend: Micro;
  /**
   * Set when it is the late arrival of a deploy the deploy journal of a state read gave up on
   * (its answer was lost and nothing appeared within the reconcile window): see late.ts.
   */
  lateArrival?: { sentAt: string; entry: string; journal: string };
}

/** An API key no state holds. */
export interface StrayApiKey {
  key: ApiKey;
  ageMs: number | undefined;
  /** The key this command authenticates with (its prefix matches): shown, never counted, never revoked. */
  thisCredential: boolean;
}

/** An id a state holds that the organization does not list (destroyed, another organization's, or revoked). */
export interface HeldButMissing {
  type: typeof INSTANCE_TYPE | typeof API_KEY_TYPE;
  id: string;
  holders: string[];
}

/** What one state contributed. */
export interface StateSummary {
  source: string;
  instances: number;
  apiKeys: number;
  note?: string;
}

/** The outcome of {@link findStrays}. */
export interface StrayReport {
  /** When the organization was listed (ms). */
  at: number;
  instances: StrayInstance[];
  apiKeys: StrayApiKey[];
  /** Instances no state holds that are being destroyed: not strays. */
  leaving: Instance[];
  missing: HeldButMissing[];
  states: StateSummary[];
}

/** What {@link findStrays} compares. */
export interface StrayInput {
  /** GET /v1/instances (destroyed ones excluded by the API; any listed are ignored here too). */
  instances: readonly Instance[];
  /** GET /v1/api-keys: the organization's active keys. */
  apiKeys: readonly ApiKey[];
  states: readonly StateSnapshot[];
  /** The prefix of the API key the command authenticates with, if it uses one. */
  keyPrefix?: string | undefined;
  /** Now, in ms. */
  now: number;
}

function age(createdAt: string | null, now: number): number | undefined {
  if (!createdAt) return undefined;
  const t = Date.parse(createdAt);
  return Number.isNaN(t) ? undefined : Math.max(0, now - t);
}

/** Lists what no state holds, oldest first (the longest billing first). */
export function findStrays(input: StrayInput): StrayReport {
  const held = heldObjects(input.states);
  const report: StrayReport = {
    at: input.now,
    instances: [],
    apiKeys: [],
    leaving: [],
    missing: [],
    states: input.states.map((s) => ({
      source: s.source,
      instances: s.objects.filter((o) => o.type === INSTANCE_TYPE).length,
      apiKeys: s.objects.filter((o) => o.type === API_KEY_TYPE).length,
      ...(s.note ? { note: s.note } : {}),
    })),
  };
  const listed = new Set<string>();
  for (const inst of input.instances) {
    if (inst.status === "destroyed") continue;
    listed.add(inst.id);
    if (held.instances.has(inst.id)) continue;
    if (inst.status === "destroying") {
      report.leaving.push(inst);
      continue;
    }
    report.instances.push({
      instance: inst,
      ageMs: age(inst.created_at, input.now),
      hourlyBurn: BigInt(instanceHourlyBurn(inst)),
      pricePerHour: toMicro(inst.price_per_hour_micro) ?? 0n,
      spend: toMicro(inst.spend_micro) ?? 0n,
    });
  }
  for (const key of input.apiKeys) {
    listed.add(key.id);
    if (held.apiKeys.has(key.id)) continue;
    report.apiKeys.push({
      key,
      ageMs: age(key.created_at, input.now),
      thisCredential: input.keyPrefix !== undefined && key.prefix === input.keyPrefix,
    });
  }
  for (const [type, map] of [
    [INSTANCE_TYPE, held.instances],
    [API_KEY_TYPE, held.apiKeys],
  ] as const) {
    for (const [id, holders] of map) if (!listed.has(id)) report.missing.push({ type, id, holders });
  }
  const oldest = (a: number | undefined, b: number | undefined) => (b ?? -1) - (a ?? -1);
  report.instances.sort((a, b) => oldest(a.ageMs, b.ageMs) || a.instance.id.localeCompare(b.instance.id));
  report.apiKeys.sort((a, b) => oldest(a.ageMs, b.ageMs) || a.key.id.localeCompare(b.key.id));
  return report;
}

/** How many strays count (for the exit code and removal): every instance, every key but this command's own. */
export function strayCount(r: StrayReport): number {
  return r.instances.length + r.apiKeys.filter((k) => !k.thisCredential).length;
}
