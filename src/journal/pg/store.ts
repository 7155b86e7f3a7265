/**
 * The PostgreSQL store: a state's journal as rows of the schema `gpurental_journal`, shared by
 * every runner that reaches the database. The records are the file store's, one row each, in
 * order; a state's row in `journals` is its lock (SELECT … FOR UPDATE in the write's transaction),
 * so writers of one state take turns and other states' writers never wait. A write is committed
 * before it returns. A read asks only for what changed since the last one (one round trip when
 * nothing did). A database that cannot be reached, or that does not answer in time, fails the read
 * or the write with a JournalError naming the database (password masked) and the setting.
 */
import { JournalError } from "../disk";
import type { JournalStore, UpdateOptions } from "../journal-store";
import type { JournalLocation } from "../location";
import {
  applyRecord,
  JOURNAL_FORMAT,
  JOURNAL_VERSION,
  type JournalHeader,
  type JournalRecord,
  type ParsedJournal,
  readRecord,
  UnreadEntries,
} from "../records";
import { type Bridge, loadClientModule, PgCallError, pgBridge } from "./bridge";
import type { PgTarget, ReadAnswer, Request, Since } from "./protocol";

/** A write that ends a journal's transaction. */
type CommitRequest = Extract<Request, { kind: "commit" }>;

import { JOURNAL_SCHEMA, type JournalUrl, libpqEnv } from "./url";

/** How long one journal request may take by default, connecting included (the file lock's wait). */
export const DEFAULT_JOURNAL_TIMEOUT_MS = 15_000;

/**
 * A read outside a write uses the copy the last read or write left while it is younger than this.
 * Within one command the state lock keeps other runs of the state out: such a copy misses only
 * what the command's other provider processes write about their own objects, which no decision of
 * this one depends on. Writes (takes included) always read under the lock.
 */
export const FRESH_MS = 2_000;

/** Compaction waits for at least this many records, as the file store's. */
const COMPACT_MIN_RECORDS = 64;

/** What a PostgreSQL store is told. */
export interface PgStoreOptions {
  /** The launch's environment, for libpq's variables. */
  env?: NodeJS.ProcessEnv;
  timeoutMs?: number;
  log?: (level: "debug" | "warn", message: string, fields?: Record<string, unknown>) => void;
  /** For tests: another bridge. */
  bridge?: Bridge;
}

function emptyJournal(): ParsedJournal {
  return { header: null, entries: new Map(), problems: [], unread: [], lines: 0 };
}

/** The state key of a location: its file's name without `.jsonl`, as the file store names it. */
export function stateKeyOf(location: JournalLocation): string {
  const base = location.file.slice(location.file.lastIndexOf("/") + 1);
  return base.replace(/\.jsonl$/, "");
}

/** The deploy journal of one state in PostgreSQL. */
export class PgStore implements JournalStore {
  readonly kind = "postgresql" as const;
  readonly key: string;
  private readonly target: PgTarget;
  private readonly bridge: Bridge;
  private readonly log: NonNullable<PgStoreOptions["log"]>;
  /** The journal as last read, and the seqs of its rows this version could not apply (`unread`). */
  private cache: { since: Since; parsed: ParsedJournal; at: number; keep: string[] } | null = null;
  private readonly reported = new Set<string>();

  constructor(
    readonly url: JournalUrl,
    readonly location: JournalLocation,
    opts: PgStoreOptions = {},
  ) {
    this.key = stateKeyOf(location);
    this.target = {
      url: url.value,
      env: libpqEnv(opts.env),
      timeoutMs: opts.timeoutMs ?? DEFAULT_JOURNAL_TIMEOUT_MS,
    };
    this.bridge = opts.bridge ?? pgBridge();
    this.log = opts.log ?? (() => {});
  }

  get name(): string {
    return `${this.url.display} (schema ${JOURNAL_SCHEMA}, state ${this.key})`;
  }

  /** The error of a failed call: the store, the setting, and what went wrong. */
  private failed(doing: string, err: unknown): JournalError {
    const why = err instanceof Error ? err.message : String(err);
    const reach = err instanceof PgCallError && err.unreachable ? " (the database could not be reached)" : "";
    return new JournalError(
      `The deploy journal in PostgreSQL could not be ${doing}${reach}: ${why}. Database ${this.url.display}, schema ${JOURNAL_SCHEMA}, set by ${this.url.source}.${doing === "written" ? " No deploy or API key creation is sent without its record in the journal." : ""}`,
      this.name,
      { cause: err },
    );
  }

