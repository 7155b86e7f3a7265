import { CONVERSION } from "./proto";
import { messageType } from "./proto/reflection";
import type * as tf from "./tfplugin6";

// The TypeScript shapes must match what the transport's decoder yields for each request. Each
// literal below is checked by the compiler against the interface (every field, no extra ones),
// and its keys are compared here with the fields the decoder fills in for an empty message.

const dv = null;
const caps = null;

const requests: Record<string, object> = {
  "tfplugin6.ValidateProviderConfig.Request": {
    config: dv,
  } satisfies Required<tf.ValidateProviderConfig.Request>,
  "tfplugin6.ValidateResourceConfig.Request": {
    type_name: "",
    config: dv,
    client_capabilities: caps,
  } satisfies Required<tf.ValidateResourceConfig.Request>,
  "tfplugin6.ValidateDataResourceConfig.Request": {
    type_name: "",
    config: dv,
  } satisfies Required<tf.ValidateDataResourceConfig.Request>,
  "tfplugin6.UpgradeResourceState.Request": {
    type_name: "",
    version: 0,
    raw_state: null,
  } satisfies Required<tf.UpgradeResourceState.Request>,
  "tfplugin6.ConfigureProvider.Request": {
    terraform_version: "",
    config: dv,
    client_capabilities: caps,
  } satisfies Required<tf.ConfigureProvider.Request>,
  "tfplugin6.ReadResource.Request": {
    type_name: "",
    current_state: dv,
    private: Buffer.alloc(0),
    provider_meta: dv,
    client_capabilities: caps,
    current_identity: null,
  } satisfies Required<tf.ReadResource.Request>,
  "tfplugin6.PlanResourceChange.Request": {
    type_name: "",
    prior_state: dv,
    proposed_new_state: dv,
    config: dv,
    prior_private: Buffer.alloc(0),
    provider_meta: dv,
    client_capabilities: caps,
    prior_identity: null,
    planned_private: Buffer.alloc(0),
  } satisfies Required<tf.PlanResourceChange.Request>,
  "tfplugin6.ApplyResourceChange.Request": {
    type_name: "",
    prior_state: dv,
    planned_state: dv,
    config: dv,
    planned_private: Buffer.alloc(0),
    provider_meta: dv,
    planned_identity: null,
  } satisfies Required<tf.ApplyResourceChange.Request>,
  "tfplugin6.ImportResourceState.Request": {
    type_name: "",
    id: "",
    client_capabilities: caps,
    identity: null,
  } satisfies Required<tf.ImportResourceState.Request>,
  "tfplugin6.ReadDataSource.Request": {
    type_name: "",
    config: dv,
    provider_meta: dv,
    client_capabilities: caps,
  } satisfies Required<tf.ReadDataSource.Request>,
  "tfplugin6.DynamicValue": {
    msgpack: Buffer.alloc(0),
    json: Buffer.alloc(0),
  } satisfies Required<tf.DynamicValue>,
  "tfplugin6.Diagnostic": {
    severity: 0,
    summary: "",
    detail: "",
    attribute: null,
  } satisfies Required<tf.Diagnostic>,
  "tfplugin6.ClientCapabilities": {
    deferral_allowed: false,
    write_only_attributes_allowed: false,
    store_planned_private: false,
    computed_blocks_allowed: false,
  } satisfies Required<tf.ClientCapabilities>,
  "tfplugin6.RawState": { json: Buffer.alloc(0), flatmap: {} } satisfies Required<tf.RawState>,
  "tfplugin6.UpgradeResourceIdentity.Request": {
    type_name: "",
    version: 0,
    raw_identity: null,
  } satisfies Required<tf.UpgradeResourceIdentity.Request>,
  "tfplugin6.GenerateResourceConfig.Request": {
    type_name: "",
    state: dv,
  } satisfies Required<tf.GenerateResourceConfig.Request>,
  "tfplugin6.ValidateListResourceConfig.Request": {
    type_name: "",
    config: dv,
    include_resource_object: dv,
    limit: dv,
  } satisfies Required<tf.ValidateListResourceConfig.Request>,
  "tfplugin6.ListResource.Request": {
    type_name: "",
    config: dv,
    include_resource_object: false,
    limit: 0,
  } satisfies Required<tf.ListResource.Request>,
  "tfplugin6.ValidateActionConfig.Request": {
    type_name: "",
    config: dv,
  } satisfies Required<tf.ValidateActionConfig.Request>,
  "tfplugin6.PlanAction.Request": {
    action_type: "",
    config: dv,
    client_capabilities: caps,
  } satisfies Required<tf.PlanAction.Request>,
  "tfplugin6.InvokeAction.Request": {
    action_type: "",
    config: dv,
    client_capabilities: caps,
  } satisfies Required<tf.InvokeAction.Request>,
};

