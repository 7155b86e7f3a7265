import { Token } from "cdktf";
import { z } from "zod";
import { EXAMPLE_ID, isUuid } from "../api/ids";
import { firstUnsafeCharacter, jsonEscaped } from "../display";
import { parseDuration } from "../framework/timeouts";
import { characters } from "../resources/instance/env";

// Props are checked with zod when the app synthesizes (through `node.addValidation`), not in the
// constructor: every problem of every construct is reported in one run, and a value that is still
// an unresolved token (another resource's attribute, a variable) is skipped instead of guessed.

/** True when `value` is, or contains, a token cdktf only resolves at synth time. */
export function isUnresolved(value: unknown): boolean {
  if (Token.isUnresolved(value)) return true;
  if (Array.isArray(value)) return value.some(isUnresolved);
  if (value !== null && typeof value === "object") {
    return Object.entries(value).some(([k, v]) => Token.isUnresolved(k) || isUnresolved(v));
  }
  return false;
}

/** Wraps a schema so that unresolved tokens pass unchecked. */
export function unlessToken<T extends z.ZodType>(schema: T): z.ZodType<unknown> {
  return z.unknown().check((ctx) => {
    if (Token.isUnresolved(ctx.value)) return;
    const result = schema.safeParse(ctx.value);
    if (result.success) return;
    for (const issue of result.error.issues) {
      ctx.issues.push({ code: "custom", message: issue.message, path: issue.path, input: ctx.value });
    }
  });
}

/**
 * Quotes a value for a message: strings in quotes, long ones shortened (at 40 characters), numbers
 * as they are (NaN, Infinity), the rest as JSON, and whatever JSON cannot write (a BigInt, a
 * circular object) by its type; never anything a terminal obeys.
 */
