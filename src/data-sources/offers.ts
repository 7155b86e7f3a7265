import type { ListOffersQuery } from "../api/client";
import { attr, type DataSourceDefinition, defineSchema, oneOf, toNumber } from "../framework";
import { type DataSourceApi, integerBetween, notBlank, reportReadError } from "./common";
import { offerObjectAttributes, offerToObject } from "./objects";

const SORTS = ["price_asc", "price_desc"] as const;

const schema = defineSchema({
  description:
    "Lists the GPU offers that can be rented now, optionally filtered by GPU model and count. Offers whose machine goes into maintenance within 24 hours are listed too but refused at deploy; check `next_maintenance`.",
  attributes: {
    gpu_model: attr.string({
      optional: true,
      description:
        'Only offers of this GPU model, matched exactly but case-insensitively, e.g. `"RTX 4090"`.',
      validators: [notBlank("gpu_model")],
    }),
    num_gpus: attr.number({
      optional: true,
      description: "Only offers renting exactly this many GPUs.",
      validators: [integerBetween("num_gpus", 1, 1024, "a GPU count")],
    }),
    sort: attr.string({
      optional: true,
      description: "`price_asc` (cheapest first) or `price_desc`. Unset: newest first.",
      validators: [oneOf(...SORTS)],
    }),
    include_unavailable: attr.bool({
      optional: true,
      description: "Also list sold-out and withdrawn offers. Default false.",
    }),
    offers: attr.listNested(offerObjectAttributes, {
      computed: true,
      description: "The matching offers, in the requested order.",
    }),
  },
});

/** The `gpurental_offers` data source: GPU offers filtered by model and GPU count. */
export const offersDataSource = {
  typeName: "gpurental_offers",
  schema,
  async read({ config }, ctx) {
    const query: ListOffersQuery = {};
    if (config.gpu_model !== null) query.gpu_model = config.gpu_model;
    if (config.num_gpus !== null) query.num_gpus = toNumber(config.num_gpus);
    if (config.sort !== null) query.sort = config.sort as ListOffersQuery["sort"];
    if (config.include_unavailable !== null) query.include_unavailable = config.include_unavailable;
    try {
      const offers = await ctx.providerData.listOffers(query, { signal: ctx.signal });
      return { offers: offers.map(offerToObject) };
    } catch (err) {
      reportReadError(ctx.diags, "gpurental_offers", err);
      return {};
    }
  },
} satisfies DataSourceDefinition<typeof schema, DataSourceApi>;
