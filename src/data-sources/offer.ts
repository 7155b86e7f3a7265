import { isApiError } from "../api/errors";
import { attr, type DataSourceDefinition, defineSchema } from "../framework";
import { apiId } from "../provider/ids";
import { clientOf, type ProviderData } from "../provider/provider-data";
import { readOptions, reportReadError } from "./common";
import { offerAttributes, offerToObject } from "./objects";

const schema = defineSchema({
  description:
    "Reads one GPU offer by ID, also when it is sold out or withdrawn. An unknown ID is an error (`OFFER_NOT_FOUND`).",
  attributes: {
    id: attr.string({
      required: true,
      description: "ID of the offer.",
      validators: [apiId("id", "an offer")],
    }),
    ...offerAttributes,
  },
});

/** The `gpurental_offer` data source: one offer by id. */
export const offerDataSource = {
  typeName: "gpurental_offer",
  schema,
  async read({ config }, ctx) {
    try {
      const offer = await clientOf(ctx.providerData).getOffer(config.id!, readOptions(ctx));
      return offerToObject(offer);
    } catch (err) {
      reportReadError(
        ctx.diags,
        "gpurental_offer",
        err,
        isApiError(err, "OFFER_NOT_FOUND") || isApiError(err, "NOT_FOUND")
          ? `No offer has the id ${JSON.stringify(config.id)}. The gpurental_offers data source lists the offers that can be rented now.`
          : undefined,
      );
      return {};
    }
  },
} satisfies DataSourceDefinition<typeof schema, ProviderData>;
