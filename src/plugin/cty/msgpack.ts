// cty values <-> msgpack, as go-cty's msgpack package defines the wire form.
//
// Encoding goes through @msgpack/msgpack: null-prototype records built in sorted key order give the
// key order cty writes (integer-like keys come first in JS, which decoders do not mind), and bigints
// become 64-bit ints. Decoding uses the small reader below instead of the library's decoder: the library
// refuses a `__proto__` map key outright, which would make any request with such a user map key
// undecodable, and it turns every map into a plain object before we know the type.
import { Encoder, ExtData } from "@msgpack/msgpack";
import { type CtyType, typeFromBytes, typeName, typeToBytes } from "./types";
import {
  type CtyValue,
  Dynamic,
  exactDecimalOfDouble,
  isNumberValue,
  isRecord,
  newRecord,
  numberDecimal,
  numberFromDecimal,
  type Refinements,
  Unknown,
} from "./values";

/** Error for bytes or values that do not fit the expected type; `path` locates the value. */
export class CtyCodecError extends Error {
  override name = "CtyCodecError";
  /** The message without the path. */
  readonly reason: string;
  constructor(
    message: string,
    readonly path: readonly (string | number)[] = [],
  ) {
    super(path.length > 0 ? `${message} at ${formatPath(path)}` : message);
    this.reason = message;
  }
}

function formatPath(path: readonly (string | number)[]): string {
  return path.map((p, i) => (typeof p === "number" ? `[${p}]` : i === 0 ? p : `.${p}`)).join("");
}

// The codecs walk values without carrying a path (an array per value was most of the time spent
// decoding a state): a failure deep inside is rethrown one level up at a time with that level's
// key put in front, so the error still names where it happened.

/** `err` with `key` put in front of its path; anything but a CtyCodecError passes unchanged. */
export function atKey(err: unknown, key: string | number): unknown {
  return err instanceof CtyCodecError ? new CtyCodecError(err.reason, [key, ...err.path]) : err;
}

/** The attribute names of an object type: as declared, and sorted (the order cty writes). */
export interface AttributeNames {
  readonly declared: readonly string[];
  readonly sorted: readonly string[];
}

const attributeNameCache = new WeakMap<object, AttributeNames>();

/** The attribute names of an object type, computed once per type object. */
export function attributeNames(type: {
  readonly attributes: Readonly<Record<string, unknown>>;
}): AttributeNames {
  let names = attributeNameCache.get(type);
  if (!names) {
    const declared = Object.keys(type.attributes);
    names = { declared, sorted: [...declared].sort() };
    attributeNameCache.set(type, names);
  }
  return names;
}

// ---------------------------------------------------------------------------------------------
// A minimal msgpack reader producing an untyped tree.

class RawMap {
  /** Keys and values alternating: key 0, value 0, key 1, value 1, ... */
  constructor(readonly flat: Raw[]) {}
}
class RawExt {
  constructor(
    readonly type: number,
    readonly data: Uint8Array,
  ) {}
}
type Raw = null | boolean | number | bigint | string | Uint8Array | Raw[] | RawMap | RawExt;

const utf8 = new TextDecoder("utf-8", { fatal: true });

class Reader {
  private pos = 0;
  private readonly view: DataView;
  constructor(private readonly bytes: Uint8Array) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  readAll(): Raw {
    const value = this.read(0);
    if (this.pos !== this.bytes.length) throw new CtyCodecError("extra bytes after msgpack value");
    return value;
  }

  private need(n: number): number {
    const at = this.pos;
    if (at + n > this.bytes.length) throw new CtyCodecError("truncated msgpack value");
    this.pos += n;
    return at;
  }
  private u8(): number {
    return this.view.getUint8(this.need(1));
  }
  private u16(): number {
    return this.view.getUint16(this.need(2));
  }
  private u32(): number {
    return this.view.getUint32(this.need(4));
  }
  private slice(n: number): Uint8Array {
    const at = this.need(n);
    return this.bytes.subarray(at, at + n);
  }
  private str(n: number): string {
    // Short ASCII strings (attribute names, ids, most values) without TextDecoder's per-call cost.
    if (n <= 64) {
      const at = this.pos;
      if (at + n <= this.bytes.length) {
        let ascii = true;
        for (let i = at; i < at + n; i++) {
          if (this.bytes[i]! >= 0x80) {
            ascii = false;
            break;
          }
        }
        if (ascii) {
          this.pos += n;
          return String.fromCharCode.apply(null, this.bytes.subarray(at, at + n) as unknown as number[]);
        }
      }
    }
    const bytes = this.slice(n);
    try {
      return utf8.decode(bytes);
    } catch {
      // cty strings are UTF-8; whatever sent these bytes is not Terraform, and gets an answer.
      throw new CtyCodecError("a string is not valid UTF-8");
    }
  }
  /** Every element takes a byte at least: a count beyond what is left is a lie, refused before any allocation. */
  private count(n: number): number {
    if (n > this.bytes.length - this.pos) throw new CtyCodecError("truncated msgpack value");
    return n;
  }
  private array(n: number, depth: number): Raw[] {
    this.count(n);
    const out: Raw[] = [];
    for (let i = 0; i < n; i++) out.push(this.read(depth + 1));
    return out;
  }
  private map(n: number, depth: number): RawMap {
    const flat = new Array<Raw>(this.count(2 * n));
    for (let i = 0; i < 2 * n; i++) flat[i] = this.read(depth + 1);
    return new RawMap(flat);
  }
  private ext(n: number): RawExt {
    const type = this.view.getInt8(this.need(1));
    return new RawExt(type, this.slice(n));
  }

