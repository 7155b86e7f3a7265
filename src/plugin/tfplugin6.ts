// TypeScript shapes of the tfplugin6 messages the provider uses (protocol 6.11).
//
// Field names are the snake_case names of Terraform's tfplugin6.proto, because the server loads the
// .proto with @grpc/proto-loader using
//   { keepCase: true, longs: Number, enums: Number, bytes: Buffer, defaults: true, oneofs: true }.
// With those options a decoded request has every scalar field present (empty string, 0, false,
// empty Buffer), repeated fields as arrays, maps as plain objects, int64 as number, enums as numbers
// and unset sub-messages as null. Request interfaces are therefore written with every field present.
// Response interfaces mark fields optional: the encoder fills omitted fields with their defaults, and
// a handler only sets what it means. Request fields added in 6.9-6.11 are optional, so the types hold
// whichever minor the .proto was taken from; nothing relies on them.

/** Diagnostic severity: 0 is INVALID and Terraform treats it as neither error nor warning. */
export const Severity = { INVALID: 0, ERROR: 1, WARNING: 2 } as const;
/** One of the Severity values. */
export type Severity = (typeof Severity)[keyof typeof Severity];

/** How a description string is formatted. */
export const StringKind = { PLAIN: 0, MARKDOWN: 1 } as const;
/** One of the StringKind values. */
export type StringKind = (typeof StringKind)[keyof typeof StringKind];

/** Nesting mode of a nested attribute type (Schema.Object.NestingMode). */
export const ObjectNesting = { INVALID: 0, SINGLE: 1, LIST: 2, SET: 3, MAP: 4 } as const;
/** One of the ObjectNesting values. */
export type ObjectNesting = (typeof ObjectNesting)[keyof typeof ObjectNesting];

/** Nesting mode of a nested block (Schema.NestedBlock.NestingMode). */
export const BlockNesting = { INVALID: 0, SINGLE: 1, LIST: 2, SET: 3, MAP: 4, GROUP: 5 } as const;
/** One of the BlockNesting values. */
export type BlockNesting = (typeof BlockNesting)[keyof typeof BlockNesting];

/** Why a change was deferred (Deferred.Reason). */
export const DeferredReason = {
  UNKNOWN: 0,
  RESOURCE_CONFIG_UNKNOWN: 1,
  PROVIDER_CONFIG_UNKNOWN: 2,
  ABSENT_PREREQ: 3,
} as const;
/** One of the DeferredReason values. */
export type DeferredReason = (typeof DeferredReason)[keyof typeof DeferredReason];

// ---------------------------------------------------------------------------------------------
// Shared messages

/** A value in cty's msgpack (preferred) or JSON encoding; empty bytes in both mean null. */
export interface DynamicValue {
  msgpack: Buffer;
  json: Buffer;
}

/** A DynamicValue as a response may give it (one encoding is enough). */
export interface DynamicValueOut {
  msgpack?: Buffer;
  json?: Buffer;
}

/** One step of an attribute path; `selector` names the oneof member that is set. */
export type AttributePathStep =
  | { selector: "attribute_name"; attribute_name: string }
  | { selector: "element_key_string"; element_key_string: string }
  | { selector: "element_key_int"; element_key_int: number };

/** Path to an attribute or element inside a value. */
export interface AttributePath {
  steps: AttributePathStep[];
}

/** A step as a response may give it: one oneof member set, `selector` optional. */
export type AttributePathStepOut =
  | { selector?: "attribute_name"; attribute_name: string }
  | { selector?: "element_key_string"; element_key_string: string }
  | { selector?: "element_key_int"; element_key_int: number };

/** An attribute path as a response may give it. */
export interface AttributePathOut {
  steps: AttributePathStepOut[];
}

/** A warning or error reported to Terraform. */
export interface Diagnostic {
  severity: Severity;
  summary: string;
  detail: string;
  attribute: AttributePath | null;
}

/** A diagnostic as a response may give it. */
export interface DiagnosticOut {
  severity: Severity;
  summary: string;
  detail?: string;
  attribute?: AttributePathOut | null;
}

