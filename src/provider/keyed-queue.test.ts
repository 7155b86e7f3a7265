import { KeyedQueue } from "./keyed-queue";

/** A task that ends when told to; records when it started. */
function task(log: string[], name: string) {
  let finish!: () => void;
  const done = new Promise<void>((r) => {
    finish = r;
  });
  return {
    run: async () => {
      log.push(`${name} started`);
      await done;
      log.push(`${name} ended`);
      return name;
    },
    finish: () => finish(),
  };
}

const turn = () => new Promise((r) => setImmediate(r));

describe("KeyedQueue", () => {
  test("tasks of one key run one after another, in order, even when one joins after an earlier one ended", async () => {
    const q = new KeyedQueue();
    const log: string[] = [];
    const [a, b, c] = [task(log, "a"), task(log, "b"), task(log, "c")];
    const ra = q.run("k", a.run);
    const rb = q.run("k", b.run);
    await turn();
    expect(log).toEqual(["a started"]);
    a.finish();
    await ra;
    await turn();
    // b runs; c, queued now, waits for b although a's turn is over.
    const rc = q.run("k", c.run);
    await turn();
    expect(log).toEqual(["a started", "a ended", "b started"]);
    b.finish();
    await rb;
    await turn();
    expect(log).toEqual(["a started", "a ended", "b started", "b ended", "c started"]);
    c.finish();
    await expect(rc).resolves.toBe("c");
    await turn();
    expect(q.size).toBe(0);
  });

  test("tasks of other keys run side by side; a failure is its caller's alone and the next task still runs", async () => {
    const q = new KeyedQueue();
    const log: string[] = [];
    const [a, b] = [task(log, "a"), task(log, "b")];
    const ra = q.run("one", a.run);
    const rb = q.run("two", b.run);
    await turn();
    expect(log).toEqual(["a started", "b started"]);
    expect(q.size).toBe(2);
    a.finish();
    b.finish();
    await Promise.all([ra, rb]);

    const failed = q.run("one", () => Promise.reject(new Error("refused")));
    const next = q.run("one", async () => "next");
    await expect(failed).rejects.toThrow("refused");
    await expect(next).resolves.toBe("next");
    await turn();
    expect(q.size).toBe(0);
  });
});
