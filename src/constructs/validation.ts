import { TerraformProvider, Token } from "cdktf";
import { z } from "zod";
import { EXAMPLE_ID, isUuid } from "../api/ids";
import { isCredentialKey, REDACTED, redactText } from "../api/redact";
import { firstUnsafeCharacter, jsonEscaped, terminalText } from "../display";
import { parseDuration } from "../framework/timeouts";
import { characters } from "../resources/instance/env";

// Props are checked with zod when the app synthesizes (through `node.addValidation`), not in the
// constructor: every problem of every construct is reported in one run, and a value that is still
// an unresolved token (another resource's attribute, a variable) is skipped instead of guessed.
// Null is unset, as in Terraform, for every prop: `readProps` leaves it out before anything reads
// the props (the bindings, the checks), and whether a prop may be unset is its list's to say
// (`PropList`: "required" or not), so the checks below judge only values that are set.

/** True when `value` is, or contains, a token cdktf only resolves at synth time. */
export function isUnresolved(value: unknown, seen = new WeakSet<object>()): boolean {
  if (Token.isUnresolved(value)) return true;
  if (value === null || typeof value !== "object" || seen.has(value)) return false;
  // A circular value (a JavaScript caller's) is looked at once.
  seen.add(value);
  if (Array.isArray(value)) return value.some((v) => isUnresolved(v, seen));
  return Object.entries(value).some(([k, v]) => Token.isUnresolved(k) || isUnresolved(v, seen));
}

/**
 * Wraps a schema so that unresolved tokens pass unchecked, and so does undefined: an unset prop is
 * the list of props' to judge (`problems` names a required one as required).
 */
export function unlessToken<T extends z.ZodType>(schema: T): z.ZodType<unknown> {
  return z
    .unknown()
    .check((ctx) => {
      if (Token.isUnresolved(ctx.value)) return;
      const result = schema.safeParse(ctx.value);
      if (result.success) return;
      for (const issue of result.error.issues) {
        ctx.issues.push({ code: "custom", message: issue.message, path: issue.path, input: ctx.value });
      }
    })
    .optional();
}

/** How much of a quoted value is masked before it is cut: far more than is shown. */
const MASKED_LENGTH = 2000;

/**
 * Quotes a value for a message: strings in quotes, long ones shortened (at 40 characters), numbers
 * as they are (NaN, Infinity), the rest as JSON, and whatever JSON cannot write (a BigInt, a
 * circular object) by its type; never anything a terminal obeys, and anything that looks like a
 * credential (a token, a URL's password, a `token` field) masked, as every message masks it.
 */
