import { isUuid } from "../api/ids";
import {
  type CtyValue,
  defineIdentity,
  type HandlerContext,
  type IdentityContext,
  type IdentityValue,
  identityAttr,
} from "../framework";
import type { ProviderData } from "../provider/provider-data";

// The identity of gpurental_instance and gpurental_api_key (Terraform 1.12+ and OpenTofu 1.12+):
// what names the remote object without the rest of the state. Terraform stores it beside the state,
// imports by it (`import { to = ..., identity = { id = "..." } }`) and `terraform query` (1.14+)
// writes import blocks with it.
//
// Two attributes, version 0:
// - `id` (required for import): the API names an instance or a key by its id alone, a UUID.
// - `org_id` (optional): the organization the object belongs to, as the provider configuration
//   names it. Ids are unique across the service, but an identity is compared across
//   configurations (two provider blocks for two organizations, a query in one and an import in
//   another): with the organization in it, two identities are equal only when they name the same
//   object in the same account, and an import by identity refuses an object of another
//   organization up front, naming both, instead of failing later with a 404. The API tells an API
//   key nothing about its own organization, so org_id is null when the provider does not name one;
//   once an identity holds it, a stored value is kept (it never changes for a living object).

/** The identity schema of both resources. */
export const objectIdentitySchema = (what: string) =>
  defineIdentity({
    version: 0,
    attributes: {
      id: identityAttr.required(`ID of the ${what} (a UUID).`),
      org_id: identityAttr.optional(
        `ID of the organization the ${what} belongs to, as the provider configuration names it (\`org_id\` or \`GPURENTAL_ORG_ID\`); null when the provider acts in its credential's own organization without naming it. Optional in an import block; when given, it must be the provider's organization.`,
      ),
    },
  });

/** The organization a configured provider names, or null. */
function configuredOrg(data: ProviderData | undefined): string | null {
  return data?.configured ? (data.credential.orgId ?? null) : null;
}

/** The identity of `id`/`org_id` for a resource named `what` ("instance", "API key"). */
export function objectIdentity(what: string) {
  const schema = objectIdentitySchema(what);
  return {
    schema,
    of(state: { readonly id: string | null }, ctx: IdentityContext<ProviderData>): IdentityValue {
      const stored = typeof ctx.prior?.org_id === "string" ? ctx.prior.org_id : null;
      return { id: state.id, org_id: stored ?? configuredOrg(ctx.providerData) };
    },
    importId(identity: IdentityValue, ctx: HandlerContext<ProviderData>): string | undefined {
      const id = identity.id;
      const org = identity.org_id;
      if (typeof id !== "string" || !isUuid(id)) {
        ctx.diags.addError(
          "Invalid identity",
          `identity.id must be the ${what}'s ID (a UUID such as "00000000-0000-4000-8000-000000000001"); got ${quoted(id ?? null)}.`,
        );
        return undefined;
      }
      if (org === null) return id;
      if (typeof org !== "string" || !isUuid(org)) {
        ctx.diags.addError(
          "Invalid identity",
          `identity.org_id must be an organization ID (a UUID) or left out; got ${quoted(org ?? null)}.`,
        );
        return undefined;
      }
      const own = configuredOrg(ctx.providerData);
      if (own === org) return id;
      // No attribute path: the identity is the import block's, not an attribute of the resource.
      ctx.diags.addError(
        `ORG_MISMATCH: the ${what} is in another organization`,
        own === null
          ? `identity.org_id names organization ${org}, but this provider configuration names none (it acts in its credential's own organization, which the API does not tell). Set org_id = "${org}" in the provider block (or GPURENTAL_ORG_ID), or leave org_id out of the identity.`
          : `identity.org_id names organization ${org}, but this provider acts in organization ${own}. Import it with a provider configured for ${org} (an aliased provider block and provider = gpurental.<alias> in the import block), or correct the identity.`,
      );
      return undefined;
    },
  };
}

function quoted(v: CtyValue): string {
  return v === null ? "null" : JSON.stringify(String(v)).slice(0, 100);
}
