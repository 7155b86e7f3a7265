// The shapes of provider, resource and data source definitions. A resource is one object literal
// pinned with `satisfies ResourceDefinition<typeof schema, Client>`, so its handlers are typed from
// its schema.
import type { CtyValue } from "../plugin/cty";
import type { Diagnostics, Path } from "./diagnostics";
import type { IdentitySchema, IdentityValue } from "./identity";
import type { PlanOf, Schema, StateOf } from "./schema";

/** What every lifecycle handler gets besides its request. */
export interface HandlerContext<P> {
  /** Where to report errors and warnings; report, don't throw (a throw becomes one error). */
  readonly diags: Diagnostics;
  /** What the provider's `configure` returned (e.g. the API client). */
  readonly providerData: P;
  /** Aborted when Terraform sends StopProvider (Ctrl-C) or the operation's timeout passes. */
  readonly signal: AbortSignal;
  /** The operation's time limit from the `timeouts` attribute or its default, when the schema has one. */
  readonly timeoutMs: number | undefined;
}

/** Context of validation: runs before the provider is configured, so there is no provider data. */
export interface ValidateContext {
  readonly diags: Diagnostics;
}

/** A state a handler returns: attributes it leaves out keep the planned (or prior) value. */
export type StateResult<S extends Schema> = Partial<StateOf<S>>;

// Private data: bytes Terraform stores with a resource's state and hands back on every later call
// but never shows (see private.ts for a JSON form). A handler that may change it gets it as a
// mutable `private` field of its request; what the field holds when the handler returns is saved.

/** Request of `create`: the plan (computed values unknown) and the configuration. */
export interface CreateRequest<S extends Schema> {
  readonly plan: PlanOf<S>;
  readonly config: PlanOf<S>;
  /** The new object's private data, empty unless the handler sets it. */
  private: Buffer;
}

/** Request of `read`: the current state (after import, possibly only the id) and private data. */
export interface ReadRequest<S extends Schema> {
  readonly state: StateOf<S>;
  /** The private data; kept unless the handler sets it. */
  private: Buffer;
}

/** Request of `update`: the plan, the configuration and the prior state. */
export interface UpdateRequest<S extends Schema> {
  readonly plan: PlanOf<S>;
  readonly config: PlanOf<S>;
  readonly state: StateOf<S>;
  /** The private data as planned; kept unless the handler sets it. */
  private: Buffer;
}

/** Request of `delete`: the prior state. */
export interface DeleteRequest<S extends Schema> {
  readonly state: StateOf<S>;
}

/** Request of `importState`: the id the practitioner gave. */
export interface ImportRequest {
  readonly id: string;
  /** The imported object's private data, empty unless the handler sets it. */
  private: Buffer;
}

/** Request of `modifyPlan`: change `plan` in place; `state` is null on create. */
export interface ModifyPlanRequest<S extends Schema> {
  plan: PlanOf<S>;
  readonly config: PlanOf<S>;
  readonly state: StateOf<S> | null;
  /** The planned private data: the prior private data unless the handler sets it. */
  private: Buffer;
  /** Asks for replacement because of the attribute at this path (ignored on create). */
  requiresReplace(at: Path): void;
}

/** Request of `validateConfig`: the configuration, possibly with unknown values. */
export interface ValidateConfigRequest<S extends Schema> {
  readonly config: PlanOf<S>;
}

/** Upgrades state stored under an older schema version straight to the current one. */
export interface StateUpgrader<S extends Schema> {
  /** The schema of that older version; without it the prior state arrives as untyped JSON values. */
  readonly priorSchema?: Schema;
  /** Returns the state for the current schema; unset attributes become null. */
  upgrade(prior: Record<string, CtyValue>, ctx: ValidateContext): StateResult<S> | Promise<StateResult<S>>;
}

