import type { Instance } from "../api/schemas";
import { UserFacingError } from "../user-facing";

// Money as the service gives it: integer micro units (1 ¥ = 1,000,000 micro, docs/api-shapes.md),
// kept as bigint from the moment it is read, so sums and comparisons are exact whatever their size,
// and shown in ¥ with every non-zero digit and never a rounding step.

/** An amount in micro units. */
export type Micro = bigint;

/** Micro units in one yuan. */
export const MICRO_PER_YEN = 1_000_000n;

/** An integer amount read from the API or a state (number or bigint); undefined for anything else. */
export function toMicro(v: unknown): Micro | undefined {
  if (typeof v === "bigint") return v;
  if (typeof v === "number" && Number.isSafeInteger(v)) return BigInt(v);
  return undefined;
}

/** Groups the digits of a non-negative integer by thousands: 1234567 -> "1,234,567". */
function grouped(n: bigint): string {
  return n.toString().replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

/** The larger of two amounts (Math.max takes no bigint). */
export function maxMicro(a: Micro, b: Micro): Micro {
  return a > b ? a : b;
}

/** An amount in ¥ with at least two decimals and no trailing zeros beyond: 2500000 -> "¥2.50", 1234 -> "¥0.001234". */
export function formatMicro(m: Micro): string {
  const sign = m < 0n ? "-" : "";
  const abs = m < 0n ? -m : m;
  const frac = (abs % MICRO_PER_YEN).toString().padStart(6, "0").replace(/0+$/, "").padEnd(2, "0");
  return `${sign}¥${grouped(abs / MICRO_PER_YEN)}.${frac}`;
}

/** An hourly rate: "¥2.50/h". */
export function formatPerHour(m: Micro): string {
  return `${formatMicro(m)}/h`;
}

/** A signed difference: "+¥2.50", "-¥0.01", "±¥0.00". */
export function formatDelta(m: Micro): string {
  if (m === 0n) return "±¥0.00";
  return m > 0n ? `+${formatMicro(m)}` : formatMicro(m);
}

/** Raised for an amount a person typed that is not one; names where it was given. */
export class AmountError extends UserFacingError {
  constructor(message: string) {
    super(message);
    this.name = "AmountError";
  }
}

/**
 * Parses an amount in ¥ as a person writes it ("12.5", "¥12.50", "1,250"), exactly, into micro
 * units. At most six decimals; a comma only between groups of three digits, as it reads (so
 * "25,50", a decimal comma, is refused rather than read as 2550); `what` names the flag in the
 * error.
 */
export function parseYen(text: string, what: string): Micro {
  const t = text.trim().replace(/^¥/, "");
  const m = /^(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d{1,6}))?$/.exec(t);
  if (!m) {
    throw new AmountError(
      `${what} must be an amount in ¥ with at most 6 decimals and a comma only between groups of three digits, e.g. 12.50, ¥12.50 or 1,250, got '${text}'`,
    );
  }
  return BigInt(m[1]!.replace(/,/g, "")) * MICRO_PER_YEN + BigInt((m[2] ?? "").padEnd(6, "0"));
}

/** A number of hours with one decimal, floored: balance / burn, computed on integers. */
export interface Hours {
  /** Tenths of an hour, floored. */
  tenths: bigint;
}

/** How many hours `balance` pays for at `perHour`; undefined when nothing burns. A negative balance covers 0 hours. */
export function hoursCovered(balance: Micro, perHour: Micro): Hours | undefined {
  if (perHour <= 0n) return undefined;
  if (balance <= 0n) return { tenths: 0n };
  return { tenths: (balance * 10n) / perHour };
}

/** "498.5 h". */
export function formatHours(h: Hours): string {
  return `${grouped(h.tenths / 10n)}.${h.tenths % 10n} h`;
}

/** Tenths of an hour as a JSON-safe decimal string ("498.5"). */
export function hoursText(h: Hours): string {
  return `${h.tenths / 10n}.${h.tenths % 10n}`;
}

/** An amount for JSON output: a string of the integer, exact whatever its size. */
export function microJson(m: Micro): string {
  return m.toString();
}

/** Statuses whose instances are billed GPU and disk by the balance rule; stopped ones disk only. */
const GPU_BURNING = new Set(["running", "starting", "creating", "stopping"]);

/** The hourly burn of an instance under the balance rule of contract 4.2 (also of one still to be deployed). */
export function instanceHourlyBurn(
  inst: Pick<Instance, "status" | "disk_gb" | "storage_price_per_gb_hour_micro" | "price_per_hour_micro">,
): number {
  const disk = inst.disk_gb * inst.storage_price_per_gb_hour_micro;
  if (GPU_BURNING.has(inst.status)) return disk + inst.price_per_hour_micro;
  return inst.status === "stopped" ? disk : 0;
}
