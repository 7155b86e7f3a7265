import { isApiError } from "../api/errors";
import { attr, type DataSourceDefinition, defineSchema } from "../framework";
import { apiId } from "../provider/ids";
import { clientOf, type ProviderData } from "../provider/provider-data";
import { readOptions, reportReadError } from "./common";
import { templateAttributes, templateToObject } from "./objects";

const schema = defineSchema({
  description:
    "Reads one template by ID, with its readme and start script. A template that is unknown or not visible to the organization is an error (`TEMPLATE_NOT_FOUND`).",
  attributes: {
    id: attr.string({
      required: true,
      description: "ID of the template.",
      validators: [apiId("id", "a template")],
    }),
    ...templateAttributes,
  },
});

/** The `gpurental_template` data source: one template by id. */
export const templateDataSource = {
  typeName: "gpurental_template",
  schema,
  async read({ config }, ctx) {
    try {
      const template = await clientOf(ctx.providerData).getTemplate(config.id!, readOptions(ctx));
      return templateToObject(template);
    } catch (err) {
      reportReadError(
        ctx.diags,
        "gpurental_template",
        err,
        isApiError(err, "TEMPLATE_NOT_FOUND")
          ? `No template with the id ${JSON.stringify(config.id)} is visible to this organization.`
          : undefined,
      );
      return {};
    }
  },
} satisfies DataSourceDefinition<typeof schema, ProviderData>;
