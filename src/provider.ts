import { type Logger as ClientLogger, GpurentalClient } from "./api/client";
import { ClientConfigError } from "./api/errors";
import { isUuid } from "./api/ids";
import { dataSources } from "./data-sources";
import {
  type AnyResourceDefinition,
  attr,
  type ConfigureContext,
  type ConfigureRequest,
  defineSchema,
  isUnknown,
  type ProviderDefinition,
  path,
} from "./framework";
import { logger } from "./plugin/log";
import { apiKeyResource } from "./resources/api-key";
import { instanceResource } from "./resources/instance";
import { credentialKindOf, registerCredential, unconfiguredClient } from "./resources/provider-data";

// The gpurental provider: its configuration (where the API is, which credential, which
// organization), how that becomes the /v1 client every resource and data source uses, and the list
// of resource and data source types.

const schema = defineSchema({
  description:
    "The gpurental provider manages API keys and GPU instances of the gpurental GPU rental service through its `/v1` API. Every argument can instead come from an environment variable, so that no credential needs to be written into a configuration: an argument left unset falls back to its variable, while one set to an empty string is an error (it is most often a variable that came out empty).",
  attributes: {
    base_url: attr.string({
      optional: true,
      description:
        "Base address of the gpurental API, `http` or `https`, without the `/v1` path (e.g. `https://api.gpurental.example`). Falls back to the `GPURENTAL_BASE_URL` environment variable; one of the two is required.",
    }),
    token: attr.string({
      optional: true,
      sensitive: true,
      description:
        "Credential sent as `Authorization: Bearer`: an API key secret (`gpr_…`) or a signed-in session token (`gps_…`). Falls back to `GPURENTAL_TOKEN`; one of the two is required. Creating or revoking API keys (`gpurental_api_key`) needs a session token, and team keys an admin's session.",
    }),
    org_id: attr.string({
      optional: true,
      description:
        "ID of the organization to act in, sent as `X-Org-Id`. Falls back to `GPURENTAL_ORG_ID`. When unset, the credential's own organization is used; an organization the credential does not belong to is refused with `ORG_MISMATCH`.",
    }),
  },
});

/** The provider's configuration schema. */
export const providerSchema = schema;

/** Environment variables the provider reads when an argument is unset. */
export const PROVIDER_ENV = {
  base_url: "GPURENTAL_BASE_URL",
  token: "GPURENTAL_TOKEN",
  org_id: "GPURENTAL_ORG_ID",
} as const;

type Setting = keyof typeof PROVIDER_ENV;

/** A setting resolved from the configuration or the environment. */
type Resolved =
  | { kind: "value"; value: string; from: "config" | "env" }
  | { kind: "unknown" }
  | { kind: "empty" }
  | { kind: "missing" };

function resolve(config: unknown, name: Setting, env: NodeJS.ProcessEnv): Resolved {
  if (isUnknown(config)) return { kind: "unknown" };
  // An explicit "" is most often a variable that came out empty: an error, not a silent fallback
  // to a credential from the environment the configuration did not ask for.
  if (config === "") return { kind: "empty" };
  if (typeof config === "string") return { kind: "value", value: config, from: "config" };
  const fromEnv = env[PROVIDER_ENV[name]];
  if (fromEnv !== undefined && fromEnv !== "") return { kind: "value", value: fromEnv, from: "env" };
  return { kind: "missing" };
}

function where(name: Setting, r: { from: "config" | "env" }): string {
  return r.from === "config" ? `The ${name} argument` : `The ${PROVIDER_ENV[name]} environment variable`;
}

const clientLog = logger.child("api");
const logToProvider: ClientLogger = (level, msg, fields) => clientLog.log(level, msg, fields);

/** Options for building the provider, for tests. */
export interface CreateProviderOptions {
  /** Environment to read the fallbacks from; default process.env. */
  env?: NodeJS.ProcessEnv;
  /** Extra client options (a dispatcher, faster retries) used by in-memory tests. */
  clientOptions?: Partial<ConstructorParameters<typeof GpurentalClient>[0]>;
}

