// What the protocol driver (driver.ts) reads and writes on the wire: decoded schemas and their
// implied cty types, values as DynamicValue msgpack, diagnostics, Terraform's proposed new state,
// and the blocks, state objects and plans a command works with. No process and no gRPC here:
// provider-process.ts dials, driver.ts orders the calls.
import {
  type CtyType,
  type CtyValue,
  decodeMsgpack,
  encodeMsgpack,
  isRecord,
  newRecord,
  type ObjectType,
  t,
  typeFromBytes,
} from "../../src/plugin/cty";

/** An object value by attribute name. */
export type Rec = Record<string, CtyValue>;
/** A protocol message as plain fields. */
export type Msg = Record<string, unknown>;
/** A decoded protocol message as the version's client reads it. */
export type Decoded = Msg;

/** An attribute of a decoded schema, as much as the driver needs. */
export interface SchemaAttr {
  name: string;
  type: Buffer;
  nested_type: { attributes: SchemaAttr[]; nesting: number } | null;
  required: boolean;
  optional: boolean;
  computed: boolean;
  sensitive: boolean;
  deprecated: boolean;
}

/** A decoded schema block with its implied cty type. */
export interface DriverSchema {
  readonly attributes: readonly SchemaAttr[];
  readonly type: ObjectType;
  /** The schema version Terraform stores with the state and sends to UpgradeResourceState. */
  readonly version: number;
}

function attrType(a: SchemaAttr): CtyType {
  if (!a.nested_type || a.nested_type.nesting === 0) return typeFromBytes(a.type);
  const obj = objectType(a.nested_type.attributes);
  switch (a.nested_type.nesting) {
    case 2:
      return t.list(obj);
    case 3:
      return t.set(obj);
    case 4:
      return t.map(obj);
    default:
      return obj;
  }
}

function objectType(attrs: readonly SchemaAttr[]): ObjectType {
  const types: Record<string, CtyType> = {};
  for (const a of attrs) types[a.name] = attrType(a);
  return t.object(types);
}

/** A decoded schema answer as the driver reads it; nested blocks are refused. */
export function toSchema(schema: {
  version?: number;
  block: { attributes: SchemaAttr[]; block_types: unknown[] };
}): DriverSchema {
  const { block } = schema;
  if (block.block_types.length > 0) throw new Error("the driver reads attribute-only schemas");
  return {
    attributes: block.attributes,
    type: objectType(block.attributes),
    version: Number(schema.version ?? 0),
  };
}

/** Every attribute of a schema, null where `values` has none. */
export function fullObject(schema: DriverSchema, values: Readonly<Rec>): Rec {
  const out = newRecord<CtyValue>();
  for (const a of schema.attributes) out[a.name] = values[a.name] ?? null;
  return out;
}

/**
 * Terraform's proposed new state (internal/plans/objchange/objchange.go ProposedNew), for the
 * attribute-only schemas this provider has: configured values win; a computed attribute the
 * configuration leaves null keeps its prior value; single nested attributes recursively.

 */
export function proposedNew(attrs: readonly SchemaAttr[], prior: Rec | null, config: Rec): Rec {
  const out = newRecord<CtyValue>();
  for (const a of attrs) {
    const c = config[a.name] ?? null;
    const p = prior ? (prior[a.name] ?? null) : null;
    if (a.computed && c === null) out[a.name] = p;
    else if (a.nested_type?.nesting === 1 && isRecord(c))
      out[a.name] = proposedNew(a.nested_type.attributes, isRecord(p) ? (p as Rec) : null, c as Rec);
    else out[a.name] = c;
  }
  return out;
}

export interface CallRecord {
  process: number;
  rpc: string;
}

/** The provider schema as the version's client decoded it. */
export interface LoadedSchema {
  raw: Decoded;
  identityRaw: Decoded | null;
  resources: Record<string, DriverSchema>;
  identities: Record<string, { type: ObjectType; version: number }>;
  lists: Record<string, DriverSchema>;
  actions: Record<string, DriverSchema>;
  provider: DriverSchema;
  capabilities: Msg;
}

/** One object in the driver's state. */
export interface StoredObject {
  type: string;
  value: Rec;
  private: Buffer;
  identity: Rec | null;
}

/** A resource block: `resource "<type>" "<name>" { ... }`. */
export interface ResourceBlock {
  type: string;
  name: string;
  config: Rec;
  /** 1.16: actions run before its destroy (`action_trigger { events = [before_destroy] }`). */
  beforeDestroy?: ActionBlock;
}

/** An import block, by id or (1.12+) by identity. */
export interface ImportBlock {
  to: string;
  id?: string;
  identity?: Rec;
}

/** A list block of a `.tfquery.hcl` file. */
export interface ListBlock {
  type: string;
  name: string;
  config: Rec;
  limit?: number;
  includeResource?: boolean;
}

/** An action block. */
export interface ActionBlock {
  type: string;
  name: string;
  config: Rec;
}

/** What a plan found for one resource. */
export interface PlannedChange {
  address: string;
  action: "create" | "update" | "replace" | "noop" | "delete";
  importing: boolean;
  prior: StoredObject | null;
  planned: Rec | null;
  plannedPrivate: Buffer;
  plannedIdentity: Rec | null;
  config: Rec | null;
}

/** A diagnostic as the version's client decoded it. */
export interface DriverDiagnostic {
  severity: "error" | "warning";
  summary: string;
  detail: string;
  rpc: string;
}

/** An error that stops a command, as Terraform stops it, with the diagnostics so far. */
export class CommandFailed extends Error {
  constructor(
    readonly diagnostics: DriverDiagnostic[],
    readonly during: string,
  ) {
    super(
      `${during} failed: ${diagnostics
        .filter((d) => d.severity === "error")
        .map((d) => `${d.summary}: ${d.detail}`)
        .join("; ")}`,
    );
  }
}

/** What a command's blocks are. */
export interface Blocks {
  resources?: ResourceBlock[];
  imports?: ImportBlock[];
  lists?: ListBlock[];
  actions?: ActionBlock[];
  /** Resource blocks removed from the configuration, with their lifecycle (1.16 before_destroy). */
  destroyed?: ResourceBlock[];
}

/** What a query found and, with `generateConfig`, the configuration to write. */
export interface QueryResult {
  found: { list: string; displayName: string; identity: Rec; object: Rec | null }[];
  generated: GeneratedResource[];
}

/** One resource of a query's generated configuration. */
export interface GeneratedResource {
  address: string;
  type: string;
  attributes: readonly SchemaAttr[];
  config: Rec | null;
  identity: Rec;
  identityAttributes: string[];
}

/** An empty private or bytes field. */
export const EMPTY = Buffer.alloc(0);

/** The diagnostics of an answer, as the version's client decoded them. */
export function diagnosticsOf(list: unknown, rpc: string): DriverDiagnostic[] {
  return ((list as Msg[] | undefined) ?? []).map((d) => ({
    severity: d.severity === 2 ? "warning" : "error",
    summary: String(d.summary ?? ""),
    detail: String(d.detail ?? ""),
    rpc,
  }));
}

/** A DynamicValue's msgpack decoded with `type`; null when absent or empty. */
export function decodeDv(dv: unknown, type: CtyType): CtyValue {
  const m = dv as { msgpack?: Buffer } | null | undefined;
  if (!m?.msgpack || m.msgpack.length === 0) return null;
  return decodeMsgpack(m.msgpack, type);
}

/** A value as a DynamicValue of `type`. */
export function dv(value: CtyValue, type: CtyType): Msg {
  return { msgpack: encodeMsgpack(value, type) };
}
