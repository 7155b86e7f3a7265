/**
 * Injected HTTP faults: which fire for a request, and the requests a late-commit fault holds.
 * Acting on them (answering, delaying, dropping) is the HTTP layer's work (`http.ts`).
 */
import { randomUUID } from "node:crypto";
import type { FaultSpec } from "./types";

/** The longest latency a fault can add (setTimeout's limit). */
export const MAX_LATENCY_MS = 2_147_483_647;

interface ActiveFault {
  id: string;
  method: string | null;
  route: string;
  spec: FaultSpec;
  remaining: number;
}

/** Injected HTTP faults, matched by method and route pattern or concrete path. */
export class FaultStore {
  private faults: ActiveFault[] = [];

  /** Validates and adds a fault; returns its id. */
  add(spec: FaultSpec): string {
    const parts = spec.route.trim().split(/\s+/);
    let method = spec.method?.toUpperCase() ?? null;
    let route = spec.route.trim();
    if (parts.length === 2 && parts[0] && parts[1]) {
      method = parts[0].toUpperCase();
      route = parts[1];
    }
    if (!route.startsWith("/")) throw new Error(`fault route must start with '/': ${spec.route}`);
    if (spec.kind === "status" && (spec.status === undefined || spec.status < 400 || spec.status > 599)) {
      throw new Error("a status fault needs a status between 400 and 599");
    }
    if (
      spec.kind === "latency" &&
      (spec.latencyMs === undefined || !(spec.latencyMs >= 0 && spec.latencyMs <= MAX_LATENCY_MS))
    ) {
      // setTimeout fires at once beyond 2^31-1 ms, which would turn a long delay into none.
      throw new Error(`a latency fault needs latencyMs from 0 to ${MAX_LATENCY_MS}, got ${spec.latencyMs}`);
    }
    if (
      spec.kind === "late-commit" &&
      (spec.delayMs === undefined || !(spec.delayMs >= 0 && spec.delayMs <= MAX_LATENCY_MS))
    ) {
      throw new Error(`a late-commit fault needs delayMs from 0 to ${MAX_LATENCY_MS}, got ${spec.delayMs}`);
    }
    const p = spec.probability ?? 1;
    if (!(p >= 0 && p <= 1)) throw new Error("probability must be between 0 and 1");
    const id = randomUUID();
    this.faults.push({ id, method, route, spec, remaining: spec.times ?? Number.POSITIVE_INFINITY });
    return id;
  }

  /** Removes one fault; false when unknown. */
  remove(id: string): boolean {
    const before = this.faults.length;
    this.faults = this.faults.filter((f) => f.id !== id);
    return this.faults.length !== before;
  }

  /** Removes every fault. Requests already held by a late-commit fault still commit. */
  clear(): void {
    this.faults = [];
  }

  /** Requests held by late-commit faults. */
  readonly held = new HeldRequests();

  /** For a reset of the whole fake: removes every fault and abandons every held request. */
  reset(): void {
    this.clear();
    this.held.abandonAll();
  }

  /** Faults currently installed, for the control API listing. */
  list(): (FaultSpec & { id: string; remaining: number | null })[] {
    return this.faults.map((f) => ({
      ...f.spec,
      id: f.id,
      remaining: Number.isFinite(f.remaining) ? f.remaining : null,
    }));
  }

  /** The faults that fire for this request (each consumes one of its `times`). */
  match(
    method: string,
    pattern: string | undefined,
    path: string,
    random: () => number = Math.random,
  ): FaultSpec[] {
    const fired: FaultSpec[] = [];
    for (const f of this.faults) {
      if (f.remaining <= 0) continue;
      if (f.method !== null && f.method !== method.toUpperCase()) continue;
      if (!routeMatches(f.route, pattern, path)) continue;
      if (random() >= (f.spec.probability ?? 1)) continue;
      f.remaining -= 1;
      fired.push(f.spec);
    }
    this.faults = this.faults.filter((f) => f.remaining > 0);
    return fired;
  }
}

/**
 * Whether a fault's route names this request: its route pattern (`/v1/instances/:id`), its concrete
 * path, or a prefix ending in `/*` (`/v1/*`: every /v1 request).
 */
function routeMatches(route: string, pattern: string | undefined, path: string): boolean {
  if (route === pattern || route === path) return true;
  return route.endsWith("/*") && path.startsWith(route.slice(0, -1));
}

/** What becomes of a held request: processed and committed, or dropped by a reset. */
export type HeldOutcome = "commit" | "abandon";

interface Held {
  timer: NodeJS.Timeout;
  settle: (outcome: HeldOutcome) => void;
  released: boolean;
  landed: Promise<void>;
  markLanded: () => void;
}

/**
 * Requests a late-commit fault holds: each is released when its delay ends or on `flush`, and is
 * then processed and committed whether or not its client is still connected. A reset abandons them
 * (the world they belonged to is gone).
 */
export class HeldRequests {
  private entries = new Set<Held>();

  /**
   * Holds a request for `delayMs`. `outcome` says what to do once it is released; `landed` must be
   * called once the request has been processed (its answer produced), so `flush` can wait for it.
   */
  hold(delayMs: number): { outcome: Promise<HeldOutcome>; landed: () => void } {
    let settle: (o: HeldOutcome) => void = () => {};
    const outcome = new Promise<HeldOutcome>((resolve) => {
      settle = resolve;
    });
    let markLanded: () => void = () => {};
    const landed = new Promise<void>((resolve) => {
      markLanded = resolve;
    });
    const entry: Held = {
      // A timer that keeps the process alive: the commit was promised.
      timer: setTimeout(() => this.release(entry, "commit"), delayMs),
      settle,
      released: false,
      landed,
      markLanded: () => {
        this.entries.delete(entry);
        markLanded();
      },
    };
    this.entries.add(entry);
    return { outcome, landed: entry.markLanded };
  }

  private release(entry: Held, outcome: HeldOutcome): void {
    if (entry.released) return;
    entry.released = true;
    clearTimeout(entry.timer);
    entry.settle(outcome);
    if (outcome === "abandon") entry.markLanded();
  }

  /** Held requests that have not landed yet (still waiting, or released and being processed). */
  get pending(): number {
    return this.entries.size;
  }

  /** Releases every held request now and waits until each has been committed; returns how many. */
  async flush(): Promise<number> {
    const all = [...this.entries];
    for (const e of all) this.release(e, "commit");
    await Promise.all(all.map((e) => e.landed));
    return all.length;
  }

  /** Drops every held request without processing it. */
  abandonAll(): void {
    for (const e of [...this.entries]) this.release(e, "abandon");
  }
}
