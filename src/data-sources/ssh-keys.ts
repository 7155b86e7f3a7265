import { isApiError } from "../api/errors";
import { attr, type DataSourceDefinition, defineSchema } from "../framework";
import { clientOf, type ProviderData } from "../provider/provider-data";
import { readOptions, reportReadError } from "./common";
import { sshKeyObjectAttributes, sshKeyToObject } from "./objects";

const schema = defineSchema({
  description:
    "Lists the SSH keys of the signed-in user. Needs a session token: the API does not let API keys read SSH keys.",
  attributes: {
    ssh_keys: attr.listNested(sshKeyObjectAttributes, {
      computed: true,
      description: "The user's SSH keys.",
    }),
  },
});

/** The `gpurental_ssh_keys` data source: the signed-in user's SSH keys. */
export const sshKeysDataSource = {
  typeName: "gpurental_ssh_keys",
  schema,
  async read(_req, ctx) {
    try {
      const keys = await clientOf(ctx.providerData).listSshKeys(readOptions(ctx));
      return { ssh_keys: keys.map(sshKeyToObject) };
    } catch (err) {
      reportReadError(
        ctx.diags,
        "gpurental_ssh_keys",
        err,
        isApiError(err, "TOKEN_INVALID")
          ? "SSH keys belong to a user and can only be listed with a signed-in session token, never with an API key. Configure the provider with a session token, or pass the key's id to ssh_key_id directly."
          : undefined,
      );
      return {};
    }
  },
} satisfies DataSourceDefinition<typeof schema, ProviderData>;
