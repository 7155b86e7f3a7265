// The framework side of every tfplugin6 RPC: decode values with the schema's type, validate, call
// the definition's handlers, check and encode the result. Nothing here throws to the transport:
// every failure becomes an error diagnostic.
import { setMaxListeners } from "node:events";
import {
  type CtyValue,
  decodeJson,
  decodeJsonUntyped,
  encodeMsgpack,
  fromDynamicValue,
  isWhollyKnown,
  newRecord,
} from "../plugin/cty";
import type * as proto from "../plugin/tfplugin6";
import type {
  AnyDataSourceDefinition,
  AnyEphemeralResourceDefinition,
  AnyProviderDefinition,
  AnyResourceDefinition,
  ConfigureContext,
  HandlerContext,
  ValidateContext,
} from "./definitions";
import {
  type Diagnostic,
  Diagnostics,
  errorDiagnostic,
  formatPath,
  type Path,
  toProtoDiagnostic,
  toProtoPath,
} from "./diagnostics";
import { checkPlan, nullUnknowns, planChange } from "./plan";
import {
  asRec,
  checkApplied,
  compose,
  olderThan,
  type Rec,
  runValidators,
  timeoutFor,
  toTimestamp,
} from "./rpc/values";
import { checkNoWriteOnly, type Schema, type TimeoutOperation, toProtoSchema } from "./schema";
import { nullWriteOnly, writeOnlyValuePaths } from "./write-only";

export { olderThan };

/** The capabilities this provider advertises. */
export const SERVER_CAPABILITIES: proto.ServerCapabilities = {
  plan_destroy: false,
  get_provider_schema_optional: true,
};

/** Options of the service. */
export interface ProviderServiceOptions {
  /** Receives failures the framework turned into diagnostics (for the provider's log). */
  log?: (level: "debug" | "warn" | "error", message: string, fields?: Record<string, unknown>) => void;
}

/** One async method per tfplugin6 RPC, plus `stop()` to abort in-flight work from outside. */
export interface ProviderService extends proto.ProviderService {
  /** Aborts every in-flight and future handler signal (what StopProvider does). */
  stop(): void;
  /** Closes every ephemeral resource opened and not closed (at shutdown); never throws. */
  closeOpenEphemeralResources(): Promise<void>;
}

const NAME = /^[a-z0-9_]+$/;

// Inside the service, values are checked against the schema's cty type at runtime, so handlers are
// called through these untyped views of the definitions (the typed views are for their authors).
type Handler<P> = (req: unknown, ctx: HandlerContext<P>) => Promise<unknown>;
interface LooseResource<P> {
  readonly typeName: string;
  readonly schema: Schema;
  readonly description?: string;
  readonly create: Handler<P>;
  readonly read: Handler<P>;
  readonly update: Handler<P>;
  readonly delete: Handler<P>;
  readonly importState?: Handler<P>;
  readonly modifyPlan?: (req: unknown, ctx: HandlerContext<P>) => unknown;
  readonly validateConfig?: (req: unknown, ctx: ValidateContext) => unknown;
  readonly upgradeState?: Readonly<
    Record<number, { readonly priorSchema?: Schema; upgrade(prior: Rec, ctx: ValidateContext): unknown }>
  >;
}
interface LooseDataSource<P> {
  readonly typeName: string;
  readonly schema: Schema;
  readonly description?: string;
  readonly read: Handler<P>;
  readonly validateConfig?: (req: unknown, ctx: ValidateContext) => unknown;
}
interface LooseEphemeral<P> {
  readonly typeName: string;
  readonly schema: Schema;
  readonly description?: string;
  readonly open: (req: unknown, ctx: HandlerContext<P>) => Promise<LooseOpenResult>;
  readonly renew?: (
    req: { private: Buffer },
    ctx: HandlerContext<P>,
  ) => Promise<{ private?: Buffer; renewAt?: Date }>;
  readonly close?: (req: { private: Buffer }, ctx: HandlerContext<P>) => Promise<void>;
  readonly validateConfig?: (req: unknown, ctx: ValidateContext) => unknown;
}
interface LooseOpenResult {
  readonly result?: unknown;
  readonly private?: Buffer;
  readonly renewAt?: Date;
}
interface LooseProvider<P> {
  readonly typeName: string;
  readonly schema: Schema;
  configure(req: unknown, ctx: ConfigureContext): Promise<P>;
  readonly validateConfig?: (req: unknown, ctx: ValidateContext) => unknown;
  readonly resources: readonly AnyResourceDefinition<P>[];
  readonly dataSources: readonly AnyDataSourceDefinition<P>[];
  readonly ephemeralResources?: readonly AnyEphemeralResourceDefinition<P>[];
}

