// The value model. Plain JS values where they are lossless, small classes where they are not:
//   null                 null of any type
//   Unknown              a value not known until apply (optionally refined)
//   string, boolean      string and bool
//   number | CtyNumber   number: a JS number means the decimal String(n) denotes; CtyNumber holds a
//                        canonical decimal string for values a double cannot carry (big ints, 0.1 at
//                        more digits than a double keeps)
//   array                list, set (order not significant) and tuple
//   plain object         object and map; null-prototype when decoded, so any key is safe
//   Dynamic              a known value of the dynamic pseudo-type, carrying its concrete type
import { type CtyType, typeEquals } from "./types";

/** What Terraform knows about an unknown value (msgpack ext 12); every field optional. */
export interface Refinements {
  notNull?: boolean;
  stringPrefix?: string;
  numberLower?: readonly [number | CtyNumber, boolean];
  numberUpper?: readonly [number | CtyNumber, boolean];
  lengthLower?: number;
  lengthUpper?: number;
}

/** A value that will only be known after apply. */
export class Unknown {
  /** Refinements decoded from Terraform; never sent back (providers may drop them). */
  readonly refinements: Refinements | undefined;
  constructor(refinements?: Refinements) {
    this.refinements = refinements && Object.keys(refinements).length > 0 ? refinements : undefined;
  }
}

/** The plain unknown value. */
export const unknown: Unknown = new Unknown();

/** Whether a value is (wholly) unknown at its top level. */
export function isUnknown(value: unknown): value is Unknown {
  return value instanceof Unknown;
}

/** Error for malformed numbers. */
export class CtyNumberError extends Error {
  override name = "CtyNumberError";
}

const DECIMAL = /^([+-])?(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/;
// A bound on exponents keeps a hostile "1e999999999" from allocating gigabytes of zeros.
const MAX_EXPONENT = 100_000;

/** Canonical plain decimal form: no exponent, no leading/trailing zeros, "0" for zero. */
export function canonicalDecimal(text: string): string {
  const m = DECIMAL.exec(text.trim());
  if (!m || (m[2] === "" && (m[3] ?? "") === "")) throw new CtyNumberError(`not a decimal number: ${text}`);
  const sign = m[1] === "-" ? "-" : "";
  const exp = m[4] === undefined ? 0 : Number(m[4]);
  if (!Number.isSafeInteger(exp) || Math.abs(exp) > MAX_EXPONENT) {
    throw new CtyNumberError(`number exponent out of range: ${text}`);
  }
  let digits = (m[2] ?? "") + (m[3] ?? "");
  // Position of the decimal point counted from the left of `digits`.
  let point = (m[2] ?? "").length + exp;
  if (point < 0) {
    digits = "0".repeat(-point) + digits;
    point = 0;
  } else if (point > digits.length) {
    digits = digits + "0".repeat(point - digits.length);
  }
  const intPart = digits.slice(0, point).replace(/^0+/, "") || "0";
  const fracPart = digits.slice(point).replace(/0+$/, "");
  if (intPart === "0" && fracPart === "") return "0";
  return `${sign}${intPart}${fracPart ? `.${fracPart}` : ""}`;
}

/** The exact decimal value of a finite double (not its shortest form). */
export function exactDecimalOfDouble(x: number): string {
  if (!Number.isFinite(x)) throw new CtyNumberError(`not a finite number: ${x}`);
  if (Number.isInteger(x)) return BigInt(x).toString();
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, Math.abs(x));
  const bits = view.getBigUint64(0);
  const biased = Number((bits >> 52n) & 0x7ffn);
  const fraction = bits & ((1n << 52n) - 1n);
  const mantissa = biased === 0 ? fraction : fraction | (1n << 52n);
  const scale = (biased === 0 ? -1074 : biased - 1075) * -1; // x = mantissa / 2^scale, scale > 0 here
  const digits = (mantissa * 5n ** BigInt(scale)).toString().padStart(scale + 1, "0");
  return canonicalDecimal(`${x < 0 ? "-" : ""}${digits.slice(0, -scale)}.${digits.slice(-scale)}`);
}

/** A number a JS double cannot carry exactly, as a canonical decimal string. */
export class CtyNumber {
  /** Canonical decimal text, e.g. "12345678901234567890" or "0.1". */
  readonly decimal: string;
  constructor(value: string | number | bigint) {
    this.decimal =
      typeof value === "bigint"
        ? value.toString()
        : canonicalDecimal(typeof value === "number" ? String(value) : value);
  }
  /** The nearest double. */
  toNumber(): number {
    return Number(this.decimal);
  }
  /** The value as a bigint; throws when it is not an integer. */
  toBigInt(): bigint {
    if (this.decimal.includes(".")) throw new CtyNumberError(`${this.decimal} is not an integer`);
    return BigInt(this.decimal);
  }
  /** The canonical decimal text. */
  toString(): string {
    return this.decimal;
  }
  /** JSON form: the decimal text, so snapshots and logs show the exact value. */
  toJSON(): string {
    return this.decimal;
  }
}

