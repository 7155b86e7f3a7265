// Generators for the generative suites (`*.generative.test.ts`): configurations, plans and states
// of any schema with a null or an unknown in any position, values of the wrong type, huge strings,
// deep nesting, invalid UTF-8 and plain garbage, as msgpack and JSON DynamicValues, the way
// Terraform (or something pretending to be it) reaches the provider; text that would drive a
// terminal; and plan and state files damaged at random. Plain fast-check arbitraries; each suite
// decides what a crash is.
import { encode as encodeRawMsgpack } from "@msgpack/msgpack";
import fc from "fast-check";
import {
  CtyNumber,
  type CtyType,
  type CtyValue,
  Dynamic,
  encodeJson,
  encodeMsgpack,
  newRecord,
  t,
  Unknown,
  unknown,
} from "../plugin/cty";
import type { DynamicValue } from "../plugin/tfplugin6";

const EMPTY = Buffer.alloc(0);

/** Strings that have broken parsers, terminals and validators before. */
const AWKWARD_STRINGS = [
  "",
  " ",
  "__proto__",
  "constructor",
  "toString",
  "evil\u001b]0;PWNED\u0007\u001b[2Jx",
  "a\u0000b",
  "line\nbreak\r\n",
  "\u202eevil",
  "\ud800",
  "\udfff\ud800",
  "=",
  "A=B",
  // biome-ignore lint/suspicious/noTemplateCurlyInString: the template variable that carries the access token.
  "${SERVICE_ACCESS_TOKEN}",
  "%{ if true }x%{ endif }",
  "0s",
  "1ms",
  "-1m",
  "99999999999h",
  "1e999999999",
  "NaN",
  "00000000-0000-4000-8000-000000000001",
  "personal",
  "team",
  "running",
  "stopped",
  "http://user:s3cr3t@127.0.0.1:1",
  "gpr_0123456789abcdef0123456789abcdef0123456789abcdef",
  "🚀".repeat(70),
];

/** Any string: awkward ones, any code points (lone surrogates too), ids the test knows, huge ones. */
export function anyString(known: readonly string[] = []): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 4, arbitrary: fc.string({ maxLength: 40 }) },
    { weight: 3, arbitrary: fc.constantFrom(...AWKWARD_STRINGS) },
    {
      weight: 2,
      arbitrary: fc.string({
        unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)),
        maxLength: 20,
      }),
    },
    { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 30 }) },
    ...(known.length > 0 ? [{ weight: 4, arbitrary: fc.constantFrom(...known) }] : []),
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.constantFrom("x", "\u001b", "é", "🚀"), fc.integer({ min: 65, max: 70_000 }))
        .map(([c, n]) => c.repeat(n)),
    },
  );
}

/** Any cty number: integers, doubles, infinities, decimals no double holds, huge ones. */
function anyNumber(): fc.Arbitrary<CtyValue> {
  return fc.oneof(
    fc.integer({ min: -5, max: 5000 }),
    fc.integer(),
    fc.double({ noNaN: true }),
    fc.constantFrom(
      0,
      -0,
      1,
      50,
      1.5,
      Number.MAX_SAFE_INTEGER,
      Number.MAX_SAFE_INTEGER + 2,
      Infinity,
      -Infinity,
      1e308,
    ),
    fc
      .constantFrom("0.1000000000000000000001", "123456789012345678901234567890", "-1e-400")
      .map((d) => new CtyNumber(d)),
  );
}

/** Options of {@link ctyValue}. */
export interface ValueOptions {
  /** Strings worth trying often: real ids of the fake backend's seed. */
  known?: readonly string[];
  /** Whether unknown values may appear (configurations and plans, never states). */
  unknowns?: boolean;
  /** How often a value is null or unknown instead of one of its type (0 to 1). */
  holes?: number;
  /**
   * Values worth trying often for string attributes of these names, at any depth (`instance_id`:
   * the seed's instances, `state`: what an action takes), so that random configurations get past
   * the validators to the API now and then.
   */
  hints?: Readonly<Record<string, readonly string[]>>;
}

/** A value of `type` with, in any position, a null or (with `unknowns`) an unknown. */
export function ctyValue(type: CtyType, opts: ValueOptions = {}): fc.Arbitrary<CtyValue> {
  const holes = Math.round((opts.holes ?? 0.25) * 100);
  const hole: fc.Arbitrary<CtyValue> = opts.unknowns
    ? fc.constantFrom<CtyValue>(null, unknown, new Unknown({ notNull: true }))
    : fc.constant(null);
  return fc.oneof({ weight: holes, arbitrary: hole }, { weight: 100 - holes, arbitrary: known(type, opts) });
}