/** What an identity's `of` sees besides the state. */
export interface IdentityContext<P> {
  /** The provider data, once the provider is configured. */
  readonly providerData: P | undefined;
  /** The identity Terraform stored for the object: null from Terraform before 1.12, and on create. */
  readonly prior: IdentityValue | null;
}

/**
 * A resource's identity (Terraform 1.12+): the attributes that name its remote object. Terraform
 * stores it beside the state, imports by it (`import { identity = {...} }`) and `terraform query`
 * lists objects by it; older Terraform versions never see it.
 */
export interface ResourceIdentity<S extends Schema, P> {
  readonly schema: IdentitySchema;
  /** The identity of the object a state holds (after an import, a state with only its id). */
  of(state: StateOf<S>, ctx: IdentityContext<P>): IdentityValue;
  /**
   * The import id of an identity given in an import block: the import then goes on exactly as
   * `terraform import ADDRESS ID` does. Report why an identity cannot be imported in ctx.diags.
   */
  importId(identity: IdentityValue, ctx: HandlerContext<P>): string | undefined;
  /** Upgraders of identities stored under older identity versions, by the version they read. */
  readonly upgrade?: Readonly<Record<number, (prior: IdentityValue) => Record<string, CtyValue>>>;
}

/**
 * Request of `generateConfig`: the object's state, or null when Terraform has none (a query run
 * without `include_resource`, and Terraform 1.14.0, which never sent it).
 */
export interface GenerateConfigRequest<S extends Schema> {
  readonly state: StateOf<S> | null;
}

/** A managed resource type. */
export interface ResourceDefinition<S extends Schema = Schema, P = unknown> {
  /** Full type name, e.g. `gpurental_instance`. */
  readonly typeName: string;
  readonly schema: S;
  /** Markdown description (defaults to the schema's). */
  readonly description?: string;
  /** Creates the object. Return its state; with errors, a returned state is saved and tainted. */
  create(req: CreateRequest<S>, ctx: HandlerContext<P>): Promise<StateResult<S> | null | undefined>;
  /** Refreshes the state; return null when the object is gone. */
  read(req: ReadRequest<S>, ctx: HandlerContext<P>): Promise<StateResult<S> | null>;
  /** Applies an in-place update and returns the new state. */
  update(req: UpdateRequest<S>, ctx: HandlerContext<P>): Promise<StateResult<S> | null | undefined>;
  /** Deletes the object; report errors to keep it in state. */
  delete(req: DeleteRequest<S>, ctx: HandlerContext<P>): Promise<void>;
  /** Turns an import id into a (possibly partial) state that `read` completes. Default: `{ id }`. */
  importState?(req: ImportRequest, ctx: HandlerContext<P>): Promise<StateResult<S>>;
  /** Adjusts the plan after the framework's own planning (computed values, plan modifiers). */
  modifyPlan?(req: ModifyPlanRequest<S>, ctx: HandlerContext<P>): Promise<void> | void;
  /** Checks the configuration beyond per-attribute validators. */
  validateConfig?(req: ValidateConfigRequest<S>, ctx: ValidateContext): Promise<void> | void;
  /** Upgraders by the prior schema version they read. */
  readonly upgradeState?: Readonly<Record<number, StateUpgrader<S>>>;
  /** The resource's identity (Terraform 1.12+); without one Terraform stores none. */
  readonly identity?: ResourceIdentity<S, P>;
  /**
   * Configuration a user can keep for an existing object (GenerateResourceConfig, Terraform
   * 1.14+: `terraform query -generate-config-out` and `plan -generate-config-out`): the values of
   * the arguments to write, computed-only attributes left out. Report problems in ctx.diags.
   * Without it, the framework writes every argument's state value.
   */
  generateConfig?(req: GenerateConfigRequest<S>, ctx: ValidateContext): StateResult<S> | null;
}

/** Request of a data source read: the wholly known configuration. */
export interface DataSourceReadRequest<S extends Schema> {
  readonly config: StateOf<S>;
}