  private apply(answer: ReadAnswer | null): ParsedJournal {
    if (!answer) {
      this.cache = null;
      return emptyJournal();
    }
    const previous = answer.full ? null : this.cache;
    const base: ParsedJournal = previous?.parsed ?? {
      header: answer.header,
      entries: new Map(),
      problems: [],
      unread: [],
      lines: 0,
    };
    let header = answer.header;
    const problems = [...base.problems];
    const unread = [...base.unread];
    const keep = [...(previous?.keep ?? [])];
    const unreadEntries = UnreadEntries.of(unread);
    for (const [i, value] of answer.records.entries()) {
      const rec = readRecord(value);
      if (rec === undefined || rec === "other" || unreadEntries.follows(base.entries, rec)) {
        // Its row stays: no compaction deletes it (see update).
        keep.push(answer.seqs[i] as string);
        unreadEntries.note(value);
        const text = JSON.stringify(value);
        if (rec !== undefined) {
          unread.push(rec === "other" ? { text } : { text, follows: true });
          continue;
        }
        const problem = `record ${base.lines + i + 1} is not a journal record`;
        problems.push(problem);
        unread.push({ text, problem });
        // Said once per process, as the file store says it of a damaged line.
        if (!this.reported.has(text)) {
          this.reported.add(text);
          this.log("warn", "deploy journal: skipped a damaged record; its row is kept", {
            journal: this.name,
            problem,
          });
        }
        continue;
      }
      applyRecord(base.entries, rec, (h) => {
        header = h;
      });
    }
    const parsed: ParsedJournal = {
      ...base,
      header,
      problems,
      unread,
      lines: base.lines + answer.records.length,
    };
    this.cache = { since: { generation: answer.generation, seq: answer.seq }, parsed, at: Date.now(), keep };
    return parsed;
  }

  /**
   * Reads the journal on the calling thread, asynchronously (the provider's configuration is an
   * async step): a command that then writes nothing, such as a plan with no changes, needs no
   * worker thread at all. A failure is left for the next read to report.
   */
  async prime(): Promise<void> {
    try {
      const answer = await loadClientModule().primeRead(this.target, this.key);
      this.apply(answer);
      this.empty = answer === null ? Date.now() : null;
    } catch (err) {
      this.log("debug", "deploy journal: could not read it ahead", {
        journal: this.name,
        error: err instanceof Error ? err.message : String(err),
      });
    }
  }

  /** When a read last found no journal for the state (a copy of nothing is not kept otherwise). */
  private empty: number | null = null;

  read(): ParsedJournal {
    const now = Date.now();
    if (this.cache && now - this.cache.at < FRESH_MS) return this.cache.parsed;
    if (!this.cache && this.empty !== null && now - this.empty < FRESH_MS) return emptyJournal();
    let answer: ReadAnswer | null;
    try {
      answer = this.bridge.call<ReadAnswer | null>(
        { kind: "read", target: this.target, key: this.key, since: this.cache?.since ?? null },
        this.target.timeoutMs,
      );
    } catch (err) {
      throw this.failed("read", err);
    }
    this.empty = answer === null ? Date.now() : null;
    // Unchanged since the last read: the copy in hand is the journal.
    if (answer && !answer.full && answer.records.length === 0 && this.cache) {
      this.cache.at = Date.now();
      return this.cache.parsed;
    }
    return this.apply(answer);
  }

  exists(): boolean {
    return this.read().header !== null;
  }

