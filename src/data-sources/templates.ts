import type { ListTemplatesQuery } from "../api/client";
import { attr, type DataSourceDefinition, defineSchema, oneOf } from "../framework";
import { clientOf, type ProviderData } from "../provider/provider-data";
import { readOptions, reportReadError } from "./common";
import { templateObjectAttributes, templateToObject } from "./objects";

const TABS = ["recommended", "system", "public", "mine", "all"] as const;
const MODES = ["ssh", "jupyter", "vm"] as const;

const schema = defineSchema({
  description:
    "Lists the templates the organization can deploy: system and public templates and its own private ones, by console tab and mode.",
  attributes: {
    tab: attr.string({
      optional: true,
      description:
        "Console tab to list: `recommended`, `system`, `public`, `mine` (the organization's own) or `all`. Default `all`.",
      validators: [oneOf(...TABS)],
    }),
    mode: attr.string({
      optional: true,
      description: "Only templates of this mode: `ssh`, `jupyter` or `vm`.",
      validators: [oneOf(...MODES)],
    }),
    templates: attr.listNested(templateObjectAttributes, {
      computed: true,
      description: "The matching templates, newest first.",
    }),
  },
});

/** The `gpurental_templates` data source: templates by tab and mode. */
export const templatesDataSource = {
  typeName: "gpurental_templates",
  schema,
  async read({ config }, ctx) {
    const query: ListTemplatesQuery = {};
    if (config.tab !== null) query.tab = config.tab as ListTemplatesQuery["tab"];
    if (config.mode !== null) query.mode = config.mode as ListTemplatesQuery["mode"];
    try {
      const templates = await clientOf(ctx.providerData).listTemplates(query, readOptions(ctx));
      return { templates: templates.map(templateToObject) };
    } catch (err) {
      reportReadError(ctx.diags, "gpurental_templates", err);
      return {};
    }
  },
} satisfies DataSourceDefinition<typeof schema, ProviderData>;