export function show(value: unknown): string {
  if (typeof value === "string") {
    const chars = [...value];
    return jsonEscaped(JSON.stringify(chars.length > 40 ? `${chars.slice(0, 40).join("")}…` : value));
  }
  if (typeof value === "number" || typeof value === "bigint")
    return `${String(value)}${typeof value === "bigint" ? "n" : ""}`;
  try {
    const json = JSON.stringify(value);
    if (json !== undefined) return jsonEscaped(json.length > 80 ? `${json.slice(0, 80)}…` : json);
  } catch {
    // A circular object, or one whose toJSON throws.
  }
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

/**
 * A string prop of `min`..`max` characters, counted as the API counts them (code points), with no
 * control character or bidirectional override, as the provider requires of names and labels.
 */
export function boundedString(prop: string, min: number, max: number): z.ZodType<unknown> {
  return unlessToken(
    z.unknown().check((ctx) => {
      const v = ctx.value;
      if (typeof v !== "string") {
        ctx.issues.push({ code: "custom", message: `${prop} must be a string, got ${show(v)}`, input: v });
      } else if (firstUnsafeCharacter(v) !== undefined) {
        ctx.issues.push({
          code: "custom",
          message: `${prop} must not contain control characters or bidirectional overrides, got the character ${firstUnsafeCharacter(v)} in ${show(v)}`,
          input: v,
        });
      } else if (characters(v) < min || characters(v) > max) {
        const limit = min === max ? `${min}` : min > 0 ? `${min} to ${max}` : `at most ${max}`;
        ctx.issues.push({
          code: "custom",
          message: `${prop} must have ${limit} characters, got ${characters(v)} (${show(v)})`,
          input: v,
        });
      }
    }),
  );
}

/** A prop naming an object of the API by id: a UUID, as the contract's identifiers are. */
export function apiId(prop: string): z.ZodType<unknown> {
  return unlessToken(
    z.unknown().check((ctx) => {
      if (!isUuid(ctx.value)) {
        ctx.issues.push({
          code: "custom",
          message: `${prop} must be an ID, a UUID such as "${EXAMPLE_ID}", got ${show(ctx.value)}`,
          input: ctx.value,
        });
      }
    }),
  );
}

/** A string prop of 1..`max` characters that is not only spaces, as the provider's offer_filter requires. */
export function notBlank(prop: string, max: number): z.ZodType<unknown> {
  const bounded = boundedString(prop, 1, max);
  return unlessToken(
    z.unknown().check((ctx) => {
      const v = ctx.value;
      if (typeof v === "string" && v.length > 0 && v.trim() === "") {
        ctx.issues.push({ code: "custom", message: `${prop} must not be blank, got ${show(v)}`, input: v });
        return;
      }
      const r = bounded.safeParse(v);
      if (!r.success)
        for (const i of r.error.issues) ctx.issues.push({ code: "custom", message: i.message, input: v });
    }),
  );
}

/** An integer prop between `min` and `max`, with the unit named in the message. */
export function boundedInteger(prop: string, min: number, max: number, unit: string): z.ZodType<unknown> {
  return unlessToken(
    z.unknown().check((ctx) => {
      const v = ctx.value;
      if (typeof v !== "number" || !Number.isInteger(v) || v < min || v > max) {
        ctx.issues.push({
          code: "custom",
          message: `${prop} must be a whole number from ${min} to ${max}${unit ? ` ${unit}` : ""}, got ${show(v)}`,
          input: v,
        });
      }
    }),
  );
}

/** The market filter of an instance or an offer lookup, as props. */
export interface OfferFilterProps {
  /** GPU model, matched exactly and case-insensitively, e.g. "RTX 4090". */
  readonly gpuModel: string;
  /**
   * Number of GPUs the offer rents together.
   * @default 1
   */
  readonly numGpus?: number;
  /**
   * Highest GPU price per hour, in micro-yuan (1 ¥ = 1,000,000), e.g. 3_000_000 for ¥3.00/h.
   * @default no limit
   */
  readonly maxPricePerHourMicro?: number;
  /**
   * Region of the machine, matched exactly and case-insensitively, e.g. "cn-east-1".
   * @default any region
   */
  readonly region?: string;
}

/** Highest maxPricePerHourMicro accepted, as the provider's (a million yuan an hour). */
const MAX_PRICE_MICRO = 1_000_000_000_000;

/** The checks of {@link OfferFilterProps}; `prefix` names where they sit ("offer." in an instance). */
export function offerFilterShape(prefix: string) {
  return {
    gpuModel: notBlank(`${prefix}gpuModel`, 128),
    numGpus: boundedInteger(`${prefix}numGpus`, 1, 1024, "GPUs").optional(),
    maxPricePerHourMicro: boundedInteger(
      `${prefix}maxPricePerHourMicro`,
      0,
      MAX_PRICE_MICRO,
      "micro-yuan",
    ).optional(),
    region: notBlank(`${prefix}region`, 64).optional(),
  };
}

/** A prop that must be one of `values`. */
export function oneOf(prop: string, values: readonly string[]): z.ZodType<unknown> {
  return unlessToken(
    z.unknown().check((ctx) => {
      if (typeof ctx.value === "string" && values.includes(ctx.value)) return;
      ctx.issues.push({
        code: "custom",
        message: `${prop} must be one of ${values.map((v) => JSON.stringify(v)).join(", ")}, got ${show(ctx.value)}`,
        input: ctx.value,
      });
    }),
  );
}

/** A duration such as "20m" or "1h30m" in the units the provider accepts (ms, s, m, h), not zero. */
export function duration(prop: string): z.ZodType<unknown> {
  return unlessToken(
    z.unknown().check((ctx) => {
      const v = ctx.value;
      // The provider's own rule (src/framework/timeouts.ts): more than 0 ms, at most 480h.
      const ms = typeof v === "string" ? parseDuration(v) : undefined;
      if (ms !== undefined && ms > 0) return;
      ctx.issues.push({
        code: "custom",
        message: `${prop} must be a duration of at most 480h such as "30s", "20m" or "1h30m", got ${show(v)}`,
        input: v,
      });
    }),
  );
}

/** Runs `schema` over `props` and returns one message per problem, all of them. */
export function problems(schema: z.ZodType<unknown>, props: unknown): string[] {
  const result = schema.safeParse(props);
  if (result.success) return [];
  return result.error.issues.map((issue) => issue.message);
}
