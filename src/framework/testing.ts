// An in-memory harness for provider tests: drives the service the way Terraform does, with values
// encoded as msgpack DynamicValues, but without a process or gRPC.
import { type CtyValue, decodeMsgpack, encodeMsgpack, isRecord, newRecord } from "../plugin/cty";
import type * as proto from "../plugin/tfplugin6";
import type { AnyProviderDefinition } from "./definitions";
import type { Diagnostic } from "./diagnostics";
import type { IdentitySchema } from "./identity";
import type { Attributes, Schema } from "./schema";
import { createProviderService, fromProtoDiagnostics, type ProviderService } from "./server";

type Rec = Record<string, CtyValue>;

const EMPTY = Buffer.alloc(0);
const CAPS: proto.ClientCapabilities = { deferral_allowed: false, write_only_attributes_allowed: true };

function dv(value: CtyValue, schema: Schema): proto.DynamicValue {
  return { msgpack: encodeMsgpack(value, schema.type), json: EMPTY };
}

function read(out: proto.DynamicValueOut | null | undefined, schema: Schema): Rec | null {
  const value = decodeMsgpack(out?.msgpack ?? EMPTY, schema.type);
  return isRecord(value) ? (value as Rec) : null;
}

/** Fills every attribute of a schema, null where `values` has none. */
export function fullObject(schema: Schema, values: Readonly<Record<string, CtyValue>>): Rec {
  const out = newRecord<CtyValue>();
  for (const name of Object.keys(schema.attributes)) out[name] = values[name] ?? null;
  return out;
}

/**
 * Terraform's proposed new state, simplified: configured values win; computed attributes the
 * configuration leaves null keep their prior value (recursively in single nested attributes).
 */
export function proposedNew(attributes: Attributes, prior: Rec | null, config: Rec): Rec {
  const out = newRecord<CtyValue>();
  for (const [name, a] of Object.entries(attributes)) {
    const c = config[name] ?? null;
    const p = prior ? (prior[name] ?? null) : null;
    if (a.computed && c === null) out[name] = p;
    else if (a.nested?.nesting === "single" && isRecord(c)) {
      out[name] = proposedNew(a.nested.attributes, isRecord(p) ? (p as Rec) : null, c as Rec);
    } else if (a.nested?.nesting === "list" && Array.isArray(c)) {
      out[name] = c.map((el, i) =>
        isRecord(el)
          ? proposedNew(
              a.nested!.attributes,
              Array.isArray(p) && isRecord(p[i]) ? (p[i] as Rec) : null,
              el as Rec,
            )
          : el,
      );
    } else out[name] = c;
  }
  return out;
}

/** Result of a harness call: the decoded value and the diagnostics. */
export interface HarnessResult<T> {
  value: T;
  diags: Diagnostic[];
}

