// The schema builder: one description of a resource's attributes yields the protocol schema, the cty
// object type used to decode and encode its values, and the TypeScript types of those values.
import {
  type BoolType,
  type CtyType,
  type CtyValue,
  type Dynamic,
  type DynamicType,
  type ListType,
  type MapType,
  type NumberType,
  type NumberValue,
  type ObjectType,
  type SetType,
  type StringType,
  type TupleType,
  t,
  typeToBytes,
  type Unknown,
} from "../plugin/cty";
import {
  ObjectNesting,
  type SchemaAttribute as ProtoAttribute,
  type Schema as ProtoSchema,
  StringKind,
} from "../plugin/tfplugin6";
import type { Diagnostics, Path } from "./diagnostics";

// ---------------------------------------------------------------------------------------------
// Value types

/** The TypeScript type of a known, non-null value of cty type T (attributes of objects may be null). */
export type Known<T extends CtyType> = T extends StringType
  ? string
  : T extends NumberType
    ? NumberValue
    : T extends BoolType
      ? boolean
      : T extends DynamicType
        ? Dynamic
        : T extends ListType<infer E> | SetType<infer E>
          ? (Known<E> | null)[]
          : T extends MapType<infer E>
            ? Record<string, Known<E> | null>
            : T extends ObjectType<infer A>
              ? { [K in keyof A]: Known<A[K]> | null }
              : T extends TupleType<infer E>
                ? { -readonly [I in keyof E]: E[I] extends CtyType ? Known<E[I]> : never }
                : never;

/** The TypeScript type of a value of cty type T that may be unknown or null at any depth. */
export type Planned<T extends CtyType> =
  | Unknown
  | null
  | (T extends StringType
      ? string
      : T extends NumberType
        ? NumberValue
        : T extends BoolType
          ? boolean
          : T extends DynamicType
            ? Dynamic
            : T extends ListType<infer E> | SetType<infer E>
              ? Planned<E>[]
              : T extends MapType<infer E>
                ? Record<string, Planned<E>>
                : T extends ObjectType<infer A>
                  ? { [K in keyof A]: Planned<A[K]> }
                  : T extends TupleType<infer E>
                    ? { -readonly [I in keyof E]: E[I] extends CtyType ? Planned<E[I]> : never }
                    : never);

// ---------------------------------------------------------------------------------------------
// Plan modifiers and validators (implementations in modifiers.ts)

/** What a plan modifier sees for one attribute. */
export interface PlanModifierRequest {
  /** Where the attribute is. */
  readonly path: Path;
  /** The attribute's configuration value (null when unset, may be unknown). */
  readonly config: CtyValue;
  /** The attribute's prior state value; null on create. */
  readonly state: CtyValue;
  /** The value planned so far. */
  readonly plan: CtyValue;
  /** The attribute's cty type. */
  readonly type: CtyType;
  /** True when there is no prior object (create, or the create half of a replacement). */
  readonly isCreate: boolean;
  /** True when the planned object differs from the prior state in any configured value. */
  readonly resourceChanges: boolean;
  /** The resource's prior private data (empty on create). */
  readonly private: Buffer;
}

/** What a plan modifier decides; omitted fields leave things as they are. */
export interface PlanModifierResponse {
  plan?: CtyValue;
  requiresReplace?: boolean;
}

/** A named step that adjusts one attribute's planned value or asks for replacement. */
export interface PlanModifier {
  /** Short description, for docs and errors. */
  readonly description: string;
  /** Returns the adjustment; runs in the order listed on the attribute. */
  modify(req: PlanModifierRequest): PlanModifierResponse | undefined;
}

/** Context of a validator call. */
export interface ValidatorContext {
  readonly path: Path;
  readonly diags: Diagnostics;
}

/** Checks a known, non-null configuration value; null and unknown values are never passed in. */
export interface Validator<V = unknown> {
  /** Short description, for docs. */
  readonly description: string;
  /** Reports problems through ctx.diags. */
  validate(value: V, ctx: ValidatorContext): void;
}

// ---------------------------------------------------------------------------------------------
// Attributes

