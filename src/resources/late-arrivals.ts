import type { Instance } from "../api/schemas";
import { type DeployJournal, type JournalEntry, watchedAbandoned } from "../journal";
import { instanceHourlyBurn } from "../market/plan-checks";
import { formatMicro } from "../report/money";
import { landedCandidates } from "./instance/deploy";

// Late arrivals (src/journal/late.ts): instances that match a deploy the journal gave up as
// abandoned, created after it was sent, that no state of the directory holds and no journal entry
// names. Every plan, apply and destroy that configures the provider lists the organization's
// instances while such a deploy is watched, and warns about each one until it is imported or
// destroyed.

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
