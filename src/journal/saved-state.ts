/**
 * What a saved state holds, as the journal's settle and reopen rules read it: the ids of its
 * objects, and its lineage and serial (the state mark a settled entry is closed with). Two states
 * can be read: the local backend's file, and a `pg` backend's row in its database. An entry closed
 * with a mark is open again as {@link reopenedBy} says (see DeployJournal.isOpen and settleHanded).
 */
import { readFileSync, statSync } from "node:fs";
import type { JsonObject } from "../tfstate/json";
import { objectId, readRawState } from "../tfstate/state";
import { pgBridge } from "./pg/bridge";
import type { PgTarget, StateAnswer } from "./pg/protocol";
import type { StateMark } from "./records";

/** What the local backend's state file holds: its objects' ids, and its lineage and serial. */
export interface SavedState {
  ids: Set<string>;
  mark?: StateMark;
}

/** The last read of a state file, keyed by its inode, size and mtime. */
export interface SavedStateCache {
  key: string;
  state: SavedState | null;
}

/**
 * The state file as it is now, read again only when it changed since `cache`: null when there is
 * none, undefined when it cannot be read (cut short or being written). Returns the cache to keep.
 */
export function readSavedState(
  file: string,
  cache: SavedStateCache | null,
): { state: SavedState | null | undefined; cache: SavedStateCache | null } {
  let key: string;
  try {
    const st = statSync(file);
    key = `${st.ino}:${st.size}:${st.mtimeMs}`;
  } catch (err) {
    return { state: (err as NodeJS.ErrnoException).code === "ENOENT" ? null : undefined, cache };
  }
  if (cache?.key === key) return { state: cache.state ?? undefined, cache };
  const state = parsedState(() => readFileSync(file, "utf8"), file);
  return { state: state ?? undefined, cache: { key, state } };
}

/** A state's JSON text as the rules read it; null when it is no state this version reads. */
function parsedState(text: () => string, name: string): SavedState | null {
  try {
    const doc = JSON.parse(text()) as JsonObject;
    const ids = new Set(
      readRawState(doc, name)
        .objects.map(objectId)
        .filter((id): id is string => id !== undefined),
    );
    return {
      ids,
      ...(typeof doc.lineage === "string" && typeof doc.serial === "number"
        ? { mark: { lineage: doc.lineage, serial: doc.serial } }
        : {}),
    };
  } catch {
    return null;
  }
}

/**
 * A `pg` backend's state: its database (`conn_str`, with the launch's libpq variables), its schema
 * (`schema_name`), its table and the workspace, whose row of `<schema>.<table>` holds the state.
 */
export interface StateDb {
  target: PgTarget;
  schema: string;
  /** `states`; OpenTofu's backend takes another (`table_name`, PG_TABLE_NAME). */
  table: string;
  workspace: string;
}

/** The last read of a `pg` backend's state: the row's version and state, and when it was read. */
export interface PgStateCache {
  version: string | null;
  state: SavedState | null;
  readAt: number;
  /** That read failed: for PG_STATE_FRESH_MS the state counts as unreadable, without a round trip. */
  failed?: string;
}

/**
 * How long a read of a `pg` backend's state is used again, a failed one too: Terraform holds the
 * state's lock for the whole command and writes it only at the end (and every 20 s of a long
 * apply), so one read serves the checks of one step (a plan's adoption checks) without a round
 * trip each, and a database out of reach costs one wait, not one per check.
 */
export const PG_STATE_FRESH_MS = 2_000;

/**
 * A `pg` backend's state as it is now (read again after {@link PG_STATE_FRESH_MS}, its data sent
 * again only when the row changed): null when there is none, undefined when it cannot be read.
 * There is none when the default workspace has no row, or a workspace's row is empty (`terraform
 * workspace new` writes one). It cannot be read when the database is out of reach, when the schema
 * or table is missing (Terraform creates both when it configures the backend, so this is not the
 * backend's place), when another workspace has no row, or when the row holds no state this version
 * reads. `failed` says why, for the log. Returns the cache to keep.
 */
export function readPgSavedState(
  db: StateDb,
  cache: PgStateCache | null,
  now: number = Date.now(),
  timeoutMs: number = db.target.timeoutMs,
): { state: SavedState | null | undefined; cache: PgStateCache | null; failed?: string } {
  if (cache && now - cache.readAt >= 0 && now - cache.readAt < PG_STATE_FRESH_MS) {
    return cache.failed === undefined ? { state: cache.state, cache } : { state: undefined, cache };
  }
  const fail = (why: string) => ({
    state: undefined,
    cache: { version: null, state: null, readAt: now, failed: why },
    failed: why,
  });
  let answer: StateAnswer;
  try {
    answer = pgBridge().call<StateAnswer>(
      {
        kind: "state",
        target: { ...db.target, timeoutMs },
        schema: db.schema,
        table: db.table,
        workspace: db.workspace,
        known: cache?.failed === undefined ? (cache?.version ?? null) : null,
      },
      timeoutMs,
      STATE_BACKSTOP_MS,
    );
  } catch (err) {
    return fail(err instanceof Error ? err.message : String(err));
  }
  const where = `the row "${db.workspace}" of ${db.schema}.${db.table}`;
  if (answer === null) {
    if (db.workspace !== "default") return fail(`${where} is missing`);
    return { state: null, cache: { version: null, state: null, readAt: now } };
  }
  if (answer.data === null && cache && cache.failed === undefined && cache.version === answer.version) {
    return { state: cache.state, cache: { ...cache, readAt: now } };
  }
  const data = answer.data ?? "";
  // The empty row `terraform workspace new` writes: no state yet.
  if (data.trim() === "")
    return { state: null, cache: { version: answer.version, state: null, readAt: now } };
  const state = parsedState(() => data, where);
  if (state === null) return fail(`${where} holds no state this version reads`);
  return { state, cache: { version: answer.version, state, readAt: now } };
}

/** How long past its own deadline the worker's answer to a state read is waited for. */
const STATE_BACKSTOP_MS = 250;

/**
 * Whether an entry closed with `mark` is open again given the state now. None (null) opens it.
 * A local file's mark: an earlier state of the same lineage, or another lineage, opens it. A
 * pending mark (read before the run's own write): a state of its lineage up to one serial later,
 * which, lacking the object, is not the run's write (the caller checks that). A state that cannot be
 * read (undefined), or a later state of the same lineage, keeps it closed.
 */
export function reopenedBy(mark: StateMark, now: SavedState | null | undefined): boolean {
  if (now === undefined) return false;
  if (now === null) return true;
  // Read before the run's own write, whose first state (serial + 1) holds the run's objects: a
  // state of that lineage up to serial + 1 is the one read or another command's (the caller
  // checks it does not hold the object).
  if (mark.pending)
    return !!now.mark && now.mark.lineage === mark.lineage && now.mark.serial <= mark.serial + 1;
  if (!now.mark) return false;
  return now.mark.lineage !== mark.lineage || now.mark.serial < mark.serial;
}
