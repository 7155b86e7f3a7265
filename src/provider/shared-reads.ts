import { RequestAbortedError } from "../api/errors";

// Identical reads in flight at the same time share one request. Terraform plans up to ten
// resources of a provider process at once, and the plan-time checks of each instance read the same
// offer, template, SSH keys, instance list and balance: an apply of 25 instances asked for each of
// them 25 times in its plan and 25 times again in the apply. A read that joins one in flight gets
// an answer no older than a read of its own racing that one would; nothing is kept once it has
// answered, so a later read always asks again.

/**
 * The reads in flight of one owner (a configured provider: one credential and endpoint). Owners
 * never share reads: the provider data of each configuration holds its own.
 */
export class SharedReads {
  readonly #inFlight = new Map<string, Promise<unknown>>();

  /**
   * The read of `key` in flight, or `read()` made now and shared until it settles. Callers must
   * not change what it resolves to. A shared read aborted by its first caller's signal is made
   * again for a caller whose own signal is not aborted.
   */
  read<T>(key: string, signal: AbortSignal | undefined, read: () => Promise<T>): Promise<T> {
    const reads = this.#inFlight;
    const pending = reads.get(key) as Promise<T> | undefined;
    if (pending) {
      return pending.catch((err: unknown) => {
        if (err instanceof RequestAbortedError && !signal?.aborted) return read();
        throw err;
      });
    }
    const started = read();
    reads.set(key, started);
    // Only this read is ever under its key until it settles: a later caller joins it instead.
    const done = () => reads.delete(key);
    started.then(done, done);
    return started;
  }

  /** Reads in flight (for tests: none is left behind). */
  get inFlight(): number {
    return this.#inFlight.size;
  }
}
