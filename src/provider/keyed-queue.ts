/**
 * Runs tasks one after another per key, and tasks of different keys side by side. A task starts
 * once the one queued before it under its key has settled, whichever way.
 */
export class KeyedQueue {
  private readonly tails = new Map<string, Promise<void>>();

  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const run = (this.tails.get(key) ?? Promise.resolve()).then(task);
    const tail = run.then(
      () => undefined,
      () => undefined,
    );
    this.tails.set(key, tail);
    // The last task of a key removes it: the map holds only keys with a task queued or running.
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return run;
  }

  /** Keys with a task queued or running. */
  get size(): number {
    return this.tails.size;
  }
}
