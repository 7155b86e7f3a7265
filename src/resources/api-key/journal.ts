import type { GpurentalClient } from "../../api/client";
import { ApiError, NetworkError, RequestAbortedError, TimeoutError } from "../../api/errors";
import { realSleep, type Sleep } from "../../api/retry";
import type { ApiKey, ApiKeyKind, CreatedApiKey } from "../../api/schemas";
import { isTransient } from "../../api/waiter";
import { createdInWindow, fingerprintOf, type JournalEntry, listUntilFound } from "../../journal";
import { logger } from "../../log";
import { budgetOf, formatMs, within } from "../../provider/deadline";
import { bestEffort } from "../../provider/journal-notes";
import { KeyedQueue } from "../../provider/keyed-queue";
import type { DeploySettings, ProviderData } from "../../provider/provider-data";

// Creating API keys so that none is ever left live without its secret in a state. A key's secret
// is returned once, so a key whose creation answer was lost (or whose process died before
// Terraform saved it) can never be adopted: it is found and revoked. Every creation is written to
// the deploy journal before it is sent; a later apply or destroy of the working directory revokes
// what the journal proves was created by a lost or interrupted request and no state claimed.

const log = logger.child("api_key");

/** How long the revocation of a key a lost creation made may take, Terraform's stop or not. */
const REVOKE_LOST_KEY_MS = 20_000;

/** What creating a key needs. */
export interface KeyEnv {
  client: Pick<GpurentalClient, "createApiKey" | "listApiKeys" | "revokeApiKey">;
  signal: AbortSignal;
  /** When the operation must be over (ms, on `now`); each call retries within it. */
  deadline?: number;
  settings: DeploySettings;
  now?: () => number;
  sleep?: Sleep;
}

/** A key creation may have landed and no key appeared within the reconcile window. */
export class KeyOutcomeUnknownError extends Error {
  constructor(cause: unknown, windowMs: number, journalFile: string | null) {
    const why = cause instanceof Error ? cause.message : String(cause);
    super(
      `The API key creation's outcome is unknown: its answer was lost (${why}) and no matching key appeared within the reconcile window (${formatMs(windowMs)}). It was not sent again. ${
        journalFile
          ? `If it lands, it is a key whose secret nobody holds: the next terraform apply or destroy in this working directory revokes it (deploy journal ${journalFile}).`
          : "If it lands, revoke it in the console: its secret is lost."
      }`,
    );
    this.name = "KeyOutcomeUnknownError";
  }
}

function fingerprint(body: { name: string; kind: ApiKeyKind }, account: DeploySettings["account"]): string {
  return fingerprintOf({ kind: "api_key", account, name: body.name, key_kind: body.kind });
}

/** Keys that a creation of `req` may have made: same name and kind, new, in time, named by no entry. */
/** What a key creation's key is recognised by: a listed key, or one a state holds. */
export type KeyShape = Pick<ApiKey, "id" | "name" | "kind" | "created_at">;

function lostKeyCandidates<K extends KeyShape>(
  keys: readonly K[],
  req: Record<string, unknown>,
  sent: { before: readonly string[]; sentAt: number },
  referenced: ReadonlySet<string>,
): K[] {
  const before = new Set(sent.before);
  return keys.filter(
    (k) =>
      k.name === req.name &&
      k.kind === req.kind &&
      !before.has(k.id) &&
      !referenced.has(k.id) &&
      createdInWindow(k.created_at, sent.sentAt),
  );
}

/** Whether `key` is what the key creation of entry `e` made (see lostKeyCandidates). */
export function answersKeyRequest(key: KeyShape, e: JournalEntry, referenced: ReadonlySet<string>): boolean {
  return (
    lostKeyCandidates([key], e.request, { before: e.before, sentAt: Date.parse(e.sent_at) }, referenced)
      .length === 1
  );
}

// Key creations of one provider process with the same name and kind are serialized from the
// listing before them to the end of their reconciliation, so that a key appearing after a lost
// answer can only be that creation's; others run side by side (no key can match both).
const creations = new KeyedQueue();

