// What every RPC of the service shares: the definitions by type name, the provider data once
// ConfigureProvider succeeded, the stop signal, the log, and the ephemeral resources opened and not
// closed; plus the helpers every RPC uses to look a type up, build a handler's context, report a
// failure and encode a value. Each RPC itself lives in a file of its own beside this one.
import { type CtyValue, encodeMsgpack, fromDynamicValue, newRecord } from "../../plugin/cty";
import type * as proto from "../../plugin/tfplugin6";
import type {
  ActionContext,
  AnyActionDefinition,
  AnyDataSourceDefinition,
  AnyEphemeralResourceDefinition,
  AnyListResourceDefinition,
  AnyResourceDefinition,
  ConfigureContext,
  HandlerContext,
  IdentityContext,
  ValidateContext,
} from "../definitions";
import { type Diagnostics, errorDiagnostic, formatPath, toProtoDiagnostic } from "../diagnostics";
import { encodeIdentity, type IdentitySchema, type IdentityValue } from "../identity";
import { nullUnknowns } from "../plan";
import type { Schema } from "../schema";
import { nullWriteOnly } from "../write-only";
import { asRec, compose, type Rec, runValidators } from "./values";

/**
 * The capabilities this provider advertises. `generate_resource_config`: Terraform 1.14+ asks
 * GenerateResourceConfig for the configuration it writes for imported or listed objects, instead
 * of guessing it from the state; clients before 1.14 do not know the field and skip it.
 */
export const SERVER_CAPABILITIES: proto.ServerCapabilities = {
  plan_destroy: false,
  get_provider_schema_optional: true,
  generate_resource_config: true,
};

/** Receives failures the framework turned into diagnostics (for the provider's log). */
export type ServiceLog = (
  level: "debug" | "warn" | "error",
  message: string,
  fields?: Record<string, unknown>,
) => void;

