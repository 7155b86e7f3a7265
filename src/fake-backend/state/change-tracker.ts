/**
 * Knows which records of the state changed since the last write, so the state file can append what
 * changed instead of rewriting everything (`state-file.ts`). It wraps the state in proxies that note
 * every write on the way to the real objects; the engine keeps mutating records in place as before
 * and never knows. Reads go to the same objects: a proxy holds nothing of its own.
 *
 * What is noted, per top-level field of `FakeState`:
 * - id-keyed maps (`orgs`, `instances`, ...): the record id, whatever depth the write was at;
 * - `ledger` (append-only rows): the row, by its id; a shrink or reorder notes the whole field;
 * - `memberships` and a field replaced whole: the whole field;
 * - the scalars (`seq`, `settled_at`, `clock_offset_ms`, `transitions`): nothing, they are small
 *   and every change record carries them.
 * An object reachable from two records is noted under the first one it was reached through; the
 * engine never shares objects between records (the JSON state file could not keep them shared).
 */
import { type FakeState, type LedgerRow, MAP_FIELDS, type MapField } from "../types";

/** Top-level fields that are rewritten whole in a change record. */
export const WHOLE_FIELDS = [...MAP_FIELDS, "memberships", "ledger"] as const;

/** The scalars every change record carries. */
export const SCALAR_FIELDS = ["clock_offset_ms", "settled_at", "seq", "transitions"] as const;

/** What changed since the last {@link ChangeTracker.take}. */
export interface Changes {
  /** Fields to write whole (a replaced map, a shrunk ledger, memberships). */
  fields: Set<(typeof WHOLE_FIELDS)[number]>;
  /** Map records written, by field then id (deleted when the id is gone at write time). */
  records: Map<MapField, Set<string>>;
  /** Ledger rows added or changed. */
  rows: Set<LedgerRow>;
}

const isMapField = (p: string | symbol): p is MapField => (MAP_FIELDS as readonly unknown[]).includes(p);
const isObject = (v: unknown): v is object => v !== null && typeof v === "object";
const isIndex = (p: string | symbol): p is string => typeof p === "string" && /^(0|[1-9]\d*)$/.test(p);

/** Tracks writes to one state object; {@link ChangeTracker.proxy} is what the engine gets. */
export class ChangeTracker {
  /** The state as the engine sees it: writes through it are noted. */
  readonly proxy: FakeState;
  private changes: Changes = { fields: new Set(), records: new Map(), rows: new Set() };
  private readonly proxies = new WeakMap<object, object>();
  private readonly targets = new WeakMap<object, object>();

  /** Wraps `target`, the plain state that is serialized. */
  constructor(readonly target: FakeState) {
    this.proxy = this.rootProxy(target);
  }

  /** True when something was noted since the last take. */
  get dirty(): boolean {
    return this.changes.fields.size > 0 || this.changes.records.size > 0 || this.changes.rows.size > 0;
  }

  /** Returns what changed and starts noting afresh. */
  take(): Changes {
    const out = this.changes;
    this.changes = { fields: new Set(), records: new Map(), rows: new Set() };
    return out;
  }

  /** Puts changes back (a write failed), merged with those noted since. */
  restore(c: Changes): void {
    for (const f of c.fields) this.changes.fields.add(f);
    for (const [field, ids] of c.records) for (const id of ids) this.noteRecord(field, id);
    for (const r of c.rows) this.changes.rows.add(r);
  }

  private unwrap<T>(v: T): T {
    return isObject(v) ? ((this.targets.get(v) as T | undefined) ?? v) : v;
  }

  private cached(target: object, make: () => object): object {
    let p = this.proxies.get(target);
    if (!p) {
      p = make();
      this.proxies.set(target, p);
      this.targets.set(p, target);
    }
    return p;
  }

  private noteRecord(field: MapField, id: string): void {
    let ids = this.changes.records.get(field);
    if (!ids) {
      ids = new Set();
      this.changes.records.set(field, ids);
    }
    ids.add(id);
  }