/** The first Terraform release with ephemeral resources (protocol 6.7). */
export const EPHEMERAL_MIN_TERRAFORM = "1.10.0";

/** How long a close may take: Terraform's stop does not cut it short, this does. */
const CLOSE_TIMEOUT_MS = 60_000;

function out(diags: Diagnostics): proto.DiagnosticOut[] {
  return diags.items.map(toProtoDiagnostic);
}

/** Builds the service that answers Terraform's RPCs for a provider definition. */
export function createProviderService<P>(
  definition: AnyProviderDefinition<P>,
  options: ProviderServiceOptions = {},
): ProviderService {
  const def = definition as unknown as LooseProvider<P>;
  const resources = new Map<string, LooseResource<P>>();
  const dataSources = new Map<string, LooseDataSource<P>>();
  const ephemerals = new Map<string, LooseEphemeral<P>>();
  const register = <D extends { typeName: string }>(into: Map<string, D>, d: D) => {
    if (
      !NAME.test(d.typeName) ||
      !(d.typeName === def.typeName || d.typeName.startsWith(`${def.typeName}_`))
    ) {
      throw new Error(`type name "${d.typeName}" must match ${NAME} and start with "${def.typeName}_"`);
    }
    if (into.has(d.typeName)) throw new Error(`type name "${d.typeName}" is defined twice`);
    into.set(d.typeName, d);
  };
  for (const r of def.resources) register(resources, r as unknown as LooseResource<P>);
  for (const d of def.dataSources) register(dataSources, d as unknown as LooseDataSource<P>);
  for (const e of def.ephemeralResources ?? []) register(ephemerals, e as unknown as LooseEphemeral<P>);
  // Terraform stores neither provider configuration nor data source results as write-only, and an
  // ephemeral resource's whole value is ephemeral already.
  checkNoWriteOnly(def.schema, "the provider schema");
  for (const d of dataSources.values()) checkNoWriteOnly(d.schema, `data source ${d.typeName}`);
  for (const e of ephemerals.values()) checkNoWriteOnly(e.schema, `ephemeral resource ${e.typeName}`);

  const stopper = new AbortController();
  // Every request in flight listens on it (the client links each call to it), so more than ten
  // listeners at once is the normal case under Terraform's parallelism, not a leak.
  setMaxListeners(0, stopper.signal);
  let providerData: { value: P } | undefined;
  // The CLI's version, from ConfigureProvider: what an ephemeral resource's refusal names.
  let clientVersion = "";
  // Ephemeral resources opened and not closed yet, by type and private data (what Close names).
  // Terraform skips the close of every ephemeral resource downstream of an error (a failed apply, a
  // Ctrl-C), and ends the provider process after the walk: what is left here then is closed at
  // shutdown (closeOpenEphemeralResources), so that a run's key never outlives a failed run.
  const opened = new Map<string, { typeName: string; private: Buffer }>();
  const openedKey = (typeName: string, priv: Buffer) => `${typeName}\0${priv.toString("base64")}`;

  const closeEphemeral = async (e: LooseEphemeral<P>, priv: Buffer, diags: Diagnostics) => {
    if (!e.close) return;
    if (!providerData)
      throw new Error("the provider is not configured (ConfigureProvider was not called or failed)");
    // Not the stop signal: after a Ctrl-C, what was opened is still closed.
    const ctx: HandlerContext<P> = {
      diags,
      providerData: providerData.value,
      signal: AbortSignal.timeout(CLOSE_TIMEOUT_MS),
      timeoutMs: CLOSE_TIMEOUT_MS,
    };
    await e.close({ private: priv }, ctx);
  };

  const fail = (diags: Diagnostics, what: string, err: unknown) => {
    options.log?.("error", `${what} failed`, {
      error: err instanceof Error ? (err.stack ?? err.message) : String(err),
    });
    diags.add(errorDiagnostic(`${what} failed`, err));
  };

  const context = (diags: Diagnostics, timeoutMs: number | undefined): HandlerContext<P> => {
    if (!providerData)
      throw new Error("the provider is not configured (ConfigureProvider was not called or failed)");
    const signal = timeoutMs
      ? AbortSignal.any([stopper.signal, AbortSignal.timeout(timeoutMs)])
      : stopper.signal;
    return { diags, providerData: providerData.value, signal, timeoutMs };
  };

  const ephemeralFor = (typeName: string, diags: Diagnostics) => {
    const e = ephemerals.get(typeName);
    if (!e)
      diags.addError(
        "Unknown ephemeral resource type",
        `This provider has no ephemeral resource type "${typeName}".`,
      );
    return e;
  };

  const resourceFor = (typeName: string, diags: Diagnostics) => {
    const r = resources.get(typeName);
    if (!r) diags.addError("Unknown resource type", `This provider has no resource type "${typeName}".`);
    return r;
  };

  /** Encodes a resource value, turning an encoding failure into a diagnostic and a null value. */
  const encode = (
    schema: Schema,
    value: CtyValue,
    diags: Diagnostics,
    what: string,
  ): proto.DynamicValueOut => {
    try {
      return { msgpack: encodeMsgpack(value, schema.type) };
    } catch (err) {
      // Null only the attributes that do not fit their type, so an id that did fit is still saved.
      const rec = asRec(value);
      if (rec) {
        const kept = newRecord<CtyValue>();
        for (const [name, a] of Object.entries(schema.attributes)) {
          try {
            encodeMsgpack(rec[name] ?? null, a.type);
            kept[name] = rec[name] ?? null;
          } catch (inner) {
            diags.addAttributeError(
              [{ attribute: name }],
              "Invalid value",
              `${what}: ${inner instanceof Error ? inner.message : String(inner)}`,
            );
            kept[name] = null;
          }
        }
        try {
          return { msgpack: encodeMsgpack(kept, schema.type) };
        } catch {
          // fall through to the null answer below
        }
      }
      fail(diags, what, err);
      return { msgpack: encodeMsgpack(null, schema.type) };
    }
  };

  /** Finishes a handler's state: laid over `base`, write-only nulled, leftover unknowns reported. */
  const finish = (
    schema: Schema,
    base: Rec | null,
    result: unknown,
    diags: Diagnostics,
    what: string,
  ): Rec => {
    const composed = nullWriteOnly(schema.attributes, compose(schema, base, result, diags));
    const { value, paths } = nullUnknowns(composed, schema.type);
    if (paths.length > 0 && !diags.hasErrors()) {
      diags.addError(
        `${what} left values unknown`,
        `These attributes must be known after ${what}: ${paths.map(formatPath).join(", ")}.`,
      );
    }
    return value as Rec;
  };

  const validate = async (
    d: { schema: Schema; validateConfig?: (req: unknown, ctx: ValidateContext) => unknown } | undefined,
    config: proto.DynamicValue | null,
    diags: Diagnostics,
  ) => {
    if (!d) return;
    const value = asRec(fromDynamicValue(config, d.schema.type));
    if (!value) return;
    runValidators(d.schema.attributes, value, [], diags, true);
    await d.validateConfig?.({ config: value }, { diags });
  };

  return {
    stop() {
      stopper.abort(new Error("the provider was asked to stop"));
    },

    async closeOpenEphemeralResources() {
      const left = [...opened.values()];
      opened.clear();
      await Promise.all(
        left.map(async (o) => {
          const e = ephemerals.get(o.typeName);
          const diags = new Diagnostics();
          try {
            if (e) await closeEphemeral(e, o.private, diags);
          } catch (err) {
            diags.add(errorDiagnostic(`Closing ${o.typeName} failed`, err));
          }
          for (const d of diags.items) {
            options.log?.(d.severity === "error" ? "error" : "warn", `closing ${o.typeName} at shutdown`, {
              summary: d.summary,
              detail: d.detail,
            });
          }
        }),
      );
    },

    async GetMetadata() {
      return {
        server_capabilities: SERVER_CAPABILITIES,
        diagnostics: [],
        resources: [...resources.keys()].map((type_name) => ({ type_name })),
        data_sources: [...dataSources.keys()].map((type_name) => ({ type_name })),
        ephemeral_resources: [...ephemerals.keys()].map((type_name) => ({ type_name })),
      };
    },

    async GetProviderSchema() {
      const diags = new Diagnostics();
      const resource_schemas: Record<string, proto.Schema> = {};
      const data_source_schemas: Record<string, proto.Schema> = {};
      const ephemeral_resource_schemas: Record<string, proto.Schema> = {};
      try {
        for (const [name, r] of resources) {
          const s = toProtoSchema(r.schema);
          if (r.description) s.block.description = r.description;
          resource_schemas[name] = s;
        }
        for (const [name, d] of dataSources) {
          const s = toProtoSchema(d.schema);
          if (d.description) s.block.description = d.description;
          data_source_schemas[name] = s;
        }
        for (const [name, e] of ephemerals) {
          const s = toProtoSchema(e.schema);
          if (e.description) s.block.description = e.description;
          ephemeral_resource_schemas[name] = s;
        }
      } catch (err) {
        fail(diags, "Building the schema", err);
      }
      return {
        provider: toProtoSchema(def.schema),
        resource_schemas,
        data_source_schemas,
        ephemeral_resource_schemas,
        diagnostics: out(diags),
        server_capabilities: SERVER_CAPABILITIES,
      };
    },

    async GetResourceIdentitySchemas() {
      return { identity_schemas: {}, diagnostics: [] };
    },

    async ValidateProviderConfig(req) {
      const diags = new Diagnostics();
      try {
        await validate(def, req.config, diags);
      } catch (err) {
        fail(diags, "Validating the provider configuration", err);
      }
      return { diagnostics: out(diags) };
    },

    async ValidateResourceConfig(req) {
      const diags = new Diagnostics();
      try {
        const r = resourceFor(req.type_name, diags);
        await validate(r, req.config, diags);
        // Write-only values need a client that knows not to store them (Terraform >= 1.11); an
        // older one does not even send the capability, and would keep the value in plan and state.
        if (r && !req.client_capabilities?.write_only_attributes_allowed) {
          const config = asRec(fromDynamicValue(req.config, r.schema.type));
          for (const at of config ? writeOnlyValuePaths(r.schema.attributes, config) : []) {
            diags.addAttributeError(
              at,
              "Write-only attribute not supported",
              `${formatPath(at)} is a write-only argument, which needs Terraform 1.11 or later: this Terraform cannot send a value without storing it in the plan and state. Upgrade Terraform to 1.11 or later, or leave ${formatPath(at)} unset (see the resource's documentation for an argument that works with older versions).`,
            );
          }
        }
      } catch (err) {
        fail(diags, `Validating ${req.type_name}`, err);
      }
      return { diagnostics: out(diags) };
    },

    async ValidateDataResourceConfig(req) {
      const diags = new Diagnostics();
      try {
        const d = dataSources.get(req.type_name);
        if (!d) diags.addError("Unknown data source", `This provider has no data source "${req.type_name}".`);
        await validate(d, req.config, diags);
      } catch (err) {
        fail(diags, `Validating ${req.type_name}`, err);
      }
      return { diagnostics: out(diags) };
    },

    async UpgradeResourceState(req) {
      const diags = new Diagnostics();
      const r = resourceFor(req.type_name, diags);
      if (!r) return { diagnostics: out(diags) };
      try {
        const raw = req.raw_state?.json ?? Buffer.alloc(0);
        if (raw.length === 0) {
          if (Object.keys(req.raw_state?.flatmap ?? {}).length > 0) {
            diags.addError(
              "Unsupported state format",
              "State in the pre-0.12 flatmap format cannot be upgraded.",
            );
            return { diagnostics: out(diags) };
          }
          return {
            upgraded_state: encode(r.schema, null, diags, "Upgrading state"),
            diagnostics: out(diags),
          };
        }
        const current = r.schema.version;
        let value: Rec;
        if (req.version === current) {
          value = compose(
            r.schema,
            asRec(decodeJson(raw, r.schema.type, { ignoreUndefinedAttributes: true })),
            null,
          );
        } else if (req.version > current) {
          diags.addError(
            "State from a newer provider",
            `The state of ${req.type_name} has schema version ${req.version}, but this provider only knows up to ${current}. Use a newer provider version.`,
          );
          return { diagnostics: out(diags) };
        } else {
          const upgrader = r.upgradeState?.[req.version];
          if (!upgrader) {
            diags.addError(
              "Cannot upgrade state",
              `The state of ${req.type_name} has schema version ${req.version}, and this provider cannot upgrade it to version ${current}.`,
            );
            return { diagnostics: out(diags) };
          }
          const prior = upgrader.priorSchema
            ? decodeJson(raw, upgrader.priorSchema.type, { ignoreUndefinedAttributes: true })
            : decodeJsonUntyped(raw);
          const upgraded = await upgrader.upgrade(asRec(prior) ?? newRecord(), { diags });
          value = compose(r.schema, null, upgraded);
        }
        const done = finish(r.schema, null, value, diags, "upgrading state");
        return { upgraded_state: encode(r.schema, done, diags, "Upgrading state"), diagnostics: out(diags) };
      } catch (err) {
        fail(diags, `Upgrading the state of ${req.type_name}`, err);
        return { diagnostics: out(diags) };
      }
    },

    async ConfigureProvider(req) {
      const diags = new Diagnostics();
      clientVersion = req.terraform_version;
      try {
        const config =
          asRec(fromDynamicValue(req.config, def.schema.type)) ?? compose(def.schema, null, null);
        runValidators(def.schema.attributes, config, [], diags, true);
        if (diags.hasErrors()) return { diagnostics: out(diags) };
        // Unknown values reach configure as Unknown; the definition decides (usually: report the
        // attribute, or fall back to the environment). The framework never crashes on them.
        const value = await def.configure(
          { config: config, terraformVersion: req.terraform_version },
          { diags, signal: stopper.signal },
        );
        if (!diags.hasErrors()) providerData = { value };
      } catch (err) {
        fail(diags, "Configuring the provider", err);
      }
      return { diagnostics: out(diags) };
    },

    async ReadResource(req) {
      const diags = new Diagnostics();
      const r = resourceFor(req.type_name, diags);
      if (!r) return { diagnostics: out(diags) };
      try {
        const state = asRec(fromDynamicValue(req.current_state, r.schema.type));
        if (!state) return { new_state: encode(r.schema, null, diags, "Reading"), diagnostics: out(diags) };
        const ctx = context(diags, timeoutFor(r.schema, state, "read", diags));
        const request = { state: state, private: req.private ?? Buffer.alloc(0) };
        const result = await r.read(request, ctx);
        if (result === null) {
          return {
            new_state: encode(r.schema, null, diags, "Reading"),
            diagnostics: out(diags),
            private: req.private,
          };
        }
        const next = finish(r.schema, state, result, diags, "read");
        return {
          new_state: encode(r.schema, next, diags, "Reading"),
          diagnostics: out(diags),
          private: request.private,
        };
      } catch (err) {
        fail(diags, `Reading ${req.type_name}`, err);
        // Keeping the current state means a failed refresh never loses track of the object.
        return { new_state: req.current_state, diagnostics: out(diags), private: req.private };
      }
    },

    async PlanResourceChange(req) {
      const diags = new Diagnostics();
      const r = resourceFor(req.type_name, diags);
      if (!r) return { diagnostics: out(diags) };
      try {
        const type = r.schema.type;
        const prior = asRec(fromDynamicValue(req.prior_state, type));
        const proposed = fromDynamicValue(req.proposed_new_state, type);
        const config = asRec(fromDynamicValue(req.config, type));
        const priorPrivate = prior ? (req.prior_private ?? Buffer.alloc(0)) : Buffer.alloc(0);
        const change = planChange(r.schema, prior, proposed, config, priorPrivate);
        let plannedPrivate = priorPrivate;
        if (change.planned && r.modifyPlan) {
          const plan = change.planned;
          const request = {
            plan,
            config: config ?? compose(r.schema, null, null),
            state: prior,
            private: priorPrivate,
            requiresReplace(at: Path) {
              if (prior) change.requiresReplace.push(at);
            },
          };
          await r.modifyPlan(request, context(diags, undefined));
          change.planned = compose(r.schema, plan, request.plan);
          plannedPrivate = request.private;
        }
        if (change.planned) {
          change.planned = nullWriteOnly(r.schema.attributes, change.planned);
          checkPlan(r.schema, change.planned, config, diags);
        }
        if (diags.hasErrors()) return { diagnostics: out(diags) };
        return {
          planned_state: encode(r.schema, change.planned, diags, "Planning"),
          requires_replace: change.requiresReplace.map(toProtoPath),
          planned_private: plannedPrivate,
          diagnostics: out(diags),
        };
      } catch (err) {
        fail(diags, `Planning ${req.type_name}`, err);
        return { diagnostics: out(diags) };
      }
    },

    async ApplyResourceChange(req) {
      const diags = new Diagnostics();
      const r = resourceFor(req.type_name, diags);
      if (!r) return { diagnostics: out(diags) };
      const type = r.schema.type;
      let prior: Rec | null = null;
      let planned: Rec | null = null;
      try {
        prior = asRec(fromDynamicValue(req.prior_state, type));
        planned = asRec(fromDynamicValue(req.planned_state, type));
        const config = asRec(fromDynamicValue(req.config, type));
        if (!planned) {
          if (prior) {
            await r.delete({ state: prior }, context(diags, timeoutFor(r.schema, prior, "delete", diags)));
          }
          // A failed delete keeps the object in state so it can be retried.
          const next = diags.hasErrors() ? prior : null;
          return { new_state: encode(r.schema, next, diags, "Deleting"), diagnostics: out(diags) };
        }
        const op: TimeoutOperation = prior ? "update" : "create";
        const ctx = context(diags, timeoutFor(r.schema, planned, op, diags));
        const request = {
          plan: planned,
          config: config ?? planned,
          state: prior,
          // A create gets what its plan recorded too (e.g. which object it adopts).
          private: req.planned_private ?? Buffer.alloc(0),
        };
        const result = prior ? await r.update(request, ctx) : await r.create(request, ctx);
        if (result === null || result === undefined) {
          if (!prior && diags.hasErrors()) {
            return { new_state: encode(r.schema, null, diags, "Creating"), diagnostics: out(diags) };
          }
          if (!prior)
            diags.addError(
              "Create returned no state",
              `${req.type_name}: create returned neither state nor error.`,
            );
        }
        const next = finish(r.schema, planned, result ?? null, diags, op);
        if (!diags.hasErrors()) checkApplied(r.schema, planned, next, diags, req.type_name);
        return {
          new_state: encode(r.schema, next, diags, "Applying"),
          private: request.private,
          diagnostics: out(diags),
        };
      } catch (err) {
        fail(diags, `Applying ${req.type_name}`, err);
        // After a throw, what exists is unknown to us; keep the prior object (null on create) and
        // the private data that came with it.
        return {
          new_state: encode(r.schema, prior, diags, "Applying"),
          private: prior ? req.planned_private : Buffer.alloc(0),
          diagnostics: out(diags),
        };
      }
    },

    async ImportResourceState(req) {
      const diags = new Diagnostics();
      const r = resourceFor(req.type_name, diags);
      if (!r) return { diagnostics: out(diags) };
      try {
        let partial: unknown;
        const request = { id: req.id, private: Buffer.alloc(0) };
        if (r.importState) partial = await r.importState(request, context(diags, undefined));
        else if (Object.hasOwn(r.schema.attributes, "id")) partial = { id: req.id };
        else {
          diags.addError("Import not supported", `${req.type_name} cannot be imported.`);
          return { diagnostics: out(diags) };
        }
        if (diags.hasErrors()) return { diagnostics: out(diags) };
        const state = nullWriteOnly(r.schema.attributes, compose(r.schema, null, partial));
        if (!isWhollyKnown(state)) throw new Error("an imported state cannot hold unknown values");
        return {
          imported_resources: [
            {
              type_name: req.type_name,
              state: encode(r.schema, state, diags, "Importing"),
              private: request.private,
            },
          ],
          diagnostics: out(diags),
        };
      } catch (err) {
        fail(diags, `Importing ${req.type_name}`, err);
        return { diagnostics: out(diags) };
      }
    },

    async ReadDataSource(req) {
      const diags = new Diagnostics();
      const d = dataSources.get(req.type_name);
      if (!d) {
        diags.addError("Unknown data source", `This provider has no data source "${req.type_name}".`);
        return { diagnostics: out(diags) };
      }
      try {
        const config = asRec(fromDynamicValue(req.config, d.schema.type)) ?? compose(d.schema, null, null);
        const result = await d.read(
          { config: config },
          context(diags, timeoutFor(d.schema, config, "read", diags)),
        );
        if (diags.hasErrors()) return { diagnostics: out(diags) };
        const next = finish(d.schema, config, result, diags, "read");
        return { state: encode(d.schema, next, diags, "Reading"), diagnostics: out(diags) };
      } catch (err) {
        fail(diags, `Reading ${req.type_name}`, err);
        return { diagnostics: out(diags) };
      }
    },

    async ValidateEphemeralResourceConfig(req) {
      const diags = new Diagnostics();
      try {
        await validate(ephemeralFor(req.type_name, diags), req.config, diags);
      } catch (err) {
        fail(diags, `Validating ${req.type_name}`, err);
      }
      return { diagnostics: out(diags) };
    },

    async OpenEphemeralResource(req) {
      const diags = new Diagnostics();
      const e = ephemeralFor(req.type_name, diags);
      if (!e) return { diagnostics: out(diags) };
      // Only a client that knows ephemeral values keeps this one out of plans and states; one that
      // calls Open anyway while saying it is older is refused, naming both versions.
      if (clientVersion && olderThan(clientVersion, EPHEMERAL_MIN_TERRAFORM)) {
        diags.addError(
          "Ephemeral resources need Terraform 1.10 or later",
          `${req.type_name} is an ephemeral resource, which needs Terraform ${EPHEMERAL_MIN_TERRAFORM} or later (OpenTofu 1.11 or later); this is Terraform ${clientVersion}. Upgrade Terraform, or use the matching resource or data source instead (its values are kept in the state).`,
        );
        return { diagnostics: out(diags) };
      }
      try {
        const config = asRec(fromDynamicValue(req.config, e.schema.type)) ?? compose(e.schema, null, null);
        if (!isWhollyKnown(config)) {
          diags.addError(
            "Ephemeral resource configuration not known",
            `${req.type_name} was opened with values known only after apply; Terraform opens it once they are known.`,
          );
          return { diagnostics: out(diags) };
        }
        runValidators(e.schema.attributes, config, [], diags, true);
        if (diags.hasErrors()) return { diagnostics: out(diags) };
        const result = await e.open({ config }, context(diags, timeoutFor(e.schema, config, "read", diags)));
        // Nothing opened with errors is handed on: Terraform would not close it.
        if (diags.hasErrors()) return { diagnostics: out(diags) };
        const priv = result.private ?? Buffer.alloc(0);
        if (e.close) opened.set(openedKey(req.type_name, priv), { typeName: req.type_name, private: priv });
        const value = finish(e.schema, config, result.result, diags, "open");
        return {
          result: encode(e.schema, value, diags, "Opening"),
          private: priv,
          renew_at: result.renewAt ? toTimestamp(result.renewAt) : null,
          diagnostics: out(diags),
        };
      } catch (err) {
        fail(diags, `Opening ${req.type_name}`, err);
        return { diagnostics: out(diags) };
      }
    },

    async RenewEphemeralResource(req) {
      const diags = new Diagnostics();
      const e = ephemeralFor(req.type_name, diags);
      if (!e) return { diagnostics: out(diags) };
      try {
        if (!e.renew) return { diagnostics: [], private: req.private ?? Buffer.alloc(0) };
        const before = req.private ?? Buffer.alloc(0);
        const renewed = await e.renew({ private: before }, context(diags, undefined));
        if (renewed.private && opened.delete(openedKey(req.type_name, before))) {
          opened.set(openedKey(req.type_name, renewed.private), {
            typeName: req.type_name,
            private: renewed.private,
          });
        }
        return {
          private: renewed.private ?? req.private ?? Buffer.alloc(0),
          renew_at: renewed.renewAt ? toTimestamp(renewed.renewAt) : null,
          diagnostics: out(diags),
        };
      } catch (err) {
        fail(diags, `Renewing ${req.type_name}`, err);
        return { diagnostics: out(diags) };
      }
    },

    async CloseEphemeralResource(req) {
      const diags = new Diagnostics();
      const e = ephemeralFor(req.type_name, diags);
      if (!e?.close) return { diagnostics: out(diags) };
      const priv = req.private ?? Buffer.alloc(0);
      opened.delete(openedKey(req.type_name, priv));
      try {
        await closeEphemeral(e, priv, diags);
      } catch (err) {
        fail(diags, `Closing ${req.type_name}`, err);
      }
      return { diagnostics: out(diags) };
    },

    async StopProvider() {
      stopper.abort(new Error("the provider was asked to stop"));
      return { Error: "" };
    },
  };
}

/** Diagnostics of a response in the framework's shape, for tests and logs. */
export function fromProtoDiagnostics(diags: readonly proto.DiagnosticOut[] | undefined): Diagnostic[] {
  return (diags ?? []).map((d) => ({
    severity: d.severity === 2 ? "warning" : "error",
    summary: d.summary,
    detail: d.detail ?? "",
    path: d.attribute?.steps.map((s) =>
      "attribute_name" in s
        ? { attribute: s.attribute_name }
        : "element_key_string" in s
          ? { key: s.element_key_string }
          : { index: s.element_key_int },
    ),
  }));
}