/** A data source type. */
export interface DataSourceDefinition<S extends Schema = Schema, P = unknown> {
  /** Full type name, e.g. `gpurental_offers`. */
  readonly typeName: string;
  readonly schema: S;
  readonly description?: string;
  /** Reads the data; attributes left out keep their configured value. */
  read(req: DataSourceReadRequest<S>, ctx: HandlerContext<P>): Promise<StateResult<S>>;
  validateConfig?(req: ValidateConfigRequest<S>, ctx: ValidateContext): Promise<void> | void;
}

// Ephemeral resources (Terraform 1.10+): a value made for one run and never written to a plan or a
// state. Terraform opens one when the run needs its value, may renew it at the time `open` asked,
// and closes it when everything that used the value is done. What `close` needs (an id to revoke)
// travels in the private data: Terraform keeps it in memory and hands it back, and a close may come
// from another provider process than the open (a plan's, then an apply's).

/** Request of an ephemeral resource's `open`: the wholly known configuration. */
export interface OpenRequest<S extends Schema> {
  readonly config: StateOf<S>;
}

/** What `open` returns: the result, the private data `renew` and `close` get, and when to renew. */
export interface OpenResult<S extends Schema> {
  /** The value; attributes left out keep their configured value. */
  readonly result: StateResult<S>;
  /** Handed back to `renew` and `close`; never shown, never stored. */
  readonly private?: Buffer;
  /** When Terraform should call `renew` if it still needs the value; unset: never. */
  readonly renewAt?: Date;
}

/** Request of `renew` and `close`: the private data `open` (or the last `renew`) returned. */
export interface EphemeralPrivateRequest {
  readonly private: Buffer;
}

/** What `renew` returns. */
export interface RenewResult {
  readonly private?: Buffer;
  readonly renewAt?: Date;
}

/** An ephemeral resource type. */
export interface EphemeralResourceDefinition<S extends Schema = Schema, P = unknown> {
  /** Full type name, e.g. `gpurental_api_key`. */
  readonly typeName: string;
  readonly schema: S;
  readonly description?: string;
  /** Makes the value. With errors, whatever it returned is dropped and `close` is never called. */
  open(req: OpenRequest<S>, ctx: HandlerContext<P>): Promise<OpenResult<S>>;
  /** Extends the value's life; only called when `open` gave a `renewAt`. */
  renew?(req: EphemeralPrivateRequest, ctx: HandlerContext<P>): Promise<RenewResult>;
  /**
   * Ends the value's life. Its signal is not aborted by Terraform's stop (a Ctrl-C still closes
   * what was opened), only by its own time limit.
   */
  close?(req: EphemeralPrivateRequest, ctx: HandlerContext<P>): Promise<void>;
  validateConfig?(req: ValidateConfigRequest<S>, ctx: ValidateContext): Promise<void> | void;
}

// List resources (Terraform 1.14+): `list` blocks of `*.tfquery.hcl` files, run by `terraform
// query`, find existing objects of a managed resource type by filters (the list block's `config`).
// Each object found travels with its identity, from which Terraform writes import blocks.

/** One object a list resource found. */
export interface ListedObject<S extends Schema> {
  /** The object's state as `read` would return it (the framework sends it on request only). */
  readonly state: StateResult<S>;
  /** A short name for people, shown by `terraform query`. */
  readonly displayName: string;
}

/** Request of `list`. */
export interface ListRequest<C extends Schema> {
  /** The list block's `config`, wholly known. */
  readonly config: StateOf<C>;
  /** The most objects Terraform reads (the list block's `limit`); the framework stops there. */
  readonly limit: number;
  /** Whether Terraform asked for the whole objects (`include_resource = true`). */
  readonly includeResource: boolean;
}

/**
 * A list resource: finds objects of the managed resource type of the same name. `list` yields
 * them as it goes (a page at a time from the API); the framework turns each into an event with
 * its identity, and stops pulling at the limit or when Terraform cancels the call.
 */