/** Builds the /v1 client from the provider configuration, reporting problems on their attribute. */
export async function configureClient(
  req: ConfigureRequest<typeof schema>,
  ctx: ConfigureContext,
  opts: CreateProviderOptions = {},
): Promise<GpurentalClient> {
  const env = opts.env ?? process.env;
  const baseUrl = resolve(req.config.base_url, "base_url", env);
  const token = resolve(req.config.token, "token", env);
  const orgId = resolve(req.config.org_id, "org_id", env);

  for (const [name, r] of [
    ["base_url", baseUrl],
    ["token", token],
    ["org_id", orgId],
  ] as const) {
    if (r.kind === "empty") {
      ctx.diags.addAttributeError(
        path(name),
        `Empty ${name}`,
        `${name} is set to an empty string in the provider block. Remove the argument to use the ${PROVIDER_ENV[name]} environment variable${name === "org_id" ? " or the credential's own organization" : ""}, or give it a value.`,
      );
    }
  }

  if (baseUrl.kind === "missing") {
    ctx.diags.addAttributeError(
      path("base_url"),
      "Missing API address",
      `Set base_url in the provider block or the ${PROVIDER_ENV.base_url} environment variable to the gpurental API's address, e.g. "https://api.gpurental.example".`,
    );
  } else if (baseUrl.kind === "value") {
    let ok = false;
    try {
      const u = new URL(baseUrl.value);
      ok =
        (u.protocol === "http:" || u.protocol === "https:") &&
        !u.username &&
        !u.password &&
        !u.search &&
        !u.hash;
      if (ok && /\/v1\/?$/.test(u.pathname)) {
        ctx.diags.addAttributeError(
          path("base_url"),
          "API address includes /v1",
          `${where("base_url", baseUrl)} must be the address without the /v1 path, which the provider adds itself: use ${JSON.stringify(baseUrl.value.replace(/\/v1\/?$/, ""))}.`,
        );
      }
    } catch {
      ok = false;
    }
    if (!ok) {
      ctx.diags.addAttributeError(
        path("base_url"),
        "Invalid API address",
        `${where("base_url", baseUrl)} must be an http or https URL without credentials, query or fragment, e.g. "https://api.gpurental.example"; got ${JSON.stringify(baseUrl.value.slice(0, 200))}.`,
      );
    }
  }
  if (token.kind === "missing") {
    ctx.diags.addAttributeError(
      path("token"),
      "Missing credential",
      `Set token in the provider block or the ${PROVIDER_ENV.token} environment variable to an API key secret (gpr_…) or a session token (gps_…).`,
    );
  } else if (token.kind === "value" && !/^[\x21-\x7e]+$/.test(token.value)) {
    // Never echo the value: it is a credential.
    ctx.diags.addAttributeError(
      path("token"),
      "Invalid credential",
      `${where("token", token)} must be a single word of printable ASCII characters (an API key secret or a session token); check for spaces, line breaks or quotes copied along with it.`,
    );
  }
  if (orgId.kind === "value" && !isUuid(orgId.value)) {
    ctx.diags.addAttributeError(
      path("org_id"),
      "Invalid organization ID",
      `${where("org_id", orgId)} must be an organization ID (a UUID such as "00000000-0000-4000-8000-000000000001"); got ${JSON.stringify(orgId.value.slice(0, 100))}.`,
    );
  }
  if (ctx.diags.hasErrors()) return unconfiguredClient([]);

  const pending = (["base_url", "token", "org_id"] as const).filter(
    (n) => ({ base_url: baseUrl, token, org_id: orgId })[n].kind === "unknown",
  );
  if (pending.length > 0 || baseUrl.kind !== "value" || token.kind !== "value") {
    // Values from resources not created yet: plan without the API; apply configures again.
    return unconfiguredClient(pending);
  }

  const appended = env.TF_APPEND_USER_AGENT?.trim();
  try {
    const client = new GpurentalClient({
      baseUrl: baseUrl.value,
      token: token.value,
      orgId: orgId.kind === "value" ? orgId.value : undefined,
      userAgent: `Terraform/${req.terraformVersion || "unknown"} terraform-provider-gpurental${appended ? ` ${appended}` : ""}`,
      // Connection errors name the address and where it came from, so the reader knows what to fix.
      baseUrlSource:
        baseUrl.from === "config"
          ? "base_url in the provider block"
          : `the ${PROVIDER_ENV.base_url} environment variable`,
      logger: logToProvider,
      signal: ctx.signal,
      ...opts.clientOptions,
    });
    logger.child("provider").debug("configured", {
      base_url: client.baseUrl,
      org_id: client.orgId ?? null,
      credential: credentialKindOf(token.value),
      token_from: token.from,
    });
    registerCredential(client, {
      kind: credentialKindOf(token.value),
      orgId: orgId.kind === "value" ? orgId.value : undefined,
      configured: true,
    });
    return client;
  } catch (err) {
    if (err instanceof ClientConfigError) {
      const attribute = err.field === "baseUrl" ? "base_url" : err.field === "orgId" ? "org_id" : "token";
      ctx.diags.addAttributeError(path(attribute), "Invalid provider configuration", err.message);
      return unconfiguredClient([]);
    }
    throw err;
  }
}

/** The provider's resource types. */
export const resources: readonly AnyResourceDefinition<GpurentalClient>[] = [
  apiKeyResource,
  instanceResource,
];

/** Builds the gpurental provider definition; options are for tests. */
export function createProvider(
  opts: CreateProviderOptions = {},
): ProviderDefinition<typeof schema, GpurentalClient> {
  return {
    typeName: "gpurental",
    schema,
    configure: (req, ctx) => configureClient(req, ctx, opts),
    resources,
    dataSources,
  };
}

/** The gpurental provider, configured from its provider block and the environment. */
export const provider = createProvider();
