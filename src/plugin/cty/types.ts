// cty types and their JSON form (the `type` bytes of a schema attribute and the first element of a
// msgpack dynamic value). The type parameters carry the structure so the framework can infer the
// TypeScript shape of values from a schema.

/** The string type. */
export interface StringType {
  readonly kind: "string";
}
/** The number type (arbitrary precision decimal). */
export interface NumberType {
  readonly kind: "number";
}
/** The bool type. */
export interface BoolType {
  readonly kind: "bool";
}
/** The dynamic pseudo-type: the concrete type travels with the value. */
export interface DynamicType {
  readonly kind: "dynamic";
}
/** list(T). */
export interface ListType<E extends CtyType = CtyType> {
  readonly kind: "list";
  readonly element: E;
}
/** set(T); element order is not significant. */
export interface SetType<E extends CtyType = CtyType> {
  readonly kind: "set";
  readonly element: E;
}
/** map(T) with string keys. */
export interface MapType<E extends CtyType = CtyType> {
  readonly kind: "map";
  readonly element: E;
}
/** object({...}); `optional` lists attributes that type conversion may leave out (type JSON only). */
export interface ObjectType<A extends Readonly<Record<string, CtyType>> = Readonly<Record<string, CtyType>>> {
  readonly kind: "object";
  readonly attributes: A;
  readonly optional?: readonly string[];
}
/** tuple([...]) with a fixed length. */
export interface TupleType<E extends readonly CtyType[] = readonly CtyType[]> {
  readonly kind: "tuple";
  readonly elements: E;
}

/** Any cty type. */
export type CtyType =
  | StringType
  | NumberType
  | BoolType
  | DynamicType
  | ListType
  | SetType
  | MapType
  | ObjectType
  | TupleType;

/** Constructors of cty types. */
export const t = {
  string: { kind: "string" } as StringType,
  number: { kind: "number" } as NumberType,
  bool: { kind: "bool" } as BoolType,
  dynamic: { kind: "dynamic" } as DynamicType,
  list: <E extends CtyType>(element: E): ListType<E> => ({ kind: "list", element }),
  set: <E extends CtyType>(element: E): SetType<E> => ({ kind: "set", element }),
  map: <E extends CtyType>(element: E): MapType<E> => ({ kind: "map", element }),
  object: <A extends Readonly<Record<string, CtyType>>>(
    attributes: A,
    optional?: readonly string[],
  ): ObjectType<A> =>
    optional && optional.length > 0
      ? { kind: "object", attributes, optional }
      : { kind: "object", attributes },
  tuple: <const E extends readonly CtyType[]>(elements: E): TupleType<E> => ({ kind: "tuple", elements }),
} as const;

/** The JSON value of a type, as go-cty marshals it. */
export function typeToJSON(type: CtyType): unknown {
  switch (type.kind) {
    case "string":
    case "number":
    case "bool":
    case "dynamic":
      return type.kind;
    case "list":
    case "set":
    case "map":
      return [type.kind, typeToJSON(type.element)];
    case "object": {
      // Sorted keys keep the bytes stable, so schemas and dynamic values compare byte-for-byte.
      const attrs: Record<string, unknown> = Object.create(null);
      for (const name of Object.keys(type.attributes).sort())
        attrs[name] = typeToJSON(type.attributes[name]!);
      return type.optional && type.optional.length > 0
        ? ["object", attrs, [...type.optional].sort()]
        : ["object", attrs];
    }
    case "tuple":
      return ["tuple", type.elements.map(typeToJSON)];
  }
}

/** The UTF-8 type JSON bytes of a type. */
export function typeToBytes(type: CtyType): Buffer {
  return Buffer.from(JSON.stringify(typeToJSON(type)), "utf8");
}

/** Error for malformed type JSON. */
export class CtyTypeError extends Error {
  override name = "CtyTypeError";
}

/** Parses a type from its JSON value; throws CtyTypeError when it is not valid type JSON. */
export function typeFromJSON(json: unknown): CtyType {
  if (typeof json === "string") {
    switch (json) {
      case "string":
        return t.string;
      case "number":
        return t.number;
      case "bool":
        return t.bool;
      case "dynamic":
        return t.dynamic;
    }
    throw new CtyTypeError(`invalid primitive type name ${JSON.stringify(json)}`);
  }
  if (!Array.isArray(json) || json.length < 2 || typeof json[0] !== "string") {
    throw new CtyTypeError(`invalid type JSON ${JSON.stringify(json)}`);
  }
  const [kind, arg] = json as [string, unknown, unknown?];
  switch (kind) {
    case "list":
      return t.list(typeFromJSON(arg));
    case "set":
      return t.set(typeFromJSON(arg));
    case "map":
      return t.map(typeFromJSON(arg));
    case "tuple":
      if (!Array.isArray(arg)) throw new CtyTypeError("tuple type needs an array of element types");
      return t.tuple(arg.map(typeFromJSON));
    case "object": {
      if (typeof arg !== "object" || arg === null || Array.isArray(arg)) {
        throw new CtyTypeError("object type needs an object of attribute types");
      }
      const attrs: Record<string, CtyType> = Object.create(null);
      for (const [name, sub] of Object.entries(arg)) attrs[name] = typeFromJSON(sub);
      const optional = json[2];
      if (optional !== undefined) {
        if (
          !Array.isArray(optional) ||
          !optional.every((o) => typeof o === "string" && Object.hasOwn(attrs, o))
        ) {
          throw new CtyTypeError("object optional attributes must name declared attributes");
        }
        return t.object(attrs, optional as string[]);
      }
      return t.object(attrs);
    }
  }
  throw new CtyTypeError(`invalid type kind ${JSON.stringify(kind)}`);
}

/** Parses type JSON bytes or text. */
export function typeFromBytes(bytes: Uint8Array | string): CtyType {
  const text = typeof bytes === "string" ? bytes : Buffer.from(bytes).toString("utf8");
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new CtyTypeError(`type JSON is not JSON: ${text.slice(0, 100)}`);
  }
  return typeFromJSON(json);
}

/** Whether two types are identical (optional markers included). */
export function typeEquals(a: CtyType, b: CtyType): boolean {
  return JSON.stringify(typeToJSON(a)) === JSON.stringify(typeToJSON(b));
}

/** A short human form of a type for error messages, e.g. `list(string)`. */
export function typeName(type: CtyType): string {
  switch (type.kind) {
    case "list":
    case "set":
    case "map":
      return `${type.kind}(${typeName(type.element)})`;
    case "object":
      return `object({${Object.keys(type.attributes).join(", ")}})`;
    case "tuple":
      return `tuple([${type.elements.map(typeName).join(", ")}])`;
    default:
      return type.kind;
  }
}
