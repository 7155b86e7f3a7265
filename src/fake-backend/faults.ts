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

  /** Removes every fault. */
  clear(): void {
    this.faults = [];
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
      if (f.route !== pattern && f.route !== path) continue;
      if (random() >= (f.spec.probability ?? 1)) continue;
      f.remaining -= 1;
      fired.push(f.spec);
    }
    this.faults = this.faults.filter((f) => f.remaining > 0);
    return fired;
  }
}
