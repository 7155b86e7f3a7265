import type { GpurentalClient } from "../../api/client";
import { ApiError } from "../../api/errors";
import type { ApiKey, ApiKeyKind } from "../../api/schemas";
import {
  attr,
  defineSchema,
  type HandlerContext,
  isUnknown,
  lengthBetween,
  oneOf,
  path,
  printable,
  type ResourceDefinition,
  requiresReplace,
  useStateForUnknown,
} from "../../framework";
import { type Budget, budgetOf, CHANGE_TIMEOUT_MS, READ_TIMEOUT_MS, within } from "../../provider/deadline";
import { bestEffort } from "../../provider/journal-notes";
import {
  clientOf,
  credentialKindOfProvider,
  deployOf,
  type ProviderData,
} from "../../provider/provider-data";
import { errorToDiagnostic } from "../../provider/refusals";
import { noStateToGenerateFrom } from "../generate-config";
import { objectIdentity } from "../identity";
import {
  answersKeyRequest,
  createKeyJournaled,
  KeyOutcomeUnknownError,
  type KeyShape,
  sweepLostKeysOf,
} from "./journal";

// gpurental_api_key: an API key of the organization. There is no update endpoint, so both
// arguments force replacement. The secret exists only in the create response; it is kept in state
// (sensitive) and never refreshed.

const KEY_ARGUMENTS = ["name", "kind"];

const stable = () => [useStateForUnknown()];

const schema = defineSchema({
  description:
    "An API key of the organization: a credential for scripts, CI jobs and tooling that acts as a member of the organization. Creating one needs a signed-in session (`gps_…` token); a `team` key needs an admin's session. The secret is returned once, when the key is created, and kept in the Terraform state as a sensitive value: protect the state accordingly. An imported key has no `secret` (null), because the API never returns it again.\n\nThere is no update: changing `name` or `kind` revokes the key and creates a new one with a new secret.\n\nA key whose creation answer was lost, or whose apply was interrupted before Terraform saved it, is a live credential whose secret nobody holds: every creation is recorded in the deploy journal (see the provider's `journal_dir`) before it is sent, and such a key is revoked, by the creation itself when it finds the key within `reconcile_timeout`, otherwise by the next apply or destroy in the working directory.",
  attributes: {
    id: attr.string({ computed: true, description: "ID of the API key.", planModifiers: stable() }),
    name: attr.string({
      required: true,
      description:
        "Label of the key shown in the console, 1 to 64 characters, without control characters (line breaks, tabs, ESC, NUL) or bidirectional overrides (an error at plan). Changing it replaces the key.",
      validators: [lengthBetween(1, 64), printable("name")],
      planModifiers: [requiresReplace()],
    }),
    kind: attr.string({
      optional: true,
      computed: true,
      default: "personal",
      description:
        "`personal` (default): revoked automatically when its creator leaves the organization. `team`: managed by admins, keeps working after its creator leaves; creating it needs an admin session. Changing it replaces the key.",
      validators: [oneOf("personal", "team")],
      planModifiers: [requiresReplace()],
    }),
    prefix: attr.string({
      computed: true,
      description:
        "The first 12 characters of the secret (e.g. `gpr_1a2b3c4d`), the only part the service stores; it identifies the key in the console.",
      planModifiers: stable(),
    }),
    creator_email: attr.string({
      computed: true,
      description:
        "Email of the member who created the key, or their phone number with country code when they have no email.",
      planModifiers: stable(),
    }),
    creator_id: attr.string({
      computed: true,
      description: "User ID of the key's creator.",
      planModifiers: stable(),
    }),
    created_at: attr.string({
      computed: true,
      description: "When the key was created (RFC 3339).",
      planModifiers: stable(),
    }),
    last_used_at: attr.string({
      computed: true,
      description:
        "When the key last made a request (RFC 3339), or null if never. It changes on every use of the key; a refresh records the new value without planning any change.",
    }),
    creator_is_member: attr.bool({
      computed: true,
      description:
        "Whether the creator is still a member of the organization (false once they have left; a team key keeps working).",
    }),
    secret: attr.string({
      computed: true,
      sensitive: true,
      description:
        "The key's secret (`gpr_` followed by 48 hex characters), to be used as a bearer token, e.g. as `token` of another provider block. Known only from the create response: it is kept in state, never refreshed, and null for an imported key.",
      planModifiers: stable(),
    }),
  },
});

