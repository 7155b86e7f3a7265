import type { ApiErrorCode } from "../api/errors";
import type { Instance, Offer, Template } from "../api/schemas";
import { formatYen } from "../provider/refusals";
import { type DeployFinding, offerFindings } from "./plan-checks";

// Offer selection: which offers of the market a deploy of this template and disk could land on,
// cheapest first, and why each other offer is left out. One pure module, used by
// gpurental_instance's offer_filter at plan time (is there anything to deploy on?) and at apply
// time (which offers to try, in which order), by the gpurental_offers data source (leave out what a
// deploy would refuse) and by anything that estimates what a planned instance will cost.
//
// An offer is left out for the first reason that applies: first the filter's own criteria, then the
// offer-dependent refusals of contract 7.2 (plan-checks.ts offerFindings), which are errors only
// when certain. Findings that are only possible (a maintenance within 24 hours, which the contract
// leaves to the service to judge; a sold-out offer one of our own instances holds) keep the offer as
// a candidate, ranked after every offer without them.

/** The market filter of gpurental_instance's offer_filter (and of the offers data source). */
export interface OfferFilter {
  /** GPU model, matched exactly but case-insensitively. */
  gpu_model: string;
  /** Number of GPUs the offer rents together. */
  num_gpus: number;
  /** Highest GPU price per hour in micro-yuan; null or absent: no limit. */
  max_price_per_hour_micro?: number | null | undefined;
  /** Region, matched exactly but case-insensitively; null or absent: any region. */
  region?: string | null | undefined;
}

/** What {@link selectOffers} judges. */
export interface SelectionInput {
  /** The offers listed by the market, in any order; unavailable ones may be included. */
  offers: readonly Offer[];
  /** The filter; criteria left out (or the whole filter) match every offer. */
  filter?: Partial<OfferFilter> | undefined;
  /** The template to deploy; null when it does not exist, undefined when unknown (checks needing it skipped). */
  template?: Template | null | undefined;
  /** Disk to request in GB; undefined skips the machine disk checks. */
  diskGb?: number | undefined;
  /** The organization's instances that are not destroyed, when known (room a replacement frees). */
  instances?: readonly Instance[] | undefined;
  /** The current time in ms (maintenance windows). */
  now: number;
}

/** Why an offer was left out: a criterion of the filter, or the refusal a deploy would meet. */
export type ExclusionCriterion =
  | "gpu_model"
  | "num_gpus"
  | "region"
  | "max_price"
  | "unavailable"
  | "disk_too_large"
  | "disk_exhausted"
  | "not_vm_capable"
  | "cuda_too_new";

/** An offer left out, with the first reason that applies. */
export interface OfferExclusion {
  offer: Offer;
  criterion: ExclusionCriterion;
  /** The API's refusal code when the reason is a deploy refusal. */
  code?: ApiErrorCode | undefined;
  /** The reason in words, with the figures, e.g. "¥2.90/h is above the maximum of ¥2.50/h". */
  reason: string;
}

/** An offer a deploy could land on. */
export interface OfferCandidate {
  offer: Offer;
  /** GPU price per hour while running, in micro-yuan (what the instance would snapshot). */
  price_per_hour_micro: number | undefined;
  /** Refusals the deploy may meet on this offer (warnings only); candidates with any rank last. */
  caveats: readonly DeployFinding[];
}

/** The outcome of {@link selectOffers}. */
export interface OfferSelection {
  /** Candidates in the order a deploy should try them: without caveats first, then cheapest first. */
  candidates: OfferCandidate[];
  /** Every other offer, cheapest first, each with the first reason it was left out. */
  exclusions: OfferExclusion[];
}

/** Deploy refusals that mean another deploy took the offer (or its machine) first: try the next one. */
export const RACE_LOSS_CODES: ReadonlySet<string> = new Set([
  "OFFER_UNAVAILABLE",
  "OFFER_NOT_PINNABLE",
  "MACHINE_DISK_EXHAUSTED",
  "MACHINE_IN_MAINTENANCE",
]);

const REFUSAL_CRITERIA: Readonly<Record<string, ExclusionCriterion>> = {
  OFFER_UNAVAILABLE: "unavailable",
  DISK_TOO_LARGE: "disk_too_large",
  MACHINE_DISK_EXHAUSTED: "disk_exhausted",
  OFFER_NOT_VM_CAPABLE: "not_vm_capable",
  TEMPLATE_CUDA_TOO_NEW: "cuda_too_new",
};

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/** GPU price per hour for a person, e.g. "¥2.50/h". */
export function perHour(micro: number | undefined): string {
  return micro === undefined ? "an unlisted price" : `${formatYen(micro)}/h`;
}