/** Key creation queues with a creation in them (for tests: none is left behind). */
export function pendingKeyCreations(): number {
  return creations.size;
}

/** A created key and its journal entry (null without a journal). */
export interface CreatedKey {
  created: CreatedApiKey;
  entry: string | null;
}

/**
 * Creates a key, journaled. A lost answer is reconciled by listing within the reconcile window:
 * the key it created is revoked (its secret is lost) and the creation sent once more, since
 * nothing of it is then left; if none appears, the creation fails with {@link KeyOutcomeUnknownError}.
 */
export async function createKeyJournaled(
  body: { name: string; kind: ApiKeyKind },
  env: KeyEnv,
  /** Recorded with the request in the journal (e.g. that the key is an ephemeral resource's). */
  note: Readonly<Record<string, string | boolean>> = {},
): Promise<CreatedKey> {
  await sweepLostKeys(env);
  return creations.run(JSON.stringify([body.name, body.kind]), () => createKey(body, env, note));
}

async function createKey(
  body: { name: string; kind: ApiKeyKind },
  env: KeyEnv,
  note: Readonly<Record<string, string | boolean>>,
): Promise<CreatedKey> {
  const { client, signal, settings } = env;
  const journal = settings.journal;
  const now = env.now ?? Date.now;
  const opts = () =>
    env.deadline === undefined ? { signal } : within({ signal, deadline: env.deadline, now });
  for (let attempt = 1; ; attempt++) {
    const before = (await client.listApiKeys(opts()))
      .filter((k) => k.name === body.name && k.kind === body.kind)
      .map((k) => k.id);
    const sentAt = now();
    const entry = journal
      ? journal.sent("api_key", fingerprint(body, settings.account), { ...note, ...body }, before)
      : null;
    try {
      const created = await client.createApiKey(body, opts());
      if (entry) bestEffort("a key's id", () => journal?.answered(entry, created.key.id));
      return { created, entry };
    } catch (err) {
      if (err instanceof ApiError || err instanceof NetworkError || err instanceof TimeoutError) {
        const why = err instanceof ApiError ? err.code : err.name;
        if (entry) bestEffort("a refused key creation", () => journal?.close(entry, "unsent", why));
        throw err;
      }
      const interrupted = err instanceof RequestAbortedError || signal.aborted;
      const found = await findLostKey(body, { before, sentAt }, env, interrupted);
      if (found.length === 0) {
        if (interrupted) throw err;
        throw new KeyOutcomeUnknownError(err, settings.reconcileTimeoutMs, journal?.file ?? null);
      }
      if (found.length > 1) {
        throw new Error(
          `The API key creation's answer was lost and ${found.length} new keys named ${JSON.stringify(body.name)} appeared (${found.map((k) => k.id).join(", ")}); another client created keys of that name at the same time, so none was revoked. Revoke the one without a holder in the console.`,
        );
      }
      const lost = found[0]!;
      if (entry) bestEffort("a lost key's id", () => journal?.answered(entry, lost.id));
      // A budget of its own: after an interruption (Terraform's stop included) the key must still
      // be revoked.
      await client.revokeApiKey(lost.id, {
        ...within(budgetOf(REVOKE_LOST_KEY_MS, AbortSignal.timeout(REVOKE_LOST_KEY_MS))),
        outlivesStop: true,
      });
      if (entry) bestEffort("a revoked key", () => journal?.close(entry, "revoked"));
      log.info("revoked the key a lost creation made; its secret was lost with the answer", { id: lost.id });
      if (interrupted || attempt >= 2) throw err;
    }
  }
}

