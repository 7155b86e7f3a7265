import { forExpression, propertyAccess, type TerraformProvider, Token } from "cdktf";
import { Construct } from "constructs";
import { z } from "zod";
import { dataGpurentalOffers, dataGpurentalTemplates } from "../generated";
import { boundedInteger, boundedString, oneOf, problems } from "./validation";

/** Settings of {@link OfferLookup}. */
export interface OfferLookupProps {
  /** GPU model, matched exactly and case-insensitively, e.g. "RTX 4090". */
  readonly gpuModel: string;
  /**
   * Number of GPUs of the offer.
   * @default 1
   */
  readonly numGpus?: number;
  /**
   * The provider to read offers with.
   * @default the stack's default gpurental provider
   */
  readonly provider?: TerraformProvider;
}

const offerSchema = z.object({
  gpuModel: boundedString("gpuModel", 1, 128),
  numGpus: boundedInteger("numGpus", 1, 1024, "GPUs").optional(),
});

// The API lists rentable offers only; an offer whose machine goes into maintenance within 24 hours
// is listed but refused at deploy (MACHINE_IN_MAINTENANCE), so it is skipped here. HCL's `||` does
// not short-circuit (timecmp would get a null), its conditional does.
const RENTABLE =
  'val if (val.next_maintenance == null ? true : timecmp(val.next_maintenance, timeadd(plantimestamp(), "24h")) > 0)';

/**
 * Picks the cheapest rentable offer for a GPU model and count, through the gpurental_offers data
 * source. The plan fails with a clear message when none matches.
 */
export class OfferLookup extends Construct {
  /** The gpurental_offers data source underneath. */
  public readonly offers: dataGpurentalOffers.DataGpurentalOffers;
  /** The settings as given. */
  public readonly props: OfferLookupProps;
  private readonly chosen: ReturnType<typeof propertyAccess>;

  /** Declares the lookup. */
  public constructor(scope: Construct, id: string, props: OfferLookupProps) {
    super(scope, id);
    this.props = props;
    const numGpus = props.numGpus ?? 1;
    const rentableCount = `length([for key, val in self.offers : ${RENTABLE}])`;
    this.offers = new dataGpurentalOffers.DataGpurentalOffers(this, "Default", {
      gpuModel: props.gpuModel,
      numGpus,
      sort: "price_asc",
      provider: props.provider,
      lifecycle: {
        postcondition: [
          {
            condition: `\${${rentableCount} > 0}`,
            errorMessage: `No rentable offer matches gpu_model "${props.gpuModel}" with ${numGpus} GPU(s) (sold out, or every machine goes into maintenance within 24 hours).`,
          },
        ],
      },
    });
    this.chosen = propertyAccess(forExpression(this.offers.offers, RENTABLE), [0]);
    this.node.addValidation({ validate: () => problems(offerSchema, this.props) });
  }

  /** Id of the chosen offer. */
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

const templateSchema = z.object({
  mode: oneOf("mode", ["ssh", "jupyter", "vm"]),
  tab: oneOf("tab", ["recommended", "system", "public", "mine", "all"]).optional(),
});

/** Picks the newest active template of a mode through the gpurental_templates data source. */
export class TemplateLookup extends Construct {
  /** The gpurental_templates data source underneath. */
  public readonly templates: dataGpurentalTemplates.DataGpurentalTemplates;
  /** The settings as given. */
  public readonly props: TemplateLookupProps;
  private readonly chosen: ReturnType<typeof propertyAccess>;

  /** Declares the lookup. */
  public constructor(scope: Construct, id: string, props: TemplateLookupProps) {
    super(scope, id);
    this.props = props;
    const tab = props.tab ?? "recommended";
    const usable = "val if val.active && !val.coming_soon";
    this.templates = new dataGpurentalTemplates.DataGpurentalTemplates(this, "Default", {
      tab,
      mode: props.mode,
      provider: props.provider,
      lifecycle: {
        postcondition: [
          {
            condition: `\${length([for key, val in self.templates : ${usable}]) > 0}`,
            errorMessage: `No active ${props.mode} template in the "${tab}" tab.`,
          },
        ],
      },
    });
    this.chosen = propertyAccess(forExpression(this.templates.templates, usable), [0]);
    this.node.addValidation({ validate: () => problems(templateSchema, this.props) });
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
