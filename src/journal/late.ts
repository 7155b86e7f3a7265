import type { Instance } from "../api/schemas";
import type { Diagnostic } from "../framework";
import { parseDuration } from "../framework/timeouts";
import { logger } from "../log";
import { formatMicro, instanceHourlyBurn } from "../report/money";
import { landedCandidates } from "./lost-requests";
import type { JournalEntry } from "./records";
import type { DeployJournal } from "./store";

// Deploys given up as `abandoned` (their answer was lost and nothing appeared within the reconcile
// window) may still commit later: a proxy or a queue can hold a request for much longer than the
// window. Such an entry is watched for a long time after it was sent (a day or more), and any
// instance that matches it and was created after it was sent is a late arrival: billed, and held
// by no state unless someone imports it. Every plan, apply and destroy that configures the provider
// lists the organization's instances while such a deploy is watched and warns about each one until
// it is imported or destroyed (lateArrivalDiagnostics), and `gpurental strays` names them
// (findLateArrivals).

/** The environment variable setting how long an abandoned deploy is watched, e.g. "48h". */
export const LATE_ARRIVAL_WATCH_ENV = "GPURENTAL_LATE_ARRIVAL_WATCH";
/** How long an abandoned deploy is watched by default, from when it was sent. */
export const DEFAULT_LATE_ARRIVAL_WATCH_MS = 48 * 3600_000;

/**
 * How long an abandoned deploy is watched, as GPURENTAL_LATE_ARRIVAL_WATCH sets it (the default
 * when unset or empty), or why its value is refused: no duration, or none at all ("0s"). The
 * provider and `gpurental strays` both read it here, so they accept and refuse the same values in
 * the same words.
 */
export function lateArrivalWatch(env: NodeJS.ProcessEnv): { ms: number } | { invalid: string } {
  const raw = env[LATE_ARRIVAL_WATCH_ENV];
  if (!raw) return { ms: DEFAULT_LATE_ARRIVAL_WATCH_MS };
  const ms = parseDuration(raw);
  if (ms) return { ms };
  return {
    invalid: `The ${LATE_ARRIVAL_WATCH_ENV} environment variable must be a duration such as "48h" (at most 480h); got ${JSON.stringify(raw.slice(0, 100))}.`,
  };
}

const journalLog = logger.child("journal");

/** The abandoned instance deploys still watched at `now`: sent less than `watchMs` ago. */
export function watchedAbandoned(
  entries: readonly JournalEntry[],
  now: number,
  watchMs: number,
): JournalEntry[] {
  return entries.filter((e) => {
    if (e.kind !== "instance" || e.closed?.reason !== "abandoned" || e.id !== null) return false;
    const sent = Date.parse(e.sent_at);
    return !Number.isNaN(sent) && now - sent < watchMs;
  });
}

/** One late arrival and the deploy it answers. */
export interface LateArrival {
  instance: Instance;
  entry: JournalEntry;
}

/**
 * The late arrivals among `instances`: for each watched abandoned deploy, the matching instances
 * created after it was sent, which neither the local state (`saved`, when it can be read) nor any
 * journal entry (`referenced`) holds. An instance is reported once, for the oldest deploy.
 */
export function findLateArrivals(
  abandoned: readonly JournalEntry[],
  instances: readonly Instance[],
  saved: ReadonlySet<string> | null,
  referenced: ReadonlySet<string>,
): LateArrival[] {
  const seen = new Set<string>();
  const out: LateArrival[] = [];
  for (const entry of abandoned) {
    const sentAt = Date.parse(entry.sent_at);
    for (const instance of landedCandidates(
      instances,
      entry.request,
      { before: entry.before, sentAt },
      referenced,
    )) {
      if (seen.has(instance.id) || saved?.has(instance.id)) continue;
      seen.add(instance.id);
      out.push({ instance, entry });
    }
  }
  return out;
}

/** The warning about one late arrival. */
export function lateArrivalWarning(a: LateArrival, watchEnds: string): { summary: string; detail: string } {
  const i = a.instance;
  const burn = formatMicro(BigInt(instanceHourlyBurn(i)));
  return {
    summary: `Instance ${i.id} landed after its deploy was given up: ${burn}/h, held by no state`,
    detail: `A deploy of this configuration sent at ${a.entry.sent_at} lost its answer and was given up after nothing appeared within the reconcile window; instance ${i.id} (label ${JSON.stringify(i.label ?? null)}, status ${i.status}, created at ${i.created_at ?? "an unknown time"}) matches it and was created after it was sent. It costs ${burn} per hour now (GPU ${formatMicro(BigInt(i.price_per_hour_micro))}/h while running) and no state of this directory holds it, so terraform destroy will not remove it. Import it (import { to = gpurental_instance.<name>, id = "${i.id}" }) to manage it here, or destroy it with gpurental strays --destroy. This warning repeats on every plan, apply and destroy until one of them is done (watched until ${watchEnds}; deploy journal entry ${a.entry.entry}).`,
  };
}

/**
 * The late arrivals of a journal, listed from the API with `list`; none (and no call) while no
 * abandoned deploy is watched. A listing that fails is left to the next command.
 */
export async function lateArrivalsOf(
  journal: DeployJournal,
  list: () => Promise<Instance[]>,
  now: number,
  watchMs: number,
): Promise<{ arrivals: LateArrival[]; watchEnds: (e: JournalEntry) => string }> {
  const watchEnds = (e: JournalEntry) => new Date(Date.parse(e.sent_at) + watchMs).toISOString();
  const abandoned = watchedAbandoned(journal.entries(), now, watchMs);
  if (abandoned.length === 0) return { arrivals: [], watchEnds };
  const instances = await list();
  return {
    arrivals: findLateArrivals(abandoned, instances, journal.savedIds(), journal.referencedIds()),
    watchEnds,
  };
}

/**
 * What configuring the provider reports about late arrivals, on every command, while a deploy is
 * watched (GPURENTAL_LATE_ARRIVAL_WATCH, default 48 h from when it was sent): a warning for each,
 * or an error for a watch that is no duration. `list` lists the organization's instances; a
 * listing that fails is left to the next command.
 */
export async function lateArrivalDiagnostics(
  journal: DeployJournal,
  list: () => Promise<Instance[]>,
  env: NodeJS.ProcessEnv,
): Promise<Diagnostic[]> {
  const watch = lateArrivalWatch(env);
  if ("invalid" in watch) {
    return [{ severity: "error", summary: `Invalid ${LATE_ARRIVAL_WATCH_ENV}`, detail: watch.invalid }];
  }
  const watchMs = watch.ms;
  try {
    const { arrivals, watchEnds } = await lateArrivalsOf(journal, list, Date.now(), watchMs);
    return arrivals.map((a) => ({ severity: "warning", ...lateArrivalWarning(a, watchEnds(a.entry)) }));
  } catch (err) {
    journalLog.log("debug", "could not look for late arrivals", {
      error: err instanceof Error ? err.message : String(err),
    });
    return [];
  }
}