export interface ListResourceDefinition<C extends Schema = Schema, S extends Schema = Schema, P = unknown> {
  /** The type name, the same as the managed resource type's (e.g. `gpurental_instance`). */
  readonly typeName: string;
  /** The schema of the list block's `config` block: the filters. */
  readonly schema: C;
  readonly description?: string;
  /** Finds the objects; `ctx.signal` aborts when Terraform stops reading. */
  list(req: ListRequest<C>, ctx: HandlerContext<P>): AsyncIterable<ListedObject<S>>;
  /** Checks the filters beyond per-attribute validators; unknown values must be skipped. */
  validateConfig?(req: ValidateConfigRequest<C>, ctx: ValidateContext): Promise<void> | void;
}

// Actions (Terraform 1.14+): operations Terraform runs on request (`terraform apply
// -invoke=action.<type>.<name>`) or on a resource's lifecycle events, outside any state. An action
// streams progress messages while it works and ends with its diagnostics.

/** What an action's `invoke` gets besides its request. */
export interface ActionContext<P> extends HandlerContext<P> {
  /** Streams one progress message; Terraform prints it as it arrives. */
  progress(message: string): Promise<void>;
}

/** Request of an action's `plan` (PlanAction): its configuration, possibly with unknown values. */
export interface ActionPlanRequest<S extends Schema> {
  readonly config: PlanOf<S>;
}

/** Request of an action's `invoke` (InvokeAction): its wholly known configuration. */
export interface ActionInvokeRequest<S extends Schema> {
  readonly config: StateOf<S>;
}

/** An action type. */
export interface ActionDefinition<S extends Schema = Schema, P = unknown> {
  /** Full type name, e.g. `gpurental_instance_power`. */
  readonly typeName: string;
  readonly schema: S;
  readonly description?: string;
  /** Checks before the action runs, with the provider configured (PlanAction). */
  plan?(req: ActionPlanRequest<S>, ctx: HandlerContext<P>): Promise<void>;
  /** Runs the action; report its failure in ctx.diags, which end the invocation. */
  invoke(req: ActionInvokeRequest<S>, ctx: ActionContext<P>): Promise<void>;
  validateConfig?(req: ValidateConfigRequest<S>, ctx: ValidateContext): Promise<void> | void;
}

/** Request of the provider's `configure`. */
export interface ConfigureRequest<S extends Schema> {
  /** The provider block; may hold unknown values (e.g. from resources not yet created). */
  readonly config: PlanOf<S>;
  /** The CLI's version, e.g. "1.11.4". */
  readonly terraformVersion: string;
}

/** Context of `configure`. */
export interface ConfigureContext {
  readonly diags: Diagnostics;
  readonly signal: AbortSignal;
}

/** The provider: its configuration schema, how to configure it, and its resource types. */
export interface ProviderDefinition<S extends Schema = Schema, P = unknown> {
  /** The provider's type name, the prefix of every resource type (e.g. "gpurental"). */
  readonly typeName: string;
  readonly schema: S;
  /** Builds the provider data (the API client) every handler receives. */
  configure(req: ConfigureRequest<S>, ctx: ConfigureContext): Promise<P>;
  validateConfig?(req: ValidateConfigRequest<S>, ctx: ValidateContext): Promise<void> | void;
  readonly resources: readonly AnyResourceDefinition<P>[];
  readonly dataSources: readonly AnyDataSourceDefinition<P>[];
  /** Ephemeral resource types (Terraform 1.10+). */
  readonly ephemeralResources?: readonly AnyEphemeralResourceDefinition<P>[];
  /** List resources (Terraform 1.14+), each named like the managed resource type it lists. */
  readonly listResources?: readonly AnyListResourceDefinition<P>[];
  /** Action types (Terraform 1.14+). */
  readonly actions?: readonly AnyActionDefinition<P>[];
}

