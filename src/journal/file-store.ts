/**
 * The file store: one JSON Lines file per state in the journal directory, appended under a lock
 * file shared by the provider processes of the machine and flushed to disk (fdatasync) before a
 * write returns; rewritten (temp file, fsync, rename) when closed entries make up most of it. The
 * format is README.md's "Format"; the file on disk itself (lock, appends, reading) is disk.ts.
 */
import {
  closeSync,
  existsSync,
  fsyncSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { append, cutTornLine, JournalError, lockJournal, parseFile, syncDir } from "./disk";
import type { JournalStore, UpdateOptions } from "./journal-store";
import type { JournalLocation } from "./location";
import {
  applyRecord,
  type JournalRecord,
  type ParsedJournal,
  parseJournal,
  readRecord,
  UnreadEntries,
} from "./records";
import type { RunIdentity } from "./run";

/** Compaction waits for at least this many lines. */
const COMPACT_MIN_LINES = 64;

/** What a file store is told. */
export interface FileStoreOptions {
  run: RunIdentity;
  log: (level: "debug" | "warn", message: string, fields?: Record<string, unknown>) => void;
}

/** Whether a record as read is one this version applies (not damaged, not a later version's). */
function isApplied(rec: ReturnType<typeof readRecord>): boolean {
  return rec !== undefined && rec !== "other";
}

/** What a journal file whose entries were moved to another key is renamed to end with. */
export const RETIRED_SUFFIX = ".moved";

/** The journal file of one state (see locateJournal). */
export class FileStore implements JournalStore {
  readonly kind = "file" as const;
  private cache: { key: string; parsed: ParsedJournal } | null = null;
  private readonly reported = new Set<string>();

  constructor(
    readonly location: JournalLocation,
    private readonly opts: FileStoreOptions,
  ) {}

  get name(): string {
    return this.location.file;
  }

  private get file(): string {
    return this.location.file;
  }

  /** The file as it is now, read again only when it changed (a stat per call otherwise). */
  read(): ParsedJournal {
    let key: string;
    try {
      const st = statSync(this.file);
      key = `${st.ino}:${st.size}:${st.mtimeMs}`;
    } catch {
      return { header: null, entries: new Map(), problems: [], unread: [], lines: 0 };
    }
    if (this.cache?.key === key) return this.cache.parsed;
    const parsed = parseJournal(readFileSync(this.file, "utf8"));
    // Said once per process for each damaged line, wherever a compaction has moved it since; its
    // text is never said (it may hold what a request sent).
    for (const { text, problem } of parsed.unread) {
      if (problem === undefined || this.reported.has(text)) continue;
      this.reported.add(text);
      this.opts.log("warn", "deploy journal: skipped a damaged line; it is kept in the file", {
        file: this.file,
        problem,
      });
    }
    this.cache = { key, parsed };
    return parsed;
  }

  exists(): boolean {
    return existsSync(this.file);
  }

  retire(): void {
    const release = lockJournal(this.file, this.opts.run);
    try {
      // Another process retired it first.
      if (!existsSync(this.file)) return;
      const before = this.cache?.key;
      this.cache = null;
      this.read();
      const after = (this.cache as { key: string } | null)?.key;
      if (before !== undefined && after !== before) {
        throw new JournalError(
          `The deploy journal ${this.file} changed after it was read; it is kept.`,
          this.file,
        );
      }
      // What this version cannot apply was not moved with the entries: it stays where the versions
      // that read it look, alone. The entries, moved, go: kept, every later process would move
      // them again, and bring back one that today's journal has closed and since compacted away.
      const { header, unread } = this.read();
      if (unread.length > 0) {
        this.rewrite([...(header ? [JSON.stringify(header)] : []), ...unread.map((u) => u.text)]);
        this.opts.log(
          "warn",
          "deploy journal: the older journal keeps only the lines this version cannot read",
          {
            file: this.file,
            lines: unread.length,
          },
        );
        return;
      }
      renameSync(this.file, `${this.file}${RETIRED_SUFFIX}`);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return;
      if (err instanceof JournalError) throw err;
      throw new JournalError(
        `The deploy journal ${this.file} could not be renamed aside: ${(err as Error).message}`,
        this.file,
      );
    } finally {
      release();
    }
  }

  update(build: (current: ParsedJournal) => JournalRecord[], opts: UpdateOptions): void {
    const release = lockJournal(this.file, this.opts.run);
    try {
      const current = this.read();
      const records = build(current);
      if (records.length === 0) return;
      const lines: JournalRecord[] = current.header ? [] : [opts.header()];
      lines.push(...records);
      this.cache = null;
      // A torn fragment is cut off; after a torn whole record, the next one starts a line of its own.
      if (current.tornFragment) cutTornLine(this.file);
      const newline = current.torn && !current.tornFragment ? "\n" : "";
      const text = `${newline}${lines.map((r) => JSON.stringify(r)).join("\n")}\n`;
      append(this.file, text, { created: !current.header, durable: opts.durable });
      // Records this version cannot apply (moved from another store as they were, or following
      // up an entry only such a line names) are kept as lines it did not read: the file is read
      // again, so that a compaction keeps them.
      const unreadEntries = UnreadEntries.of(current.unread);
      const applied = (r: JournalRecord) => {
        const rec = readRecord(r);
        return isApplied(rec) && !unreadEntries.follows(current.entries, rec as JournalRecord);
      };
      if (records.every(applied)) this.remember(current, lines);
      else this.cache = null;
      try {
        this.compactIfWorth(opts);
      } catch (err) {
        // The records are written: a compaction that fails (a full disk) leaves the file as it was.
        this.cache = null;
        this.opts.log("warn", "deploy journal: could not compact; the file is kept as it is", {
          file: this.file,
          error: err instanceof Error ? err.message : String(err),
        });
      }
    } finally {
      release();
    }
  }

  /**
   * After an append under the lock: the file is what was read plus `lines`, so the parsed journal
   * is brought up to date without reading the file again (every write would otherwise parse the
   * whole file, and an apply of many instances write it several times per instance).
   */
  private remember(parsed: ParsedJournal, lines: JournalRecord[]): void {
    let key: string;
    try {
      const st = statSync(this.file);
      key = `${st.ino}:${st.size}:${st.mtimeMs}`;
    } catch {
      return;
    }
    let header = parsed.header;
    for (const rec of lines)
      applyRecord(parsed.entries, rec, (h) => {
        header = h;
      });
    this.cache = { key, parsed: { ...parsed, header, lines: parsed.lines + lines.length, torn: false } };
  }

  /**
   * Rewrites the file with one line per kept entry, then the lines this version could not apply,
   * as they are and in their order; removes it when nothing is left. Under the lock.
   */
  private compactIfWorth(opts: UpdateOptions): void {
    const parsed = this.read();
    const kept = opts.keep(parsed.entries.values());
    const unread = parsed.unread.map((u) => u.text);
    if (kept.length === 0 && unread.length === 0) {
      rmSync(this.file, { force: true });
      this.cache = null;
      return;
    }
    if (parsed.lines < COMPACT_MIN_LINES || parsed.lines < 2 * (kept.length + unread.length + 1)) return;
    // After the entries: an `entry` line sets its entry whole, and would undo a later version's
    // record about it that came first.
    this.rewrite(
      [opts.header(), ...kept.map((e) => ({ op: "entry" as const, ...e }))]
        .map((r) => JSON.stringify(r))
        .concat(unread),
    );
    this.opts.log("debug", "deploy journal compacted", {
      file: this.file,
      lines: parsed.lines,
      kept: kept.length,
    });
  }

  /** Replaces the file with `lines`, whole or not at all (temp file, fsync, rename). Under the lock. */
  private rewrite(lines: readonly string[]): void {
    const tmp = `${this.file}.${process.pid}.tmp`;
    try {
      const fd = openSync(tmp, "w", 0o600);
      try {
        writeFileSync(fd, `${lines.join("\n")}\n`);
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
      renameSync(tmp, this.file);
    } catch (err) {
      rmSync(tmp, { force: true });
      throw err;
    }
    syncDir(dirname(this.file));
    this.cache = null;
  }

  /** Ids named by the entries of every journal in the directory (other workspaces' too). */
  referencedIds(): Set<string> {
    const ids = new Set<string>();
    let files: string[] = [];
    try {
      files = readdirSync(this.location.dir).filter((f) => f.endsWith(".jsonl"));
    } catch {
      return ids;
    }
    for (const f of files) {
      const path = join(this.location.dir, f);
      const parsed = path === this.file ? this.read() : parseFile(path);
      for (const e of parsed.entries.values()) if (e.id) ids.add(e.id);
    }
    return ids;
  }
}
