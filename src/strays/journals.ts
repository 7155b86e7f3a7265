import { existsSync, statSync } from "node:fs";
import { resolve } from "node:path";
import type { JournalEntry } from "../journal";
import { findLateArrivals, lateArrivalWatch, watchedAbandoned } from "../journal/late";
import { type OpenedJournal, workingDirJournals } from "../journal/open";
import { UserFacingError } from "../user-facing";
import type { StrayReport } from "./find";

// What `gpurental strays` reads and writes of the deploy journals (src/journal) of the working
// directories given as sources (GPURENTAL_JOURNAL_URL or GPURENTAL_JOURNAL_DIR, when set, as the
// provider reads them; other sources have none): which strays are late arrivals of a deploy a journal gave up as abandoned
// (src/journal/late.ts), and, when it writes import blocks for strays, the journal entries of those
// instances are closed, so that no create adopts what an import block gives another address.

/** The working directories among `sources`, each once. */
function workingDirs(sources: readonly string[], cwd: string): string[] {
  const dirs = new Set<string>();
  for (const source of sources) {
    if (source === "-") continue;
    const path = resolve(cwd, source);
    try {
      if (!existsSync(path) || !statSync(path).isDirectory()) continue;
    } catch {
      continue;
    }
    dirs.add(path);
  }
  return [...dirs];
}

/**
 * The journals of the sources' working directories (GPURENTAL_JOURNAL_DIR or their own; in
 * PostgreSQL with GPURENTAL_JOURNAL_URL), each once.
 */
function sourceJournals(sources: readonly string[], env: NodeJS.ProcessEnv, cwd: string): OpenedJournal[] {
  const seen = new Set<string>();
  return workingDirs(sources, cwd)
    .flatMap((dir) => workingDirJournals(dir, env))
    .filter((j) => !seen.has(j.name) && Boolean(seen.add(j.name)));
}

/**
 * Closes, as claimed, the open entries naming `ids` in the journals of the sources: import blocks
 * were written for those instances, and that is where they go. Returns how many were closed.
 */
export function closeImportedEntries(
  ids: readonly string[],
  sources: readonly string[],
  env: NodeJS.ProcessEnv,
  cwd: string,
): number {
  let n = 0;
  for (const { journal } of sourceJournals(sources, env, cwd)) {
    const entries = journal.entries();
    const open = entries.filter((e) => e.closed === null && e.id && ids.includes(e.id));
    for (const id of new Set(open.map((e) => e.id!))) n += journal.closeId(id, "claimed");
    // Entries settled as saved in a state that may since have been rolled back (they are open
    // again then): closed for good, so that no create adopts what the import blocks take.
    for (const e of entries) {
      if (e.closed?.state && e.id && ids.includes(e.id)) journal.close(e.entry, "claimed");
    }
  }
  return n;
}

/** A GPURENTAL_LATE_ARRIVAL_WATCH the provider would refuse, refused by `gpurental strays` in its words. */
export class LateArrivalWatchError extends UserFacingError {}

/**
 * How long an abandoned deploy is watched (GPURENTAL_LATE_ARRIVAL_WATCH, as the provider reads it);
 * throws a {@link LateArrivalWatchError} for a value the provider refuses.
 */
export function lateArrivalWatchMs(env: NodeJS.ProcessEnv): number {
  const watch = lateArrivalWatch(env);
  if ("invalid" in watch) throw new LateArrivalWatchError(watch.invalid);
  return watch.ms;
}

/** Marks the report's instances that are late arrivals of a given-up deploy; returns how many. */
export function markLateArrivals(
  report: StrayReport,
  sources: readonly string[],
  env: NodeJS.ProcessEnv,
  cwd: string,
  now: number,
): number {
  const watchMs = lateArrivalWatchMs(env);
  const abandoned: { entry: JournalEntry; journal: string }[] = [];
  const referenced = new Set<string>();
  for (const { name, journal } of sourceJournals(sources, env, cwd)) {
    const entries = journal.entries();
    for (const e of entries) if (e.id) referenced.add(e.id);
    for (const id of journal.referencedIds()) referenced.add(id);
    for (const entry of watchedAbandoned(entries, now, watchMs)) abandoned.push({ entry, journal: name });
  }
  if (abandoned.length === 0) return 0;
  const byId = new Map(report.instances.map((s) => [s.instance.id, s]));
  const arrivals = findLateArrivals(
    abandoned.map((a) => a.entry),
    report.instances.map((s) => s.instance),
    null,
    referenced,
  );
  for (const a of arrivals) {
    const stray = byId.get(a.instance.id);
    const journal = abandoned.find((x) => x.entry === a.entry)?.journal ?? "";
    if (stray) stray.lateArrival = { sentAt: a.entry.sent_at, entry: a.entry.entry, journal };
  }
  return arrivals.length;
}
