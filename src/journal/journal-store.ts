/**
 * Where one state's journal records are kept: a file of a directory (file-store.ts) or rows of a
 * PostgreSQL schema (pg/store.ts). A store knows how to read the records back, append new ones
 * under a lock every writer of the same state takes, and drop what is no longer kept; what the
 * records mean (adoption, claims, settling) is DeployJournal's, the same over either store.
 */
import type { JournalEntry, JournalHeader, JournalRecord, ParsedJournal } from "./records";

/** What {@link JournalStore.update} needs besides the records. */
export interface UpdateOptions {
  /** Flushed to disk (or committed) before returning; false only for claims, which may be lost. */
  durable: boolean;
  /** The header a journal that does not exist yet starts with. */
  header: () => JournalHeader;
  /** The entries a compaction keeps (the rest are closed long enough ago to be dropped). */
  keep: (entries: Iterable<JournalEntry>) => JournalEntry[];
}

/** The records of one state's deploy journal, wherever they are kept. */
export interface JournalStore {
  /** The journal in messages: its file, or its database (no password) and state. */
  readonly name: string;
  /** Which kind of store, for logs and messages. */
  readonly kind: "file" | "postgresql";
  /**
   * The journal as it is now, read again only when it changed. A file that cannot be read is an
   * empty journal; a database that cannot be reached throws JournalError (a store that cannot be
   * read must never pass for one with nothing in it).
   */
  read(): ParsedJournal;
  /** Whether the journal has been written at all (a file, or rows, for this state). */
  exists(): boolean;
  /**
   * Under the state's lock: reads the journal as it is, appends what `build` returns (nothing when
   * it returns none), and compacts when closed entries make up most of it. What `build` throws is
   * thrown, with nothing written.
   */
  update(build: (current: ParsedJournal) => JournalRecord[], opts: UpdateOptions): void;
  /** Ids named by any journal of the same place (every state's: the directory, the database). */
  referencedIds(): Set<string>;
  /**
   * Retires a journal whose entries were moved into another (an older key of the same state),
   * unless it changed since it was read: the file is renamed aside, the rows deleted. Throws
   * JournalError when it cannot, leaving it as it is.
   */
  retire(): void;
}