/** The first filter criterion an offer fails, if any. */
function filterExclusion(o: Offer, f: Partial<OfferFilter>): Omit<OfferExclusion, "offer"> | undefined {
  if (f.gpu_model && !(o.gpu_model !== undefined && same(o.gpu_model, f.gpu_model))) {
    return { criterion: "gpu_model", reason: `GPU model ${o.gpu_model ?? "not listed"}, not ${f.gpu_model}` };
  }
  if (f.num_gpus !== undefined && o.num_gpus !== f.num_gpus) {
    return {
      criterion: "num_gpus",
      reason: `${o.num_gpus ?? "an unlisted number of"} GPUs, not ${f.num_gpus}`,
    };
  }
  if (f.region && !(o.region !== undefined && same(o.region, f.region))) {
    return { criterion: "region", reason: `region ${o.region ?? "not listed"}, not ${f.region}` };
  }
  const max = f.max_price_per_hour_micro;
  if (max !== undefined && max !== null) {
    const price = o.price_per_hour_micro;
    if (price === undefined || price > max) {
      return {
        criterion: "max_price",
        reason: `${perHour(price)} is above the maximum of ${perHour(max)}`,
      };
    }
  }
  return undefined;
}

/** Whether an offer meets the filter's own criteria (model, count, region, price), deploy checks aside. */
export function matchesFilter(offer: Offer, filter: Partial<OfferFilter>): boolean {
  return filterExclusion(offer, filter) === undefined;
}

/** The reason of a certain refusal, in a few words with its figures. */
function refusalReason(f: DeployFinding): string {
  switch (f.code) {
    case "OFFER_UNAVAILABLE":
      return f.note === "The offer has been withdrawn." ? "withdrawn" : "sold out";
    case "DISK_TOO_LARGE":
      return `its machine has ${f.facts.max_disk_gb} GB of disk, ${f.facts.requested_disk_gb} GB requested`;
    case "MACHINE_DISK_EXHAUSTED":
      return `its machine has ${f.facts.available_disk_gb} GB of disk left, ${f.facts.requested_disk_gb} GB requested`;
    case "OFFER_NOT_VM_CAPABLE":
      return "its machine cannot run the vm template";
    case "TEMPLATE_CUDA_TOO_NEW":
      return `${f.facts.message ?? "its machine's CUDA is newer than the template supports"}`;
    default:
      return f.code;
  }
}

function byPrice(a: Offer, b: Offer): number {
  const pa = a.price_per_hour_micro ?? Number.POSITIVE_INFINITY;
  const pb = b.price_per_hour_micro ?? Number.POSITIVE_INFINITY;
  return pa - pb || a.id.localeCompare(b.id);
}

/**
 * Judges every offer against the filter and against the refusals a deploy of `template` with
 * `diskGb` would meet, and ranks what is left: offers without caveats first, then by GPU price, then
 * by disk price for `diskGb`, then by free units (more first), then by id, so the order is stable.
 */
export function selectOffers(input: SelectionInput): OfferSelection {
  const filter = input.filter ?? {};
  const candidates: OfferCandidate[] = [];
  const exclusions: OfferExclusion[] = [];
  for (const offer of input.offers) {
    const filtered = filterExclusion(offer, filter);
    if (filtered) {
      exclusions.push({ offer, ...filtered });
      continue;
    }
    // Without a disk size, disk 0 passes the machine disk checks: they are skipped.
    const findings = offerFindings(
      offer,
      { offer_id: offer.id, disk_gb: input.diskGb ?? 0 },
      { template: input.template, instances: input.instances, now: input.now },
    );
    const refusal = findings.find((f) => f.severity === "error");
    if (refusal) {
      exclusions.push({
        offer,
        criterion: REFUSAL_CRITERIA[refusal.code] ?? "unavailable",
        code: refusal.code,
        reason: refusalReason(refusal),
      });
      continue;
    }
    candidates.push({ offer, price_per_hour_micro: offer.price_per_hour_micro, caveats: findings });
  }
  const disk = input.diskGb ?? 0;
  const storage = (o: Offer) => disk * (o.storage_price_per_gb_hour_micro ?? 0);
  candidates.sort(
    (a, b) =>
      Number(a.caveats.length > 0) - Number(b.caveats.length > 0) ||
      (a.offer.price_per_hour_micro ?? Number.POSITIVE_INFINITY) -
        (b.offer.price_per_hour_micro ?? Number.POSITIVE_INFINITY) ||
      storage(a.offer) - storage(b.offer) ||
      (b.offer.free_units ?? 0) - (a.offer.free_units ?? 0) ||
      a.offer.id.localeCompare(b.offer.id),
  );
  exclusions.sort((a, b) => byPrice(a.offer, b.offer));
  return { candidates, exclusions };
}

/** The filter in words, e.g. "RTX 4090 × 1 in cn-east-1 at most ¥2.50/h". */
export function describeFilter(f: Partial<OfferFilter>): string {
  const parts = [`${f.gpu_model ?? "any GPU"} × ${f.num_gpus ?? "any number"}`];
  if (f.region) parts.push(`in ${f.region}`);
  if (f.max_price_per_hour_micro !== undefined && f.max_price_per_hour_micro !== null) {
    parts.push(`at most ${perHour(f.max_price_per_hour_micro)}`);
  }
  return parts.join(" ");
}

