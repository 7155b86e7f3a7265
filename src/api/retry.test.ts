import { getEventListeners } from "node:events";
import {
  backoffDelay,
  DEFAULT_RETRY,
  parseRetryAfter,
  realSleep,
  resolveRetryOptions,
  retryDelay,
} from "./retry";

describe("parseRetryAfter", () => {
  const now = Date.parse("2026-11-22T08:00:00Z");
  test.each([
    ["2", 2000],
    [" 0 ", 0],
    ["1.5", 1500],
    ["1.25", 1250],
    ["5 s", undefined],
    ["5s", undefined],
    ["Sun, 22 Nov 2026 08:00:30 GMT", 30_000],
    ["Sun, 22 Nov 2026 07:59:00 GMT", 0],
    ["soon", undefined],
    ["-5", undefined],
    [undefined, undefined],
  ])("%j -> %j ms", (value, expected) => {
    expect(parseRetryAfter(value, now)).toBe(expected);
  });

  test("takes the first of repeated headers", () => {
    expect(parseRetryAfter(["3", "9"], now)).toBe(3000);
  });
});

describe("backoffDelay", () => {
  const opts = { ...DEFAULT_RETRY, baseDelayMs: 100, maxDelayMs: 1000 };
  test.each([
    [1, 100],
    [2, 200],
    [3, 400],
    [4, 800],
    [5, 1000],
    [30, 1000],
  ])("retry %i is at most %i ms, full jitter down to 0", (retry, cap) => {
    expect(backoffDelay(retry, opts, () => 0)).toBe(0);
    expect(backoffDelay(retry, opts, () => 0.999999)).toBe(cap - 1);
    expect(backoffDelay(retry, opts, () => 0.5)).toBe(Math.floor(cap / 2));
  });
});

describe("retryDelay", () => {
  const opts = { ...DEFAULT_RETRY, baseDelayMs: 100, maxDelayMs: 1000 };
  test("a Retry-After is waited in full, with at most baseDelayMs of jitter on top", () => {
    expect(retryDelay(1, 90_000, opts, () => 0)).toBe(90_000);
    expect(retryDelay(1, 90_000, opts, () => 0.999)).toBe(90_099);
    expect(retryDelay(7, 0, opts, () => 0.5)).toBe(50);
  });
  test("without one, the full-jitter backoff", () => {
    expect(retryDelay(3, undefined, opts, () => 0.5)).toBe(backoffDelay(3, opts, () => 0.5));
  });
});

describe("resolveRetryOptions", () => {
  test("retries are bounded by the deadline, not a count, unless maxAttempts is given", () => {
    expect(DEFAULT_RETRY.maxAttempts).toBe(Number.POSITIVE_INFINITY);
    expect(resolveRetryOptions(undefined).maxAttempts).toBe(Number.POSITIVE_INFINITY);
    expect(() => resolveRetryOptions({ deadlineMs: Number.POSITIVE_INFINITY })).toThrow(RangeError);
  });
  test("fills defaults and ignores undefined", () => {
    expect(resolveRetryOptions({ maxAttempts: 2, baseDelayMs: undefined })).toEqual({
      ...DEFAULT_RETRY,
      maxAttempts: 2,
    });
  });
  test.each([
    [{ maxAttempts: 0 }, "retry.maxAttempts must be at least 1, got 0"],
    [{ maxAttempts: Number.NaN }, "retry.maxAttempts must be a non-negative number, got NaN"],
    [{ baseDelayMs: -1 }, "retry.baseDelayMs must be a non-negative number, got -1"],
    [
      { maxDelayMs: Number.POSITIVE_INFINITY },
      "retry.maxDelayMs must be a non-negative number, got Infinity",
    ],
    [{ deadlineMs: Number.NaN }, "retry.deadlineMs must be a non-negative number, got NaN"],
  ])("rejects %j, naming the option and the value", (o, message) => {
    expect(() => resolveRetryOptions(o)).toThrow(new RangeError(message));
  });
  test("zero delays are allowed: retries without waiting", () => {
    expect(resolveRetryOptions({ baseDelayMs: 0, maxDelayMs: 0 })).toMatchObject({
      baseDelayMs: 0,
      maxDelayMs: 0,
    });
  });
});

describe("realSleep", () => {
  afterEach(() => jest.useRealTimers());

  /** The sleep's outcome once pending promise callbacks ran, without moving the clock. */
  async function settled(p: Promise<void>): Promise<unknown> {
    let outcome: unknown = "pending";
    p.then(
      () => {
        outcome = "resolved";
      },
      (e: unknown) => {
        outcome = e;
      },
    );
    for (let i = 0; i < 5; i++) await Promise.resolve();
    return outcome;
  }

  test("resolves after the time, leaving no listener on the signal", async () => {
    jest.useFakeTimers();
    const ac = new AbortController();
    const p = realSleep(60_000, ac.signal);
    jest.advanceTimersByTime(59_999);
    expect(await settled(p)).toBe("pending");
    jest.advanceTimersByTime(1);
    expect(await settled(p)).toBe("resolved");
    expect(getEventListeners(ac.signal, "abort")).toHaveLength(0);
  });

  test("an abort ends it at once with the signal's reason, its timer cleared and its listener gone", async () => {
    jest.useFakeTimers();
    const ac = new AbortController();
    const p = realSleep(60_000, ac.signal);
    ac.abort("stopping");
    expect(await settled(p)).toBe("stopping");
    expect(jest.getTimerCount()).toBe(0);
    expect(getEventListeners(ac.signal, "abort")).toHaveLength(0);
  });

  test("an already aborted signal rejects without waiting", async () => {
    jest.useFakeTimers();
    const ac = new AbortController();
    ac.abort("gone");
    expect(await settled(realSleep(60_000, ac.signal))).toBe("gone");
    expect(jest.getTimerCount()).toBe(0);
  });
});
