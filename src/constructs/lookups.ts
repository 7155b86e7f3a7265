// biome-ignore-all lint/suspicious/noTemplateCurlyInString: Terraform interpolations are written as text.
import { Fn, forExpression, propertyAccess, type TerraformProvider, Token } from "cdktf";
import { Construct } from "constructs";
import { z } from "zod";
import { dataGpurentalOffers, dataGpurentalTemplates } from "../bindings/cdktf";
import { templateEscaped } from "../hcl-text";
import {
  apiId,
  boundedInteger,
  OFFER_FILTER_PROPS,
  type OfferFilterProps,
  objectProp,
  offerFilterShape,
  oneOf,
  type PropList,
  problems,
  providerProp,
  readProps,
  show,
} from "./validation";

/** Settings of {@link OfferLookup}: the market filter of an instance, and what to deploy. */
export interface OfferLookupProps extends OfferFilterProps {
  /**
   * Leave out the offers a deploy of this template with this disk would be refused on (sold out,
   * machine disk, VM capability, CUDA).
   * @default every offer matching the filter
   */
  readonly deployableWith?: OfferLookupDeployment;
  /**
   * The provider to read offers with.
   * @default the stack's default gpurental provider
   */
  readonly provider?: TerraformProvider;
}

/** The deploy an {@link OfferLookup} checks the offers against. */
export interface OfferLookupDeployment {
  /** The template the deploy would run. */
  readonly templateId: string;
  /** The disk it would request, in GB. */
  readonly diskGb: number;
}

const offerSchema = z.object({
  ...offerFilterShape(""),
  deployableWith: objectProp("deployableWith", {
    templateId: apiId("deployableWith.templateId"),
    diskGb: boundedInteger("deployableWith.diskGb", 10, 20000, "GB"),
  }).optional(),
  provider: providerProp,
});

/** The props of {@link OfferLookupProps}, for {@link problems}. */
const OFFER_PROPS = {
  ...OFFER_FILTER_PROPS,
  deployableWith: { templateId: "required", diskGb: "required" },
  provider: true,
} as const satisfies PropList<OfferLookupProps>;

// Offers whose machine goes into maintenance within 24 hours may be refused at deploy
// (MACHINE_IN_MAINTENANCE), so they are chosen only when nothing else matches. HCL's `||` does not
// short-circuit (timecmp would get a null), its conditional does.
const CLEAR =
  'val.next_maintenance == null ? true : timecmp(val.next_maintenance, timeadd(plantimestamp(), "24h")) > 0';

/**
 * A prop as text in a postcondition's message: a token as its reference (a number token as a
 * string one, or it would be written as a number), a literal with Terraform's `${` and `%{`
 * escaped, so that it is never read as an expression.
 */
function hclText(v: unknown): string {
  if (Token.isUnresolved(v)) return typeof v === "number" ? Token.asString(v) : String(v);
  // Anything else the validation refuses; it is quoted here only so that the message can be built.
  return templateEscaped(typeof v === "string" || typeof v === "number" ? String(v) : show(v));
}

/**
 * The cheapest offer matching a filter, through the gpurental_offers data source; the plan fails
 * with a clear message when none matches. To rent an offer, give {@link Instance} the same filter
 * as its `offer` prop rather than this lookup's offerId: the instance then chooses when it is
 * created and keeps its offer, while an offerId taken from here pins it, so a cheaper offer or a
 * sold-out one replaces the instance (and destroys its disk). Use the lookup to show the market.
 */
export class OfferLookup extends Construct {
  /** The gpurental_offers data source underneath. */
  public readonly offers: dataGpurentalOffers.DataGpurentalOffers;
  /** The settings as given, a null one left out: null is unset, as in Terraform. */
  public readonly props: OfferLookupProps;
  private readonly chosen: ReturnType<typeof propertyAccess>;

