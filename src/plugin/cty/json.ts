// cty's JSON value form (raw_state in UpgradeResourceState, DynamicValue.json). Parsed with
// lossless-json so numbers keep every digit: JSON.parse would turn 12345678901234567890 into
// 12345678901234567000 and make every plan after an upgrade show a spurious diff.
import { isLosslessNumber, parse } from "lossless-json";
import { atKey, attributeNames, CtyCodecError } from "./msgpack";
import { type CtyType, typeFromJSON, typeToJSON } from "./types";
import {
  type CtyValue,
  Dynamic,
  isNumberValue,
  isRecord,
  newRecord,
  numberDecimal,
  numberFromDecimal,
  Unknown,
} from "./values";

/** Options of JSON decoding. */
export interface JsonDecodeOptions {
  /**
   * Drop object attributes the type does not declare instead of failing. Used for stored state, so
   * removing an attribute from a schema does not make old states unreadable.
   */
  ignoreUndefinedAttributes?: boolean;
}

/** Decodes cty JSON text (or bytes) as a value of the given type. Empty input is null. */
export function decodeJson(
  text: string | Uint8Array,
  type: CtyType,
  options: JsonDecodeOptions = {},
): CtyValue {
  const source = typeof text === "string" ? text : Buffer.from(text).toString("utf8");
  if (source.trim() === "") return null;
  let parsed: unknown;
  try {
    parsed = onlySmallIntegers(source) ? JSON.parse(source) : parse(source);
  } catch (err) {
    throw new CtyCodecError(`invalid JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
  return fromJson(parsed, type, options);
}

// Strings, and the numbers outside them.
const TOKENS = /"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d*)?(?:[eE][+-]?\d+)?/g;
const SMALL_INTEGER = /^-?\d{1,15}$/;

/**
 * Whether every number in the JSON text is an integer of at most 15 digits, which JSON.parse
 * reads exactly, as lossless-json would. Stored states are almost always like that, and the
 * native parser is several times faster than lossless-json's; any other number takes the
 * lossless route.
 */
function onlySmallIntegers(text: string): boolean {
  TOKENS.lastIndex = 0;
  for (let m = TOKENS.exec(text); m !== null; m = TOKENS.exec(text)) {
    const token = m[0];
    if (token.charCodeAt(0) !== 34 /* " */ && !SMALL_INTEGER.test(token)) return false;
  }
  return true;
}

function fromJson(json: unknown, type: CtyType, options: JsonDecodeOptions): CtyValue {
  if (json === null || json === undefined) return null;
  switch (type.kind) {
    case "string":
      return typeof json === "string" ? json : expected("string");
    case "bool":
      return typeof json === "boolean" ? json : expected("bool");
    case "number":
      try {
        // Only from JSON.parse, which is used only when every number is a small integer.
        if (typeof json === "number") return json === 0 ? 0 : json;
        if (isLosslessNumber(json)) return numberFromDecimal(json.value);
        // cty's JSON decoder also takes numbers written as strings.
        if (typeof json === "string") return numberFromDecimal(json);
      } catch (err) {
        throw new CtyCodecError(err instanceof Error ? err.message : String(err));
      }
      return expected("number");
    case "list":
    case "set":
    case "tuple": {
      if (!Array.isArray(json)) return expected(type.kind);
      if (type.kind === "tuple" && json.length !== type.elements.length) return expected("tuple");
      const out = new Array<CtyValue>(json.length);
      for (let i = 0; i < json.length; i++) {
        try {
          out[i] = fromJson(json[i], type.kind === "tuple" ? type.elements[i]! : type.element, options);
        } catch (err) {
          throw atKey(err, i);
        }
      }
      return out;
    }
    case "map": {
      if (!isRecord(json)) return expected("map");
      const out = newRecord<CtyValue>();
      for (const k of Object.keys(json)) {
        try {
          out[k] = fromJson(json[k], type.element, options);
        } catch (err) {
          throw atKey(err, k);
        }
      }
      return out;
    }
    case "object": {
      if (!isRecord(json)) return expected("object");
      const out = newRecord<CtyValue>();
      for (const k of Object.keys(json)) {
        const at = Object.hasOwn(type.attributes, k) ? type.attributes[k] : undefined;
        if (at) {
          try {
            out[k] = fromJson(json[k], at, options);
          } catch (err) {
            throw atKey(err, k);
          }
        } else if (!options.ignoreUndefinedAttributes)
          throw new CtyCodecError(`unsupported attribute "${k}"`);
      }
      for (const k of attributeNames(type).declared) if (!Object.hasOwn(out, k)) out[k] = null;
      return out;
    }
    case "dynamic": {
      if (!isRecord(json) || !Object.hasOwn(json, "type") || !Object.hasOwn(json, "value")) {
        return expected('dynamic {"value", "type"} object');
      }
      let concrete: CtyType;
      try {
        concrete = typeFromJSON(json.type);
      } catch (err) {
        throw new CtyCodecError(err instanceof Error ? err.message : String(err));
      }
      const value = fromJson(json.value, concrete, options);
      return value === null ? null : new Dynamic(concrete, value);
    }
  }
}

/** Encodes a wholly known value as cty JSON text; unknown values have no JSON form. */
/** A value of the wrong kind for its type. (A function of the module, not a closure per value.) */
function expected(what: string): never {
  throw new CtyCodecError(`${what} expected`);
}

export function encodeJson(value: CtyValue | undefined, type: CtyType): string {
  return toJsonText(value, type, []);
}

function toJsonText(value: unknown, type: CtyType, path: (string | number)[]): string {
  if (value instanceof Unknown) throw new CtyCodecError("unknown values cannot be encoded as JSON", path);
  if (value === null || value === undefined) return "null";
  const fail = (what: string): never => {
    throw new CtyCodecError(`${what} expected`, path);
  };
  switch (type.kind) {
    case "string":
      return typeof value === "string" ? JSON.stringify(value) : fail("string");
    case "bool":
      return typeof value === "boolean" ? String(value) : fail("bool");
    case "number":
      if (!isNumberValue(value)) return fail("number");
      return numberDecimal(value);
    case "list":
    case "set":
    case "tuple":
      if (!Array.isArray(value)) return fail(type.kind);
      return `[${(value as unknown[])
        .map((item, i) =>
          toJsonText(item, type.kind === "tuple" ? type.elements[i]! : type.element, [...path, i]),
        )
        .join(",")}]`;
    case "map":
      if (!isRecord(value)) return fail("map");
      return `{${Object.keys(value)
        .sort()
        .map((k) => `${JSON.stringify(k)}:${toJsonText(value[k], type.element, [...path, k])}`)
        .join(",")}}`;
    case "object":
      if (!isRecord(value)) return fail("object");
      return `{${Object.keys(type.attributes)
        .sort()
        .map((k) => `${JSON.stringify(k)}:${toJsonText(value[k], type.attributes[k]!, [...path, k])}`)
        .join(",")}}`;
    case "dynamic":
      if (!(value instanceof Dynamic)) return fail("Dynamic");
      return `{"value":${toJsonText(value.value, value.type, path)},"type":${JSON.stringify(typeToJSON(value.type))}}`;
  }
}

/** Parses cty JSON without a type: objects become records, numbers lossless number values. */
export function decodeJsonUntyped(text: string | Uint8Array): CtyValue {
  const source = typeof text === "string" ? text : Buffer.from(text).toString("utf8");
  if (source.trim() === "") return null;
  const convert = (json: unknown): CtyValue => {
    if (json === null || json === undefined) return null;
    if (isLosslessNumber(json)) return numberFromDecimal(json.value);
    if (typeof json === "string" || typeof json === "boolean") return json;
    if (Array.isArray(json)) return json.map(convert);
    if (isRecord(json)) {
      const out = newRecord<CtyValue>();
      for (const k of Object.keys(json)) out[k] = convert(json[k]);
      return out;
    }
    throw new CtyCodecError(`unexpected JSON value ${typeof json}`);
  };
  try {
    return convert(parse(source));
  } catch (err) {
    if (err instanceof CtyCodecError) throw err;
    throw new CtyCodecError(`invalid JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
}