/** Stored state as JSON (current form) or legacy flatmap. */
export interface RawState {
  json: Buffer;
  flatmap: Record<string, string>;
}

/** A resource's identity (6.9+): a value of its identity schema's object type. */
export interface ResourceIdentityData {
  identity_data: DynamicValue | null;
}

/** Identity data as a response gives it. */
export interface ResourceIdentityDataOut {
  identity_data: DynamicValueOut | null;
}

/** Capabilities the provider advertises. */
export interface ServerCapabilities {
  plan_destroy?: boolean;
  get_provider_schema_optional?: boolean;
  move_resource_state?: boolean;
  generate_resource_config?: boolean;
}

/** Capabilities the CLI advertises; 6.11 fields may be missing from older .proto files. */
export interface ClientCapabilities {
  deferral_allowed: boolean;
  write_only_attributes_allowed: boolean;
  store_planned_private?: boolean;
  computed_blocks_allowed?: boolean;
}

/** A deferral of the change until more is known. */
export interface Deferred {
  reason: DeferredReason;
}

// ---------------------------------------------------------------------------------------------
// Schema

/** One attribute of a block or nested object; exactly one of `type` (cty type JSON) or `nested_type`. */
export interface SchemaAttribute {
  name: string;
  type?: Buffer;
  nested_type?: SchemaObject | null;
  description?: string;
  required?: boolean;
  optional?: boolean;
  computed?: boolean;
  sensitive?: boolean;
  description_kind?: StringKind;
  deprecated?: boolean;
  write_only?: boolean;
  deprecation_message?: string;
}

/** A nested attribute type: the attributes of each element and how elements nest. */
export interface SchemaObject {
  attributes: SchemaAttribute[];
  nesting: ObjectNesting;
}

/** A nested block type of a block. */
export interface SchemaNestedBlock {
  type_name: string;
  block: SchemaBlock;
  nesting: BlockNesting;
  min_items?: number;
  max_items?: number;
}

/** A configuration block: attributes plus nested block types. */
export interface SchemaBlock {
  version?: number;
  attributes: SchemaAttribute[];
  block_types: SchemaNestedBlock[];
  description?: string;
  description_kind?: StringKind;
  deprecated?: boolean;
  deprecation_message?: string;
  computed?: boolean;
}

/** A versioned schema of a provider, resource or data source. */
export interface Schema {
  version: number;
  block: SchemaBlock;
}

/** One attribute of a resource identity schema. */
export interface ResourceIdentitySchemaAttribute {
  name: string;
  type: Buffer;
  required_for_import?: boolean;
  optional_for_import?: boolean;
  description?: string;
}

/** A resource identity schema. */
export interface ResourceIdentitySchema {
  version: number;
  identity_attributes: ResourceIdentitySchemaAttribute[];
}

/** The schema of an action (6.10+). */
export interface ActionSchema {
  schema: Schema;
}

// ---------------------------------------------------------------------------------------------
// RPC messages. Each RPC has a namespace with Request and Response, like the .proto.

/** GetMetadata RPC (never called by Terraform core; kept for completeness). */
export namespace GetMetadata {
  /** Request of GetMetadata. */
  export type Request = Record<string, never>;
  /** Response of GetMetadata. */
  export interface Response {
    server_capabilities?: ServerCapabilities | null;
    diagnostics?: DiagnosticOut[];
    data_sources?: { type_name: string }[];
    resources?: { type_name: string }[];
    functions?: { name: string }[];
    ephemeral_resources?: { type_name: string }[];
    list_resources?: { type_name: string }[];
    actions?: { type_name: string }[];
  }
}

/** GetProviderSchema RPC. */
export namespace GetProviderSchema {
  /** Request of GetProviderSchema. */
  export type Request = Record<string, never>;
  /** Response of GetProviderSchema. */
  export interface Response {
    provider: Schema;
    resource_schemas: Record<string, Schema>;
    data_source_schemas: Record<string, Schema>;
    diagnostics?: DiagnosticOut[];
    provider_meta?: Schema | null;
    server_capabilities?: ServerCapabilities | null;
    functions?: Record<string, never>;
    ephemeral_resource_schemas?: Record<string, Schema>;
    list_resource_schemas?: Record<string, Schema>;
    action_schemas?: Record<string, ActionSchema>;
  }
}

