/**
 * Reads that run together and share one cancellation: the first failure aborts the others (pass
 * {@link ReadGroup.signal} to each), and {@link ReadGroup.settle} waits for every read before it
 * throws that first failure, so no request is left running after the caller has answered.
 */
export class ReadGroup {
  readonly #cancel = new AbortController();
  readonly #reads: Promise<unknown>[] = [];
  #failure: { error: unknown } | undefined;
  /** Aborted at the first failure. */
  readonly signal: AbortSignal = this.#cancel.signal;

  /** Adds a read; its own promise settles as the call does. */
  add<T>(call: Promise<T>): Promise<T> {
    const read = call.catch((error: unknown) => {
      this.#failure ??= { error };
      this.#cancel.abort();
      throw error;
    });
    this.#reads.push(read);
    return read;
  }

  /** Waits for every read added; throws the first failure (the others' are its cancellation). */
  async settle(): Promise<void> {
    await Promise.allSettled(this.#reads);
    if (this.#failure) throw this.#failure.error;
  }
}
