import { existsSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { parseDuration } from "../framework";
import {
  DEFAULT_LATE_ARRIVAL_WATCH_MS,
  type JournalEntry,
  journalFiles,
  LATE_ARRIVAL_WATCH_ENV,
  locateJournal,
  readJournalFile,
  watchedAbandoned,
} from "../journal";
import { findLateArrivals } from "../resources/late-arrivals";
import type { StrayReport } from "./find";

// Which strays are late arrivals: instances that landed after the deploy journal of a working
// directory read gave their deploy up as abandoned (src/journal/late.ts). The journals are read
// from the working directories given as sources (GPURENTAL_JOURNAL_DIR, when set, as the provider
// reads it); other sources have none.

/** Marks the report's instances that are late arrivals of a given-up deploy; returns how many. */
export function markLateArrivals(
  report: StrayReport,
  sources: readonly string[],
  env: NodeJS.ProcessEnv,
  cwd: string,
  now: number,
): number {
  const watchMs =
    (env[LATE_ARRIVAL_WATCH_ENV] && parseDuration(env[LATE_ARRIVAL_WATCH_ENV])) ||
    DEFAULT_LATE_ARRIVAL_WATCH_MS;
  const dirs = new Set<string>();
  for (const source of sources) {
    if (source === "-") continue;
    const path = resolve(cwd, source);
    try {
      if (!existsSync(path) || !statSync(path).isDirectory()) continue;
    } catch {
      continue;
    }
    dirs.add(locateJournal({ cwd: path, env }).dir);
  }
  const abandoned: { entry: JournalEntry; journal: string }[] = [];
  const referenced = new Set<string>();
  for (const dir of dirs) {
    for (const file of journalFiles(dir)) {
      const entries = [...readJournalFile(file).entries.values()];
      for (const e of entries) if (e.id) referenced.add(e.id);
      for (const entry of watchedAbandoned(entries, now, watchMs)) abandoned.push({ entry, journal: file });
    }
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