/** A number in the value model. */
export type NumberValue = number | CtyNumber;

/** Canonical decimal text of a number value. */
export function numberDecimal(value: NumberValue): string {
  if (value instanceof CtyNumber) return value.decimal;
  if (!Number.isFinite(value)) throw new CtyNumberError(`not a finite number: ${value}`);
  return canonicalDecimal(String(value));
}

/** The model value for a canonical decimal: a JS number when String(n) gives it back, else CtyNumber. */
export function numberFromDecimal(decimal: string): NumberValue {
  const canon = canonicalDecimal(decimal);
  const n = Number(canon);
  if (Number.isFinite(n) && canonicalDecimal(String(n)) === canon) return n === 0 ? 0 : n;
  return new CtyNumber(canon);
}

/** Reads a number value as a JS number (nearest double). */
export function toNumber(value: NumberValue): number {
  return typeof value === "number" ? value : value.toNumber();
}

/** A known, non-null value of the dynamic pseudo-type, with its concrete type. */
export class Dynamic {
  constructor(
    readonly type: CtyType,
    readonly value: CtyValue,
  ) {}
}

/** Any cty value in the model (see the file comment). */
export type CtyValue =
  | null
  | Unknown
  | string
  | boolean
  | number
  | CtyNumber
  | Dynamic
  | readonly CtyValue[]
  | { readonly [key: string]: CtyValue };

/** Whether a value is a plain object or map value (not an array, class instance or null). */
export function isRecord(value: unknown): value is { readonly [key: string]: CtyValue } {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === null || proto === Object.prototype;
}

/** Whether a value contains no unknowns anywhere. */
export function isWhollyKnown(value: unknown): boolean {
  if (value instanceof Unknown) return false;
  if (value instanceof Dynamic) return isWhollyKnown(value.value);
  if (Array.isArray(value)) return value.every(isWhollyKnown);
  if (isRecord(value)) return Object.values(value).every(isWhollyKnown);
  return true;
}

/**
 * Whether two values of a type are equal as cty compares them: numbers by decimal value, sets
 * ignoring order, dynamic values by type and value. Anything unknown counts as different, which is
 * what plan logic needs ("may change"); with `unknownsMatch`, an unknown equals an unknown in the
 * same place, which is what "planned exactly as configured" needs (`env = { K = aws_x.id }`).
 */
export function valuesEqual(a: unknown, b: unknown, type: CtyType, unknownsMatch = false): boolean {
  if (a instanceof Unknown || b instanceof Unknown)
    return unknownsMatch && a instanceof Unknown && b instanceof Unknown;
  if (a === null || a === undefined || b === null || b === undefined) {
    return (a === null || a === undefined) && (b === null || b === undefined);
  }
  switch (type.kind) {
    case "string":
    case "bool":
      return a === b;
    case "number":
      if (!isNumberValue(a) || !isNumberValue(b)) return false;
      // Infinities have no decimal form; they only equal themselves.
      if (typeof a === "number" && !Number.isFinite(a)) return a === b;
      if (typeof b === "number" && !Number.isFinite(b)) return false;
      return numberDecimal(a) === numberDecimal(b);
    case "dynamic":
      return (
        a instanceof Dynamic &&
        b instanceof Dynamic &&
        typeEquals(a.type, b.type) &&
        valuesEqual(a.value, b.value, a.type, unknownsMatch)
      );
    case "list":
      return (
        Array.isArray(a) &&
        Array.isArray(b) &&
        a.length === b.length &&
        a.every((x, i) => valuesEqual(x, b[i], type.element, unknownsMatch))
      );
    case "tuple":
      return (
        Array.isArray(a) &&
        Array.isArray(b) &&
        a.length === b.length &&
        a.every((x, i) => valuesEqual(x, b[i], type.elements[i] ?? type.elements[0]!, unknownsMatch))
      );
    case "set": {
      if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
      const unmatched = [...b];
      for (const x of a) {
        const i = unmatched.findIndex((y) => valuesEqual(x, y, type.element, unknownsMatch));
        if (i < 0) return false;
        unmatched.splice(i, 1);
      }
      return true;
    }
    case "map": {
      if (!isRecord(a) || !isRecord(b)) return false;
      const ka = Object.keys(a);
      if (ka.length !== Object.keys(b).length) return false;
      return ka.every((k) => Object.hasOwn(b, k) && valuesEqual(a[k], b[k], type.element, unknownsMatch));
    }
    case "object":
      if (!isRecord(a) || !isRecord(b)) return false;
      return Object.entries(type.attributes).every(([k, at]) => valuesEqual(a[k], b[k], at, unknownsMatch));
  }
}

/** Whether a value is a number of the value model. */
export function isNumberValue(value: unknown): value is NumberValue {
  return typeof value === "number" || value instanceof CtyNumber;
}

/** A null-prototype record, safe for any key including `__proto__`. */
export function newRecord<V>(): Record<string, V> {
  return Object.create(null) as Record<string, V>;
}
