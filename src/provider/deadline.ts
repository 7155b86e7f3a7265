import type { RequestOptions } from "../api/requests";

// The time budget of one Terraform operation (a create, a refresh, a plan-time check...). Every API
// call the operation makes carries what is left of it, so the client retries transient failures
// (retry-policy.ts) until the operation's own deadline, its `timeouts` value or default, instead of
// a fixed number of times, and a wait that would outlast it (a long Retry-After) ends the call at
// once with the answer that asked for it.

/** Default time limit of reads, which have no `timeouts` entry: refresh, import and data sources. */
export const READ_TIMEOUT_MS = 5 * 60_000;

/**
 * Default time limit of changes of a resource without `timeouts` (creating and revoking an API
 * key): Terraform's own default for a resource operation.
 */
export const CHANGE_TIMEOUT_MS = 20 * 60_000;

/** The time budget of one operation. */
export interface Budget {
  /** Cancels the operation (Terraform stopping the provider). */
  signal?: AbortSignal | undefined;
  /** When the operation must be over, on the clock of `now` (ms). */
  deadline: number;
  /** The clock; default Date.now. */
  now?: (() => number) | undefined;
}

/** A budget of `ms` from now. */
export function budgetOf(ms: number, signal?: AbortSignal, now: () => number = Date.now): Budget {
  return { signal, deadline: now() + ms, now };
}

/** The options of one API call made within `budget`: its signal and the time left. */
export function within(budget: Budget): RequestOptions {
  const now = budget.now ?? Date.now;
  return { signal: budget.signal, deadlineMs: Math.max(0, budget.deadline - now()) };
}

/** "90 s", "2 min". */
export function formatMs(ms: number): string {
  return ms >= 120_000 && ms % 60_000 === 0 ? `${ms / 60_000} min` : `${Math.round(ms / 100) / 10} s`;
}