async function findLostKey(
  body: { name: string; kind: ApiKeyKind },
  sent: { before: string[]; sentAt: number },
  env: KeyEnv,
  interrupted: boolean,
): Promise<ApiKey[]> {
  const now = env.now ?? Date.now;
  const sleep = env.sleep ?? realSleep;
  const windowMs = interrupted
    ? Math.min(env.settings.reconcileTimeoutMs, 3000)
    : env.settings.reconcileTimeoutMs;
  const signal = interrupted ? AbortSignal.timeout(windowMs + 2000) : env.signal;
  const referenced = env.settings.journal?.referencedIds() ?? new Set<string>();
  // Each listing retries its own failures within the window, not past it.
  const end = now() + windowMs;
  return listUntilFound({
    find: async (sig) =>
      lostKeyCandidates(
        // After an interruption, past Terraform's stop: the window's own signal bounds it.
        await env.client.listApiKeys({
          ...within({ signal: sig, deadline: end, now }),
          outlivesStop: interrupted,
        }),
        body,
        sent,
        referenced,
      ),
    isTransient,
    windowMs,
    signal,
    sleep,
    now,
  });
}

// One sweep per journal (so per provider process), by the first operation of an apply or destroy.
const sweeps = new WeakMap<object, Promise<void>>();

/**
 * Revokes the keys that the journal proves were created by lost or interrupted requests of
 * processes that are gone and that no state has claimed: a key never returned to Terraform, or one
 * returned but absent from every plan since and from the saved state (with `-target`, where the
 * state cannot be read, only the former). Failures are logged and the entries kept for the next
 * apply.
 */
export function sweepLostKeys(env: Omit<KeyEnv, "signal"> & { signal?: AbortSignal }): Promise<void> {
  const journal = env.settings.journal;
  if (!journal) return Promise.resolve();
  let pending: JournalEntry[];
  try {
    pending = journal.live("api_key").filter((e) => journal.isAdoptable(e, env.settings.partial));
  } catch {
    return Promise.resolve();
  }
  if (pending.length === 0) return Promise.resolve();
  let sweep = sweeps.get(journal);
  if (!sweep) {
    sweep = revokeAll(pending, env).catch((err: unknown) => {
      log.warn("could not revoke the keys of lost creations; the next apply tries again", {
        error: err instanceof Error ? err.message : String(err),
      });
    });
    sweeps.set(journal, sweep);
  }
  return sweep;
}

async function revokeAll(
  entries: readonly JournalEntry[],
  env: Omit<KeyEnv, "signal"> & { signal?: AbortSignal },
): Promise<void> {
  const journal = env.settings.journal!;
  const now = env.now ?? Date.now;
  // A minute for the whole sweep; its calls retry within it.
  const budget = budgetOf(60_000, env.signal, now);
  const referenced = journal.referencedIds();
  let listed: ApiKey[] | null = null;
  const assigned = new Set<string>();
  for (const e of entries) {
    let id = e.id;
    if (!id) {
      listed ??= await env.client.listApiKeys(within(budget));
      const found = lostKeyCandidates(
        listed,
        e.request,
        { before: e.before, sentAt: Date.parse(e.sent_at) },
        referenced,
      ).filter((k) => !assigned.has(k.id));
      if (found.length > 1) continue; // Cannot tell which; never revoke a key that may be someone's.
      if (found.length === 0) {
        if (now() - Date.parse(e.sent_at) > env.settings.reconcileTimeoutMs) {
          bestEffort("a key creation that left nothing", () => journal.close(e.entry, "abandoned"));
        }
        continue;
      }
      id = found[0]!.id;
      assigned.add(id);
      const known = id;
      bestEffort("a lost key's id", () => journal.answered(e.entry, known));
    }
    try {
      await env.client.revokeApiKey(id, within(budget));
    } catch (err) {
      if (!(err instanceof ApiError && err.code === "API_KEY_NOT_FOUND")) throw err;
    }
    const revoked = id;
    bestEffort("a revoked key", () => journal.close(e.entry, "revoked"));
    log.warn("revoked an API key created by an interrupted or lost request; nobody holds its secret", {
      id: revoked,
      name: String(e.request.name ?? ""),
      sent_at: e.sent_at,
    });
  }
}

/** The sweep, for resources other than the key (an instance create or delete starts it too). */
export function sweepLostKeysOf(data: ProviderData, signal?: AbortSignal): Promise<void> {
  // Without a configuration there is no journal to sweep.
  if (!data.configured) return Promise.resolve();
  return sweepLostKeys({ client: data.client, settings: data.deploy, ...(signal ? { signal } : {}) });
}
