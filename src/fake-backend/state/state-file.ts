/**
 * The fake backend's state file: a snapshot followed by an append-only log of changes, so that a
 * write costs what changed rather than the whole state. The format, the guarantee and the fsync
 * policy are in README.md ("State file"); the figures behind the choices in docs/design/fake-backend-state-file.md.
 * What changed is found by `change-tracker.ts`; when to write (after each committed change, before
 * the answer leaves) is decided by `index.ts` and `http.ts`.
 */
import { createHash } from "node:crypto";
import {
  closeSync,
  existsSync,
  fstatSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { type FakeState, type LedgerRow, MAP_FIELDS } from "../types";
import { type Changes, ChangeTracker, SCALAR_FIELDS, WHOLE_FIELDS } from "./change-tracker";
import { withoutPrototypes } from "./store";

/** A state file that cannot be used; the message names the file and what is wrong with it. */
export class StateFileError extends Error {
  /** Builds the error for `file`. */
  constructor(
    readonly file: string,
    detail: string,
  ) {
    super(`state file ${file}: ${detail}`);
    this.name = "StateFileError";
  }
}

/** The log is compacted into a new snapshot once it is this many times the snapshot's size ... */
export const COMPACT_RATIO = 2;
/** ... and at least this long, so that a small state is not rewritten every few writes. */
export const COMPACT_MIN_BYTES = 64 * 1024;

/** One change record, as written after its checksum. */
interface ChangeRecord {
  /** The scalars of FakeState, always. */
  top: Record<(typeof SCALAR_FIELDS)[number], unknown>;
  /** Fields replaced whole. */
  fields?: Record<string, unknown>;
  /** Map records written, by field then id. */
  put?: Record<string, Record<string, unknown>>;
  /** Map records removed, by field. */
  del?: Record<string, string[]>;
  /** Ledger rows added or changed (matched by id). */
  rows?: LedgerRow[];
}

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === "object" && !Array.isArray(v);

/** 8 hex digits of SHA-256: enough to tell a damaged record from a whole one. */
function checksum(json: Buffer | string): string {
  return createHash("sha256").update(json).digest("hex").slice(0, 8);
}

// The file may have been edited by hand or cut short by a full disk: check the top-level shape so a
// broken file is refused at start with its name, instead of failing on the first request.
function checkSnapshot(file: string, parsed: unknown): FakeState {
  if (!isPlainObject(parsed)) throw new StateFileError(file, "must hold a JSON object");
  if (parsed.version !== 1) {
    throw new StateFileError(file, `has version ${JSON.stringify(parsed.version) ?? "none"}; expected 1`);
  }
  for (const key of MAP_FIELDS) {
    if (!isPlainObject(parsed[key])) throw new StateFileError(file, `field ${key} must be an object`);
  }
  for (const key of ["memberships", "ledger"] as const) {
    if (!Array.isArray(parsed[key])) throw new StateFileError(file, `field ${key} must be an array`);
  }
  for (const key of ["clock_offset_ms", "settled_at", "seq"] as const) {
    if (typeof parsed[key] !== "number" || !Number.isFinite(parsed[key])) {
      throw new StateFileError(file, `field ${key} must be a number`);
    }
  }
  return parsed as unknown as FakeState;
}

/** Applies one record; throws a plain Error saying what is wrong with it. */
function applyRecord(state: FakeState, rec: unknown, rowIndex: Map<string, number>): void {
  if (!isPlainObject(rec) || !isPlainObject(rec.top)) throw new Error("no top fields");
  const target = state as unknown as Record<string, unknown>;
  for (const key of SCALAR_FIELDS) {
    if (!(key in rec.top)) throw new Error(`top field ${key} missing`);
    target[key] = rec.top[key];
  }
  if (rec.fields !== undefined) {
    if (!isPlainObject(rec.fields)) throw new Error("fields is not an object");
    for (const [key, value] of Object.entries(rec.fields)) {
      if (!(WHOLE_FIELDS as readonly string[]).includes(key)) throw new Error(`unknown field ${key}`);
      const isArrayField = key === "memberships" || key === "ledger";
      if (isArrayField ? !Array.isArray(value) : !isPlainObject(value)) {
        throw new Error(`field ${key} has the wrong type`);
      }
      target[key] = value;
      if (key === "ledger") rowIndex.clear();
    }
    withoutPrototypes(state);
  }
  for (const [part, value] of [
    ["put", rec.put],
    ["del", rec.del],
  ] as const) {
    if (value === undefined) continue;
    if (!isPlainObject(value)) throw new Error(`${part} is not an object`);
    for (const [field, entries] of Object.entries(value)) {
      if (!(MAP_FIELDS as readonly string[]).includes(field)) throw new Error(`unknown field ${field}`);
      const map = target[field] as Record<string, unknown>;
      if (part === "put") {
        if (!isPlainObject(entries)) throw new Error(`put.${field} is not an object`);
        for (const [id, record] of Object.entries(entries)) map[id] = record;
      } else {
        if (!Array.isArray(entries)) throw new Error(`del.${field} is not an array`);
        for (const id of entries) delete map[String(id)];
      }
    }
  }
  if (rec.rows !== undefined) {
    if (!Array.isArray(rec.rows)) throw new Error("rows is not an array");
    if (rowIndex.size === 0) {
      for (const [i, r] of state.ledger.entries()) rowIndex.set(r.id, i);
    }
    for (const row of rec.rows as unknown[]) {
      if (!isPlainObject(row) || typeof row.id !== "string") throw new Error("a row has no id");
      const at = rowIndex.get(row.id);
      if (at === undefined) {
        rowIndex.set(row.id, state.ledger.length);
        state.ledger.push(row as unknown as LedgerRow);
      } else state.ledger[at] = row as unknown as LedgerRow;
    }
  }
}

/** A loaded state and what the loader has to say about the file (a dropped torn record). */
export interface LoadedState {
  state: FakeState;
  notes: string[];
}

/**
 * Reads a state file: today's format (a snapshot line, then change records) or the older one (one
 * JSON snapshot, possibly pretty-printed). Undefined when the file does not exist.
 */
export function readStateFile(file: string): LoadedState | undefined {
  if (!existsSync(file)) return undefined;
  let buf: Buffer;
  try {
    if (!statSync(file).isFile()) throw new StateFileError(file, "is not a regular file");
    buf = readFileSync(file);
  } catch (err) {
    if (err instanceof StateFileError) throw err;
    throw new StateFileError(file, `cannot be read (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
  const nl = buf.indexOf(10);
  let parsed: unknown;
  let pos: number;
  try {
    parsed = JSON.parse(buf.subarray(0, nl < 0 ? buf.length : nl).toString("utf8"));
    pos = nl < 0 ? buf.length : nl + 1;
  } catch (err) {
    // An older file written by hand may span lines: then it is one snapshot and nothing else.
    try {
      parsed = JSON.parse(buf.toString("utf8"));
      pos = buf.length;
    } catch {
      throw new StateFileError(
        file,
        `is not valid JSON (${(err as Error).message}); move it away to start empty`,
      );
    }
  }
  const state = withoutPrototypes(checkSnapshot(file, parsed));
  const notes: string[] = [];
  const rowIndex = new Map<string, number>();
  while (pos < buf.length) {
    const end = buf.indexOf(10, pos);
    const last = end < 0 || end === buf.length - 1;
    let problem: string | undefined;
    if (end < 0) problem = "it does not end with a newline";
    else {
      const line = buf.subarray(pos, end);
      const json = line.subarray(9);
      if (line.length < 10 || line[8] !== 0x20) problem = "it does not start with a checksum";
      else if (line.subarray(0, 8).toString("latin1") !== checksum(json))
        problem = "its checksum does not match";
      else {
        try {
          applyRecord(state, JSON.parse(json.toString("utf8")), rowIndex);
        } catch (err) {
          problem = (err as Error).message;
        }
      }
    }
    if (problem !== undefined) {
      // Each record is written by one append and only then acknowledged, so a write cut short (the
      // process killed, the disk full) can only damage the last one, which nobody was told of.
      if (last) {
        notes.push(
          `state file ${file}: ignored an incomplete last change record at byte ${pos} (${problem}); it was never acknowledged`,
        );
        break;
      }
      throw new StateFileError(
        file,
        `change record at byte ${pos} is damaged (${problem}) and records follow it; truncate the file to ${pos} bytes to keep the state up to there, or move it away to start empty`,
      );
    }
    pos = (end as number) + 1;
  }
  return { state, notes };
}

/**
 * Writes the state file of one running fake: appends a checksummed change record per write, and
 * compacts (a new snapshot written aside and renamed over the file) when the log outgrows the
 * snapshot, when the file was moved or deleted under it, and after an append that failed.
 */
export class StateLog {
  private fd: number | null = null;
  private tracker: ChangeTracker | null = null;
  private snapshotBytes = 0;
  private logBytes = 0;
  /** The file may end in a partial record: the next write must rewrite it whole. */
  private mustCompact = true;
  private closed = false;

  /** Opens nothing yet: the first {@link write} writes the whole state. */
  constructor(
    readonly file: string,
    private readonly limits = { ratio: COMPACT_RATIO, minBytes: COMPACT_MIN_BYTES },
  ) {}

  /**
   * Makes the file hold `owner.state` once this returns. `changed` says a change was committed
   * that the tracker may not see (a scalar such as `transitions`). The first call, and any call
   * after `owner.state` was replaced (a reset), writes a snapshot and puts a tracking proxy in
   * `owner.state`.
   */
  write(owner: { state: FakeState }, changed: boolean): void {
    if (this.closed) return;
    const tracker = this.tracker;
    if (!tracker || owner.state !== tracker.proxy) {
      // The engine replaced its state (a reset) or nothing is tracked yet: start from a snapshot.
      const fresh = new ChangeTracker(owner.state);
      this.compact(fresh.target);
      this.tracker = fresh;
      owner.state = fresh.proxy;
      return;
    }
    if (!changed && !tracker.dirty && !this.mustCompact) return;
    if (this.mustCompact || this.replacedOnDisk()) {
      this.compact(tracker.target);
      tracker.take();
      return;
    }
    const changes = tracker.take();
    const json = JSON.stringify(this.record(tracker.target, changes));
    const line = Buffer.from(`${checksum(json)} ${json}\n`);
    try {
      let off = 0;
      while (off < line.length) off += writeSync(this.fd as number, line, off);
    } catch (err) {
      // Part of the record may be in the file; only a rewrite makes it whole again.
      tracker.restore(changes);
      this.mustCompact = true;
      throw err;
    }
    this.logBytes += line.length;
    if (this.logBytes > Math.max(this.limits.minBytes, this.limits.ratio * this.snapshotBytes)) {
      try {
        this.compact(tracker.target);
      } catch {
        // The record above is safely in the file, and the file is whole: keep appending; the next
        // write tries the compaction again.
      }
    }
  }

  /** Writes a last snapshot and closes the file; later writes do nothing. */
  close(owner: { state: FakeState }): void {
    if (this.closed) return;
    const target = this.tracker && owner.state === this.tracker.proxy ? this.tracker.target : owner.state;
    try {
      this.compact(target);
    } finally {
      this.closed = true;
      if (this.fd !== null) closeSync(this.fd);
      this.fd = null;
    }
  }

  private record(state: FakeState, c: Changes): ChangeRecord {
    const all = state as unknown as Record<string, unknown>;
    const top = Object.fromEntries(SCALAR_FIELDS.map((k) => [k, all[k]])) as ChangeRecord["top"];
    const rec: ChangeRecord = { top };
    if (c.fields.size > 0) rec.fields = Object.fromEntries([...c.fields].map((f) => [f, all[f]]));
    const put: Record<string, Record<string, unknown>> = {};
    const del: Record<string, string[]> = {};
    for (const [field, ids] of c.records) {
      if (c.fields.has(field)) continue;
      const map = all[field] as Record<string, unknown>;
      const puts = Object.create(null) as Record<string, unknown>;
      const dels: string[] = [];
      for (const id of ids) {
        if (id in map) puts[id] = map[id];
        else dels.push(id);
      }
      if (Object.keys(puts).length > 0) put[field] = puts;
      if (dels.length > 0) del[field] = dels;
    }
    if (Object.keys(put).length > 0) rec.put = put;
    if (Object.keys(del).length > 0) rec.del = del;
    if (c.rows.size > 0 && !c.fields.has("ledger")) rec.rows = [...c.rows];
    return rec;
  }

  // Someone moved or deleted the file: appending to the old inode would lose every write.
  private replacedOnDisk(): boolean {
    if (this.fd === null) return true;
    try {
      const open = fstatSync(this.fd);
      const now = statSync(this.file);
      return open.ino !== now.ino || open.dev !== now.dev;
    } catch {
      return true;
    }
  }

  private compact(state: FakeState): void {
    const text = `${JSON.stringify(state)}\n`;
    const tmp = `${this.file}.${process.pid}.tmp`;
    try {
      // A leftover temp file would keep its old mode: start from none so the new one is 0600.
      rmSync(tmp, { force: true });
      writeFileSync(tmp, text, { mode: 0o600 });
      renameSync(tmp, this.file);
    } catch (err) {
      // The file itself is untouched (the rename is the only step that changes it).
      rmSync(tmp, { force: true });
      throw err;
    }
    // From here the open descriptor is the old file's: the next write must not append to it.
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
    this.fd = openSync(this.file, "a");
    this.snapshotBytes = Buffer.byteLength(text);
    this.logBytes = 0;
    this.mustCompact = false;
  }
}