/** How a nested attribute holds its objects. */
export type Nesting = "single" | "list" | "set" | "map";

/** Durations of the `timeouts` attribute by operation. */
export type TimeoutOperation = "create" | "read" | "update" | "delete";

/** One attribute of a schema. Build it with the `attr` helpers rather than by hand. */
export interface Attribute<T extends CtyType = CtyType> {
  /** The attribute's cty type (for nested attributes, the implied object/collection type). */
  readonly type: T;
  /** Set for nested attributes: the nested attributes and how they nest. */
  readonly nested?: { readonly nesting: Nesting; readonly attributes: Attributes } | undefined;
  readonly required: boolean;
  readonly optional: boolean;
  readonly computed: boolean;
  readonly sensitive: boolean;
  readonly writeOnly: boolean;
  /** Markdown description. */
  readonly description?: string | undefined;
  /** Set when deprecated: the message shown to users. */
  readonly deprecationMessage?: string | undefined;
  readonly planModifiers: readonly PlanModifier[];
  readonly validators: readonly Validator[];
  /** Value planned when the configuration leaves an optional+computed attribute unset. */
  readonly default?: CtyValue | undefined;
  /** Present on the attribute built by `timeoutsAttribute`: default durations by operation. */
  readonly timeoutDefaults?: Readonly<Partial<Record<TimeoutOperation, string>>> | undefined;
}

/** A record of attributes by name. */
export type Attributes = Readonly<Record<string, Attribute>>;

/** Which of required/optional/computed an attribute is; Terraform needs at least one. */
export type AttributeFlags =
  | { required: true; optional?: false; computed?: false }
  | { required?: false; optional: true; computed?: boolean }
  | { required?: false; optional?: boolean; computed: true };

/** Options shared by every attribute builder. */
export type AttributeOptions<V> = AttributeFlags & {
  /** Markdown description. */
  description?: string;
  sensitive?: boolean;
  /** Sent by the practitioner but never stored: always planned and stored as null. */
  writeOnly?: boolean;
  /** Deprecation message; marks the attribute deprecated. */
  deprecated?: string;
  planModifiers?: readonly PlanModifier[];
  validators?: readonly Validator<V>[];
  /** Planned when an optional+computed attribute is unset in configuration. */
  default?: V;
};

/** The cty object type of a record of attributes. */
export type ObjectTypeOf<A extends Attributes> = ObjectType<{ [K in keyof A]: A[K]["type"] }>;

/** Error for a schema that Terraform would reject. */
export class SchemaError extends Error {
  override name = "SchemaError";
}

const NAME = /^[a-z0-9_]+$/;

function build<T extends CtyType, V>(
  type: T,
  opts: AttributeOptions<V>,
  nested?: { nesting: Nesting; attributes: Attributes },
): Attribute<T> {
  return {
    type,
    nested,
    required: opts.required === true,
    optional: opts.optional === true,
    computed: opts.computed === true,
    sensitive: opts.sensitive === true,
    writeOnly: opts.writeOnly === true,
    description: opts.description,
    deprecationMessage: opts.deprecated,
    planModifiers: opts.planModifiers ?? [],
    validators: (opts.validators ?? []) as readonly Validator[],
    default: opts.default as CtyValue | undefined,
  };
}

/** The cty object type of a record of attributes. */
export function objectTypeOf<A extends Attributes>(attributes: A): ObjectTypeOf<A> {
  const types: Record<string, CtyType> = {};
  for (const [name, a] of Object.entries(attributes)) types[name] = a.type;
  return t.object(types) as ObjectTypeOf<A>;
}

