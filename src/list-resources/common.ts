import type { RequestOptions } from "../api/client";
import { check, type HandlerContext, type Validator } from "../framework";
import { budgetOf, READ_TIMEOUT_MS, within } from "../provider/deadline";

// What the list resources share: the options of their API reads and the validators of their
// filters.

/** The options of a listing's API calls: transient failures retried within the read limit. */
export function listOptions(ctx: Pick<HandlerContext<unknown>, "signal">): RequestOptions {
  return within(budgetOf(READ_TIMEOUT_MS, ctx.signal));
}

/** A time in RFC 3339 (`2026-11-01T00:00:00Z`), naming the filter and the value it refuses. */
export function rfc3339(name: string): Validator<string> {
  return check<string>(
    "A time in RFC 3339, e.g. `2026-11-01T00:00:00Z`.",
    (v) =>
      /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/.test(v) &&
      !Number.isNaN(Date.parse(v)),
    (v) =>
      `${name} must be a time in RFC 3339 with its offset, e.g. "2026-11-01T00:00:00Z"; got ${JSON.stringify(v.slice(0, 100))}.`,
  );
}

/** Whether `createdAt` is strictly after the filter's time (no filter: yes). */
export function createdAfter(createdAt: string | null, after: string | null): boolean {
  if (after === null) return true;
  if (createdAt === null) return false;
  return Date.parse(createdAt) > Date.parse(after);
}

/** Whether `value` starts with `prefix` (no filter: yes; no value: only the empty prefix). */
export function hasPrefix(value: string | null, prefix: string | null): boolean {
  return prefix === null || (value ?? "").startsWith(prefix);
}
