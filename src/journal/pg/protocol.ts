/**
 * What the provider's thread and the PostgreSQL client's worker thread (worker.ts) say to each
 * other: one request at a time, each answered once. Plain data only (structured clone).
 */
import type { JournalEntry, JournalHeader, JournalRecord } from "../records";

/** Which database, as one journal of the provider sees it. */
export interface PgTarget {
  /** The journal URL (may hold a password; the worker never echoes it). */
  url: string;
  /** libpq's variables of the launch (PGUSER, PGPASSWORD, PGSSLMODE, …), for what the URL leaves out. */
  env: Record<string, string>;
  /** How long one request may take, connecting included. */
  timeoutMs: number;
}

/** Where a reader's copy of a state's journal stands: it has every record up to `seq` of `generation`. */
export interface Since {
  generation: string;
  seq: string;
}

/** A state's journal as read: all its records, or those after `since` when `full` is false. */
export interface ReadAnswer {
  generation: string;
  seq: string;
  header: JournalHeader;
  full: boolean;
  records: JournalRecord[];
  /** The seq of each of `records`' rows. */
  seqs: string[];
}

/** The row of a state's journal, for tools. */
export interface StateRow {
  key: string;
  workspace: string;
  backend: string;
}

/**
 * A `pg` backend's state as read: the row's version (its xmin) and its JSON text, null when it is
 * the version the caller knew; null when the workspace has no row.
 */
export type StateAnswer = { version: string; data: string | null } | null;

/** A request to the worker. */
export type Request =
  | { kind: "read"; target: PgTarget; key: string; since: Since | null }
  | { kind: "begin"; target: PgTarget; key: string; header: JournalHeader; since: Since | null }
  | {
      kind: "commit";
      records: JournalRecord[];
      /**
       * Replace every record with these entries (compaction), but the rows of `keep`, which follow
       * them as they are, in their order.
       */
      compact: JournalEntry[] | null;
      /** The seqs of the rows a compaction keeps: those this version could not apply. */
      keep: string[];
      /** Nothing is left: the state's journal goes. */
      drop: boolean;
    }
  | { kind: "rollback" }
  | { kind: "referenced"; target: PgTarget }
  /**
   * A `pg` backend's state of `workspace`, from its table `<schema>.<table>` (the backend's
   * database: the journal's schema is not created there), within the request's deadline, connecting
   * included. `known`: the row version the caller has, whose data is then not sent again.
   */
  | {
      kind: "state";
      target: PgTarget;
      schema: string;
      table: string;
      workspace: string;
      known: string | null;
    }
  | { kind: "states"; target: PgTarget };

/** What a request answers: its value, or why it failed. */
export type Answer =
  | { id: number; ok: true; value: unknown }
  | {
      id: number;
      ok: false;
      message: string;
      /** The database was never reached (connection refused, unknown host, timed out connecting). */
      unreachable: boolean;
    };

/** The first message the worker gets: where to answer, and how to wake the waiting thread. */
export interface WorkerSetup {
  port: import("node:worker_threads").MessagePort;
  /** An Int32Array's buffer; the worker adds 1 to element 0 after each answer. */
  signal: SharedArrayBuffer;
}