// Response fields the encoder does not know would be dropped silently, so every field of every
// response interface must be a field of the message.
const responses: Record<string, object> = {
  "tfplugin6.GetProviderSchema.Response": {
    provider: { version: 0, block: { attributes: [], block_types: [] } },
    resource_schemas: {},
    data_source_schemas: {},
    diagnostics: [],
    provider_meta: null,
    server_capabilities: null,
    functions: {},
    ephemeral_resource_schemas: {},
    list_resource_schemas: {},
    action_schemas: {},
  } satisfies Required<tf.GetProviderSchema.Response>,
  "tfplugin6.GetMetadata.Response": {
    server_capabilities: null,
    diagnostics: [],
    data_sources: [],
    resources: [],
    functions: [],
    ephemeral_resources: [],
    list_resources: [],
    actions: [],
  } satisfies Required<tf.GetMetadata.Response>,
  "tfplugin6.GetResourceIdentitySchemas.Response": {
    identity_schemas: {},
    diagnostics: [],
  } satisfies Required<tf.GetResourceIdentitySchemas.Response>,
  "tfplugin6.ValidateProviderConfig.Response": {
    diagnostics: [],
  } satisfies Required<tf.ValidateProviderConfig.Response>,
  "tfplugin6.UpgradeResourceState.Response": {
    upgraded_state: null,
    diagnostics: [],
  } satisfies Required<tf.UpgradeResourceState.Response>,
  "tfplugin6.ReadResource.Response": {
    new_state: null,
    diagnostics: [],
    private: Buffer.alloc(0),
    deferred: null,
    new_identity: null,
  } satisfies Required<tf.ReadResource.Response>,
  "tfplugin6.PlanResourceChange.Response": {
    planned_state: null,
    requires_replace: [],
    planned_private: Buffer.alloc(0),
    diagnostics: [],
    legacy_type_system: false,
    deferred: null,
    planned_identity: null,
  } satisfies Required<tf.PlanResourceChange.Response>,
  "tfplugin6.ApplyResourceChange.Response": {
    new_state: null,
    private: Buffer.alloc(0),
    diagnostics: [],
    legacy_type_system: false,
    new_identity: null,
  } satisfies Required<tf.ApplyResourceChange.Response>,
  "tfplugin6.ImportResourceState.Response": {
    imported_resources: [],
    diagnostics: [],
    deferred: null,
  } satisfies Required<tf.ImportResourceState.Response>,
  "tfplugin6.ImportResourceState.ImportedResource": {
    type_name: "",
    state: null,
    private: Buffer.alloc(0),
    identity: null,
  } satisfies Required<tf.ImportResourceState.ImportedResource>,
  "tfplugin6.ReadDataSource.Response": {
    state: null,
    diagnostics: [],
    deferred: null,
  } satisfies Required<tf.ReadDataSource.Response>,
  "tfplugin6.StopProvider.Response": { Error: "" } satisfies Required<tf.StopProvider.Response>,
  "tfplugin6.UpgradeResourceIdentity.Response": {
    upgraded_identity: null,
    diagnostics: [],
  } satisfies Required<tf.UpgradeResourceIdentity.Response>,
  "tfplugin6.GenerateResourceConfig.Response": {
    config: null,
    diagnostics: [],
  } satisfies Required<tf.GenerateResourceConfig.Response>,
  "tfplugin6.ValidateListResourceConfig.Response": {
    diagnostics: [],
  } satisfies Required<tf.ValidateListResourceConfig.Response>,
  "tfplugin6.ListResource.Event": {
    identity: null,
    display_name: "",
    resource_object: null,
    diagnostic: [],
  } satisfies Required<tf.ListResource.Event>,
  "tfplugin6.ValidateActionConfig.Response": {
    diagnostics: [],
  } satisfies Required<tf.ValidateActionConfig.Response>,
  "tfplugin6.PlanAction.Response": {
    diagnostics: [],
    deferred: null,
  } satisfies Required<tf.PlanAction.Response>,
  "tfplugin6.InvokeAction.Event": {
    progress: { message: "" },
    completed: { diagnostics: [] },
  } satisfies {
    [K in "progress" | "completed"]-?: NonNullable<Extract<tf.InvokeAction.Event, Record<K, object>>[K]>;
  },
  "tfplugin6.ActionSchema": {
    schema: { version: 0, block: { attributes: [], block_types: [] } },
  } satisfies Required<tf.ActionSchema>,
  "tfplugin6.ServerCapabilities": {
    plan_destroy: false,
    get_provider_schema_optional: false,
    move_resource_state: false,
    generate_resource_config: false,
  } satisfies Required<tf.ServerCapabilities>,
  "tfplugin6.Schema.Attribute": {
    name: "",
    type: Buffer.alloc(0),
    nested_type: null,
    description: "",
    required: false,
    optional: false,
    computed: false,
    sensitive: false,
    description_kind: 0,
    deprecated: false,
    write_only: false,
    deprecation_message: "",
  } satisfies Required<tf.SchemaAttribute>,
  "tfplugin6.Schema.Block": {
    version: 0,
    attributes: [],
    block_types: [],
    description: "",
    description_kind: 0,
    deprecated: false,
    deprecation_message: "",
    computed: false,
  } satisfies Required<tf.SchemaBlock>,
  "tfplugin6.Schema.Object": { attributes: [], nesting: 0 } satisfies Required<tf.SchemaObject>,
};

describe("tfplugin6 response types name only real fields", () => {
  it.each(Object.entries(responses))("%s", (name, literal) => {
    const fields = Object.keys(messageType(name).fields);
    expect(Object.keys(literal).filter((k) => !fields.includes(k))).toEqual([]);
  });
});

describe("tfplugin6 types match the decoder's shapes", () => {
  it.each(Object.entries(requests))("%s", (name, literal) => {
    const type = messageType(name);
    const decoded = type.toObject(type.decode(new Uint8Array(0)), CONVERSION);
    expect(Object.keys(decoded).sort()).toEqual(Object.keys(literal).sort());
    expect(decoded).toEqual(literal);
  });

  it("decodes an attribute path step with its oneof selector", () => {
    const type = messageType("tfplugin6.AttributePath");
    const bytes = type
      .encode(type.fromObject({ steps: [{ attribute_name: "a" }, { element_key_int: 3 }] }))
      .finish();
    const decoded = type.toObject(type.decode(bytes), CONVERSION);
    const expected: tf.AttributePath = {
      steps: [
        { selector: "attribute_name", attribute_name: "a" },
        { selector: "element_key_int", element_key_int: 3 },
      ],
    };
    expect(decoded).toEqual(expected);
  });
});
