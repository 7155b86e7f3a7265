import { attr, type DataSourceDefinition, defineSchema } from "../framework";
import { clientOf, type ProviderData } from "../provider/provider-data";
import { readOptions, reportReadError } from "./common";
import { instanceObjectAttributes, instanceToObject } from "./objects";

const schema = defineSchema({
  description: "Lists the organization's instances, newest first.",
  attributes: {
    include_destroyed: attr.bool({
      optional: true,
      description: "Also list destroyed instances. Default false.",
    }),
    instances: attr.listNested(instanceObjectAttributes, {
      computed: true,
      description: "The instances, newest first.",
    }),
  },
});

/** The `gpurental_instances` data source: the organization's instances. */
export const instancesDataSource = {
  typeName: "gpurental_instances",
  schema,
  async read({ config }, ctx) {
    try {
      const instances = await clientOf(ctx.providerData).listInstances(
        { include_destroyed: config.include_destroyed ?? false },
        readOptions(ctx),
      );
      return { instances: instances.map(instanceToObject) };
    } catch (err) {
      reportReadError(ctx.diags, "gpurental_instances", err);
      return {};
    }
  },
} satisfies DataSourceDefinition<typeof schema, ProviderData>;
