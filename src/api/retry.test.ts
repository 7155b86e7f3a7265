import { backoffDelay, DEFAULT_RETRY, parseRetryAfter, resolveRetryOptions, retryDelay } from "./retry";

describe("parseRetryAfter", () => {
  const now = Date.parse("2026-11-22T08:00:00Z");
  test.each([
    ["2", 2000],
    [" 0 ", 0],
    ["1.5", 1500],
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
  test.each([{ maxAttempts: 0 }, { baseDelayMs: -1 }, { deadlineMs: Number.NaN }])("rejects %j", (o) => {
    expect(() => resolveRetryOptions(o)).toThrow(RangeError);
  });
});
