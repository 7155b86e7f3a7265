import type { DeployInstanceRequest } from "../../api/client";
import {
  AmbiguousRequestError,
  ApiError,
  NetworkError,
  RequestAbortedError,
  ResponseValidationError,
  TimeoutError,
} from "../../api/errors";
import type { Sleep } from "../../api/retry";
import type { Instance } from "../../api/schemas";
import { isTransient } from "../../api/waiter";
import type { Diagnostic } from "../../framework";
import {
  type DeployJournal,
  fingerprintOf,
  type JournalEntry,
  landedCandidates,
  listUntilFound,
  matchesRequest,
} from "../../journal";
import { formatMs, within } from "../../provider/deadline";
import { bestEffort } from "../../provider/journal-notes";
import { KeyedQueue } from "../../provider/keyed-queue";
import type { DeploySettings } from "../../provider/provider-data";
import { setMap } from "./env";
import type { InstanceApi, InstanceArgs } from "./model";

// Sending a deploy so that no instance is ever paid for twice or lost: every deploy is written to
// the deploy journal (src/journal) before it is sent and completed with the instance's id when the
// answer comes. A deploy is sent again only by the client, and only when the request provably never
// reached the server; after any other failure the instance is looked for, for a bounded window, and
// never deployed a second time. A later create of the same configuration adopts what an
// interrupted or late deploy created, from the journal, instead of deploying another.

/** What sending, reconciling and adopting deploys needs. */
export interface DeployEnv {
  client: InstanceApi;
  signal?: AbortSignal | undefined;
  /** The create's deadline (its timeout). */
  deadline: number;
  sleep: Sleep;
  now: () => number;
  settings: DeploySettings;
  /** The configuration's fingerprint, null without a journal. */
  fingerprint: string | null;
  log?: ((msg: string) => void) | undefined;
}

/** The fingerprint of an instance configuration: what makes a journal entry adoptable by a create. */
export function instanceFingerprint(args: InstanceArgs, account: DeploySettings["account"]): string {
  return fingerprintOf(
    {
      kind: "instance",
      account,
      offer: args.offer_filter ? { filter: args.offer_filter } : { offer_id: args.offer_id },
      template_id: args.template_id,
      disk_gb: args.disk_gb,
      label: args.label || null,
      ssh_key_id: args.ssh_key_id,
      // Null values and elements are not set (env.ts), so they make no difference.
      env: setMap(args.env),
      unset_env: args.unset_env ? args.unset_env.filter((k) => k !== null).sort() : null,
      // The write-only secrets count through their version only, as in plans (the plan cannot see
      // their values); left out when unset, so fingerprints written before it existed still match.
      ...(args.secret_env_wo_version == null ? {} : { secret_env_wo_version: args.secret_env_wo_version }),
    },
    setMap(args.secret_env),
  );
}

/** What the journal keeps of a deploy request: enough to recognise its instance, no env values. */
function requestSummary(body: DeployInstanceRequest): Record<string, unknown> {
  return {
    offer_id: body.offer_id,
    template_id: body.template_id,
    disk_gb: body.disk_gb,
    label: body.label ?? null,
    ssh_key_id: body.ssh_key_id ?? null,
    env_overrides: body.env_overrides?.length ?? 0,
  };
}

/** Several new instances match a deploy whose answer was lost: which one is ours cannot be told. */
export class DeployReconcileError extends Error {
  constructor(
    message: string,
    readonly candidates: readonly Instance[],
  ) {
    super(message);
    this.name = "DeployReconcileError";
  }
}

/** A deploy may have landed, and nothing appeared within the reconcile window. */
export class DeployOutcomeUnknownError extends Error {
  constructor(
    override readonly cause: unknown,
    readonly windowMs: number,
    readonly journalFile: string | null,
  ) {
    const why = cause instanceof Error ? cause.message : String(cause);
    super(
      `The deploy's outcome is unknown: its answer was lost (${why}) and no matching instance appeared within the reconcile window (${formatMs(windowMs)}). It was not sent again, so that it cannot be paid for twice. ${
        journalFile
          ? `If it lands, the next terraform apply of this configuration adopts it from the deploy journal (${journalFile}) instead of deploying another.`
          : "If it lands, list the organization's instances (data source gpurental_instances) and import it with terraform import."
      } A longer reconcile_timeout (or GPURENTAL_RECONCILE_TIMEOUT) waits longer for a slow server.`,
    );
    this.name = "DeployOutcomeUnknownError";
  }
}

/**
 * Whether a failed deploy provably created nothing: the server refused it with an answer, or the
 * client never got it to the server (it resends those itself, within its own rules).
 */