/** The state of gpurental_api_key. */
export interface ApiKeyState {
  id: string;
  name: string;
  kind: string;
  prefix: string;
  creator_email: string;
  creator_id: string;
  created_at: string;
  last_used_at: string | null;
  creator_is_member: boolean;
  secret: string | null;
}

/** Maps an API key record onto the resource state, with the secret known from elsewhere. */
export function apiKeyToState(key: ApiKey, secret: string | null): ApiKeyState {
  return {
    id: key.id,
    name: key.name,
    kind: key.kind,
    prefix: key.prefix,
    creator_email: key.creator_email,
    creator_id: key.creator_id,
    created_at: key.created_at,
    last_used_at: key.last_used_at,
    creator_is_member: key.creator_is_member,
    secret,
  };
}

/** The wording added to ADMIN_REQUIRED / TOKEN_INVALID that names the credential in use and the one needed. */
function credentialAdvice(data: ProviderData, kind: ApiKeyKind): string {
  const cred = credentialKindOfProvider(data);
  const needed =
    kind === "team" ? "a signed-in session of an organization admin" : "a signed-in session (gps_… token)";
  if (cred === "api_key") {
    return `The provider is configured with an API key (gpr_…), and API keys can never create or revoke API keys. Configure the provider's token with ${needed}.`;
  }
  if (cred === "session" && kind === "team") {
    return `The provider's session belongs to a member who is not an admin; team keys are created by admins. Use ${needed}, or create a personal key (kind = "personal").`;
  }
  return `Creating a ${kind} key needs ${needed}.`;
}

async function findKey(client: GpurentalClient, id: string, budget: Budget): Promise<ApiKey | undefined> {
  return (await client.listApiKeys(within(budget))).find((k) => k.id === id);
}

/** The budget of an operation of this resource: it has no `timeouts`, so the defaults apply. */
function budgetFor(ctx: HandlerContext<ProviderData>, op: "read" | "change"): Budget {
  return budgetOf(ctx.timeoutMs ?? (op === "read" ? READ_TIMEOUT_MS : CHANGE_TIMEOUT_MS), ctx.signal);
}

/** Reports a key operation's failure, with advice on the credential when it was refused. */
export function reportKeyError(
  ctx: HandlerContext<ProviderData>,
  err: unknown,
  op: "create_key" | "delete_key" | "read",
  kind: ApiKeyKind,
): void {
  const d = errorToDiagnostic(err, op, KEY_ARGUMENTS);
  if (
    op !== "read" &&
    err instanceof ApiError &&
    (err.code === "ADMIN_REQUIRED" || err.code === "TOKEN_INVALID")
  ) {
    d.detail = `${credentialAdvice(ctx.providerData, kind)} ${d.detail}`;
  }
  ctx.diags.add(d);
}

/** Closes the journal's entries of a key a state holds, or that is gone. */
function claim(ctx: HandlerContext<ProviderData>, id: string | null, reason: "claimed" | "revoked"): void {
  const journal = deployOf(ctx.providerData).journal;
  if (!journal || !id) return;
  // A claim is made again by the next read if lost; a revocation is recorded before returning.
  if (reason === "claimed") journal.closeIdSoon(id, reason);
  else bestEffort("a revoked key", () => journal.closeId(id, reason));
}

/**
 * A read of a key a state holds: a key creation whose answer the journal never recorded, and whose
 * request this key answers, is this key's, and is closed (DeployJournal.claimLanded), so that no
 * sweep revokes a key a state holds.
 */
function claimLandedKey(ctx: HandlerContext<ProviderData>, key: KeyShape): void {
  const journal = deployOf(ctx.providerData).journal;
  if (!journal) return;
  bestEffort("the creation of a key a state holds", () =>
    journal.claimLanded("api_key", key.id, (e, referenced) => answersKeyRequest(key, e, referenced)),
  );
}