export function show(value: unknown): string {
  if (value === undefined) return "undefined";
  if (typeof value === "string") {
    // Masked within a bound: the patterns' time grows faster than a huge string's length.
    const chars = [...redactText(value.slice(0, MASKED_LENGTH))];
    return jsonEscaped(
      JSON.stringify(chars.length > 40 ? `${chars.slice(0, 40).join("")}…` : chars.join("")),
    );
  }
  if (typeof value === "number" || typeof value === "bigint")
    return `${String(value)}${typeof value === "bigint" ? "n" : ""}`;
  try {
    // A credential-named field by its name, whatever its value; the rest by the text patterns.
    const json = JSON.stringify(value, (key, v: unknown) =>
      key !== "" && isCredentialKey(key) && typeof v !== "boolean" && v !== null ? REDACTED : v,
    );
    if (json !== undefined) {
      const masked = redactText(json.slice(0, MASKED_LENGTH));
      return jsonEscaped(masked.length > 80 ? `${masked.slice(0, 80)}…` : masked);
    }
  } catch {
    // A circular object, or one whose toJSON throws.
  }
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

/**
 * A value where a construct was expected, for a message: an object by the names of its keys only
 * (it may be the settings meant for one, credentials included), anything else as {@link show}.
 */
function showInstead(value: unknown): string {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return show(value);
  const keys = Object.keys(value).map((k) => terminalText(k, { maxLength: 32 }));
  if (keys.length === 0) return "an empty object";
  return `an object with the keys ${keys.slice(0, 5).join(", ")}${keys.length > 5 ? ", …" : ""}`;
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

/** The `provider` prop: a provider declared in the app (a GpurentalProvider), or unset. */
export const providerProp: z.ZodType<unknown> = z
  .unknown()
  .check((ctx) => {
    const v = ctx.value;
    if (v === undefined || TerraformProvider.isTerraformProvider(v)) return;
    ctx.issues.push({
      code: "custom",
      message: `provider must be a provider of this app (a GpurentalProvider), got ${showInstead(v)}`,
      input: v,
    });
  })
  .optional();

/** The `dependsOn` prop: resources (anything with a Terraform address, `fqn`), or unset. */
export const dependsOnProp: z.ZodType<unknown> = z
  .unknown()
  .check((ctx) => {
    const v = ctx.value;
    if (v === undefined) return;
    const dependable = (d: unknown) =>
      d !== null && typeof d === "object" && typeof (d as { fqn?: unknown }).fqn === "string";
    if (Array.isArray(v) && v.every(dependable)) return;
    ctx.issues.push({
      code: "custom",
      message: `dependsOn must be a list of resources or data sources of this app, got ${Array.isArray(v) ? `${showInstead(v.find((d) => !dependable(d)))} in the list` : showInstead(v)}`,
      input: v,
    });
  })
  .optional();

/** A string prop that is not empty or only spaces, as the provider's offer_filter requires. */
export function notBlank(prop: string): z.ZodType<unknown> {
  return unlessToken(
    z.unknown().check((ctx) => {
      const v = ctx.value;
      if (typeof v === "string" && v.trim() !== "") return;
      ctx.issues.push({
        code: "custom",
        message:
          typeof v === "string"
            ? `${prop} must not be empty or blank, got ${show(v)}`
            : `${prop} must be a string, got ${show(v)}`,
        input: v,
      });
    }),
  );
}

/**
 * An object prop checked with `shape`: anything else (a string, a list) is named as this prop rather
 * than left to zod's nameless "expected object".
 */
export function objectProp(prop: string, shape: z.ZodRawShape): z.ZodType<unknown> {
  const inner = z.object(shape);
  return unlessToken(
    z.unknown().check((ctx) => {
      const v = ctx.value;
      if (v === null || typeof v !== "object" || Array.isArray(v)) {
        ctx.issues.push({ code: "custom", message: `${prop} must be an object, got ${show(v)}`, input: v });
        return;
      }
      const r = inner.safeParse(v);
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
    gpuModel: notBlank(`${prefix}gpuModel`),
    numGpus: boundedInteger(`${prefix}numGpus`, 1, 1024, "GPUs").optional(),
    maxPricePerHourMicro: boundedInteger(
      `${prefix}maxPricePerHourMicro`,
      0,
      MAX_PRICE_MICRO,
      "micro-yuan",
    ).optional(),
    region: notBlank(`${prefix}region`).optional(),
  };
}

/** The props of {@link OfferFilterProps}, for {@link problems}. */
export const OFFER_FILTER_PROPS = {
  gpuModel: "required",
  numGpus: true,
  maxPricePerHourMicro: true,
  region: true,
} as const satisfies PropList<OfferFilterProps>;

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

/**
 * The props a construct takes: "required" for one it cannot do without, `true` for one it can, or,
 * for an object prop it can do without, the list of that object's own props.
 */
export interface PropNames {
  readonly [name: string]: true | "required" | PropNames;
}

/**
 * The {@link PropNames} of `P`, as a construct declares them (`satisfies PropList<Props>`): the list
 * cannot fall behind the interface, nor disagree with it on which props are required.
 */
export type PropList<P> = {
  readonly [K in keyof P]-?: Partial<Pick<P, K>> extends Pick<P, K>
    ? true | PropList<NonNullable<P[K]>>
    : "required";
};

/** A value whose props can be read: an object, not a list, a function or a primitive. */
function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/**
 * The props a construct reads, in the bindings and in the checks alike: null is unset, as in
 * Terraform, for every prop in `names` at every level it lists, so a null is left out exactly as
 * undefined is (never written into the configuration); props that are no object read as none (the
 * checks report them). An object prop that is a token is kept as it is, for Terraform to resolve.
 */
export function readProps<P>(props: P, names: PropNames): P {
  return (isRecord(props) ? withoutNulls(props, names) : {}) as P;
}

function withoutNulls(value: Record<string, unknown>, names: PropNames): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, inner] of Object.entries(names)) {
    const v = value[name];
    if (v === undefined || v === null) continue;
    out[name] =
      typeof inner === "object" && isRecord(v) && !Token.isUnresolved(v) ? withoutNulls(v, inner) : v;
  }
  return out;
}

/**
 * Runs `schema` over the props `construct` (its class name) was given, as {@link readProps} reads
 * them, and returns one message per problem, all of them: props that are no object (none at all are
 * fine when no prop is required), a required prop left unset (null or undefined), and a prop the
 * construct does not take. A JavaScript caller, or a spread of a wider object in TypeScript, can
 * pass any key, and a misspelt one (`diskGB`) would be dropped without a word: Terraform refuses an
 * argument it does not expect, null or not, and so does a construct.
 */
export function problems(
  construct: string,
  schema: z.ZodType<unknown>,
  props: unknown,
  names: PropNames,
): string[] {
  if (!isRecord(props)) {
    if ((props === undefined || props === null) && !Object.values(names).includes("required")) return [];
    // By its type only: a string passed as the props may well be a credential.
    const got =
      props === undefined || props === null
        ? String(props)
        : `a ${Array.isArray(props) ? "list" : typeof props}`;
    return [`${construct} props must be an object, got ${got}`];
  }
  const result = schema.safeParse(readProps(props, names));
  const found = result.success ? [] : result.error.issues.map((issue) => issue.message);
  return [...unexpectedProps(props, names, ""), ...unsetRequired(props, names, ""), ...found];
}

/** A message for each required prop of `names` that `value` leaves unset, at every level listed. */
function unsetRequired(value: Record<string, unknown>, names: PropNames, prefix: string): string[] {
  const out: string[] = [];
  for (const [name, inner] of Object.entries(names)) {
    const v = value[name];
    if (inner === "required") {
      if (v === undefined || v === null)
        out.push(`${prefix}${name} is required${v === null ? ", got null" : ""}`);
    } else if (typeof inner === "object" && isRecord(v) && !Token.isUnresolved(v)) {
      out.push(...unsetRequired(v, inner, `${prefix}${name}.`));
    }
  }
  return out;
}

function unexpectedProps(value: unknown, names: PropNames, prefix: string): string[] {
  if (!isRecord(value) || Token.isUnresolved(value)) return [];
  const out: string[] = [];
  for (const [key, v] of Object.entries(value)) {
    const known = Object.hasOwn(names, key) ? names[key] : undefined;
    if (known === undefined) {
      // Undefined loses nothing, and a token key is the caller's own expression.
      if (v === undefined || Token.isUnresolved(key)) continue;
      const near = nearest(key, Object.keys(names));
      out.push(
        `${prefix}${terminalText(key, { maxLength: 64 })} is not a prop of this construct and would be ignored${near ? `; did you mean ${prefix}${near}?` : ""}`,
      );
    } else if (typeof known === "object") {
      out.push(...unexpectedProps(v, known, `${prefix}${key}.`));
    }
  }
  return out;
}

/** The name a misspelt `key` most likely meant: the same but for case, or at most 2 edits away. */
function nearest(key: string, names: readonly string[]): string | undefined {
  const lower = key.toLowerCase();
  let best: { name: string; distance: number } | undefined;
  for (const name of names) {
    const distance = name.toLowerCase() === lower ? 0 : editDistance(lower, name.toLowerCase());
    if (distance <= Math.min(2, name.length >> 1) && (!best || distance < best.distance))
      best = { name, distance };
  }
  return best?.name;
}

/** Levenshtein distance: the fewest insertions, deletions and substitutions from `a` to `b`. */
function editDistance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 2) return 3;
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) {
      next[j] = Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    row = next;
  }
  return row[b.length]!;
}

/**
 * The provider of a `from…Id` reference, checked when it is made, as a construct's `provider` prop
 * is: one of this app's providers, or unset (null is unset). Anything else is an error naming the
 * reference, where the bindings would drop it without a word and the default provider would answer.
 */
export function referenceProvider(reference: string, provider: unknown): TerraformProvider | undefined {
  if (provider === undefined || provider === null) return undefined;
  const checked = providerProp.safeParse(provider);
  if (!checked.success)
    throw new Error(`${reference}: ${checked.error.issues.map((i) => i.message).join("; ")}`);
  return provider as TerraformProvider;
}

/** The id of a `from…Id` reference to an object of the API: a UUID, or a token resolved at deploy. */
export function referenceId(reference: string, id: unknown): string {
  const checked = apiId("id").safeParse(id);
  if (!checked.success)
    throw new Error(`${reference}: ${checked.error.issues.map((i) => i.message).join("; ")}`);
  return id as string;
}