function provablyUnsent(err: unknown): boolean {
  return err instanceof ApiError || err instanceof NetworkError || err instanceof TimeoutError;
}

// Deploys of one provider process that could be taken for one another (same offer, template, disk
// and label: see matchesRequest) are serialized from the listing before them to the end of their
// reconciliation: an instance that appears after a lost answer can then be no other deploy's of
// this process. Deploys that differ in any of these run side by side, as Terraform sends them: no
// instance can match both. A resident process serializes those of all its sessions alike.
const deploys = new KeyedQueue();

/** What deploys are serialized by: the fields matchesRequest compares. */
function matchKey(body: DeployInstanceRequest): string {
  return JSON.stringify([body.offer_id, body.template_id, body.disk_gb, body.label ?? ""]);
}

/** Deploy queues with a deploy in them (for tests: none is left behind). */
export function pendingDeployQueues(): number {
  return deploys.size;
}

/** A deploy that landed, and its journal entry. */
export interface Deployed {
  instance: Instance;
  /** The journal entry; null without a journal. */
  entry: string | null;
}

/**
 * Sends one deploy, journaled. A refusal or a request that never reached the server closes the
 * entry and is thrown; any other failure (a lost answer, a timeout, an interruption) is reconciled
 * by listing, for the reconcile window within the create's deadline, and ends in the instance, in
 * {@link DeployReconcileError}, or in {@link DeployOutcomeUnknownError}: never in a second deploy.
 */
export function deployJournaled(body: DeployInstanceRequest, env: DeployEnv): Promise<Deployed> {
  const journal = env.settings.journal;
  return deploys.run(matchKey(body), async () => {
    const listed = await env.client.listInstances({}, within(env));
    const before = listed.filter((i) => matchesRequest(i, body)).map((i) => i.id);
    const sentAt = env.now();
    const entry =
      journal && env.fingerprint
        ? journal.sent("instance", env.fingerprint, requestSummary(body), before)
        : null;
    try {
      const instance = await env.client.deployInstance(body, within(env));
      if (entry) bestEffort("a deploy's answer", () => journal?.answered(entry, instance.id));
      return { instance, entry };
    } catch (err) {
      if (provablyUnsent(err)) {
        const why = err instanceof ApiError ? err.code : (err as Error).name;
        if (entry) bestEffort("a refused deploy", () => journal?.close(entry, "unsent", why));
        throw err;
      }
      const interrupted = err instanceof RequestAbortedError || env.signal?.aborted === true;
      const reason =
        err instanceof AmbiguousRequestError
          ? err.reason
          : err instanceof ResponseValidationError
            ? "unreadable answer"
            : "interrupted";
      env.log?.(`deploy answer lost (${reason}); reconciling by listing instances`);
      const { found, windowMs } = await findLanded(body, { before, sentAt }, env, interrupted);
      if (found.length === 1) {
        const instance = found[0]!;
        if (entry) bestEffort("a deploy's instance", () => journal?.answered(entry, instance.id));
        env.log?.(`the lost deploy created instance ${instance.id}`);
        return { instance, entry };
      }
      if (found.length > 1) {
        throw new DeployReconcileError(
          `The deploy's answer was lost and ${found.length} matching new instances appeared (${found.map((i) => i.id).join(", ")}); another client deployed the same configuration at the same time. Import the one that belongs here with terraform import and destroy the other.`,
          found,
        );
      }
      throw new DeployOutcomeUnknownError(err, windowMs, journal?.file ?? null);
    }
  });
}

/**
 * Lists until the lost deploy's instance shows up or the reconcile window (within the deadline)
 * ends. After an interruption the window is short and has a signal of its own: the point is only to
 * record the id, since the next apply adopts whatever the journal names.
 */
async function findLanded(
  body: DeployInstanceRequest,
  sent: { before: string[]; sentAt: number },
  env: DeployEnv,
  interrupted: boolean,
): Promise<{ found: Instance[]; windowMs: number }> {
  const windowMs = interrupted
    ? Math.min(env.settings.reconcileTimeoutMs, 3000)
    : Math.min(env.settings.reconcileTimeoutMs, Math.max(0, env.deadline - env.now()));
  const signal = interrupted ? AbortSignal.timeout(windowMs + 2000) : env.signal;
  const referenced = env.settings.journal?.referencedIds() ?? new Set<string>();
  // Each listing retries its own failures within the window, not past it.
  const end = env.now() + windowMs;
  const found = await listUntilFound({
    find: async (sig) =>
      landedCandidates(
        await env.client.listInstances(
          {},
          // After an interruption, past Terraform's stop: the window's own signal bounds it.
          { ...within({ signal: sig, deadline: end, now: env.now }), outlivesStop: interrupted },
        ),
        body as unknown as Record<string, unknown>,
        sent,
        referenced,
      ),
    isTransient,
    windowMs,
    signal,
    sleep: env.sleep,
    now: env.now,
  });
  return { found, windowMs };
}

