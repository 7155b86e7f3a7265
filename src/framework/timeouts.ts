// The `timeouts` nested attribute: optional per-operation durations like "20m" or "1h30m".
import type { StringType } from "../plugin/cty";
import { type Attribute, attr, type ObjectTypeOf, type TimeoutOperation, type Validator } from "./schema";

const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
const DURATION = /^(?:\d+(?:\.\d+)?(?:ms|s|m|h))+$/;
const PART = /(\d+(?:\.\d+)?)(ms|s|m|h)/g;

/**
 * The longest duration any setting takes: 480h (20 days). Every duration ends up as a timer or a
 * deadline, and a timer of Node.js holds at most 2^31 - 1 ms (about 24.8 days); nothing the
 * provider waits for takes days, and a watch for late arrivals (48h by default) fits well within.
 */
export const MAX_DURATION_MS = 480 * 3_600_000;

/**
 * Parses a duration like "20m", "1h30m", "90s" or "1.5h" to milliseconds; undefined when malformed
 * or longer than MAX_DURATION_MS.
 */
export function parseDuration(text: string): number | undefined {
  if (!DURATION.test(text)) return undefined;
  let ms = 0;
  for (const m of text.matchAll(PART)) ms += Number(m[1]) * UNIT_MS[m[2]!]!;
  return ms <= MAX_DURATION_MS ? Math.round(ms) : undefined;
}

/** A validator of duration strings, naming the attribute and value on error. */
export function durationValidator(): Validator<string> {
  return {
    description: 'A duration such as "30s", "20m" or "1h30m".',
    validate(value, ctx) {
      if (parseDuration(value) === undefined || parseDuration(value) === 0) {
        const name = ctx.path.map((s) => ("attribute" in s ? s.attribute : "")).join(".");
        ctx.diags.addAttributeError(
          ctx.path,
          "Invalid duration",
          `${name} = ${JSON.stringify(value)} is not a duration of at most 480h; use a number followed by a unit (ms, s, m, h), e.g. "20m" or "1h30m".`,
        );
      }
    },
  };
}

type TimeoutsAttributes<O extends TimeoutOperation> = { [K in O]: Attribute<StringType> };

/**
 * The optional `timeouts` attribute with the given default durations. Only operations given a
 * default appear in the schema. Put it in a schema under the name `timeouts`; handlers then get
 * the right `ctx.timeoutMs` for their operation.
 */
export function timeoutsAttribute<O extends TimeoutOperation>(
  defaults: Readonly<Record<O, string>>,
): Attribute<ObjectTypeOf<TimeoutsAttributes<O>>> {
  const attributes = {} as Record<string, Attribute>;
  for (const [op, fallback] of Object.entries(defaults) as [O, string][]) {
    if (parseDuration(fallback) === undefined)
      throw new Error(`default timeout ${op} = "${fallback}" is not a duration`);
    attributes[op] = attr.string({
      optional: true,
      description: `How long to wait for ${op} to finish (default \`${fallback}\`).`,
      validators: [durationValidator()],
    });
  }
  const built = attr.single(attributes as TimeoutsAttributes<O>, {
    optional: true,
    description: 'Time limits for the resource\'s operations, e.g. `create = "30m"`.',
  });
  return { ...built, timeoutDefaults: { ...defaults } };
}
