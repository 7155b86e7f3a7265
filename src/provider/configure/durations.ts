import { type Diagnostics, parseDuration } from "../../framework";
import { DEFAULT_RECONCILE_TIMEOUT_MS } from "../provider-data";
import { invalidDurationVariable, invalidReconcileTimeout } from "./diagnostics";
import { type Resolved, where } from "./settings";

// The time limits configuration sets: reconcile_timeout (or GPURENTAL_RECONCILE_TIMEOUT), and the
// environment-only GPURENTAL_JOURNAL_TIMEOUT and GPURENTAL_REQUEST_TIMEOUT.

/** How long one request to the PostgreSQL journal may take (a duration; default 15 s). */
export const JOURNAL_TIMEOUT_ENV = "GPURENTAL_JOURNAL_TIMEOUT";
/** The time limit of one request attempt, for tests and slow links; not a provider argument. */
export const REQUEST_TIMEOUT_ENV = "GPURENTAL_REQUEST_TIMEOUT";

/** The reconcile window in ms: the setting's, else the default; a bad setting is reported. */
export function reconcileTimeout(reconcile: Resolved, diags: Diagnostics): number {
  if (reconcile.kind !== "value") return DEFAULT_RECONCILE_TIMEOUT_MS;
  const ms = parseDuration(reconcile.value);
  if (ms === undefined || ms === 0) {
    diags.add(invalidReconcileTimeout(where("reconcile_timeout", reconcile), reconcile.value));
    return DEFAULT_RECONCILE_TIMEOUT_MS;
  }
  return ms;
}

/**
 * A duration from an environment variable (`example` shows one in the error): its ms, `fallback`
 * when the variable is unset or empty, or undefined when it is no duration (reported).
 */
export function durationVariable<T>(
  env: NodeJS.ProcessEnv,
  name: string,
  example: string,
  fallback: T,
  diags: Diagnostics,
): number | T | undefined {
  const raw = env[name];
  if (!raw) return fallback;
  const ms = parseDuration(raw);
  if (ms) return ms;
  diags.add(invalidDurationVariable(name, example, raw));
  return undefined;
}
