import type { Instance } from "../api/schemas";

/**
 * Finding what a request whose answer was lost created: the time window its object must have been
 * created in, and the listing loop that looks for it. Shared by deploys and key creations.
 */

/** How far the server's clock may be behind the provider's when comparing created_at with sent_at. */
export const CLOCK_SKEW_MS = 2 * 60_000;
/** The latest a request is believed to commit after it was sent. */
export const LATE_COMMIT_HORIZON_MS = 24 * 3600_000;

/** Whether an object created at `createdAt` (server time, RFC 3339) can be a request's sent at `sentAt`. */
export function createdInWindow(createdAt: string | null, sentAt: number): boolean {
  const created = createdAt === null ? Number.NaN : Date.parse(createdAt);
  if (Number.isNaN(created)) return true;
  return created >= sentAt - CLOCK_SKEW_MS && created <= sentAt + LATE_COMMIT_HORIZON_MS;
}

/** What a request's instance is recognised by: an instance of the API, or one a state holds. */
export type LandedShape = Pick<Instance, "id" | "disk_gb" | "label" | "status" | "created_at"> & {
  offer: { id: string };
  template: { id: string };
};

/** Whether a listed instance is what a request with these fields would have created. */
export function matchesRequest(
  inst: LandedShape,
  req: { offer_id?: unknown; template_id?: unknown; disk_gb?: unknown; label?: unknown },
): boolean {
  return (
    inst.offer.id === req.offer_id &&
    inst.template.id === req.template_id &&
    inst.disk_gb === req.disk_gb &&
    // "" and null both mean no label; a server may store one as the other.
    (inst.label ?? "") === ((req.label as string | null | undefined) ?? "") &&
    inst.status !== "destroyed"
  );
}

/**
 * The instances a request may have created: matching, absent before it was sent, created no
 * earlier than it was sent (less the clock skew) nor implausibly later, and named by no journal
 * entry (of any workspace of the directory).
 */
export function landedCandidates<T extends LandedShape>(
  instances: readonly T[],
  req: Record<string, unknown>,
  sent: { before: readonly string[]; sentAt: number },
  referenced: ReadonlySet<string>,
): T[] {
  const before = new Set(sent.before);
  return instances.filter(
    (i) =>
      matchesRequest(i, req) &&
      !before.has(i.id) &&
      !referenced.has(i.id) &&
      createdInWindow(i.created_at, sent.sentAt),
  );
}

/** What {@link listUntilFound} needs. */
export interface ListingLoop<T> {
  /** Lists and keeps the candidates; a transient failure is retried, any other thrown. */
  find(signal: AbortSignal | undefined): Promise<T[]>;
  isTransient(err: unknown): boolean;
  windowMs: number;
  signal: AbortSignal | undefined;
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  now: () => number;
}

/**
 * Lists until candidates show up or the window ends (backing off from 250 ms to 2 s); an aborted
 * signal ends it with nothing found.
 */
export async function listUntilFound<T>(loop: ListingLoop<T>): Promise<T[]> {
  const end = loop.now() + loop.windowMs;
  let delay = 250;
  for (;;) {
    try {
      const found = await loop.find(loop.signal);
      if (found.length > 0) return found;
    } catch (err) {
      if (loop.signal?.aborted) return [];
      if (!loop.isTransient(err)) throw err;
    }
    if (loop.now() + delay > end) return [];
    await loop.sleep(delay, loop.signal).catch(() => undefined);
    if (loop.signal?.aborted) return [];
    delay = Math.min(delay * 2, 2000);
  }
}
