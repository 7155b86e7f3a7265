import type { ApiKey } from "../api/schemas";
import { attr, defineSchema, type ListResourceDefinition, lengthBetween, oneOf } from "../framework";
import { clientOf, type ProviderData } from "../provider/provider-data";
import { errorToDiagnostic } from "../provider/refusals";
import { type apiKeyResource, apiKeyToState } from "../resources/api-key/resource";
import { createdAfter, hasPrefix, listOptions, rfc3339 } from "./common";

// The gpurental_api_key list resource (Terraform 1.14+): the organization's active API keys for
// `terraform query`. A listed or imported key never has its secret (the API returns it once, to
// its creator), so what a query finds is for keeping track of keys, not for using them.

const schema = defineSchema({
  description:
    "The organization's active API keys, newest first, for `terraform query`; a key's secret is never listed.",
  attributes: {
    kind: attr.string({
      optional: true,
      description: "Only keys of this kind.",
      validators: [oneOf("personal", "team")],
    }),
    name_prefix: attr.string({
      optional: true,
      description: "Only keys whose name starts with this text.",
      validators: [lengthBetween(0, 64)],
    }),
    created_after: attr.string({
      optional: true,
      description: "Only keys created after this RFC 3339 time.",
      validators: [rfc3339("created_after")],
    }),
  },
});

/** Whether a key passes the filters. */
export function apiKeyMatches(
  key: ApiKey,
  f: { kind: string | null; name_prefix: string | null; created_after: string | null },
): boolean {
  if (f.kind !== null && key.kind !== f.kind) return false;
  if (!hasPrefix(key.name, f.name_prefix)) return false;
  return createdAfter(key.created_at, f.created_after);
}

/** The `gpurental_api_key` list resource. */
export const apiKeyList = {
  typeName: "gpurental_api_key",
  schema,
  async *list({ config }, ctx) {
    let keys: ApiKey[];
    try {
      keys = await clientOf(ctx.providerData).listApiKeys(listOptions(ctx));
    } catch (err) {
      ctx.diags.add(errorToDiagnostic(err, "read"));
      return;
    }
    for (const key of keys) {
      if (!apiKeyMatches(key, config)) continue;
      yield { state: apiKeyToState(key, null), displayName: `${key.name} (${key.prefix}…, ${key.kind})` };
    }
  },
} satisfies ListResourceDefinition<typeof schema, (typeof apiKeyResource)["schema"], ProviderData>;