/**
 * What a create found in the journal: an instance to adopt, nothing, or an error; `diagnostics`
 * are the notes of entries given up on the way, said in every case.
 */
export type Adoption =
  | { kind: "adopted"; instance: Instance; entry: JournalEntry; diagnostics: Diagnostic[] }
  | { kind: "none"; diagnostics: Diagnostic[] }
  | { kind: "error"; diagnostic: Diagnostic; diagnostics: Diagnostic[] };

/**
 * Takes the journal's oldest unclaimed entry of this configuration, if any, and returns its
 * instance: by id when the entry has one, else by listing for what its request created. Entries
 * whose instance is gone are closed and the next is tried; an entry with no instance to be found
 * is given up once its reconcile window has passed, and the create deploys.
 */
export async function adoptFromJournal(env: DeployEnv, planned?: string | null): Promise<Adoption> {
  const journal = env.settings.journal;
  const notes: Diagnostic[] = [];
  if (!journal || !env.fingerprint) return { kind: "none", diagnostics: notes };
  // The plan said this create adopts nothing: it deploys, as the plan showed.
  if (planned === null) return { kind: "none", diagnostics: notes };
  let first = true;
  for (;;) {
    // The entry the plan named, and only it; after it turned out gone, none.
    if (planned !== undefined && !first) return { kind: "none", diagnostics: notes };
    first = false;
    const e =
      planned === undefined
        ? journal.take("instance", env.fingerprint, env.settings.partial)
        : journal.takeEntry(planned, env.settings.partial);
    if (!e && planned !== undefined) {
      return {
        kind: "error",
        diagnostic: {
          severity: "error",
          summary: "The instance this plan adopts is no longer available",
          detail: `The plan said this create adopts an instance from the deploy journal (entry ${planned}), but since then a state has claimed it or another apply has taken it. Nothing was deployed, so that the apply does only what the plan said. Run terraform plan (or apply) again.`,
        },
        diagnostics: notes,
      };
    }
    if (!e) return { kind: "none", diagnostics: notes };
    const found = e.id ? await byId(e.id, env) : await byListing(e, journal, env);
    if (found === "gone") {
      bestEffort("a deploy that left nothing", () =>
        journal.close(e.entry, e.id ? "destroyed" : "abandoned"),
      );
      if (!e.id) notes.push(abandonedNote(e));
      continue;
    }
    if ("error" in found) return { kind: "error", diagnostic: found.error, diagnostics: notes };
    if (!e.id) bestEffort("an adopted instance", () => journal.answered(e.entry, found.instance.id));
    return {
      kind: "adopted",
      instance: found.instance,
      entry: e,
      diagnostics: [...notes, adoptedNote(found.instance, e)],
    };
  }
}

async function byId(
  id: string,
  env: DeployEnv,
): Promise<{ instance: Instance } | "gone" | { error: Diagnostic }> {
  try {
    const inst = await env.client.getInstance(id, within(env));
    if (inst.status === "destroyed" || inst.status === "destroying") return "gone";
    return { instance: inst };
  } catch (err) {
    if (err instanceof ApiError && err.code === "INSTANCE_NOT_FOUND") return "gone";
    return {
      error: {
        severity: "error",
        summary: "Could not read an instance the deploy journal holds",
        detail: `An interrupted apply deployed instance ${id} for this configuration; it could not be read (${err instanceof Error ? err.message : String(err)}), so nothing was deployed in its place. Run terraform apply again.`,
      },
    };
  }
}