function known(type: CtyType, opts: ValueOptions): fc.Arbitrary<CtyValue> {
  switch (type.kind) {
    case "string":
      return anyString(opts.known);
    case "number":
      return anyNumber();
    case "bool":
      return fc.boolean();
    case "dynamic":
      return anyString(opts.known).map((s) => new Dynamic(t.string, s));
    case "list":
    case "set":
      return fc.array(ctyValue(type.element, opts), { maxLength: 4 });
    case "tuple":
      return fc.tuple(...type.elements.map((e) => ctyValue(e, opts)));
    case "map":
      return fc
        .array(fc.tuple(anyString(), ctyValue(type.element, opts)), { maxLength: 4 })
        .map((entries) => {
          const out = newRecord<CtyValue>();
          for (const [k, v] of entries) out[k] = v;
          return out;
        });
    case "object": {
      const names = Object.keys(type.attributes);
      const attribute = (n: string) => {
        const t = type.attributes[n]!;
        const hinted = t.kind === "string" ? opts.hints?.[n] : undefined;
        if (!hinted || hinted.length === 0) return ctyValue(t, opts);
        return fc.oneof(
          { weight: 1, arbitrary: ctyValue(t, opts) },
          { weight: 2, arbitrary: fc.constantFrom<CtyValue>(...hinted) },
        );
      };
      return fc.tuple(...names.map(attribute)).map((values) => {
        const out = newRecord<CtyValue>();
        names.forEach((n, i) => {
          out[n] = values[i] ?? null;
        });
        return out;
      });
    }
  }
}

/** A DynamicValue holding `value` as Terraform encodes it (msgpack), or as JSON where it can be. */
export function dynamicValue(value: CtyValue, type: CtyType, json = false): DynamicValue {
  if (json) {
    try {
      return { msgpack: EMPTY, json: Buffer.from(encodeJson(value, type)) };
    } catch {
      // unknowns have no JSON form: msgpack below
    }
  }
  return { msgpack: encodeMsgpack(value, type), json: EMPTY };
}

/** msgpack of a fixmap whose one attribute holds a str of raw (probably invalid UTF-8) bytes. */
function rawStringAttribute(name: string, bytes: Uint8Array): Buffer {
  const key = Buffer.from(name, "utf8");
  const head = key.length < 32 ? Buffer.from([0xa0 | key.length]) : Buffer.from([0xd9, key.length]);
  const str = bytes.length < 32 ? Buffer.from([0xa0 | bytes.length]) : Buffer.from([0xd9, bytes.length]);
  return Buffer.concat([Buffer.from([0x81]), head, key, str, Buffer.from(bytes)]);
}

/** Arrays nested `depth` deep around a string, as msgpack. */
function deepMsgpack(depth: number): Buffer {
  return Buffer.concat([Buffer.alloc(depth, 0x91), Buffer.from([0xa1, 0x78])]);
}

/** Arrays nested `depth` deep, as JSON text. */
function deepJson(depth: number): Buffer {
  return Buffer.from(`${"[".repeat(depth)}"x"${"]".repeat(depth)}`);
}

/** Any JSON-like value of any shape, for values of the wrong type. */
const anyShape: fc.Arbitrary<unknown> = fc.jsonValue({ maxDepth: 4 });

/**
 * Bytes for a DynamicValue of an object type with these attribute names, none of them well typed
 * necessarily: a value of another shape, garbage, a string of invalid UTF-8 under a real attribute
 * name, deep nesting, truncated msgpack, refinements on an unknown, or an empty value.
 */
export function malformedDynamicValue(attributeNames: readonly string[]): fc.Arbitrary<DynamicValue> {
  const name = attributeNames.length > 0 ? fc.constantFrom(...attributeNames) : fc.constant("x");
  const msgpack = (m: fc.Arbitrary<Uint8Array | Buffer>) =>
    m.map((b) => ({ msgpack: Buffer.from(b), json: EMPTY }));
  const json = (j: fc.Arbitrary<Uint8Array | Buffer | string>) =>
    j.map((b) => ({ msgpack: EMPTY, json: Buffer.from(b as Uint8Array) }));
  return fc.oneof(
    msgpack(anyShape.map((v) => encodeRawMsgpack(v))),
    msgpack(fc.tuple(name, anyShape).map(([n, v]) => encodeRawMsgpack({ [n]: v }))),
    msgpack(fc.uint8Array({ maxLength: 64 })),
    msgpack(fc.tuple(name, fc.uint8Array({ maxLength: 40 })).map(([n, b]) => rawStringAttribute(n, b))),
    msgpack(fc.integer({ min: 1, max: 2000 }).map(deepMsgpack)),
    msgpack(
      fc.tuple(anyShape, fc.nat()).map(([v, cut]) => {
        const b = encodeRawMsgpack(v);
        return b.subarray(0, b.length > 1 ? cut % b.length : 0);
      }),
    ),
    // An unknown (ext 0) and a refined unknown (ext 12) with garbage refinements, under an attribute.
    msgpack(
      fc
        .tuple(name, fc.uint8Array({ maxLength: 20 }))
        .map(([n, b]) =>
          Buffer.concat([
            rawStringAttribute(n, new Uint8Array()).subarray(0, -1),
            Buffer.from([0xc7, b.length, 12]),
            Buffer.from(b),
          ]),
        ),
    ),
    json(anyShape.map((v) => JSON.stringify(v) ?? "null")),
    json(fc.tuple(name, anyShape).map(([n, v]) => JSON.stringify({ [n]: v }))),
    json(fc.uint8Array({ maxLength: 64 })),
    json(fc.integer({ min: 1, max: 5000 }).map(deepJson)),
    fc.constant({ msgpack: EMPTY, json: EMPTY }),
  );
}

