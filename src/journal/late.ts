import type { JournalEntry } from "./records";

// Deploys given up as `abandoned` (their answer was lost and nothing appeared within the reconcile
// window) may still commit later: a proxy or a queue can hold a request for much longer than the
// window. Such an entry is watched for a long time after it was sent (a day or more), and any
// instance that matches it and was created after it was sent is a late arrival: billed, and held
// by no state unless someone imports it. The resources announce them on every command
// (src/resources/late-arrivals.ts) and `gpurental strays` names them.

/** The environment variable setting how long an abandoned deploy is watched, e.g. "48h". */
export const LATE_ARRIVAL_WATCH_ENV = "GPURENTAL_LATE_ARRIVAL_WATCH";
/** How long an abandoned deploy is watched by default, from when it was sent. */
export const DEFAULT_LATE_ARRIVAL_WATCH_MS = 48 * 3600_000;

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