/** The `gpurental_api_key` resource. */
export const apiKeyResource = {
  typeName: "gpurental_api_key",
  schema,

  async modifyPlan(req, ctx) {
    // Every plan shows the provider the keys its state holds: the journal's proof of a claim
    // (with -refresh=false, the only one).
    if (req.state !== null) {
      claim(ctx, req.state.id, "claimed");
      const { id, name, kind, created_at } = req.state;
      if (id && name !== null && kind !== null)
        claimLandedKey(ctx, { id, name, kind: kind as ApiKeyKind, created_at: created_at ?? "" });
    }
    // Only a creation can be checked, and only what is certain from the credential's kind.
    if (req.state !== null || !req.plan) return;
    const data = ctx.providerData;
    if (!data.configured) return;
    const cred = data.credential;
    const kind = isUnknown(req.plan.kind) ? undefined : ((req.plan.kind as ApiKeyKind | null) ?? "personal");
    if (cred.kind === "api_key") {
      ctx.diags.addAttributeError(
        path("name"),
        "ADMIN_REQUIRED: API keys cannot be created with an API key",
        `${credentialAdvice(ctx.providerData, kind ?? "personal")} The API would refuse the creation with 403 ADMIN_REQUIRED.`,
      );
      return;
    }
    if (cred.kind === "session" && kind === "team") {
      // A member's session cannot create team keys; the role is readable, so say it now.
      let role: string | undefined;
      try {
        role = (await data.client.getMe(within(budgetOf(20_000, ctx.signal)))).role;
      } catch {
        return; // Cannot ask: the apply-time answer still says it.
      }
      if (role === "member") {
        ctx.diags.addAttributeError(
          path("kind"),
          "ADMIN_REQUIRED: team keys are created by admins",
          `${credentialAdvice(ctx.providerData, "team")} The API would refuse the creation with 403 ADMIN_REQUIRED.`,
        );
      }
    }
  },

  async create({ plan }, ctx) {
    const kind = (plan.kind ?? "personal") as ApiKeyKind;
    const name = plan.name as string;
    const settings = deployOf(ctx.providerData);
    try {
      const { created, entry } = await createKeyJournaled(
        { name, kind },
        {
          client: clientOf(ctx.providerData),
          signal: ctx.signal,
          settings,
          deadline: budgetFor(ctx, "change").deadline,
        },
      );
      if (entry) bestEffort("a handed key", () => settings.journal?.handed(entry));
      return apiKeyToState(created.key, created.secret);
    } catch (err) {
      if (err instanceof KeyOutcomeUnknownError) {
        ctx.diags.addError("API key creation outcome unknown", err.message);
        return null;
      }
      reportKeyError(ctx, err, "create_key", kind);
      return null;
    }
  },

  async read({ state }, ctx) {
    // With a provider configuration known only after apply, the state stays as it was.
    const data = ctx.providerData;
    if (!data.configured) return state;
    try {
      const key = await findKey(data.client, state.id!, budgetFor(ctx, "read"));
      // A key no longer listed was revoked (or its personal creator left): it is gone.
      claim(ctx, state.id, key ? "claimed" : "revoked");
      if (key) claimLandedKey(ctx, key);
      if (!key) return null;
      return apiKeyToState(key, state.secret);
    } catch (err) {
      reportKeyError(ctx, err, "read", (state.kind ?? "personal") as ApiKeyKind);
      return state;
    }
  },

  async update({ state }) {
    // Every argument forces replacement; nothing can change in place.
    return state;
  },

  async delete({ state }, ctx) {
    await sweepLostKeysOf(ctx.providerData, ctx.signal);
    try {
      await clientOf(ctx.providerData).revokeApiKey(state.id!, within(budgetFor(ctx, "change")));
    } catch (err) {
      // Revoked already (by an earlier attempt whose answer was lost, or outside Terraform): done.
      if (!(err instanceof ApiError && err.code === "API_KEY_NOT_FOUND")) {
        reportKeyError(ctx, err, "delete_key", (state.kind ?? "personal") as ApiKeyKind);
        return;
      }
    }
    claim(ctx, state.id, "revoked");
  },

  async importState({ id }, ctx) {
    try {
      const key = await findKey(clientOf(ctx.providerData), id, budgetFor(ctx, "read"));
      if (!key) {
        ctx.diags.addError(
          "API_KEY_NOT_FOUND: no such API key",
          `No active API key with ID ${id} is listed for the organization. Revoked keys cannot be imported.`,
        );
        return {};
      }
      return apiKeyToState(key, null);
    } catch (err) {
      reportKeyError(ctx, err, "read", "personal");
      return {};
    }
  },

  identity: objectIdentity("API key"),

  /** What Terraform 1.14+ writes for an imported or listed key: its name, and its kind when team. */
  generateConfig({ state }, ctx) {
    if (!state) {
      const { summary, detail } = noStateToGenerateFrom("gpurental_api_key");
      ctx.diags.addWarning(summary, detail);
      return null;
    }
    return { name: state.name, kind: state.kind === "team" ? "team" : null };
  },
} satisfies ResourceDefinition<typeof schema, ProviderData>;