  private rootProxy(root: FakeState): FakeState {
    const whole = (p: string | symbol) => {
      if ((WHOLE_FIELDS as readonly unknown[]).includes(p)) {
        this.changes.fields.add(p as (typeof WHOLE_FIELDS)[number]);
      }
    };
    return this.cached(
      root,
      () =>
        new Proxy(root, {
          get: (t, p) => {
            const v = Reflect.get(t, p);
            if (!isObject(v)) return v;
            if (isMapField(p)) return this.mapProxy(v as Record<string, unknown>, p);
            if (p === "ledger") return this.ledgerProxy(v as LedgerRow[]);
            if (p === "memberships") return this.deepProxy(v, () => this.changes.fields.add("memberships"));
            return v;
          },
          set: (t, p, v) => {
            whole(p);
            return Reflect.set(t, p, this.unwrap(v));
          },
          deleteProperty: (t, p) => {
            whole(p);
            return Reflect.deleteProperty(t, p);
          },
        }),
    ) as FakeState;
  }

  private mapProxy(map: Record<string, unknown>, field: MapField): object {
    return this.cached(
      map,
      () =>
        new Proxy(map, {
          get: (t, id) => {
            const v = Reflect.get(t, id);
            if (!isObject(v) || typeof id !== "string") return v;
            return this.deepProxy(v, () => this.noteRecord(field, id));
          },
          set: (t, id, v) => {
            if (typeof id === "string") this.noteRecord(field, id);
            return Reflect.set(t, id, this.unwrap(v));
          },
          defineProperty: (t, id, d) => {
            if (typeof id === "string") this.noteRecord(field, id);
            return Reflect.defineProperty(t, id, "value" in d ? { ...d, value: this.unwrap(d.value) } : d);
          },
          deleteProperty: (t, id) => {
            if (typeof id === "string") this.noteRecord(field, id);
            return Reflect.deleteProperty(t, id);
          },
        }),
    );
  }

  private ledgerProxy(ledger: LedgerRow[]): object {
    // Rows are appended and then grow in place; anything else (a shrink, a row moved or replaced)
    // rewrites the field.
    const put = (t: LedgerRow[], p: string | symbol, value: unknown): void => {
      if (p === "length") {
        if (typeof value === "number" && value < t.length) this.changes.fields.add("ledger");
        return;
      }
      if (!isIndex(p)) return;
      const before = t[Number(p)];
      const row = this.unwrap(value) as LedgerRow;
      if (before !== undefined && before !== row) this.changes.fields.add("ledger");
      else if (isObject(row)) this.changes.rows.add(row);
    };
    return this.cached(
      ledger,
      () =>
        new Proxy(ledger, {
          get: (t, p) => {
            const v = Reflect.get(t, p);
            if (!isObject(v) || !isIndex(p)) return v;
            const row = v as LedgerRow;
            return this.deepProxy(row, () => this.changes.rows.add(row));
          },
          set: (t, p, v) => {
            put(t, p, v);
            return Reflect.set(t, p, this.unwrap(v));
          },
          defineProperty: (t, p, d) => {
            put(t, p, d.value);
            return Reflect.defineProperty(t, p, "value" in d ? { ...d, value: this.unwrap(d.value) } : d);
          },
          deleteProperty: (t, p) => {
            this.changes.fields.add("ledger");
            return Reflect.deleteProperty(t, p);
          },
        }),
    );
  }

  /** A record or anything inside it: every write notes `note`, reads wrap nested objects alike. */
  private deepProxy(obj: object, note: () => void): object {
    return this.cached(
      obj,
      () =>
        new Proxy(obj, {
          get: (t, p) => {
            const v = Reflect.get(t, p);
            return isObject(v) ? this.deepProxy(v, note) : v;
          },
          set: (t, p, v) => {
            note();
            return Reflect.set(t, p, this.unwrap(v));
          },
          defineProperty: (t, p, d) => {
            note();
            return Reflect.defineProperty(t, p, "value" in d ? { ...d, value: this.unwrap(d.value) } : d);
          },
          deleteProperty: (t, p) => {
            note();
            return Reflect.deleteProperty(t, p);
          },
        }),
    );
  }
}