/** How a group of exclusions reads in a summary, by criterion. */
const GROUP_WORDS: Readonly<Record<ExclusionCriterion, string>> = {
  gpu_model: "of another GPU model",
  num_gpus: "with another GPU count",
  region: "in another region",
  max_price: "above the maximum price",
  unavailable: "sold out or withdrawn",
  disk_too_large: "on machines with too little disk in total",
  disk_exhausted: "on machines with too little disk left",
  not_vm_capable: "on machines that cannot run the vm template",
  cuda_too_new: "on machines whose CUDA is newer than the template supports",
};

const CRITERIA_ORDER = Object.keys(GROUP_WORDS) as ExclusionCriterion[];

/** Most offers listed one by one in {@link explainSelection}. */
const LISTED = 10;

/**
 * Explains why a selection has no candidate: how many offers were looked at and, per criterion, how
 * many it left out, then the nearest offers (cheapest first) one per line with their reason.
 * Empty when there are candidates.
 */
export function explainSelection(selection: OfferSelection, filter: Partial<OfferFilter>): string {
  if (selection.candidates.length > 0) return "";
  const ex = selection.exclusions;
  if (ex.length === 0)
    return `No offer of ${filter.gpu_model ?? "any GPU model"} is listed on the market now.`;
  const counts = new Map<ExclusionCriterion, OfferExclusion[]>();
  for (const e of ex) counts.set(e.criterion, [...(counts.get(e.criterion) ?? []), e]);
  const groups = CRITERIA_ORDER.filter((c) => counts.has(c)).map((c) => {
    const list = counts.get(c)!;
    let words = `${list.length} ${GROUP_WORDS[c]}`;
    if (c === "max_price") words += ` (cheapest ${perHour(list[0]!.offer.price_per_hour_micro)})`;
    if (c === "num_gpus") words += ` (${[...new Set(list.map((e) => e.offer.num_gpus))].sort().join(", ")})`;
    if (c === "region") words += ` (${[...new Set(list.map((e) => e.offer.region))].sort().join(", ")})`;
    return words;
  });
  const lines = ex
    .slice(0, LISTED)
    .map((e) => `  - offer ${e.offer.id} at ${perHour(e.offer.price_per_hour_micro)}: ${e.reason}`);
  if (ex.length > LISTED) lines.push(`  - and ${ex.length - LISTED} more`);
  const model = filter.gpu_model ?? "GPU";
  return `No offer matches ${describeFilter(filter)} and would be accepted for this template and disk. ${ex.length} ${model} offer${ex.length === 1 ? " was" : "s were"} considered: ${groups.join(", ")}.\n${lines.join("\n")}`;
}

/** The facts of a rented offer that a filter is judged by: the instance's offer and price snapshot. */
export interface RentedOffer {
  gpu_model: string | null;
  num_gpus: number | null;
  region: string | null;
  price_per_hour_micro: number | null;
}

/** Whether a rented offer satisfies a filter, criterion by criterion. */
export interface FilterVerdict {
  /** The criteria the rented offer does not meet, in words. */
  unmet: string[];
  /** The criteria that cannot be judged because the snapshot lacks the fact. */
  unknown: string[];
}

/**
 * Judges an instance's rented offer against a (changed) filter without asking the market: the GPU
 * model, count and region of the offer it rents and the price it snapshotted when rented.
 */
export function judgeRentedOffer(rented: RentedOffer, f: OfferFilter): FilterVerdict {
  const unmet: string[] = [];
  const unknown: string[] = [];
  const check = (name: string, have: unknown, ok: boolean, words: string) => {
    if (have === null || have === undefined) unknown.push(name);
    else if (!ok) unmet.push(words);
  };
  check(
    "gpu_model",
    rented.gpu_model,
    rented.gpu_model !== null && same(rented.gpu_model, f.gpu_model),
    `it rents ${rented.gpu_model}, not ${f.gpu_model}`,
  );
  check(
    "num_gpus",
    rented.num_gpus,
    rented.num_gpus === f.num_gpus,
    `it rents ${rented.num_gpus} GPU(s), not ${f.num_gpus}`,
  );
  if (f.region) {
    check(
      "region",
      rented.region,
      rented.region !== null && same(rented.region, f.region),
      `it runs in ${rented.region}, not ${f.region}`,
    );
  }
  const max = f.max_price_per_hour_micro;
  if (max !== undefined && max !== null) {
    const price = rented.price_per_hour_micro;
    check(
      "max_price_per_hour_micro",
      price,
      price !== null && price <= max,
      `it was rented at ${perHour(price ?? undefined)}, above the maximum of ${perHour(max)}`,
    );
  }
  return { unmet, unknown };
}
