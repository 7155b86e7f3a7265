// The service that answers Terraform's RPCs for a provider definition: it registers the
// definitions by type name, builds the record every RPC shares (rpc/core.ts) and hands each RPC to
// its own module under rpc/, as one named function `(core, request) => response`. Nothing here or
// there throws to the transport: every failure becomes an error diagnostic.
import { setMaxListeners } from "node:events";
import type * as proto from "../plugin/tfplugin6";
import type { AnyProviderDefinition } from "./definitions";
import type { Diagnostic } from "./diagnostics";
import { invokeAction } from "./rpc/action/invoke-action";
import { planAction } from "./rpc/action/plan-action";
import { validateActionConfig } from "./rpc/action/validate-action-config";
import {
  type LooseAction,
  type LooseDataSource,
  type LooseEphemeral,
  type LooseListResource,
  type LooseProvider,
  type LooseResource,
  SERVER_CAPABILITIES,
  type ServerCore,
  type ServiceLog,
} from "./rpc/core";
import { readDataSource } from "./rpc/data/read-data-source";
import { validateDataResourceConfig } from "./rpc/data/validate-data-resource-config";
import {
  closeEphemeralResource,
  closeOpenEphemeralResources,
} from "./rpc/ephemeral/close-ephemeral-resource";
import { EPHEMERAL_MIN_TERRAFORM, openEphemeralResource } from "./rpc/ephemeral/open-ephemeral-resource";
import { renewEphemeralResource } from "./rpc/ephemeral/renew-ephemeral-resource";
import { validateEphemeralResourceConfig } from "./rpc/ephemeral/validate-ephemeral-resource-config";
import { getResourceIdentitySchemas } from "./rpc/identity-list/get-resource-identity-schemas";
import { listResource } from "./rpc/identity-list/list-resource";
import { upgradeResourceIdentity } from "./rpc/identity-list/upgrade-resource-identity";
import { validateListResourceConfig } from "./rpc/identity-list/validate-list-resource-config";
import { configureProvider } from "./rpc/provider/configure-provider";
import { getMetadata } from "./rpc/provider/get-metadata";
import { getProviderSchema } from "./rpc/provider/get-provider-schema";
import { stopAll, stopProvider } from "./rpc/provider/stop-provider";
import { validateProviderConfig } from "./rpc/provider/validate-provider-config";
import { applyResourceChange } from "./rpc/resource/apply-resource-change";
import { generateResourceConfig } from "./rpc/resource/generate-resource-config";
import { importResourceState } from "./rpc/resource/import-resource-state";
import { planResourceChange } from "./rpc/resource/plan-resource-change";
import { readResource } from "./rpc/resource/read-resource";
import { upgradeResourceState } from "./rpc/resource/upgrade-resource-state";
import { validateResourceConfig } from "./rpc/resource/validate-resource-config";
import { checkNoWriteOnly } from "./schema";

export { olderThan } from "./rpc/values";
export { EPHEMERAL_MIN_TERRAFORM, SERVER_CAPABILITIES };

/** Options of the service. */
export interface ProviderServiceOptions {
  /** Receives failures the framework turned into diagnostics (for the provider's log). */
  log?: ServiceLog;
}

/** One async method per tfplugin6 RPC, plus `stop()` to abort in-flight work from outside. */
export interface ProviderService
  extends Required<Omit<proto.ProviderService, "closeOpenEphemeralResources">> {
  /** Aborts every in-flight and future handler signal (what StopProvider does). */
  stop(): void;
  /** Closes every ephemeral resource opened and not closed (at shutdown); never throws. */
  closeOpenEphemeralResources(): Promise<void>;
}

const NAME = /^[a-z0-9_]+$/;

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
  const listResources = new Map<string, LooseListResource<P>>();
  const actions = new Map<string, LooseAction<P>>();
  for (const l of def.listResources ?? []) {
    register(listResources, l as unknown as LooseListResource<P>);
    // A list finds objects of the managed resource type of its name, and names them by identity.
    if (!resources.get(l.typeName)?.identity)
      throw new Error(`list resource "${l.typeName}" needs a managed resource of that type with an identity`);
  }
  for (const a of def.actions ?? []) register(actions, a as unknown as LooseAction<P>);
  // Terraform stores neither provider configuration nor data source results as write-only, and an
  // ephemeral resource's whole value is ephemeral already.
  checkNoWriteOnly(def.schema, "the provider schema");
  for (const d of dataSources.values()) checkNoWriteOnly(d.schema, `data source ${d.typeName}`);
  for (const e of ephemerals.values()) checkNoWriteOnly(e.schema, `ephemeral resource ${e.typeName}`);
  for (const l of listResources.values()) checkNoWriteOnly(l.schema, `list resource ${l.typeName}`);
  for (const a of actions.values()) checkNoWriteOnly(a.schema, `action ${a.typeName}`);

  const stopper = new AbortController();
  // Every request in flight listens on it (the client links each call to it), so more than ten
  // listeners at once is the normal case under Terraform's parallelism, not a leak.
  setMaxListeners(0, stopper.signal);
  const core: ServerCore<P> = {
    provider: def,
    resources,
    dataSources,
    ephemerals,
    listResources,
    actions,
    stopper,
    log: options.log,
    providerData: undefined,
    clientVersion: "",
    opened: new Map(),
  };

  return {
    stop: () => stopAll(core),
    closeOpenEphemeralResources: () => closeOpenEphemeralResources(core),
    GetMetadata: (req) => getMetadata(core, req),
    GetProviderSchema: (req) => getProviderSchema(core, req),
    GetResourceIdentitySchemas: (req) => getResourceIdentitySchemas(core, req),
    ValidateProviderConfig: (req) => validateProviderConfig(core, req),
    ValidateResourceConfig: (req) => validateResourceConfig(core, req),
    ValidateDataResourceConfig: (req) => validateDataResourceConfig(core, req),
    UpgradeResourceState: (req) => upgradeResourceState(core, req),
    ConfigureProvider: (req) => configureProvider(core, req),
    ReadResource: (req) => readResource(core, req),
    PlanResourceChange: (req) => planResourceChange(core, req),
    ApplyResourceChange: (req) => applyResourceChange(core, req),
    ImportResourceState: (req) => importResourceState(core, req),
    ReadDataSource: (req) => readDataSource(core, req),
    ValidateEphemeralResourceConfig: (req) => validateEphemeralResourceConfig(core, req),
    OpenEphemeralResource: (req) => openEphemeralResource(core, req),
    RenewEphemeralResource: (req) => renewEphemeralResource(core, req),
    CloseEphemeralResource: (req) => closeEphemeralResource(core, req),
    UpgradeResourceIdentity: (req) => upgradeResourceIdentity(core, req),
    GenerateResourceConfig: (req) => generateResourceConfig(core, req),
    ValidateListResourceConfig: (req) => validateListResourceConfig(core, req),
    ListResource: (req, stream) => listResource(core, req, stream),
    ValidateActionConfig: (req) => validateActionConfig(core, req),
    PlanAction: (req) => planAction(core, req),
    InvokeAction: (req, stream) => invokeAction(core, req, stream),
    StopProvider: (req) => stopProvider(core, req),
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