// Inside the service, values are checked against the schema's cty type at runtime, so handlers are
// called through these untyped views of the definitions (the typed views are for their authors).
type Handler<P> = (req: unknown, ctx: HandlerContext<P>) => Promise<unknown>;
/** A resource definition as the service calls it. */
export interface LooseResource<P> {
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
  readonly identity?: LooseIdentity<P>;
  readonly generateConfig?: (req: { state: Rec | null }, ctx: ValidateContext) => unknown;
}
/** A resource's identity as the service calls it. */
export interface LooseIdentity<P> {
  readonly schema: IdentitySchema;
  of(state: Rec, ctx: IdentityContext<P>): IdentityValue;
  importId(identity: IdentityValue, ctx: HandlerContext<P>): string | undefined;
  readonly upgrade?: Readonly<Record<number, (prior: IdentityValue) => Record<string, CtyValue>>>;
}
/** A list resource definition as the service calls it. */
export interface LooseListResource<P> {
  readonly typeName: string;
  readonly schema: Schema;
  readonly description?: string;
  list(
    req: unknown,
    ctx: HandlerContext<P>,
  ): AsyncIterable<{ readonly state: unknown; readonly displayName: string }>;
  readonly validateConfig?: (req: unknown, ctx: ValidateContext) => unknown;
}
/** An action definition as the service calls it. */
export interface LooseAction<P> {
  readonly typeName: string;
  readonly schema: Schema;
  readonly description?: string;
  plan?(req: unknown, ctx: HandlerContext<P>): Promise<void>;
  invoke(req: unknown, ctx: ActionContext<P>): Promise<void>;
  readonly validateConfig?: (req: unknown, ctx: ValidateContext) => unknown;
}
/** A data source definition as the service calls it. */
export interface LooseDataSource<P> {
  readonly typeName: string;
  readonly schema: Schema;
  readonly description?: string;
  readonly read: Handler<P>;
  readonly validateConfig?: (req: unknown, ctx: ValidateContext) => unknown;
}
/** An ephemeral resource definition as the service calls it. */
export interface LooseEphemeral<P> {
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
/** A provider definition as the service calls it. */
export interface LooseProvider<P> {
  readonly typeName: string;
  readonly schema: Schema;
  configure(req: unknown, ctx: ConfigureContext): Promise<P>;
  readonly validateConfig?: (req: unknown, ctx: ValidateContext) => unknown;
  readonly resources: readonly AnyResourceDefinition<P>[];
  readonly dataSources: readonly AnyDataSourceDefinition<P>[];
  readonly ephemeralResources?: readonly AnyEphemeralResourceDefinition<P>[];
  readonly listResources?: readonly AnyListResourceDefinition<P>[];
  readonly actions?: readonly AnyActionDefinition<P>[];
}

/** An ephemeral resource opened and not closed yet. */
export interface OpenedEphemeral {
  readonly typeName: string;
  readonly private: Buffer;
}

/**
 * Everything the RPCs of one service share. The definitions are fixed at registration; the
 * provider data, the client's version and the opened ephemeral resources change as RPCs arrive.
 */
export interface ServerCore<P> {
  readonly provider: LooseProvider<P>;
  readonly resources: ReadonlyMap<string, LooseResource<P>>;
  readonly dataSources: ReadonlyMap<string, LooseDataSource<P>>;
  readonly ephemerals: ReadonlyMap<string, LooseEphemeral<P>>;
  readonly listResources: ReadonlyMap<string, LooseListResource<P>>;
  readonly actions: ReadonlyMap<string, LooseAction<P>>;
  /** Aborted by StopProvider; every handler signal follows it. */
  readonly stopper: AbortController;
  readonly log: ServiceLog | undefined;
  /** What the provider's configure returned, once ConfigureProvider succeeded. */
  providerData: { value: P } | undefined;
  /** The CLI's version, from ConfigureProvider: what an ephemeral resource's refusal names. */
  clientVersion: string;
  /**
   * Ephemeral resources opened and not closed yet, by `openedKey` (what Close names). Terraform
   * skips the close of every ephemeral resource downstream of an error (a failed apply, a Ctrl-C),
   * and ends the provider process after the walk: what is left here then is closed at shutdown
   * (closeOpenEphemeralResources), so that a run's key never outlives a failed run.
   */
  readonly opened: Map<string, OpenedEphemeral>;
}

/** The key of an opened ephemeral resource in `ServerCore.opened`. */
export function openedKey(typeName: string, priv: Buffer): string {
  return `${typeName}\0${priv.toString("base64")}`;
}

/** What a provider that was not configured reports when a handler needs its data. */
export function notConfigured(): Error {
  return new Error("the provider is not configured (ConfigureProvider was not called or failed)");
}

/** Logs a failure and reports it as an error diagnostic named `<what> failed`. */
export function fail<P>(core: ServerCore<P>, diags: Diagnostics, what: string, err: unknown): void {
  core.log?.("error", `${what} failed`, {
    error: err instanceof Error ? (err.stack ?? err.message) : String(err),
  });
  diags.add(errorDiagnostic(`${what} failed`, err));
}

/** A handler's context: the provider data and a signal that follows StopProvider and the timeout. */
export function context<P>(
  core: ServerCore<P>,
  diags: Diagnostics,
  timeoutMs: number | undefined,
): HandlerContext<P> {
  if (!core.providerData) throw notConfigured();
  const signal = timeoutMs
    ? AbortSignal.any([core.stopper.signal, AbortSignal.timeout(timeoutMs)])
    : core.stopper.signal;
  return { diags, providerData: core.providerData.value, signal, timeoutMs };
}

/** The resource of a type name, or undefined with an error reported. */
export function resourceFor<P>(
  core: ServerCore<P>,
  typeName: string,
  diags: Diagnostics,
): LooseResource<P> | undefined {
  const r = core.resources.get(typeName);
  if (!r) diags.addError("Unknown resource type", `This provider has no resource type "${typeName}".`);
  return r;
}

/** The ephemeral resource of a type name, or undefined with an error reported. */
export function ephemeralFor<P>(
  core: ServerCore<P>,
  typeName: string,
  diags: Diagnostics,
): LooseEphemeral<P> | undefined {
  const e = core.ephemerals.get(typeName);
  if (!e)
    diags.addError(
      "Unknown ephemeral resource type",
      `This provider has no ephemeral resource type "${typeName}".`,
    );
  return e;
}

/**
 * The identity of the object a state holds, as a response carries it: undefined when the resource
 * has no identity or there is no object. A failure is an error diagnostic, never a wrong identity.
 */
export function identityOut<P>(
  core: ServerCore<P>,
  r: LooseResource<P>,
  state: Rec | null,
  prior: IdentityValue | null,
  diags: Diagnostics,
): proto.ResourceIdentityDataOut | undefined {
  if (!r.identity || !state) return undefined;
  try {
    const value = r.identity.of(state, { providerData: core.providerData?.value, prior });
    return encodeIdentity(r.identity.schema, value);
  } catch (err) {
    fail(core, diags, `The identity of ${r.typeName}`, err);
    return undefined;
  }
}

/** The list resource of a type name, or undefined with an error reported. */
export function listResourceFor<P>(
  core: ServerCore<P>,
  typeName: string,
  diags: Diagnostics,
): LooseListResource<P> | undefined {
  const l = core.listResources.get(typeName);
  if (!l)
    diags.addError("Unknown list resource type", `This provider has no list resource type "${typeName}".`);
  return l;
}

/** The action of a type name, or undefined with an error reported. */
export function actionFor<P>(
  core: ServerCore<P>,
  typeName: string,
  diags: Diagnostics,
): LooseAction<P> | undefined {
  const a = core.actions.get(typeName);
  if (!a) diags.addError("Unknown action type", `This provider has no action type "${typeName}".`);
  return a;
}

/** The diagnostics of a response. */
export function out(diags: Diagnostics): proto.DiagnosticOut[] {
  return diags.items.map(toProtoDiagnostic);
}

/** Encodes a resource value, turning an encoding failure into a diagnostic and a null value. */
export function encode<P>(
  core: ServerCore<P>,
  schema: Schema,
  value: CtyValue,
  diags: Diagnostics,
  what: string,
): proto.DynamicValueOut {
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
    fail(core, diags, what, err);
    return { msgpack: encodeMsgpack(null, schema.type) };
  }
}

/** Finishes a handler's state: laid over `base`, write-only nulled, leftover unknowns reported. */
export function finish(
  schema: Schema,
  base: Rec | null,
  result: unknown,
  diags: Diagnostics,
  what: string,
): Rec {
  const composed = nullWriteOnly(schema.attributes, compose(schema, base, result, diags));
  const { value, paths } = nullUnknowns(composed, schema.type);
  if (paths.length > 0 && !diags.hasErrors()) {
    diags.addError(
      `${what} left values unknown`,
      `These attributes must be known after ${what}: ${paths.map(formatPath).join(", ")}.`,
    );
  }
  return value as Rec;
}

/** Runs the attribute validators and the definition's `validateConfig` on a configuration. */
export async function validate(
  d: { schema: Schema; validateConfig?: (req: unknown, ctx: ValidateContext) => unknown } | undefined,
  config: proto.DynamicValue | null,
  diags: Diagnostics,
): Promise<void> {
  if (!d) return;
  const value = asRec(fromDynamicValue(config, d.schema.type));
  if (!value) return;
  runValidators(d.schema.attributes, value, [], diags, true);
  await d.validateConfig?.({ config: value }, { diags });
}
