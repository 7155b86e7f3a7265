import { attr, type DataSourceDefinition, defineSchema } from "../framework";
import { apiId } from "../provider/ids";
import { clientOf, type ProviderData } from "../provider/provider-data";
import { readOptions, reportReadError } from "./common";
import { INSTANCE_DESCRIPTIONS, instanceAttributes, instanceToObject } from "./objects";

const schema = defineSchema({
  description:
    "Reads one instance of the organization by ID, including destroyed ones. An unknown ID, or one of another organization, is an error (`INSTANCE_NOT_FOUND`).",
  attributes: {
    id: attr.string({
      required: true,
      description: INSTANCE_DESCRIPTIONS.id,
      validators: [apiId("id", "an instance")],
    }),
    ...instanceAttributes,
  },
});

/** The `gpurental_instance` data source: one instance by id. */
export const instanceDataSource = {
  typeName: "gpurental_instance",
  schema,
  async read({ config }, ctx) {
    try {
      const instance = await clientOf(ctx.providerData).getInstance(config.id!, readOptions(ctx));
      return instanceToObject(instance);
    } catch (err) {
      reportReadError(ctx.diags, "gpurental_instance", err);
      return {};
    }
  },
} satisfies DataSourceDefinition<typeof schema, ProviderData>;
