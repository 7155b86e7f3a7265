// Resource identity (protocol 6.9, Terraform 1.12+ and OpenTofu 1.12+): a small versioned object
// that names a resource's remote object without the rest of its state. Terraform stores it beside
// the state, passes it back on every read, plan and apply, imports by it (`import { identity =
// {...} }`), and `terraform query` (1.14+) lists objects by it. This module is the schema builder
// and the value helpers; the RPCs that carry identities are in rpc/.
import {
  type CtyType,
  type CtyValue,
  decodeJson,
  decodeJsonUntyped,
  encodeMsgpack,
  fromDynamicValue,
  isRecord,
  isWhollyKnown,
  newRecord,
  type ObjectType,
  t,
  typeToBytes,
} from "../plugin/cty";
import type * as proto from "../plugin/tfplugin6";
import { SchemaError } from "./schema";

/** An identity value: every attribute of the identity schema, null where the provider has none. */
export type IdentityValue = Record<string, CtyValue>;

/** One attribute of an identity: primitive types (or lists of them) only, as Terraform allows. */
export interface IdentityAttribute {
  readonly type: CtyType;
  /** Must be given in an import block's `identity`; otherwise the provider can fill it in. */
  readonly requiredForImport: boolean;
  /** Markdown description. */
  readonly description: string;
}

/** An identity schema: its version and attributes. */
export interface IdentitySchema {
  /**
   * Bumped whenever the attributes or their meaning change; an identity stored under an older
   * version is brought to this one by the resource's identity upgraders.
   */
  readonly version: number;
  readonly attributes: Readonly<Record<string, IdentityAttribute>>;
  /** The cty object type of an identity value. */
  readonly type: ObjectType<Record<string, CtyType>>;
}

const NAME = /^[a-z0-9_]+$/;
const PRIMITIVE = new Set(["string", "number", "bool"]);

/** Builds an identity schema; throws SchemaError when Terraform would reject it. */
export function defineIdentity(spec: {
  version?: number;
  attributes: Record<string, IdentityAttribute>;
}): IdentitySchema {
  const version = spec.version ?? 0;
  if (!Number.isSafeInteger(version) || version < 0)
    throw new SchemaError("identity version must be a whole number");
  const types: Record<string, CtyType> = {};
  for (const [name, a] of Object.entries(spec.attributes)) {
    if (!NAME.test(name)) throw new SchemaError(`identity attribute name "${name}" must match ${NAME}`);
    const element = a.type.kind === "list" ? a.type.element : a.type;
    if (!PRIMITIVE.has(element.kind))
      throw new SchemaError(`identity attribute "${name}" must be a string, number, bool or a list of them`);
    types[name] = a.type;
  }
  if (!Object.values(spec.attributes).some((a) => a.requiredForImport))
    throw new SchemaError("an identity needs at least one attribute required for import");
  return { version, attributes: spec.attributes, type: t.object(types) };
}

/** Builders of identity attributes. */
export const identityAttr = {
  /** A string the import block must give. */
  required: (description: string): IdentityAttribute => ({
    type: t.string,
    requiredForImport: true,
    description,
  }),
  /** A string the import block may give; the provider fills it in otherwise. */
  optional: (description: string): IdentityAttribute => ({
    type: t.string,
    requiredForImport: false,
    description,
  }),
};

/** The protocol form of an identity schema, attributes sorted by name. */
export function toProtoIdentitySchema(schema: IdentitySchema): proto.ResourceIdentitySchema {
  return {
    version: schema.version,
    identity_attributes: Object.keys(schema.attributes)
      .sort()
      .map((name) => {
        const a = schema.attributes[name]!;
        return {
          name,
          type: typeToBytes(a.type),
          required_for_import: a.requiredForImport,
          optional_for_import: !a.requiredForImport,
          description: a.description,
        };
      }),
  };
}

/** An identity laid over nulls: every attribute present, unknown attributes refused. */
export function identityOf(
  schema: IdentitySchema,
  values: Readonly<Record<string, CtyValue>>,
): IdentityValue {
  const out = newRecord<CtyValue>();
  for (const name of Object.keys(schema.attributes)) out[name] = values[name] ?? null;
  for (const name of Object.keys(values))
    if (!Object.hasOwn(schema.attributes, name))
      throw new Error(`the identity has an attribute "${name}" its schema does not declare`);
  if (!isWhollyKnown(out)) throw new Error("an identity cannot hold unknown values");
  return out;
}

/** An identity as the protocol carries it. */
export function encodeIdentity(schema: IdentitySchema, value: IdentityValue): proto.ResourceIdentityDataOut {
  return { identity_data: { msgpack: encodeMsgpack(identityOf(schema, value), schema.type) } };
}

/** The identity a request carries, or null when there is none (older Terraform, or a create). */
export function decodeIdentity(
  schema: IdentitySchema,
  data: proto.ResourceIdentityData | null | undefined,
): IdentityValue | null {
  const value = fromDynamicValue(data?.identity_data, schema.type);
  return isRecord(value) ? (value as IdentityValue) : null;
}

/** A stored identity's JSON (UpgradeResourceIdentity), decoded with a schema or as plain values. */
export function decodeStoredIdentity(json: Uint8Array, schema?: IdentitySchema): IdentityValue | null {
  const value = schema
    ? decodeJson(json, schema.type, { ignoreUndefinedAttributes: true })
    : decodeJsonUntyped(json);
  return isRecord(value) ? (value as IdentityValue) : null;
}