/** GetResourceIdentitySchemas RPC (called by Terraform >= 1.12 inside every schema load). */
export namespace GetResourceIdentitySchemas {
  /** Request of GetResourceIdentitySchemas. */
  export type Request = Record<string, never>;
  /** Response of GetResourceIdentitySchemas. */
  export interface Response {
    identity_schemas?: Record<string, ResourceIdentitySchema>;
    diagnostics?: DiagnosticOut[];
  }
}

/** UpgradeResourceIdentity RPC: a stored identity of an older identity version (6.9+). */
export namespace UpgradeResourceIdentity {
  /** Request of UpgradeResourceIdentity; `version` is the identity version recorded in state. */
  export interface Request {
    type_name: string;
    version: number;
    raw_identity: RawState | null;
  }
  /** Response of UpgradeResourceIdentity: the identity as a value of the current identity schema. */
  export interface Response {
    upgraded_identity?: ResourceIdentityDataOut | null;
    diagnostics?: DiagnosticOut[];
  }
}

/** ValidateProviderConfig RPC. */
export namespace ValidateProviderConfig {
  /** Request of ValidateProviderConfig. */
  export interface Request {
    config: DynamicValue | null;
  }
  /** Response of ValidateProviderConfig (diagnostics is field 2 on the wire). */
  export interface Response {
    diagnostics?: DiagnosticOut[];
  }
}

/** ValidateResourceConfig RPC. */
export namespace ValidateResourceConfig {
  /** Request of ValidateResourceConfig. */
  export interface Request {
    type_name: string;
    config: DynamicValue | null;
    client_capabilities: ClientCapabilities | null;
  }
  /** Response of ValidateResourceConfig. */
  export interface Response {
    diagnostics?: DiagnosticOut[];
  }
}

/** ValidateDataResourceConfig RPC. */
export namespace ValidateDataResourceConfig {
  /** Request of ValidateDataResourceConfig. */
  export interface Request {
    type_name: string;
    config: DynamicValue | null;
  }
  /** Response of ValidateDataResourceConfig. */
  export interface Response {
    diagnostics?: DiagnosticOut[];
  }
}

/** UpgradeResourceState RPC. */
export namespace UpgradeResourceState {
  /** Request of UpgradeResourceState; `version` is the schema version recorded in state. */
  export interface Request {
    type_name: string;
    version: number;
    raw_state: RawState | null;
  }
  /** Response of UpgradeResourceState: the state as a full object of the current schema. */
  export interface Response {
    upgraded_state?: DynamicValueOut | null;
    diagnostics?: DiagnosticOut[];
  }
}

/** ConfigureProvider RPC. */
export namespace ConfigureProvider {
  /** Request of ConfigureProvider. */
  export interface Request {
    terraform_version: string;
    config: DynamicValue | null;
    client_capabilities: ClientCapabilities | null;
  }
  /** Response of ConfigureProvider. */
  export interface Response {
    diagnostics?: DiagnosticOut[];
  }
}

/** ReadResource RPC. */
export namespace ReadResource {
  /** Request of ReadResource. */
  export interface Request {
    type_name: string;
    current_state: DynamicValue | null;
    private: Buffer;
    provider_meta: DynamicValue | null;
    client_capabilities: ClientCapabilities | null;
    current_identity?: ResourceIdentityData | null;
  }
  /** Response of ReadResource; a null new_state means the remote object is gone. */
  export interface Response {
    new_state?: DynamicValueOut | null;
    diagnostics?: DiagnosticOut[];
    private?: Buffer;
    deferred?: Deferred | null;
    new_identity?: ResourceIdentityDataOut | null;
  }
}

