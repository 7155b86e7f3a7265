import type { ListOffersQuery } from "../api/client";
import { ApiError } from "../api/errors";
import type { Offer, Template } from "../api/schemas";
import {
  attr,
  type DataSourceDefinition,
  defineSchema,
  notBlank,
  oneOf,
  toNumber,
  wholeNumber,
} from "../framework";
import { MAX_PRICE_LIMIT_MICRO } from "../market/offer-filter";
import { matchesFilter, type OfferFilter, selectOffers } from "../market/offer-selection";
import { apiId } from "../provider/ids";
import { clientOf, type ProviderData } from "../provider/provider-data";
import { readOptions, reportReadError } from "./common";
import { offerObjectAttributes, offerToObject } from "./objects";

const SORTS = ["price_asc", "price_desc"] as const;

const schema = defineSchema({
  description: [
    "Lists the GPU offers that can be rented now, filtered like `offer_filter` of `gpurental_instance` (GPU model and count, maximum price, region).",
    "With `deployable_with`, offers a deploy of that template and disk would be refused on are left out (sold out, machine disk, VM capability, CUDA), and offers whose machine goes into maintenance within 24 hours, which the deploy may refuse, are listed after the others.",
    "To rent an offer, prefer `offer_filter` on the instance to passing an `id` from this list as `offer_id`: a pinned id replaces the instance whenever the list's first offer changes (a cheaper offer appears, the chosen one sells out), and replacing an instance destroys its disk.",
  ].join("\n\n"),
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
      validators: [wholeNumber("num_gpus", 1, 1024, "a GPU count")],
    }),
    max_price_per_hour_micro: attr.number({
      optional: true,
      description: "Only offers whose GPU price per hour is at most this, in micro-yuan (1 ¥ = 1,000,000).",
      validators: [wholeNumber("max_price_per_hour_micro", 0, MAX_PRICE_LIMIT_MICRO, "micro-yuan")],
    }),
    region: attr.string({
      optional: true,
      description: 'Only offers in this region, matched exactly but case-insensitively, e.g. `"cn-east-1"`.',
      validators: [notBlank("region")],
    }),
    deployable_with: attr.single(
      {
        template_id: attr.string({
          required: true,
          description: "ID of the template the deploy would run.",
          validators: [apiId("deployable_with.template_id", "a template")],
        }),
        disk_gb: attr.number({
          required: true,
          description: "Disk the deploy would request, in GB.",
          validators: [wholeNumber("deployable_with.disk_gb", 10, 20000, "the API's disk_gb range")],
        }),
      },
      {
        optional: true,
        description:
          "Leave out the offers a deploy of this template with this disk would be refused on, as far as the offers say (sold out, machine disk, VM capability, CUDA); offers whose machine goes into maintenance within 24 hours come last.",
      },
    ),
    sort: attr.string({
      optional: true,
      description: "`price_asc` (cheapest first) or `price_desc`. Unset: newest first.",
      validators: [oneOf(...SORTS)],
    }),
    include_unavailable: attr.bool({
      optional: true,
      description:
        "Also list sold-out and withdrawn offers. Default false; cannot be true with `deployable_with`.",
    }),
    offers: attr.listNested(offerObjectAttributes, {
      computed: true,
      description: "The matching offers, in the requested order.",
    }),
  },
});

/** The `gpurental_offers` data source: GPU offers filtered like an instance's offer_filter. */
export const offersDataSource = {
  typeName: "gpurental_offers",
  schema,
  validateConfig({ config }, ctx) {
    if (config.include_unavailable === true && config.deployable_with !== null) {
      ctx.diags.addAttributeError(
        [{ attribute: "include_unavailable" }],
        "Conflicting arguments",
        "include_unavailable = true lists offers that cannot be rented, and deployable_with leaves out every offer a deploy would be refused on; set only one of them.",
      );
    }
  },
  async read({ config }, ctx) {
    const query: ListOffersQuery = {};
    if (config.gpu_model !== null) query.gpu_model = config.gpu_model;
    if (config.num_gpus !== null) query.num_gpus = toNumber(config.num_gpus);
    if (config.sort !== null) query.sort = config.sort as ListOffersQuery["sort"];
    if (config.include_unavailable !== null) query.include_unavailable = config.include_unavailable;
    // The API filters by model and count; price and region are judged here, like offer_filter's.
    const filter: Partial<OfferFilter> = {
      max_price_per_hour_micro:
        config.max_price_per_hour_micro === null ? null : toNumber(config.max_price_per_hour_micro),
      region: config.region,
    };
    const deployable = config.deployable_with;
    let offers: Offer[];
    let template: Template | null | undefined;
    try {
      [offers, template] = await Promise.all([
        clientOf(ctx.providerData).listOffers(query, readOptions(ctx)),
        deployable?.template_id
          ? clientOf(ctx.providerData)
              .getTemplate(deployable.template_id, readOptions(ctx))
              .catch((err: unknown) => {
                if (err instanceof ApiError && err.code === "TEMPLATE_NOT_FOUND") return null;
                throw err;
              })
          : undefined,
      ]);
    } catch (err) {
      reportReadError(ctx.diags, "gpurental_offers", err);
      return {};
    }
    if (template === null) {
      ctx.diags.addAttributeError(
        [{ attribute: "deployable_with" }, { attribute: "template_id" }],
        "TEMPLATE_NOT_FOUND: the template is missing, not visible, or inactive",
        `No template ${deployable?.template_id} is visible to this organization, so no offer could be deployed with it. The gpurental_templates data source lists the templates this organization can use.`,
      );
      return {};
    }
    if (!deployable) return { offers: offers.filter((o) => matchesFilter(o, filter)).map(offerToObject) };
    const selection = selectOffers({
      offers,
      filter,
      template,
      diskGb: deployable.disk_gb === null ? undefined : toNumber(deployable.disk_gb),
      now: Date.now(),
    });
    // In the API's order, except that offers the deploy may refuse come after the others.
    const doubtful = new Set(selection.candidates.filter((c) => c.caveats.length > 0).map((c) => c.offer.id));
    const kept = new Set(selection.candidates.map((c) => c.offer.id));
    const listed = offers.filter((o) => kept.has(o.id));
    const ordered = [
      ...listed.filter((o) => !doubtful.has(o.id)),
      ...listed.filter((o) => doubtful.has(o.id)),
    ];
    return { offers: ordered.map(offerToObject) };
  },
} satisfies DataSourceDefinition<typeof schema, ProviderData>;