// A provider lists resources of different schemas. Comparing each one's typed handlers against a
// general schema is too deep for the compiler, so the list holds this erased shape; any
// ResourceDefinition<S, P> fits it (request parameters are `never`, results `unknown`).

/** Any resource definition for provider data P, whatever its schema. */
export interface AnyResourceDefinition<P> {
  readonly typeName: string;
  readonly schema: Schema;
  readonly description?: string;
  create(req: never, ctx: HandlerContext<P>): Promise<unknown>;
  read(req: never, ctx: HandlerContext<P>): Promise<unknown>;
  update(req: never, ctx: HandlerContext<P>): Promise<unknown>;
  delete(req: never, ctx: HandlerContext<P>): Promise<void>;
  importState?(req: never, ctx: HandlerContext<P>): Promise<unknown>;
  modifyPlan?(req: never, ctx: HandlerContext<P>): unknown;
  validateConfig?(req: never, ctx: ValidateContext): unknown;
  readonly upgradeState?: Readonly<
    Record<number, { readonly priorSchema?: Schema; upgrade(prior: never, ctx: ValidateContext): unknown }>
  >;
  readonly identity?: {
    readonly schema: IdentitySchema;
    of(state: never, ctx: IdentityContext<P>): IdentityValue;
    importId(identity: IdentityValue, ctx: HandlerContext<P>): string | undefined;
    readonly upgrade?: Readonly<Record<number, (prior: IdentityValue) => Record<string, CtyValue>>>;
  };
  generateConfig?(req: never, ctx: ValidateContext): unknown;
}

/** Any list resource definition for provider data P, whatever its schemas. */
export interface AnyListResourceDefinition<P> {
  readonly typeName: string;
  readonly schema: Schema;
  readonly description?: string;
  list(
    req: never,
    ctx: HandlerContext<P>,
  ): AsyncIterable<{ readonly state: unknown; readonly displayName: string }>;
  validateConfig?(req: never, ctx: ValidateContext): unknown;
}

/** Any action definition for provider data P, whatever its schema. */
export interface AnyActionDefinition<P> {
  readonly typeName: string;
  readonly schema: Schema;
  readonly description?: string;
  plan?(req: never, ctx: HandlerContext<P>): Promise<void>;
  invoke(req: never, ctx: ActionContext<P>): Promise<void>;
  validateConfig?(req: never, ctx: ValidateContext): unknown;
}

/** Any data source definition for provider data P, whatever its schema. */
export interface AnyDataSourceDefinition<P> {
  readonly typeName: string;
  readonly schema: Schema;
  readonly description?: string;
  read(req: never, ctx: HandlerContext<P>): Promise<unknown>;
  validateConfig?(req: never, ctx: ValidateContext): unknown;
}

/** Any ephemeral resource definition for provider data P, whatever its schema. */
export interface AnyEphemeralResourceDefinition<P> {
  readonly typeName: string;
  readonly schema: Schema;
  readonly description?: string;
  open(req: never, ctx: HandlerContext<P>): Promise<unknown>;
  renew?(req: EphemeralPrivateRequest, ctx: HandlerContext<P>): Promise<RenewResult>;
  close?(req: EphemeralPrivateRequest, ctx: HandlerContext<P>): Promise<void>;
  validateConfig?(req: never, ctx: ValidateContext): unknown;
}

/** Any provider definition for provider data P, whatever its schema (what the service accepts). */
export interface AnyProviderDefinition<P> {
  readonly typeName: string;
  readonly schema: Schema;
  configure(req: never, ctx: ConfigureContext): Promise<P>;
  validateConfig?(req: never, ctx: ValidateContext): unknown;
  readonly resources: readonly AnyResourceDefinition<P>[];
  readonly dataSources: readonly AnyDataSourceDefinition<P>[];
  readonly ephemeralResources?: readonly AnyEphemeralResourceDefinition<P>[];
  readonly listResources?: readonly AnyListResourceDefinition<P>[];
  readonly actions?: readonly AnyActionDefinition<P>[];
}