/** PlanResourceChange RPC. */
export namespace PlanResourceChange {
  /** Request of PlanResourceChange; prior_state is null on create, proposed_new_state null on destroy. */
  export interface Request {
    type_name: string;
    prior_state: DynamicValue | null;
    proposed_new_state: DynamicValue | null;
    config: DynamicValue | null;
    prior_private: Buffer;
    provider_meta: DynamicValue | null;
    client_capabilities: ClientCapabilities | null;
    prior_identity?: ResourceIdentityData | null;
    planned_private?: Buffer;
  }
  /** Response of PlanResourceChange; legacy_type_system must stay false. */
  export interface Response {
    planned_state?: DynamicValueOut | null;
    requires_replace?: AttributePathOut[];
    planned_private?: Buffer;
    diagnostics?: DiagnosticOut[];
    legacy_type_system?: boolean;
    deferred?: Deferred | null;
    planned_identity?: ResourceIdentityDataOut | null;
  }
}

/** ApplyResourceChange RPC. */
export namespace ApplyResourceChange {
  /** Request of ApplyResourceChange; planned_state and config are null on destroy. */
  export interface Request {
    type_name: string;
    prior_state: DynamicValue | null;
    planned_state: DynamicValue | null;
    config: DynamicValue | null;
    planned_private: Buffer;
    provider_meta: DynamicValue | null;
    planned_identity?: ResourceIdentityData | null;
  }
  /** Response of ApplyResourceChange; errors with a non-null new_state after create taint it. */
  export interface Response {
    new_state?: DynamicValueOut | null;
    private?: Buffer;
    diagnostics?: DiagnosticOut[];
    legacy_type_system?: boolean;
    new_identity?: ResourceIdentityDataOut | null;
  }
}

/** ImportResourceState RPC. */
export namespace ImportResourceState {
  /** Request of ImportResourceState. */
  export interface Request {
    type_name: string;
    id: string;
    client_capabilities: ClientCapabilities | null;
    identity?: ResourceIdentityData | null;
  }
  /** One imported object; its state may be partial (only what ReadResource needs). */
  export interface ImportedResource {
    type_name: string;
    state: DynamicValueOut | null;
    private?: Buffer;
    identity?: ResourceIdentityDataOut | null;
  }
  /** Response of ImportResourceState. */
  export interface Response {
    imported_resources?: ImportedResource[];
    diagnostics?: DiagnosticOut[];
    deferred?: Deferred | null;
  }
}

/** ReadDataSource RPC. */
export namespace ReadDataSource {
  /** Request of ReadDataSource; the config is wholly known. */
  export interface Request {
    type_name: string;
    config: DynamicValue | null;
    provider_meta: DynamicValue | null;
    client_capabilities: ClientCapabilities | null;
  }
  /** Response of ReadDataSource. */
  export interface Response {
    state?: DynamicValueOut | null;
    diagnostics?: DiagnosticOut[];
    deferred?: Deferred | null;
  }
}

/** GenerateResourceConfig RPC (6.10+): configuration a user can keep, from a resource's state. */
export namespace GenerateResourceConfig {
  /** Request of GenerateResourceConfig; the state is null when the query did not ask for objects. */
  export interface Request {
    type_name: string;
    state: DynamicValue | null;
  }
  /** Response of GenerateResourceConfig: a value of the resource's schema type, as configuration. */
  export interface Response {
    config?: DynamicValueOut | null;
    diagnostics?: DiagnosticOut[];
  }
}

/** A point in time (google.protobuf.Timestamp): seconds since the Unix epoch and nanoseconds. */
export interface Timestamp {
  seconds: number;
  nanos: number;
}

/** ValidateEphemeralResourceConfig RPC (Terraform 1.10+). */
export namespace ValidateEphemeralResourceConfig {
  /** Request of ValidateEphemeralResourceConfig; the config may hold unknown values. */
  export interface Request {
    type_name: string;
    config: DynamicValue | null;
  }
  /** Response of ValidateEphemeralResourceConfig. */
  export interface Response {
    diagnostics?: DiagnosticOut[];
  }
}

