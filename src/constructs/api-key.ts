import { forExpression, propertyAccess, type TerraformProvider, Token } from "cdktf";
import { Construct } from "constructs";
import { z } from "zod";
import { isUuid } from "../api/ids";
import { apiKey, dataGpurentalApiKeys } from "../bindings/cdktf";
import {
  boundedString,
  oneOf,
  type PropList,
  problems,
  providerProp,
  readProps,
  referenceProvider,
  show,
} from "./validation";

/** Kind of an API key: personal keys stop working when their creator leaves, team keys do not. */
export type ApiKeyKind = "personal" | "team";

/** What every API key reference offers, whether created here or looked up by id. */
export interface IApiKey {
  /** The key's id. */
  readonly apiKeyId: string;
  /** The key's name. */
  readonly name: string;
  /** `personal` or `team`. */
  readonly kind: string;
  /** The first 12 characters of the secret, safe to show and log. */
  readonly prefix: string;
  /** When the key was created (RFC 3339). */
  readonly createdAt: string;
}

/** Settings of {@link ApiKey}. */
export interface ApiKeyProps {
  /** Name of the key, 1 to 64 characters; changing it replaces the key. */
  readonly name: string;
  /**
   * `team` keys keep working after their creator leaves the organization; creating one needs an
   * admin's signed-in session. Changing it replaces the key.
   * @default "personal"
   */
  readonly kind?: ApiKeyKind;
  /**
   * The provider to create the key with.
   * @default the stack's default gpurental provider
   */
  readonly provider?: TerraformProvider;
}

/** The props of {@link ApiKeyProps}, for {@link problems}. */
const PROPS = { name: "required", kind: true, provider: true } as const satisfies PropList<ApiKeyProps>;

const schema = z.object({
  name: boundedString("name", 1, 64),
  kind: oneOf("kind", ["personal", "team"]).optional(),
  provider: providerProp,
});

/** A gpurental API key. Its `secret` is only known for keys created by this configuration. */
export class ApiKey extends Construct implements IApiKey {
  /** The gpurental_api_key resource underneath. */
  public readonly resource: apiKey.ApiKey;
  /** The settings as given, a null one left out: null is unset, as in Terraform. */
  public readonly props: ApiKeyProps;

  /**
   * References an existing key through the gpurental_api_keys data source; the plan fails with a
   * clear message when no listed key has that id. `apiKeyId` is a literal id (it is written into a
   * Terraform expression), not another resource's attribute.
   */
  public static fromApiKeyId(
    scope: Construct,
    id: string,
    apiKeyId: string,
    provider?: TerraformProvider,
  ): IApiKey {
    return new ExistingApiKey(scope, id, apiKeyId, provider);
  }

  /** Creates the key. */
  public constructor(scope: Construct, id: string, props: ApiKeyProps) {
    super(scope, id);
    const read = readProps(props, PROPS);
    this.props = read;
    // "Default" keeps the resource's Terraform address the construct's own id (gpurental_api_key.<id>).
    this.resource = new apiKey.ApiKey(this, "Default", {
      name: read.name,
      kind: read.kind ?? "personal",
      provider: read.provider,
    });
    this.node.addValidation({ validate: () => problems("ApiKey", schema, props, PROPS) });
  }

  /** The key's id. */
  public get apiKeyId(): string {
    return this.resource.id;
  }

  /** The key's name. */
  public get name(): string {
    return this.resource.name;
  }

  /** `personal` or `team`. */
  public get kind(): string {
    return this.resource.kind;
  }

  /** The first 12 characters of the secret, safe to show and log. */
  public get prefix(): string {
    return this.resource.prefix;
  }

  /** When the key was created (RFC 3339). */
  public get createdAt(): string {
    return this.resource.createdAt;
  }

  /** When the key was last used (RFC 3339), empty when never. */
  public get lastUsedAt(): string {
    return this.resource.lastUsedAt;
  }

  /** Email of the user who created the key. */
  public get creatorEmail(): string {
    return this.resource.creatorEmail;
  }

  /**
   * The secret (`gpr_` and 48 hex characters). Sensitive: mark every output that carries it with
   * `sensitive: true`. Unknown for imported keys; the API shows it only once.
   */
  public get secret(): string {
    return this.resource.secret;
  }
}

class ExistingApiKey extends Construct implements IApiKey {
  public readonly apiKeyId: string;
  private readonly match: ReturnType<typeof propertyAccess>;

  public constructor(scope: Construct, id: string, apiKeyId: string, provider?: TerraformProvider) {
    // Checked before the construct joins the tree: a refused reference leaves nothing behind.
    if (Token.isUnresolved(apiKeyId)) {
      throw new Error(`ApiKey.fromApiKeyId("${id}") needs a literal key id, not a token`);
    }
    // Written into HCL expressions below: an id, and nothing Terraform would read as one.
    if (typeof apiKeyId !== "string" || !isUuid(apiKeyId)) {
      throw new Error(`ApiKey.fromApiKeyId("${id}") needs an API key id (a UUID), got ${show(apiKeyId)}`);
    }
    const checkedProvider = referenceProvider(`ApiKey.fromApiKeyId(${JSON.stringify(id)})`, provider);
    super(scope, id);
    this.apiKeyId = apiKeyId;
    const filter = `val if val.id == ${JSON.stringify(apiKeyId)}`;
    const keys = new dataGpurentalApiKeys.DataGpurentalApiKeys(this, "Default", {
      provider: checkedProvider,
      lifecycle: {
        postcondition: [
          {
            condition: `\${length([for k in self.api_keys : k if k.id == ${JSON.stringify(apiKeyId)}]) == 1}`,
            errorMessage: `No API key with id ${apiKeyId} is listed (revoked, or never existed in this organization).`,
          },
        ],
      },
    });
    this.match = propertyAccess(forExpression(keys.apiKeys, filter), [0]);
  }

  private attr(name: string): string {
    return Token.asString(propertyAccess(this.match, [name]));
  }

  public get name(): string {
    return this.attr("name");
  }

  public get kind(): string {
    return this.attr("kind");
  }

  public get prefix(): string {
    return this.attr("prefix");
  }

  public get createdAt(): string {
    return this.attr("created_at");
  }
}