  private read(depth: number): Raw {
    if (depth > 512) throw new CtyCodecError("msgpack value nested too deeply");
    const b = this.u8();
    if (b <= 0x7f) return b;
    if (b >= 0xe0) return b - 0x100;
    if (b >= 0x80 && b <= 0x8f) return this.map(b & 0x0f, depth);
    if (b >= 0x90 && b <= 0x9f) return this.array(b & 0x0f, depth);
    if (b >= 0xa0 && b <= 0xbf) return this.str(b & 0x1f);
    switch (b) {
      case 0xc0:
        return null;
      case 0xc2:
        return false;
      case 0xc3:
        return true;
      case 0xc4:
        return this.slice(this.u8());
      case 0xc5:
        return this.slice(this.u16());
      case 0xc6:
        return this.slice(this.u32());
      case 0xc7:
        return this.ext(this.u8());
      case 0xc8:
        return this.ext(this.u16());
      case 0xc9:
        return this.ext(this.u32());
      case 0xca:
        return this.view.getFloat32(this.need(4));
      case 0xcb:
        return this.view.getFloat64(this.need(8));
      case 0xcc:
        return this.u8();
      case 0xcd:
        return this.u16();
      case 0xce:
        return this.u32();
      case 0xcf:
        return this.view.getBigUint64(this.need(8));
      case 0xd0:
        return this.view.getInt8(this.need(1));
      case 0xd1:
        return this.view.getInt16(this.need(2));
      case 0xd2:
        return this.view.getInt32(this.need(4));
      case 0xd3:
        return this.view.getBigInt64(this.need(8));
      case 0xd4:
        return this.ext(1);
      case 0xd5:
        return this.ext(2);
      case 0xd6:
        return this.ext(4);
      case 0xd7:
        return this.ext(8);
      case 0xd8:
        return this.ext(16);
      case 0xd9:
        return this.str(this.u8());
      case 0xda:
        return this.str(this.u16());
      case 0xdb:
        return this.str(this.u32());
      case 0xdc:
        return this.array(this.u16(), depth);
      case 0xdd:
        return this.array(this.u32(), depth);
      case 0xde:
        return this.map(this.u16(), depth);
      case 0xdf:
        return this.map(this.u32(), depth);
    }
    throw new CtyCodecError(`invalid msgpack byte 0x${b.toString(16)}`);
  }
}

// ---------------------------------------------------------------------------------------------
// Typed decoding

/** Decodes cty msgpack bytes as a value of the given type. Empty input is null. */
export function decodeMsgpack(bytes: Uint8Array, type: CtyType): CtyValue {
  if (bytes.length === 0) return null;
  return fromRaw(new Reader(bytes).readAll(), type);
}

function describe(raw: Raw): string {
  if (raw === null) return "nil";
  if (raw instanceof Uint8Array) return "bin";
  if (raw instanceof RawMap) return "map";
  if (raw instanceof RawExt) return "ext";
  if (Array.isArray(raw)) return "array";
  return typeof raw;
}

function refinementsOf(ext: RawExt): Refinements | undefined {
  // Only ext 12 with more than one byte carries refinements; anything odd inside is ignored, since
  // refinements only narrow what an unknown may become and dropping them is always safe.
  if (ext.type !== 12 || ext.data.length <= 1) return undefined;
  try {
    const raw = new Reader(ext.data).readAll();
    if (!(raw instanceof RawMap)) return undefined;
    const r: Refinements = {};
    const num = (v: Raw) =>
      typeof v === "number" || typeof v === "bigint" || typeof v === "string" ? v : undefined;
    const bound = (v: Raw): [ReturnType<typeof numberFromDecimal>, boolean] | undefined => {
      if (!Array.isArray(v) || v.length !== 2 || typeof v[1] !== "boolean") return undefined;
      const n = num(v[0] ?? null);
      if (n === undefined) return undefined;
      const decimal = typeof n === "number" ? exactDecimalOfDouble(n) : n.toString();
      return [numberFromDecimal(decimal), v[1]];
    };
    for (let i = 0; i < raw.flat.length; i += 2) {
      const k = raw.flat[i]!;
      const v = raw.flat[i + 1]!;
      const key = typeof k === "bigint" ? Number(k) : k;
      if (key === 1 && typeof v === "boolean") r.notNull = !v;
      else if (key === 2 && typeof v === "string") r.stringPrefix = v;
      else if (key === 3) r.numberLower = bound(v);
      else if (key === 4) r.numberUpper = bound(v);
      else if (key === 5 && typeof v === "number") r.lengthLower = v;
      else if (key === 6 && typeof v === "number") r.lengthUpper = v;
    }
    for (const key of Object.keys(r) as (keyof Refinements)[]) if (r[key] === undefined) delete r[key];
    return r;
  } catch {
    return undefined;
  }
}