  /** Declares the lookup. */
  public constructor(scope: Construct, id: string, props: OfferLookupProps) {
    super(scope, id);
    const read = readProps(props, OFFER_PROPS);
    this.props = read;
    const numGpus = read.numGpus ?? 1;
    const deploy = read.deployableWith;
    this.offers = new dataGpurentalOffers.DataGpurentalOffers(this, "Default", {
      gpuModel: read.gpuModel,
      numGpus,
      maxPricePerHourMicro: read.maxPricePerHourMicro,
      region: read.region,
      deployableWith: deploy && { templateId: deploy.templateId, diskGb: deploy.diskGb },
      sort: "price_asc",
      provider: read.provider,
      lifecycle: {
        postcondition: [
          {
            condition: "${length(self.offers) > 0}",
            errorMessage: `No rentable offer matches gpu_model "${hclText(read.gpuModel)}" with ${hclText(numGpus)} GPU(s)${read.maxPricePerHourMicro === undefined ? "" : ` at most ${hclText(read.maxPricePerHourMicro)} micro-yuan per hour`}${read.region === undefined ? "" : ` in region ${hclText(read.region)}`}${deploy ? " that the template and disk could be deployed on" : ""}.`,
          },
        ],
      },
    });
    const list = this.offers.offers;
    this.chosen = propertyAccess(
      Fn.concat([forExpression(list, `val if ${CLEAR}`), forExpression(list, `val if !(${CLEAR})`)]),
      [0],
    );
    this.node.addValidation({ validate: () => problems("OfferLookup", offerSchema, props, OFFER_PROPS) });
  }

  /** Id of the chosen offer. Passing it to an Instance pins it: see the class description. */
  public get offerId(): string {
    return Token.asString(propertyAccess(this.chosen, ["id"]));
  }

  /** GPU model of the chosen offer. */
  public get gpuModel(): string {
    return Token.asString(propertyAccess(this.chosen, ["gpu_model"]));
  }

  /** Hourly price of the chosen offer while running, in micro-yuan. */
  public get pricePerHourMicro(): number {
    return Token.asNumber(propertyAccess(this.chosen, ["price_per_hour_micro"]));
  }
}

/** Template modes. */
export type TemplateMode = "ssh" | "jupyter" | "vm";

/** Settings of {@link TemplateLookup}. */
export interface TemplateLookupProps {
  /** How the instance is reached: "ssh", "jupyter" or "vm". */
  readonly mode: TemplateMode;
  /**
   * Which templates to choose from: "recommended", "system", "public", "mine" or "all".
   * @default "recommended"
   */
  readonly tab?: string;
  /**
   * The provider to read templates with.
   * @default the stack's default gpurental provider
   */
  readonly provider?: TerraformProvider;
}

/** The props of {@link TemplateLookupProps}, for {@link problems}. */
const TEMPLATE_PROPS = {
  mode: "required",
  tab: true,
  provider: true,
} as const satisfies PropList<TemplateLookupProps>;

const templateSchema = z.object({
  mode: oneOf("mode", ["ssh", "jupyter", "vm"]),
  tab: oneOf("tab", ["recommended", "system", "public", "mine", "all"]).optional(),
  provider: providerProp,
});

/** Picks the newest active template of a mode through the gpurental_templates data source. */
export class TemplateLookup extends Construct {
  /** The gpurental_templates data source underneath. */
  public readonly templates: dataGpurentalTemplates.DataGpurentalTemplates;
  /** The settings as given, a null one left out: null is unset, as in Terraform. */
  public readonly props: TemplateLookupProps;
  private readonly chosen: ReturnType<typeof propertyAccess>;

  /** Declares the lookup. */
  public constructor(scope: Construct, id: string, props: TemplateLookupProps) {
    super(scope, id);
    const read = readProps(props, TEMPLATE_PROPS);
    this.props = read;
    const tab = read.tab ?? "recommended";
    const usable = "val if val.active && !val.coming_soon";
    this.templates = new dataGpurentalTemplates.DataGpurentalTemplates(this, "Default", {
      tab,
      mode: read.mode,
      provider: read.provider,
      lifecycle: {
        postcondition: [
          {
            condition: `\${length([for key, val in self.templates : ${usable}]) > 0}`,
            errorMessage: `No active ${hclText(read.mode)} template in the "${hclText(tab)}" tab.`,
          },
        ],
      },
    });
    this.chosen = propertyAccess(forExpression(this.templates.templates, usable), [0]);
    this.node.addValidation({
      validate: () => problems("TemplateLookup", templateSchema, props, TEMPLATE_PROPS),
    });
  }

  /** Id of the chosen template. */
  public get templateId(): string {
    return Token.asString(propertyAccess(this.chosen, ["id"]));
  }

  /** Name of the chosen template. */
  public get name(): string {
    return Token.asString(propertyAccess(this.chosen, ["name"]));
  }
}
