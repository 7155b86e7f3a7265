import {
  ApiError,
  ConnectionSetupError,
  InstanceErrorStateError,
  NetworkError,
  RequestAbortedError,
  TimeoutError,
  WaitTimeoutError,
} from "./errors";
import { realSleep, type Sleep } from "./retry";
import type { Instance, InstanceStatus } from "./schemas";

/** What the waiter needs of a client: reading one instance. */
export interface InstanceReader {
  /** Reads an instance; see GpurentalClient.getInstance. */
  getInstance(
    id: string,
    opts?: { signal?: AbortSignal | undefined; deadlineMs?: number | undefined },
  ): Promise<Instance>;
}

/** Options of {@link waitForInstance}. */
export interface WaitForInstanceOptions {
  /** The status (or any of the statuses) to wait for. */
  target: InstanceStatus | readonly InstanceStatus[];
  /**
   * Statuses that end the wait with {@link InstanceErrorStateError}. Default `["error", "destroyed"]`
   * minus the targets: a destroyed instance will never reach running, so waiting on is pointless.
   */
  failOn?: readonly InstanceStatus[];
  /**
   * Statuses that may still lead to a target. When given, any status outside pending, target and
   * failOn also fails the wait (e.g. a start that fell back to stopped). Default: every status waits.
   */
  pending?: readonly InstanceStatus[];
  /** Overall time limit. Default 20 minutes, Terraform's default resource timeout. */
  timeoutMs?: number;
  /** Cancels the wait (and the poll in flight). */
  signal?: AbortSignal | undefined;
  /** Delay after the first poll; doubled after each poll. Default 500. */
  initialPollMs?: number;
  /**
   * One extra poll this long after the first, for transitions that end within moments of the
   * call that started them; the polls after it fall where they would without it. Default 100;
   * 0, or anything not below initialPollMs, leaves it out.
   */
  quickPollMs?: number;
  /** Cap of the delay between polls. Default 10 000. */
  maxPollMs?: number;
  /** Consecutive failed polls (network, timeout, 5xx, 429) tolerated before giving up. Default 5. */
  maxTransientFailures?: number;
  /**
   * What a 404 INSTANCE_NOT_FOUND means: `error` (default) rejects with the ApiError; `done`
   * resolves with null, for waits whose target is `destroyed` on a server that forgets instances.
   */
  notFound?: "error" | "done";
  /** Called with every instance read. */
  onPoll?: (instance: Instance) => void;
  /** Test seam: the sleep between polls. */
  sleep?: Sleep;
  /** Test seam: the clock (ms). Default Date.now. */
  now?: () => number;
}

/** Default overall time limit of a wait. */
export const DEFAULT_WAIT_TIMEOUT_MS = 20 * 60_000;

/** Default of {@link WaitForInstanceOptions.quickPollMs}. */
export const DEFAULT_QUICK_POLL_MS = 100;

/**
 * Polls GET /v1/instances/{id} until the instance reaches a target status. The first poll is
 * immediate, the second 0.1 s later (a transition that ends at once is not rounded up to the next
 * poll), then 0.5 s after the first, doubling to 10 s. A long transition is polled at the same
 * times as without the quick poll, which costs one GET per wait. Rejects with
 * {@link WaitTimeoutError} (with the last status seen), {@link InstanceErrorStateError}, the
 * ApiError of a non-transient failure, or {@link RequestAbortedError} when `signal` aborts.
 */
export function waitForInstance(
  client: InstanceReader,
  id: string,
  options: WaitForInstanceOptions & { notFound: "done" },
): Promise<Instance | null>;
/** Polls an instance until it reaches a target status; see the overload above. */
export function waitForInstance(
  client: InstanceReader,
  id: string,
  options: WaitForInstanceOptions & { notFound?: "error" },
): Promise<Instance>;
export async function waitForInstance(
  client: InstanceReader,
  id: string,
  options: WaitForInstanceOptions,
): Promise<Instance | null> {
  const targets: readonly InstanceStatus[] =
    typeof options.target === "string" ? [options.target] : [...options.target];
  if (targets.length === 0) throw new RangeError("waitForInstance: target must name at least one status");
  const failOn = (options.failOn ?? ["error", "destroyed"]).filter((s) => !targets.includes(s));
  const pending = options.pending;
  const timeoutMs = options.timeoutMs ?? DEFAULT_WAIT_TIMEOUT_MS;
  const maxPoll = options.maxPollMs ?? 10_000;
  const maxFailures = options.maxTransientFailures ?? 5;
  const sleep = options.sleep ?? realSleep;
  const now = options.now ?? Date.now;
  const signal = options.signal;
  const deadline = now() + timeoutMs;

  const delays = pollDelays(
    options.initialPollMs ?? 500,
    options.quickPollMs ?? DEFAULT_QUICK_POLL_MS,
    maxPoll,
  );
  let last: Instance | undefined;
  let lastError: unknown;
  let failures = 0;

  for (;;) {
    if (signal?.aborted) throw new RequestAbortedError("GET /v1/instances/{id}");
    try {
      // A poll retries its own failures within what is left of the wait.
      const instance = await client.getInstance(id, { signal, deadlineMs: Math.max(0, deadline - now()) });
      failures = 0;
      lastError = undefined;
      last = instance;
      options.onPoll?.(instance);
      if (targets.includes(instance.status)) return instance;
      if (failOn.includes(instance.status)) throw new InstanceErrorStateError(instance, targets);
      if (pending && !pending.includes(instance.status)) throw new InstanceErrorStateError(instance, targets);
    } catch (err) {
      if (err instanceof InstanceErrorStateError || err instanceof RequestAbortedError) throw err;
      if (signal?.aborted) throw new RequestAbortedError("GET /v1/instances/{id}", { cause: err });
      if (err instanceof ApiError && err.code === "INSTANCE_NOT_FOUND" && options.notFound === "done")
        return null;
      if (!isTransient(err)) throw err;
      failures++;
      lastError = err;
      if (failures > maxFailures) throw err;
    }

    const remaining = deadline - now();
    if (remaining <= 0) throw new WaitTimeoutError(id, targets, timeoutMs, last, lastError);
    try {
      await sleep(Math.min(delays.next().value, remaining), signal);
    } catch (err) {
      throw new RequestAbortedError("GET /v1/instances/{id}", { cause: err });
    }
  }
}

/**
 * The delays between polls: `initial` doubling to `max`, with, when `quick` is below `initial`,
 * the first split in two (`quick`, then the rest of `initial`) so that every later poll falls
 * where it would without the quick one.
 */
export function* pollDelays(initial: number, quick: number, max: number): Generator<number, never> {
  if (quick > 0 && quick < initial) {
    yield quick;
    yield initial - quick;
  } else {
    yield initial;
  }
  for (let interval = Math.min(initial * 2, max); ; interval = Math.min(interval * 2, max)) yield interval;
}

/** Whether a failed poll is worth repeating: transport trouble, timeouts, 429 and 5xx. */
export function isTransient(err: unknown): boolean {
  if (err instanceof ConnectionSetupError) return false;
  if (err instanceof NetworkError || err instanceof TimeoutError) return true;
  return err instanceof ApiError && (err.status === 429 || err.status >= 500);
}
