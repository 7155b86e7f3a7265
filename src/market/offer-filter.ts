import {
  attr,
  type CtyValue,
  isUnknown,
  isWhollyKnown,
  type NumberValue,
  notBlank,
  toNumber,
  wholeNumber,
} from "../framework";
import type { OfferFilter } from "./offer-selection";

// The `offer_filter` attribute of gpurental_instance as Terraform sees it (its schema fragment) and
// its conversion to the plain OfferFilter that offer selection works with.

/** Highest max_price_per_hour_micro accepted: a million yuan an hour, far above any GPU. */
export const MAX_PRICE_LIMIT_MICRO = 1_000_000_000_000;

/** The attributes of offer_filter. */
export const offerFilterAttributes = {
  gpu_model: attr.string({
    required: true,
    description: 'GPU model, matched exactly but case-insensitively, e.g. `"RTX 4090"`.',
    validators: [notBlank("offer_filter.gpu_model")],
  }),
  num_gpus: attr.number({
    required: true,
    description: "Number of GPUs the offer rents together.",
    validators: [wholeNumber("offer_filter.num_gpus", 1, 1024)],
  }),
  max_price_per_hour_micro: attr.number({
    optional: true,
    description:
      "Highest GPU price per hour, in micro-yuan (1 ¥ = 1,000,000), e.g. `3000000` for ¥3.00/h. Unset: no limit.",
    validators: [wholeNumber("offer_filter.max_price_per_hour_micro", 0, MAX_PRICE_LIMIT_MICRO)],
  }),
  region: attr.string({
    optional: true,
    description:
      'Region of the machine, matched exactly but case-insensitively, e.g. `"cn-east-1"`. Unset: any region.',
    validators: [notBlank("offer_filter.region")],
  }),
} as const;

/**
 * The plain filter of an offer_filter value: null when unset, undefined while any part of it is
 * unknown (a plan cannot judge it yet) or when a state holds one without its required parts (no
 * configuration could have made it, so it judges nothing).
 */
export function toOfferFilter(value: CtyValue | undefined): OfferFilter | null | undefined {
  if (value === null || value === undefined) return null;
  if (isUnknown(value) || !isWhollyKnown(value)) return undefined;
  const v = value as Record<string, CtyValue>;
  if (typeof v.gpu_model !== "string" || v.num_gpus === null || v.num_gpus === undefined) return undefined;
  const max = v.max_price_per_hour_micro;
  return {
    gpu_model: String(v.gpu_model),
    num_gpus: toNumber(v.num_gpus as NumberValue),
    max_price_per_hour_micro: max === null || max === undefined ? null : toNumber(max as NumberValue),
    region: v.region === null || v.region === undefined ? null : String(v.region),
  };
}

/** Whether two filters ask for the same thing (null: no filter). */
export function sameFilter(a: OfferFilter | null, b: OfferFilter | null): boolean {
  if (a === null || b === null) return a === b;
  return (
    a.gpu_model === b.gpu_model &&
    a.num_gpus === b.num_gpus &&
    (a.max_price_per_hour_micro ?? null) === (b.max_price_per_hour_micro ?? null) &&
    (a.region ?? null) === (b.region ?? null)
  );
}