/** Drives a provider definition in memory. */
export function createHarness<P>(def: AnyProviderDefinition<P>) {
  const service: ProviderService = createProviderService(def);
  const schemaOf = (typeName: string): Schema => {
    const r =
      def.resources.find((x) => x.typeName === typeName) ??
      def.dataSources.find((x) => x.typeName === typeName);
    if (!r) throw new Error(`no type ${typeName}`);
    return r.schema;
  };
  const identitySchemaOf = (typeName: string): IdentitySchema | undefined =>
    def.resources.find((x) => x.typeName === typeName)?.identity?.schema;
  /** The identity a response carries, decoded; null when there is none. */
  const identity = (typeName: string, out: proto.ResourceIdentityDataOut | null | undefined): Rec | null => {
    const schema = identitySchemaOf(typeName);
    if (!schema || !out?.identity_data?.msgpack?.length) return null;
    const value = decodeMsgpack(out.identity_data.msgpack, schema.type);
    return isRecord(value) ? (value as Rec) : null;
  };
  const listSchemaOf = (typeName: string): Schema => {
    const l = def.listResources?.find((x) => x.typeName === typeName);
    if (!l) throw new Error(`no list resource ${typeName}`);
    return l.schema;
  };
  const actionSchemaOf = (typeName: string): Schema => {
    const a = def.actions?.find((x) => x.typeName === typeName);
    if (!a) throw new Error(`no action ${typeName}`);
    return a.schema;
  };
  const ephemeralSchemaOf = (typeName: string): Schema => {
    const e = def.ephemeralResources?.find((x) => x.typeName === typeName);
    if (!e) throw new Error(`no ephemeral type ${typeName}`);
    return e.schema;
  };
  return {
    service,
    /** ConfigureProvider with the given provider block values. */
    async configure(config: Readonly<Record<string, CtyValue>>, terraformVersion = "1.11.4") {
      const res = await service.ConfigureProvider({
        terraform_version: terraformVersion,
        config: dv(fullObject(def.schema, config), def.schema),
        client_capabilities: CAPS,
      });
      return fromProtoDiagnostics(res.diagnostics);
    },
    /** ValidateResourceConfig. */
    async validate(typeName: string, config: Readonly<Record<string, CtyValue>>) {
      const schema = schemaOf(typeName);
      const res = await service.ValidateResourceConfig({
        type_name: typeName,
        config: dv(fullObject(schema, config), schema),
        client_capabilities: CAPS,
      });
      return fromProtoDiagnostics(res.diagnostics);
    },
    /** PlanResourceChange; config null plans a destroy. `priorPrivate` is the state's private data. */
    async plan(
      typeName: string,
      prior: Rec | null,
      config: Readonly<Record<string, CtyValue>> | null,
      priorPrivate: Buffer = EMPTY,
    ) {
      const schema = schemaOf(typeName);
      const full = config ? fullObject(schema, config) : null;
      const proposed = full ? proposedNew(schema.attributes, prior, full) : null;
      const res = await service.PlanResourceChange({
        type_name: typeName,
        prior_state: dv(prior, schema),
        proposed_new_state: dv(proposed, schema),
        config: dv(full, schema),
        prior_private: priorPrivate,
        provider_meta: null,
        client_capabilities: CAPS,
      });
      return {
        planned: read(res.planned_state, schema),
        requiresReplace: (res.requires_replace ?? []).map((p) =>
          p.steps.map((s) =>
            "attribute_name" in s
              ? s.attribute_name
              : "element_key_string" in s
                ? s.element_key_string
                : s.element_key_int,
          ),
        ),
        diags: fromProtoDiagnostics(res.diagnostics),
        /** The planned private data, for `apply`. */
        private: res.planned_private ?? EMPTY,
        identity: identity(typeName, res.planned_identity),
        raw: res,
      };
    },
    /** ApplyResourceChange; planned null applies a destroy. `plannedPrivate` comes from `plan`. */
    async apply(
      typeName: string,
      prior: Rec | null,
      planned: Rec | null,
      config: Readonly<Record<string, CtyValue>> | null,
      plannedPrivate: Buffer = EMPTY,
    ) {
      const schema = schemaOf(typeName);
      const res = await service.ApplyResourceChange({
        type_name: typeName,
        prior_state: dv(prior, schema),
        planned_state: dv(planned, schema),
        config: dv(config ? fullObject(schema, config) : null, schema),
        planned_private: plannedPrivate,
        provider_meta: null,
      });
      return {
        value: read(res.new_state, schema),
        diags: fromProtoDiagnostics(res.diagnostics),
        private: res.private ?? EMPTY,
        identity: identity(typeName, res.new_identity),
        raw: res,
      };
    },
    /** ReadResource, with the state's private data and (Terraform 1.12+) its stored identity. */
    async read(typeName: string, state: Rec, priv: Buffer = EMPTY, currentIdentity?: Rec) {
      const schema = schemaOf(typeName);
      const ids = identitySchemaOf(typeName);
      const res = await service.ReadResource({
        type_name: typeName,
        current_state: dv(state, schema),
        private: priv,
        provider_meta: null,
        client_capabilities: CAPS,
        ...(currentIdentity && ids
          ? {
              current_identity: {
                identity_data: { msgpack: encodeMsgpack(currentIdentity, ids.type), json: EMPTY },
              },
            }
          : {}),
      });
      return {
        value: read(res.new_state, schema),
        diags: fromProtoDiagnostics(res.diagnostics),
        private: res.private ?? EMPTY,
        identity: identity(typeName, res.new_identity),
      };
    },
    /** ImportResourceState by id, or (Terraform 1.12+) by an identity; returns the first imported object. */
    async import(typeName: string, id: string | Readonly<Record<string, CtyValue>>) {
      const schema = schemaOf(typeName);
      const ids = identitySchemaOf(typeName);
      const byIdentity = typeof id !== "string";
      if (byIdentity && !ids) throw new Error(`${typeName} has no identity`);
      const res = await service.ImportResourceState({
        type_name: typeName,
        id: byIdentity ? "" : id,
        client_capabilities: CAPS,
        ...(byIdentity && ids
          ? {
              identity: {
                identity_data: {
                  msgpack: encodeMsgpack(
                    Object.fromEntries(Object.keys(ids.attributes).map((k) => [k, id[k] ?? null])),
                    ids.type,
                  ),
                  json: EMPTY,
                },
              },
            }
          : {}),
      });
      return {
        value: read(res.imported_resources?.[0]?.state, schema),
        diags: fromProtoDiagnostics(res.diagnostics),
        private: res.imported_resources?.[0]?.private ?? EMPTY,
        identity: identity(typeName, res.imported_resources?.[0]?.identity),
      };
    },
    /** ListResource: every event, each decoded (identity, display name, object), and the diagnostics. */
    async list(
      typeName: string,
      config: Readonly<Record<string, CtyValue>>,
      opts: { includeResource?: boolean; limit?: number } = {},
    ) {
      const listSchema = listSchemaOf(typeName);
      const schema = schemaOf(typeName);
      const events: proto.ListResource.Event[] = [];
      await service.ListResource(
        {
          type_name: typeName,
          config: dv(fullObject(listSchema, config), listSchema),
          include_resource_object: opts.includeResource ?? false,
          limit: opts.limit ?? 100,
        },
        { signal: new AbortController().signal, send: async (e) => void events.push(e) },
      );
      return {
        found: events
          .filter((e) => e.identity)
          .map((e) => ({
            displayName: e.display_name ?? "",
            identity: identity(typeName, e.identity),
            object: e.resource_object ? read(e.resource_object, schema) : null,
          })),
        diags: fromProtoDiagnostics(events.flatMap((e) => e.diagnostic ?? [])),
        events,
      };
    },
    /** GenerateResourceConfig from a state (null: none sent). */
    async generateConfig(typeName: string, state: Rec | null) {
      const schema = schemaOf(typeName);
      const res = await service.GenerateResourceConfig({ type_name: typeName, state: dv(state, schema) });
      return { value: read(res.config, schema), diags: fromProtoDiagnostics(res.diagnostics) };
    },
    /** PlanAction. */
    async planAction(typeName: string, config: Readonly<Record<string, CtyValue>>) {
      const schema = actionSchemaOf(typeName);
      const res = await service.PlanAction({
        action_type: typeName,
        config: dv(fullObject(schema, config), schema),
        client_capabilities: CAPS,
      });
      return fromProtoDiagnostics(res.diagnostics);
    },
    /** InvokeAction: the progress messages and the completion's diagnostics. */
    async invoke(typeName: string, config: Readonly<Record<string, CtyValue>>, signal?: AbortSignal) {
      const schema = actionSchemaOf(typeName);
      const progress: string[] = [];
      let completed: Diagnostic[] | undefined;
      await service.InvokeAction(
        { action_type: typeName, config: dv(fullObject(schema, config), schema), client_capabilities: CAPS },
        {
          signal: signal ?? new AbortController().signal,
          send: async (e) => {
            if (e.progress) progress.push(e.progress.message);
            else completed = fromProtoDiagnostics(e.completed.diagnostics);
          },
        },
      );
      return { progress, diags: completed ?? [] };
    },
    /** UpgradeResourceState from stored JSON text. */
    async upgrade(typeName: string, version: number, json: string) {
      const schema = schemaOf(typeName);
      const res = await service.UpgradeResourceState({
        type_name: typeName,
        version,
        raw_state: { json: Buffer.from(json), flatmap: {} },
      });
      return { value: read(res.upgraded_state, schema), diags: fromProtoDiagnostics(res.diagnostics) };
    },
    /** ReadDataSource. */
    async readData(typeName: string, config: Readonly<Record<string, CtyValue>>) {
      const schema = schemaOf(typeName);
      const res = await service.ReadDataSource({
        type_name: typeName,
        config: dv(fullObject(schema, config), schema),
        provider_meta: null,
        client_capabilities: CAPS,
      });
      return { value: read(res.state, schema), diags: fromProtoDiagnostics(res.diagnostics) };
    },
    /** OpenEphemeralResource: the result and the private data Close needs. */
    async open(typeName: string, config: Readonly<Record<string, CtyValue>>) {
      const schema = ephemeralSchemaOf(typeName);
      const res = await service.OpenEphemeralResource({
        type_name: typeName,
        config: dv(fullObject(schema, config), schema),
        client_capabilities: CAPS,
      });
      return {
        value: read(res.result, schema),
        private: res.private ?? EMPTY,
        renewAt: res.renew_at ?? null,
        diags: fromProtoDiagnostics(res.diagnostics),
      };
    },
    /** CloseEphemeralResource with the private data Open returned. */
    async close(typeName: string, priv: Buffer) {
      const res = await service.CloseEphemeralResource({ type_name: typeName, private: priv });
      return fromProtoDiagnostics(res.diagnostics);
    },
  };
}