async function byListing(
  e: JournalEntry,
  journal: DeployJournal,
  env: DeployEnv,
): Promise<{ instance: Instance } | "gone" | { error: Diagnostic }> {
  const sentAt = Date.parse(e.sent_at);
  // Never what a journal entry names, nor what the local state holds.
  const referenced = new Set([...journal.referencedIds(), ...(journal.savedIds() ?? [])]);
  // A young entry may still land: wait out what is left of its reconcile window. A time that cannot
  // be read is an old entry; one in the future (another machine's clock) waits one window at most.
  const windowMs = env.settings.reconcileTimeoutMs;
  const windowEnd = Number.isNaN(sentAt)
    ? Number.NEGATIVE_INFINITY
    : Math.min(sentAt + windowMs, env.now() + windowMs);
  let delay = 250;
  for (;;) {
    let items: Instance[];
    try {
      items = await env.client.listInstances({}, within(env));
    } catch (err) {
      return {
        error: {
          severity: "error",
          summary: "Could not list instances for the deploy journal",
          detail: `An interrupted apply sent a deploy for this configuration at ${e.sent_at} whose answer was lost; the instances could not be listed to find it (${err instanceof Error ? err.message : String(err)}), so nothing was deployed. Run terraform apply again.`,
        },
      };
    }
    const found = landedCandidates(items, e.request, { before: e.before, sentAt }, referenced);
    if (found.length === 1) return { instance: found[0]! };
    if (found.length > 1) {
      return {
        error: {
          severity: "error",
          summary: "Several instances may be the one an interrupted deploy created",
          detail: `A deploy of this configuration sent at ${e.sent_at} lost its answer, and ${found.length} matching instances appeared since (${found.map((i) => i.id).join(", ")}). Import the one that belongs here with terraform import; nothing was deployed.`,
        },
      };
    }
    const now = env.now();
    if (now >= windowEnd) return "gone";
    // The last wait ends with the window, and a listing follows it.
    const wait = Math.min(delay, windowEnd - now);
    // The create's deadline leaves no room for the wait and one more listing before the window
    // ends: the deploy may still land, so the entry is kept (not given up) and nothing is deployed.
    if (now + wait + LISTING_ROOM_MS > env.deadline) return stillPendingError(e, windowEnd);
    await env.sleep(wait, env.signal);
    delay = Math.min(delay * 2, 2000);
  }
}

/** Time left after a wait for one more listing of instances, else the wait is not taken. */
const LISTING_ROOM_MS = 1000;

function stillPendingError(e: JournalEntry, windowEnd: number): { error: Diagnostic } {
  const until = new Date(windowEnd).toISOString();
  return {
    error: {
      severity: "error",
      summary: "An earlier deploy of this configuration may still land",
      detail: `An earlier apply sent a deploy for this configuration at ${e.sent_at} and lost its answer, and no instance of it has appeared yet. It may still land until ${until}, later than this create's deadline leaves time to look, so nothing was deployed and the deploy journal keeps it. Run terraform apply again (after ${until} it is given up if nothing landed), or give the create a longer timeout. Deploy journal entry ${e.entry}.`,
    },
  };
}

function deployedAt(inst: Instance, e: JournalEntry): string {
  return inst.created_at ?? e.sent_at;
}

function adoptedNote(inst: Instance, e: JournalEntry): Diagnostic {
  return {
    severity: "warning",
    summary: `Adopted instance ${inst.id}, deployed at ${deployedAt(inst, e)}`,
    detail: `An earlier apply deployed instance ${inst.id} for this configuration at ${deployedAt(inst, e)} but was ${e.handed_at ? "stopped before Terraform saved it in the state" : e.id ? "interrupted before Terraform heard of it" : "left without the deploy's answer"}. It is adopted instead of deploying another, and is billed from when it started running (status now: ${inst.status}). Deploy journal: ${e.entry}.`,
  };
}

function abandonedNote(e: JournalEntry): Diagnostic {
  return {
    severity: "warning",
    summary: `A deploy sent at ${e.sent_at} never appeared`,
    detail: `An earlier apply sent a deploy of this configuration at ${e.sent_at} and lost its answer; no matching instance has appeared since, so a new one is deployed. Should the old deploy still land, it is an instance no state holds: gpurental strays lists such instances. Deploy journal entry ${e.entry}.`,
  };
}

/** The warning of a plan whose create will adopt an instance the journal holds. */
export function willAdoptNote(e: JournalEntry): Diagnostic {
  if (e.id)
    return {
      severity: "warning",
      summary: `Will adopt instance ${e.id}, deployed at ${e.answered_at ?? e.sent_at}`,
      detail: `An earlier apply deployed instance ${e.id} for this configuration (sent at ${e.sent_at}) and no state holds it. Applying adopts it instead of deploying another one. Deploy journal entry ${e.entry}.`,
    };
  return {
    severity: "warning",
    summary: `Will look for a deploy sent at ${e.sent_at}`,
    detail: `An earlier apply sent a deploy for this configuration at ${e.sent_at} and stopped before its answer was recorded, so it may have landed. Applying first looks for the instance it created and adopts it; it deploys a new one only when the deploy did not land. Deploy journal entry ${e.entry}.`,
  };
}