/** Attribute builders. */
export const attr = {
  /** A string attribute. */
  string: (opts: AttributeOptions<string>): Attribute<StringType> => build(t.string, opts),
  /** A number attribute (values are `number | CtyNumber`, see the cty value model). */
  number: (opts: AttributeOptions<NumberValue>): Attribute<NumberType> => build(t.number, opts),
  /** A bool attribute. */
  bool: (opts: AttributeOptions<boolean>): Attribute<BoolType> => build(t.bool, opts),
  /** A dynamic attribute: any type, chosen by the configuration. */
  dynamic: (opts: AttributeOptions<Dynamic>): Attribute<DynamicType> => build(t.dynamic, opts),
  /** A list of values of one type. */
  list: <E extends CtyType>(element: E, opts: AttributeOptions<Known<E>[]>): Attribute<ListType<E>> =>
    build(t.list(element), opts),
  /** A set of values of one type. */
  set: <E extends CtyType>(element: E, opts: AttributeOptions<Known<E>[]>): Attribute<SetType<E>> =>
    build(t.set(element), opts),
  /** A map of string keys to values of one type. */
  map: <E extends CtyType>(
    element: E,
    opts: AttributeOptions<Record<string, Known<E>>>,
  ): Attribute<MapType<E>> => build(t.map(element), opts),
  /** A nested attribute holding one object (null when unset). */
  single: <A extends Attributes>(
    attributes: A,
    opts: AttributeOptions<Known<ObjectTypeOf<A>>>,
  ): Attribute<ObjectTypeOf<A>> => build(objectTypeOf(attributes), opts, { nesting: "single", attributes }),
  /** A nested attribute holding a list of objects. */
  listNested: <A extends Attributes>(
    attributes: A,
    opts: AttributeOptions<Known<ObjectTypeOf<A>>[]>,
  ): Attribute<ListType<ObjectTypeOf<A>>> =>
    build(t.list(objectTypeOf(attributes)), opts, { nesting: "list", attributes }),
  /** A nested attribute holding a set of objects. */
  setNested: <A extends Attributes>(
    attributes: A,
    opts: AttributeOptions<Known<ObjectTypeOf<A>>[]>,
  ): Attribute<SetType<ObjectTypeOf<A>>> =>
    build(t.set(objectTypeOf(attributes)), opts, { nesting: "set", attributes }),
  /** A nested attribute holding a map of objects. */
  mapNested: <A extends Attributes>(
    attributes: A,
    opts: AttributeOptions<Record<string, Known<ObjectTypeOf<A>>>>,
  ): Attribute<MapType<ObjectTypeOf<A>>> =>
    build(t.map(objectTypeOf(attributes)), opts, { nesting: "map", attributes }),
} as const;

// ---------------------------------------------------------------------------------------------
// Schemas

/** A resource, data source or provider schema. */
export interface Schema<A extends Attributes = Attributes> {
  /** State schema version; stored in state and passed back to UpgradeResourceState. */
  readonly version: number;
  /** Markdown description. */
  readonly description: string;
  readonly deprecationMessage?: string | undefined;
  readonly attributes: A;
  /** The cty object type of the whole value. */
  readonly type: ObjectTypeOf<A>;
}

/** Input of `defineSchema`. */
export interface SchemaSpec<A extends Attributes> {
  version?: number;
  /** Markdown description. */
  description?: string;
  deprecated?: string;
  attributes: A;
}

/** Known values of a schema (state): every attribute present, null when unset. */
export type StateOf<S extends Schema> = Known<S["type"]>;
/** Values that may contain unknowns (configuration, plan). */
export type PlanOf<S extends Schema> = Exclude<Planned<S["type"]>, Unknown | null>;
/** The model of a schema's known values, e.g. `type Thing = InferModel<typeof thingSchema>`. */
export type InferModel<S extends Schema> = StateOf<S>;

function checkAttributes(attributes: Attributes, where: string, inSet: boolean, inWriteOnly: boolean): void {
  for (const [name, a] of Object.entries(attributes)) {
    const at = where ? `${where}.${name}` : name;
    if (!NAME.test(name)) throw new SchemaError(`attribute name "${at}" must match ${NAME}`);
    if (!a.required && !a.optional && !a.computed) {
      throw new SchemaError(`attribute "${at}" must be required, optional or computed`);
    }
    if (a.required && (a.optional || a.computed)) {
      throw new SchemaError(`attribute "${at}" cannot be required and also optional or computed`);
    }
    if (a.default !== undefined && !(a.optional && a.computed)) {
      throw new SchemaError(`attribute "${at}" has a default, so it must be optional and computed`);
    }
    if (a.writeOnly || inWriteOnly) checkWriteOnly(a, at);
    if (inSet && (a.writeOnly || a.type.kind === "dynamic")) {
      throw new SchemaError(`attribute "${at}" is inside a set and cannot be write-only or dynamic`);
    }
    if (a.nested) {
      checkAttributes(a.nested.attributes, at, inSet || a.nested.nesting === "set", a.writeOnly);
    }
  }
}