/** OpenEphemeralResource RPC: makes the value of one ephemeral resource for this run. */
export namespace OpenEphemeralResource {
  /** Request of OpenEphemeralResource; the config is wholly known unless deferral is allowed. */
  export interface Request {
    type_name: string;
    config: DynamicValue | null;
    client_capabilities: ClientCapabilities | null;
  }
  /** Response of OpenEphemeralResource; `private` comes back on Renew and Close. */
  export interface Response {
    diagnostics?: DiagnosticOut[];
    renew_at?: Timestamp | null;
    result?: DynamicValueOut | null;
    private?: Buffer | null;
    deferred?: Deferred | null;
  }
}

/** RenewEphemeralResource RPC: called at renew_at while the value is still in use. */
export namespace RenewEphemeralResource {
  /** Request of RenewEphemeralResource. */
  export interface Request {
    type_name: string;
    private?: Buffer | null;
  }
  /** Response of RenewEphemeralResource. */
  export interface Response {
    diagnostics?: DiagnosticOut[];
    renew_at?: Timestamp | null;
    private?: Buffer | null;
  }
}

/** CloseEphemeralResource RPC: the run is done with the value. */
export namespace CloseEphemeralResource {
  /** Request of CloseEphemeralResource; `private` is what Open (or the last Renew) returned. */
  export interface Request {
    type_name: string;
    private?: Buffer | null;
  }
  /** Response of CloseEphemeralResource. */
  export interface Response {
    diagnostics?: DiagnosticOut[];
  }
}

/** ValidateListResourceConfig RPC (6.10+). */
export namespace ValidateListResourceConfig {
  /** Request of ValidateListResourceConfig: the `config` block of a list block, possibly with unknowns. */
  export interface Request {
    type_name: string;
    config: DynamicValue | null;
    include_resource_object: DynamicValue | null;
    limit: DynamicValue | null;
  }
  /** Response of ValidateListResourceConfig. */
  export interface Response {
    diagnostics?: DiagnosticOut[];
  }
}

/** ListResource RPC (6.10+): a server stream of the objects a list block finds. */
export namespace ListResource {
  /** Request of ListResource; the config is wholly known. */
  export interface Request {
    type_name: string;
    config: DynamicValue | null;
    include_resource_object: boolean;
    limit: number;
  }
  /** One object found (with its identity), or diagnostics (then the identity may be absent). */
  export interface Event {
    identity?: ResourceIdentityDataOut | null;
    display_name?: string;
    resource_object?: DynamicValueOut | null;
    /** Singular on the wire, as in the .proto. */
    diagnostic?: DiagnosticOut[];
  }
}

/** ValidateActionConfig RPC (6.10+). */
export namespace ValidateActionConfig {
  /** Request of ValidateActionConfig; the config may hold unknown values. */
  export interface Request {
    type_name: string;
    config: DynamicValue | null;
  }
  /** Response of ValidateActionConfig. */
  export interface Response {
    diagnostics?: DiagnosticOut[];
  }
}

/** PlanAction RPC (6.10+): checks an action before it is invoked. */
export namespace PlanAction {
  /** Request of PlanAction; the config may hold unknown values. */
  export interface Request {
    action_type: string;
    config: DynamicValue | null;
    client_capabilities: ClientCapabilities | null;
  }
  /** Response of PlanAction. */
  export interface Response {
    diagnostics?: DiagnosticOut[];
    deferred?: Deferred | null;
  }
}

/** InvokeAction RPC (6.10+): a server stream of progress messages ending with a completion. */
export namespace InvokeAction {
  /** Request of InvokeAction; the config is wholly known. */
  export interface Request {
    action_type: string;
    config: DynamicValue | null;
    client_capabilities: ClientCapabilities | null;
  }
  /** One event: a progress message or the completion with its diagnostics. */
  export type Event =
    | { progress: { message: string }; completed?: undefined }
    | { completed: { diagnostics?: DiagnosticOut[] }; progress?: undefined };
}

/**
 * Where a server-streaming RPC writes its events. The transport encodes each one as it is sent;
 * `send` resolves when the transport can take more, so a slow reader slows the producer.
 */
