// The timing of retries: how long a call may keep trying, how long to wait between attempts
// (jittered backoff, or the server's Retry-After), and the sleep that waits. Which failures are
// retried at all is retry-policy.ts.

/** Retry settings of the client; every field has a default. */
export interface RetryOptions {
  /**
   * Attempts per call, the first included. Default unlimited: a call is retried until its deadline
   * (the operation's time limit), not a fixed number of times. 1 disables retries.
   */
  maxAttempts?: number;
  /** Backoff base: retry n waits a random time in [0, min(maxDelayMs, baseDelayMs * 2^(n-1))]. Default 250. */
  baseDelayMs?: number;
  /** Cap of one backoff delay. Default 10 000. */
  maxDelayMs?: number;
  /**
   * Time budget of one call, attempts and waits included, when the caller gives none
   * (`RequestOptions.deadlineMs`, which the provider sets from the operation's timeouts). Default 120 000.
   */
  deadlineMs?: number;
}

/** Retry settings with every default filled in. */
export type ResolvedRetryOptions = Required<RetryOptions>;

/** The defaults of {@link RetryOptions}. */
export const DEFAULT_RETRY: ResolvedRetryOptions = {
  maxAttempts: Number.POSITIVE_INFINITY,
  baseDelayMs: 250,
  maxDelayMs: 10_000,
  deadlineMs: 120_000,
};

/** Fills in defaults and rejects nonsensical values. */
export function resolveRetryOptions(opts: RetryOptions | undefined): ResolvedRetryOptions {
  const r = { ...DEFAULT_RETRY, ...stripUndefined(opts ?? {}) };
  for (const [k, v] of Object.entries(r)) {
    const finite = Number.isFinite(v);
    const unlimited = k === "maxAttempts" && v === Number.POSITIVE_INFINITY;
    if (!(finite || unlimited) || v < 0) {
      throw new RangeError(`retry.${k} must be a non-negative number, got ${String(v)}`);
    }
  }
  if (r.maxAttempts < 1) throw new RangeError(`retry.maxAttempts must be at least 1, got ${r.maxAttempts}`);
  return r;
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/**
 * Full-jitter exponential backoff (the AWS scheme): a uniform random delay up to the capped
 * exponential, so that many clients failing together do not retry together.
 * `retry` is 1 for the first retry.
 */
export function backoffDelay(retry: number, opts: ResolvedRetryOptions, random: () => number): number {
  const exp = Math.min(opts.maxDelayMs, opts.baseDelayMs * 2 ** Math.max(0, retry - 1));
  return Math.floor(random() * exp);
}

/**
 * The wait before retry number `retry` (1 for the first): the server's Retry-After when it gave
 * one, never less, plus up to `baseDelayMs` of jitter so that clients told the same time do not all
 * come back at once; otherwise the full-jitter backoff.
 */
export function retryDelay(
  retry: number,
  retryAfterMs: number | undefined,
  opts: ResolvedRetryOptions,
  random: () => number,
): number {
  if (retryAfterMs === undefined) return backoffDelay(retry, opts, random);
  return retryAfterMs + Math.floor(random() * opts.baseDelayMs);
}

/** Parses a Retry-After header (delta seconds or an HTTP date) into milliseconds from `nowMs`. */
export function parseRetryAfter(value: string | string[] | undefined, nowMs: number): number | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  if (v === undefined) return undefined;
  const trimmed = v.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  // An HTTP date always names the day and month; without letters Date.parse would read "-5" as a year.
  if (!/[a-z]/i.test(trimmed)) return undefined;
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - nowMs);
}

/** Sleeps `ms`, rejecting with the signal's reason as soon as `signal` aborts. */
export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

/** The real-time {@link Sleep}. */
export const realSleep: Sleep = (ms, signal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