/** Private data as Terraform carries it back: what the provider wrote, JSON of any shape, or garbage. */
export const anyPrivate: fc.Arbitrary<Buffer> = fc.oneof(
  fc.constant(EMPTY),
  anyShape.map((v) => Buffer.from(JSON.stringify(v) ?? "")),
  fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b)),
);

/** What drives a terminal: ESC sequences, BEL, CR, NUL, C1 controls, overrides, separators. */
const CONTROLS = [
  "\u001b]0;owned\u0007",
  "\u001b[2J",
  "\u001b",
  "\u0007",
  "\r",
  "\u0000",
  "\u007f",
  "\u009b",
  "\u0085",
  "\u202e",
  "\u2066",
  "\u2028",
];

/** `middle` between random text (any code points, lone surrogates too). */
function between(middle: fc.Arbitrary<string>): fc.Arbitrary<string> {
  return fc
    .tuple(fc.string({ unit: "binary", maxLength: 12 }), middle, fc.string({ unit: "binary", maxLength: 12 }))
    .map(([a, c, b]) => `${a}${c}${b}`);
}

/** Text holding at least one thing that drives a terminal: never a valid flag value or name. */
export const controlText: fc.Arbitrary<string> = between(fc.constantFrom(...CONTROLS));

/** Text that would drive a terminal or a Markdown renderer (markup, a link, a mention too). */
export const hostileText: fc.Arbitrary<string> = between(
  fc.constantFrom(...CONTROLS, "<b>", "[x](y)", "@team"),
);

type JsonPath = (string | number)[];

/** Every place in a JSON value but the root. */
function placesOf(v: unknown, at: JsonPath = []): JsonPath[] {
  const out: JsonPath[] = at.length > 0 ? [at] : [];
  if (Array.isArray(v)) {
    for (const [i, x] of v.entries()) out.push(...placesOf(x, [...at, i]));
  } else if (v !== null && typeof v === "object") {
    for (const [k, x] of Object.entries(v)) out.push(...placesOf(x, [...at, k]));
  }
  return out;
}

/** A copy of `v` with the value at `path` replaced, or removed when `value` is undefined. */
function withValue(v: unknown, path: JsonPath, value: unknown): unknown {
  if (path.length === 0) return value;
  const [head, ...rest] = path as [string | number, ...JsonPath];
  if (Array.isArray(v)) {
    const copy = [...v];
    if (value === undefined && rest.length === 0) copy.splice(Number(head), 1);
    else copy[Number(head)] = withValue(copy[Number(head)], rest, value);
    return copy;
  }
  const copy = { ...(v as Record<string, unknown>) };
  if (value === undefined && rest.length === 0) delete copy[head];
  else copy[head] = withValue(copy[head], rest, value);
  return copy;
}

/** What a damaged place holds instead: any JSON, hostile text, an odd number, or nothing. */
const replacement: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  hostileText,
  fc.constantFrom(-1, 0, 0.5, 1e308, 5e-324, 2 ** 53 + 1, "", "NaN", [], {}, null, true),
  fc.constant(undefined),
);

/**
 * A file's text made from a JSON document given by hand (a plan or a state as Terraform writes
 * it): mostly the document damaged at one to four places, sometimes cut short, sometimes any text.
 */
export function damagedJsonText(text: string): fc.Arbitrary<string> {
  const base = JSON.parse(text) as unknown;
  const places = placesOf(base);
  return fc.oneof(
    {
      weight: 8,
      arbitrary: fc
        .array(fc.tuple(fc.constantFrom(...places), replacement), { minLength: 1, maxLength: 4 })
        .map((edits) => JSON.stringify(edits.reduce<unknown>((doc, [p, v]) => withValue(doc, p, v), base))),
    },
    { weight: 1, arbitrary: fc.nat({ max: text.length }).map((n) => text.slice(0, n)) },
    { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 200 }) },
  );
}

/** The cases of a long run or a replay (GPURENTAL_GENERATIVE_RUNS); 0 when the suite runs its own. */
export const LONG_RUN_CASES = Number(process.env.GPURENTAL_GENERATIVE_RUNS ?? "") || 0;

/** A suite's case count: GPURENTAL_GENERATIVE_RUNS when set (the long run), else `bounded`. */
export function generativeRuns(bounded: number): number {
  return LONG_RUN_CASES || bounded;
}

/** A suite's seed: GPURENTAL_GENERATIVE_SEED when set (a replay, the long run), else its fixed one. */
export function generativeSeed(fixed: number): number {
  return Number(process.env.GPURENTAL_GENERATIVE_SEED ?? "") || fixed;
}