export interface EventStream<E> {
  /** Sends one event; after the call ended (cancelled by the client) it does nothing. */
  send(event: E): Promise<void>;
  /** Aborted when the client cancels the call: Terraform stops reading once it has its limit. */
  readonly signal: AbortSignal;
}

/** StopProvider RPC. */
export namespace StopProvider {
  /** Request of StopProvider. */
  export type Request = Record<string, never>;
  /** Response of StopProvider; a non-empty Error (capital E, as in the .proto) means the stop failed. */
  export interface Response {
    Error?: string;
  }
}

/** The tfplugin6.Provider methods the provider implements, named as in the .proto. */
export interface ProviderService {
  GetMetadata(req: GetMetadata.Request): Promise<GetMetadata.Response>;
  GetProviderSchema(req: GetProviderSchema.Request): Promise<GetProviderSchema.Response>;
  GetResourceIdentitySchemas(
    req: GetResourceIdentitySchemas.Request,
  ): Promise<GetResourceIdentitySchemas.Response>;
  ValidateProviderConfig(req: ValidateProviderConfig.Request): Promise<ValidateProviderConfig.Response>;
  ValidateResourceConfig(req: ValidateResourceConfig.Request): Promise<ValidateResourceConfig.Response>;
  ValidateDataResourceConfig(
    req: ValidateDataResourceConfig.Request,
  ): Promise<ValidateDataResourceConfig.Response>;
  UpgradeResourceState(req: UpgradeResourceState.Request): Promise<UpgradeResourceState.Response>;
  ConfigureProvider(req: ConfigureProvider.Request): Promise<ConfigureProvider.Response>;
  ReadResource(req: ReadResource.Request): Promise<ReadResource.Response>;
  PlanResourceChange(req: PlanResourceChange.Request): Promise<PlanResourceChange.Response>;
  ApplyResourceChange(req: ApplyResourceChange.Request): Promise<ApplyResourceChange.Response>;
  ImportResourceState(req: ImportResourceState.Request): Promise<ImportResourceState.Response>;
  ReadDataSource(req: ReadDataSource.Request): Promise<ReadDataSource.Response>;
  ValidateEphemeralResourceConfig(
    req: ValidateEphemeralResourceConfig.Request,
  ): Promise<ValidateEphemeralResourceConfig.Response>;
  OpenEphemeralResource(req: OpenEphemeralResource.Request): Promise<OpenEphemeralResource.Response>;
  RenewEphemeralResource(req: RenewEphemeralResource.Request): Promise<RenewEphemeralResource.Response>;
  CloseEphemeralResource(req: CloseEphemeralResource.Request): Promise<CloseEphemeralResource.Response>;
  StopProvider(req: StopProvider.Request): Promise<StopProvider.Response>;
  // Protocol 6.9 and 6.10 RPCs: a service without them answers UNIMPLEMENTED, which Terraform
  // reads as "no such feature" for the identity RPCs and refuses for the others.
  UpgradeResourceIdentity?(req: UpgradeResourceIdentity.Request): Promise<UpgradeResourceIdentity.Response>;
  GenerateResourceConfig?(req: GenerateResourceConfig.Request): Promise<GenerateResourceConfig.Response>;
  ValidateListResourceConfig?(
    req: ValidateListResourceConfig.Request,
  ): Promise<ValidateListResourceConfig.Response>;
  ListResource?(req: ListResource.Request, stream: EventStream<ListResource.Event>): Promise<void>;
  ValidateActionConfig?(req: ValidateActionConfig.Request): Promise<ValidateActionConfig.Response>;
  PlanAction?(req: PlanAction.Request): Promise<PlanAction.Response>;
  InvokeAction?(req: InvokeAction.Request, stream: EventStream<InvokeAction.Event>): Promise<void>;
  /**
   * Not an RPC: closes the ephemeral resources Terraform opened and never closed (it skips their
   * close after an error or a Ctrl-C), called when the provider process or session ends.
   */
  closeOpenEphemeralResources?(): Promise<void>;
}