/**
 * The rules Terraform and the large providers keep for write-only attributes: their planned and
 * stored value is always null, so nothing may compute, default or plan them; a change that must
 * replace the object goes on a stored companion (e.g. `password_wo_version`).
 */
function checkWriteOnly(a: Attribute, at: string): void {
  if (!a.writeOnly) {
    throw new SchemaError(`attribute "${at}" is inside a write-only attribute, so it must be write-only too`);
  }
  if (a.computed) throw new SchemaError(`write-only attribute "${at}" cannot be computed`);
  if (a.planModifiers.length > 0) {
    throw new SchemaError(
      `write-only attribute "${at}" cannot have plan modifiers: it is always planned as null; put requiresReplace() on a stored companion such as a version number`,
    );
  }
}

/** Throws when a data source or provider schema declares write-only attributes (resources only). */
export function checkNoWriteOnly(schema: Schema, what: string): void {
  const walk = (attributes: Attributes, where: string): void => {
    for (const [name, a] of Object.entries(attributes)) {
      const at = where ? `${where}.${name}` : name;
      if (a.writeOnly) {
        throw new SchemaError(
          `${what} has a write-only attribute "${at}"; only managed resources can have write-only attributes`,
        );
      }
      if (a.nested) walk(a.nested.attributes, at);
    }
  };
  walk(schema.attributes, "");
}

/** Builds a schema; throws SchemaError when Terraform would reject it (names, flags). */
export function defineSchema<const A extends Attributes>(spec: SchemaSpec<A>): Schema<A> {
  checkAttributes(spec.attributes, "", false, false);
  const version = spec.version ?? 0;
  if (!Number.isSafeInteger(version) || version < 0)
    throw new SchemaError("schema version must be a whole number");
  return {
    version,
    description: spec.description ?? "",
    deprecationMessage: spec.deprecated,
    attributes: spec.attributes,
    type: objectTypeOf(spec.attributes),
  };
}

const NESTING: Record<Nesting, (typeof ObjectNesting)[keyof typeof ObjectNesting]> = {
  single: ObjectNesting.SINGLE,
  list: ObjectNesting.LIST,
  set: ObjectNesting.SET,
  map: ObjectNesting.MAP,
};

function protoAttributes(attributes: Attributes): ProtoAttribute[] {
  return Object.keys(attributes)
    .sort()
    .map((name) => {
      const a = attributes[name]!;
      const out: ProtoAttribute = {
        name,
        description: a.description ?? "",
        description_kind: StringKind.MARKDOWN,
        required: a.required,
        optional: a.optional,
        computed: a.computed,
        sensitive: a.sensitive,
        write_only: a.writeOnly,
        deprecated: a.deprecationMessage !== undefined,
      };
      // Stryker disable next-line ConditionalExpression: a field set to undefined is not encoded.
      if (a.deprecationMessage) out.deprecation_message = a.deprecationMessage;
      if (a.nested) {
        out.nested_type = {
          attributes: protoAttributes(a.nested.attributes),
          nesting: NESTING[a.nested.nesting],
        };
      } else {
        out.type = typeToBytes(a.type);
      }
      return out;
    });
}

/** The protocol form of a schema (attributes sorted, descriptions as markdown). */
export function toProtoSchema(schema: Schema): ProtoSchema {
  const block: ProtoSchema["block"] = {
    attributes: protoAttributes(schema.attributes),
    block_types: [],
    description: schema.description,
    description_kind: StringKind.MARKDOWN,
    deprecated: schema.deprecationMessage !== undefined,
  };
  // Stryker disable next-line ConditionalExpression: a field set to undefined is not encoded.
  if (schema.deprecationMessage) block.deprecation_message = schema.deprecationMessage;
  return { version: schema.version, block };
}