function decodeNumber(raw: Raw): CtyValue {
  try {
    if (typeof raw === "number") {
      // A safe integer is its own canonical decimal (what numberFromDecimal would give back).
      if (Number.isSafeInteger(raw)) return raw === 0 ? 0 : raw;
      // Infinity is how cty sends its infinite numbers; keep it as a JS number.
      return Number.isFinite(raw) ? numberFromDecimal(exactDecimalOfDouble(raw)) : raw;
    }
    if (typeof raw === "bigint") return numberFromDecimal(raw.toString());
    if (typeof raw === "string") return numberFromDecimal(raw);
  } catch (err) {
    throw new CtyCodecError(err instanceof Error ? err.message : String(err));
  }
  throw new CtyCodecError(`number expected, got ${describe(raw)}`);
}

function fromRaw(raw: Raw, type: CtyType): CtyValue {
  if (raw instanceof RawExt) return new Unknown(type.kind === "dynamic" ? undefined : refinementsOf(raw));
  if (raw === null) return null;
  switch (type.kind) {
    case "string":
      if (typeof raw !== "string") throw new CtyCodecError(`string expected, got ${describe(raw)}`);
      return raw;
    case "bool":
      if (typeof raw !== "boolean") throw new CtyCodecError(`bool expected, got ${describe(raw)}`);
      return raw;
    case "number":
      return decodeNumber(raw);
    case "list":
    case "set": {
      if (!Array.isArray(raw)) throw new CtyCodecError(`${type.kind} expected, got ${describe(raw)}`);
      const out = new Array<CtyValue>(raw.length);
      for (let i = 0; i < raw.length; i++) {
        try {
          out[i] = fromRaw(raw[i]!, type.element);
        } catch (err) {
          throw atKey(err, i);
        }
      }
      return out;
    }
    case "tuple": {
      if (!Array.isArray(raw) || raw.length !== type.elements.length) {
        throw new CtyCodecError(`tuple of ${type.elements.length} elements expected`);
      }
      const out = new Array<CtyValue>(raw.length);
      for (let i = 0; i < raw.length; i++) {
        try {
          out[i] = fromRaw(raw[i]!, type.elements[i]!);
        } catch (err) {
          throw atKey(err, i);
        }
      }
      return out;
    }
    case "map": {
      if (!(raw instanceof RawMap)) throw new CtyCodecError(`map expected, got ${describe(raw)}`);
      const out = newRecord<CtyValue>();
      for (let i = 0; i < raw.flat.length; i += 2) {
        const k = raw.flat[i]!;
        const v = raw.flat[i + 1]!;
        if (typeof k !== "string") throw new CtyCodecError("map keys must be strings");
        try {
          out[k] = fromRaw(v, type.element);
        } catch (err) {
          throw atKey(err, k);
        }
      }
      return out;
    }
    case "object": {
      if (!(raw instanceof RawMap)) throw new CtyCodecError(`object expected, got ${describe(raw)}`);
      const out = newRecord<CtyValue>();
      for (let i = 0; i < raw.flat.length; i += 2) {
        const k = raw.flat[i]!;
        const v = raw.flat[i + 1]!;
        if (typeof k !== "string") throw new CtyCodecError("object keys must be strings");
        const at = Object.hasOwn(type.attributes, k) ? type.attributes[k] : undefined;
        if (!at) throw new CtyCodecError(`unsupported attribute "${k}"`);
        try {
          out[k] = fromRaw(v, at);
        } catch (err) {
          throw atKey(err, k);
        }
      }
      // Terraform always sends every attribute; filling gaps with null keeps hand-made values usable.
      for (const k of attributeNames(type).declared) if (!Object.hasOwn(out, k)) out[k] = null;
      return out;
    }
    case "dynamic": {
      if (!Array.isArray(raw) || raw.length !== 2) {
        throw new CtyCodecError("dynamic value must be a [type, value] pair");
      }
      const [typeJson, inner] = raw as [Raw, Raw];
      if (!(typeJson instanceof Uint8Array) && typeof typeJson !== "string") {
        throw new CtyCodecError("dynamic value type must be bin or str");
      }
      let concrete: CtyType;
      try {
        concrete = typeFromBytes(typeJson);
      } catch (err) {
        throw new CtyCodecError(err instanceof Error ? err.message : String(err));
      }
      const value = fromRaw(inner, concrete);
      return value === null || value instanceof Unknown ? value : new Dynamic(concrete, value);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Typed encoding

const UNKNOWN_EXT = new ExtData(0, Uint8Array.of(0));
const INT64_MIN = -(2n ** 63n);
const UINT64_MAX = 2n ** 64n - 1n;
// One encoder for the process: the library's encode() builds a new one, with a new buffer, per call.
// It copies its result out and clones itself if ever entered twice, so sharing it is safe.
const encoder = new Encoder({ useBigInt64: true });

/** Encodes a value of the given type as cty msgpack. */
export function encodeMsgpack(value: CtyValue | undefined, type: CtyType): Buffer {
  const bytes = encoder.encode(toRaw(value, type));
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** The msgpack form cty picks: int when integral, float64 when exact, decimal string otherwise. */
function encodeNumber(value: unknown): number | bigint | string {
  if (!isNumberValue(value)) throw new CtyCodecError(`number expected, got ${typeof value}`);
  if (typeof value === "number") {
    // What the decimal route below gives for a safe integer, without the text and the bigint.
    if (Number.isSafeInteger(value)) return value === 0 ? 0 : value;
    if (!Number.isFinite(value)) {
      if (Number.isNaN(value)) throw new CtyCodecError("NaN is not a number in cty");
      return value;
    }
  }
  const decimal = numberDecimal(value);
  if (!decimal.includes(".")) {
    const big = BigInt(decimal);
    if (big >= BigInt(Number.MIN_SAFE_INTEGER) && big <= BigInt(Number.MAX_SAFE_INTEGER)) return Number(big);
    if (big >= INT64_MIN && big <= UINT64_MAX) return big;
    return decimal;
  }
  const double = Number(decimal);
  return Number.isFinite(double) && exactDecimalOfDouble(double) === decimal ? double : decimal;
}

function toRaw(value: unknown, type: CtyType): unknown {
  if (value instanceof Unknown) return UNKNOWN_EXT;
  if (value === null || value === undefined) return null;
  switch (type.kind) {
    case "string":
      return typeof value === "string" ? value : mismatch("string", type, value);
    case "bool":
      return typeof value === "boolean" ? value : mismatch("bool", type, value);
    case "number":
      return encodeNumber(value);
    case "list":
    case "set":
    case "tuple": {
      if (!Array.isArray(value)) return mismatch(type.kind, type, value);
      if (type.kind === "tuple" && value.length !== type.elements.length)
        return mismatch("tuple", type, value);
      const out = new Array<unknown>(value.length);
      for (let i = 0; i < value.length; i++) {
        try {
          out[i] = toRaw(value[i], type.kind === "tuple" ? type.elements[i]! : type.element);
        } catch (err) {
          throw atKey(err, i);
        }
      }
      return out;
    }
    case "map": {
      if (!isRecord(value)) return mismatch("map", type, value);
      const out = newRecord<unknown>();
      for (const k of Object.keys(value).sort()) {
        try {
          out[k] = toRaw(value[k], type.element);
        } catch (err) {
          throw atKey(err, k);
        }
      }
      return out;
    }
    case "object": {
      if (!isRecord(value)) return mismatch("object", type, value);
      for (const k in value) {
        if (!Object.hasOwn(type.attributes, k)) throw new CtyCodecError(`unsupported attribute "${k}"`);
      }
      // Every declared attribute is written (nil when absent): cty requires complete objects.
      const out = newRecord<unknown>();
      for (const k of attributeNames(type).sorted) {
        try {
          out[k] = toRaw(value[k], type.attributes[k]!);
        } catch (err) {
          throw atKey(err, k);
        }
      }
      return out;
    }
    case "dynamic":
      if (!(value instanceof Dynamic)) return mismatch("Dynamic", type, value);
      return [typeToBytes(value.type), toRaw(value.value, value.type)];
  }
}

/** A value of the wrong kind for its type. (A function of the module, not a closure per value.) */
function mismatch(what: string, type: CtyType, value: unknown): never {
  throw new CtyCodecError(`${what} expected for ${typeName(type)}, got ${describeValue(value)}`);
}

function describeValue(value: unknown): string {
  if (Array.isArray(value)) return "array";
  if (typeof value === "object" && value !== null) return value.constructor?.name ?? "object";
  return typeof value;
}
