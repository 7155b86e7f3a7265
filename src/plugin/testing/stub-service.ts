import type { ProviderService, Schema, SchemaAttribute } from "../tfplugin6";

// A provider service with the gpurental provider configuration schema and no resources. It proves
// the transport (handshake, TLS, every RPC a workflow calls) without the provider framework, and
// is what the executable serves until the real provider definition is wired in.

const STRING = Buffer.from('"string"');

function attribute(name: string, description: string, extra: Partial<SchemaAttribute> = {}): SchemaAttribute {
  return { name, type: STRING, optional: true, description, ...extra };
}

/** The provider configuration schema: base_url, token (sensitive) and org_id. */
export const PROVIDER_CONFIG_SCHEMA: Schema = {
  version: 0,
  block: {
    attributes: [
      attribute("base_url", "Base URL of the gpurental API. Defaults to GPURENTAL_BASE_URL."),
      attribute("token", "API token. Defaults to GPURENTAL_TOKEN.", { sensitive: true }),
      attribute("org_id", "Organization to act in. Defaults to GPURENTAL_ORG_ID."),
    ],
    block_types: [],
  },
};

/** Builds a ProviderService that knows only the provider configuration; StopProvider is a no-op. */
export function createStubProviderService(): ProviderService {
  const none = async () => ({ diagnostics: [] });
  return {
    GetMetadata: async () => ({ server_capabilities: { get_provider_schema_optional: true } }),
    GetProviderSchema: async () => ({
      provider: PROVIDER_CONFIG_SCHEMA,
      resource_schemas: {},
      data_source_schemas: {},
      server_capabilities: { get_provider_schema_optional: true },
    }),
    GetResourceIdentitySchemas: async () => ({ identity_schemas: {} }),
    ValidateProviderConfig: none,
    ValidateResourceConfig: none,
    ValidateDataResourceConfig: none,
    UpgradeResourceState: none,
    ConfigureProvider: none,
    ReadResource: none,
    PlanResourceChange: none,
    ApplyResourceChange: none,
    ImportResourceState: none,
    ReadDataSource: none,
    ValidateEphemeralResourceConfig: none,
    OpenEphemeralResource: none,
    RenewEphemeralResource: none,
    CloseEphemeralResource: none,
    StopProvider: async () => ({ Error: "" }),
  };
}