  update(build: (current: ParsedJournal) => JournalRecord[], opts: UpdateOptions): void {
    let current: ParsedJournal;
    try {
      const answer = this.bridge.call<ReadAnswer | null>(
        {
          kind: "begin",
          target: this.target,
          key: this.key,
          header: opts.header(),
          since: this.cache?.since ?? null,
        },
        this.target.timeoutMs,
      );
      current = this.apply(answer);
    } catch (err) {
      throw this.failed("written", err);
    }
    const keep = this.cache?.keep ?? [];
    let records: JournalRecord[];
    try {
      // A journal written for the first time has its header in its row, as a file's first line.
      if (!current.header) current = { ...current, header: opts.header() };
      records = build(current);
    } catch (err) {
      this.rollback();
      throw err;
    }
    if (records.length === 0) {
      this.rollback();
      return;
    }
    // The journal after these records, to decide on compaction as the file store does. Records
    // this version cannot apply (moved from another store as they were, by `gpurental journal
    // import`) are written as they are and applied to nothing.
    const after = new Map([...current.entries].map(([k, e]) => [k, structuredClone(e)]));
    let unapplied = 0;
    const unreadEntries = UnreadEntries.of(current.unread);
    for (const rec of records) {
      const known = readRecord(rec);
      if (known === undefined || known === "other" || unreadEntries.follows(after, known)) {
        unreadEntries.note(rec);
        unapplied++;
      } else applyRecord(after, rec, () => {});
    }
    const kept = opts.keep(after.values());
    const lines = current.lines + records.length;
    // The rows this version could not apply are never deleted: a journal holding some stays. A
    // write adding such rows does not compact either (a compaction writes entries only); the next
    // one does, once a read has them among the rows it keeps.
    const drop = kept.length === 0 && keep.length === 0 && unapplied === 0;
    const compact =
      !drop &&
      unapplied === 0 &&
      lines >= COMPACT_MIN_RECORDS &&
      lines >= 2 * (kept.length + keep.length + 1);
    let since: Since | null;
    try {
      since = this.bridge.call<Since | null>(
        { kind: "commit", records, compact: compact ? kept : null, keep, drop },
        this.target.timeoutMs,
      );
    } catch (err) {
      this.cache = null;
      this.empty = null;
      throw this.failed("written", err);
    }
    if (!since) {
      this.cache = null;
      this.empty = Date.now();
      return;
    }
    if ((compact && keep.length > 0) || unapplied > 0) {
      // The rows it kept were numbered anew, after the entries, or rows to keep were added: the
      // next read reads them all, and knows which rows it keeps.
      this.cache = null;
      this.empty = null;
    } else {
      const entries = compact ? new Map(kept.map((e) => [e.entry, e])) : after;
      this.cache = {
        since,
        parsed: { ...current, entries, lines: compact ? kept.length : lines },
        at: Date.now(),
        keep,
      };
    }
    if (compact) {
      this.log("debug", "deploy journal compacted", { journal: this.name, lines, kept: kept.length });
    }
  }

  private rollback(): void {
    try {
      this.bridge.call({ kind: "rollback" }, this.target.timeoutMs);
    } catch {
      // The connection went: its transaction went with it.
      this.cache = null;
      this.empty = null;
    }
  }

  /**
   * Deletes the rows of a journal whose entries were moved to another key (see {@link drop}); keeps
   * them while some could not be read (damaged, or a later version's), since those were not moved
   * (the next process moves the rest again, and adds nothing twice).
   */
  retire(): void {
    const keep = this.cache?.keep ?? [];
    if (keep.length === 0) {
      this.drop();
      return;
    }
    // The rows this version cannot apply were not moved: they stay, alone. The entries, moved, go:
    // kept, every later process would move them again, and bring back one that today's journal
    // has closed and since compacted away.
    this.commitUnchanged({ kind: "commit", records: [], compact: [], keep, drop: false });
    this.log("warn", "deploy journal: the older journal keeps only the rows this version cannot read", {
      journal: this.name,
      rows: keep.length,
    });
  }

  /**
   * Deletes this state's journal from the database (its entries moved elsewhere), under the state's
   * lock, and only if nothing was written to it since this store last read it: a run writing
   * meanwhile (a deploy's `sent`) must not lose its record with the rows.
   */
  drop(): void {
    this.commitUnchanged({ kind: "commit", records: [], compact: null, keep: [], drop: true });
  }

  /** Commits `request` under the state's lock if nothing was written since this store last read. */
  private commitUnchanged(request: CommitRequest): void {
    const since = this.cache?.since ?? null;
    let answer: ReadAnswer | null;
    try {
      answer = this.bridge.call<ReadAnswer | null>(
        { kind: "begin", target: this.target, key: this.key, header: this.placeholderHeader(), since },
        this.target.timeoutMs,
      );
    } catch (err) {
      throw this.failed("written", err);
    }
    const unchanged = answer === null || (since !== null && !answer.full && answer.records.length === 0);
    if (!unchanged) {
      this.rollback();
      this.cache = null;
      throw new JournalError(
        `The deploy journal in PostgreSQL changed after it was read (database ${this.url.display}, schema ${JOURNAL_SCHEMA}, state ${this.key}): a run is writing it. Nothing was deleted; run the command again once no terraform command uses this state.`,
        this.name,
      );
    }
    try {
      this.bridge.call(request, this.target.timeoutMs);
    } catch (err) {
      throw this.failed("written", err);
    }
    this.cache = null;
    this.empty = null;
  }

  private placeholderHeader(): JournalHeader {
    return {
      op: "header",
      format: JOURNAL_FORMAT,
      version: JOURNAL_VERSION,
      workspace: this.location.workspace,
      backend: this.location.backend,
      created_at: new Date().toISOString(),
    };
  }

  referencedIds(): Set<string> {
    try {
      return new Set(
        this.bridge.call<string[]>({ kind: "referenced", target: this.target }, this.target.timeoutMs),
      );
    } catch (err) {
      throw this.failed("read", err);
    }
  }
}
