import { attr, type DataSourceDefinition, defineSchema } from "../framework";
import { clientOf, type ProviderData } from "../provider/provider-data";
import { readOptions, reportReadError } from "./common";
import { apiKeyObjectAttributes, apiKeyToObject } from "./objects";

const schema = defineSchema({
  description:
    "Lists the organization's active API keys, newest first. Secrets are never listed: only the key's 12-character prefix.",
  attributes: {
    api_keys: attr.listNested(apiKeyObjectAttributes, {
      computed: true,
      description: "The active API keys, newest first; revoked keys are not listed.",
    }),
  },
});

/** The `gpurental_api_keys` data source: the organization's active API keys. */
export const apiKeysDataSource = {
  typeName: "gpurental_api_keys",
  schema,
  async read(_req, ctx) {
    try {
      const keys = await clientOf(ctx.providerData).listApiKeys(readOptions(ctx));
      return { api_keys: keys.map(apiKeyToObject) };
    } catch (err) {
      reportReadError(ctx.diags, "gpurental_api_keys", err);
      return {};
    }
  },
} satisfies DataSourceDefinition<typeof schema, ProviderData>;
