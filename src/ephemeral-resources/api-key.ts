import { ApiError } from "../api/errors";
import type { ApiKeyKind } from "../api/schemas";
import {
  attr,
  defineSchema,
  type EphemeralResourceDefinition,
  type HandlerContext,
  lengthBetween,
  oneOf,
  printable,
  readPrivate,
  writePrivate,
} from "../framework";
import { logger } from "../log";
import { budgetOf, CHANGE_TIMEOUT_MS, within } from "../provider/deadline";
import { bestEffort } from "../provider/journal-notes";
import { clientOf, credentialKindOfProvider, deployOf, type ProviderData } from "../provider/provider-data";
import { createKeyJournaled, KeyOutcomeUnknownError } from "../resources/api-key/journal";
import { reportKeyError } from "../resources/api-key/resource";

// ephemeral "gpurental_api_key": an API key that lives for one Terraform run. Open creates it,
// Close revokes it, and nothing of it reaches a plan or a state. The creation goes through the same
// journaled path as the gpurental_api_key resource: its `sent` record is on disk before the request
// leaves, so a key whose Close never came (Ctrl-C twice, a killed terraform or provider) is revoked
// by the next run of the configuration (every key creation, instance create or delete sweeps
// first), and until then `gpurental strays` lists it, since no state holds it. The entry is never
// marked as handed to Terraform: no state can claim it, so even a `-target` run revokes it.
//
// There is no Renew: keys do not expire in the contract, so Open gives no renew_at and Terraform
// never calls it. The key lives exactly from Open to Close.

const log = logger.child("ephemeral_api_key");

/** What Close needs, kept by Terraform in memory between Open and Close (no secret). */
interface KeyPrivate {
  id: string;
  entry: string | null;
}

const schema = defineSchema({
  description: [
    "An API key for the length of one Terraform run (Terraform 1.10 or later): created when the run first needs it, revoked when the run is done with it, and never written to a plan or a state. Use it where a run needs a credential only while it runs: as the `token` of a provider alias (a `team` key makes the instances that alias deploys show `deployed_via_api_key`), or as the value of another provider's write-only argument.",
    "Each run that needs the value creates a key of its own: a `terraform apply` creates one while it plans and another while it applies, each revoked at the end of its phase, after a failed apply and after a Ctrl-C too. A key whose revocation never came (Ctrl-C twice, terraform or the provider killed) is recorded in the deploy journal (see the provider's `journal_dir`) before it is created, and the next plan or apply of the configuration revokes it; until then `gpurental strays` lists it as a key no state holds.",
    "Creating and revoking keys needs a signed-in session (`gps_…` token) in the provider that owns this block; a `team` key needs an admin's. Keys do not expire, so the key is never renewed. Whatever receives the secret (an instance's `secret_env_wo`, another provider) can use it only until the run ends. To keep a key across runs, use the `gpurental_api_key` resource (its secret is then kept in the state).",
  ].join("\n\n"),
  attributes: {
    name: attr.string({
      required: true,
      description:
        "Label of the key shown in the console while it lives, 1 to 64 characters, without control characters (line breaks, tabs, ESC, NUL) or bidirectional overrides (an error at plan). Name it after the configuration, so that `gpurental strays` says whose a left-over key was.",
      validators: [lengthBetween(1, 64), printable("name")],
    }),
    kind: attr.string({
      optional: true,
      computed: true,
      description:
        "`personal` (default) or `team`. A team key needs an admin's session; instances deployed with it show the key in `deployed_via_api_key`.",
      validators: [oneOf("personal", "team")],
    }),
    id: attr.string({ computed: true, description: "ID of the API key." }),
    prefix: attr.string({
      computed: true,
      description: "The first 12 characters of the secret, which identify the key in the console.",
    }),
    created_at: attr.string({ computed: true, description: "When the key was created (RFC 3339)." }),
    secret: attr.string({
      computed: true,
      sensitive: true,
      description:
        "The key's secret (`gpr_` followed by 48 hex characters): a bearer token for the length of the run, e.g. the `token` of a provider alias or a write-only argument.",
    }),
  },
});

function privateOf(buf: Buffer): KeyPrivate | null {
  const p = readPrivate(buf);
  return typeof p.id === "string" ? { id: p.id, entry: typeof p.entry === "string" ? p.entry : null } : null;
}

/** The `gpurental_api_key` ephemeral resource. */
export const apiKeyEphemeral = {
  typeName: "gpurental_api_key",
  schema,

  async open({ config }, ctx) {
    const name = config.name as string;
    const kind = ((config.kind as string | null) ?? "personal") as ApiKeyKind;
    if (credentialKindOfProvider(ctx.providerData) === "api_key") {
      ctx.diags.addAttributeError(
        [{ attribute: "name" }],
        "ADMIN_REQUIRED: API keys cannot be created with an API key",
        "The provider that owns this ephemeral block is configured with an API key (gpr_…), and API keys can never create or revoke API keys. Give it a signed-in session token (gps_…); use a provider alias configured with the key this block creates for everything else.",
      );
      return { result: {} };
    }
    const settings = deployOf(ctx.providerData);
    try {
      const { created, entry } = await createKeyJournaled(
        { name, kind },
        {
          client: clientOf(ctx.providerData),
          signal: ctx.signal,
          settings,
          deadline: budgetOf(CHANGE_TIMEOUT_MS, ctx.signal).deadline,
        },
        { ephemeral: true },
      );
      const priv: KeyPrivate = { id: created.key.id, entry };
      log.info("created a key for this run", { id: created.key.id, name });
      return {
        result: {
          name,
          kind: created.key.kind,
          id: created.key.id,
          prefix: created.key.prefix,
          created_at: created.key.created_at,
          secret: created.secret,
        },
        private: writePrivate({ ...priv }),
      };
    } catch (err) {
      if (err instanceof KeyOutcomeUnknownError)
        ctx.diags.addError("API key creation outcome unknown", err.message);
      else reportKeyError(ctx, err, "create_key", kind);
      return { result: {} };
    }
  },

  async close(req, ctx) {
    const key = privateOf(req.private);
    if (!key) return;
    await revokeRunKey(key, ctx);
  },
} satisfies EphemeralResourceDefinition<typeof schema, ProviderData>;

/** Revokes a run's key and closes its journal entry; a failure leaves the entry for the next run. */
async function revokeRunKey(key: KeyPrivate, ctx: HandlerContext<ProviderData>): Promise<void> {
  const journal = deployOf(ctx.providerData).journal;
  try {
    await clientOf(ctx.providerData).revokeApiKey(key.id, {
      ...within(budgetOf(CHANGE_TIMEOUT_MS, ctx.signal)),
      outlivesStop: true,
    });
  } catch (err) {
    if (!(err instanceof ApiError && err.code === "API_KEY_NOT_FOUND")) {
      const why = err instanceof Error ? err.message : String(err);
      ctx.diags.addWarning(
        `API key ${key.id} of this run was not revoked`,
        `Revoking the run's key failed (${why}). ${
          journal && key.entry
            ? `The deploy journal (${journal.file}) holds it: the next plan or apply of this configuration revokes it.`
            : "Revoke it in the console."
        } Until then, gpurental strays lists it.`,
      );
      return;
    }
  }
  const entry = key.entry;
  if (journal && entry) bestEffort("a revoked run key", () => journal.close(entry, "revoked"));
  log.info("revoked the key of this run", { id: key.id });
}
