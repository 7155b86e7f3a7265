/**
 * The deploy journal file: an append-only JSON Lines log of deploys and key creations, written and
 * flushed to disk (fdatasync) before each request is sent, then completed as the request's fate
 * becomes known. Every write happens under a lock file shared by the provider processes of the
 * working directory (a second provider configuration of the same apply runs in its own process);
 * within a process the journal's methods are synchronous, so they never interleave. The format is
 * documented in README.md beside this file; what the entries mean to the resources is theirs to say.
 */
import { randomUUID } from "node:crypto";
import {
  closeSync,
  existsSync,
  fdatasyncSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeSync,
} from "node:fs";
import { dirname, join } from "node:path";
import type { JsonObject } from "../tfstate/json";
import { objectId, readRawState } from "../tfstate/state";
import type { JournalLocation } from "./location";
import { currentRun, type RunIdentity, runAlive } from "./run";

/** The `format` of a journal header. */
export const JOURNAL_FORMAT = "gpurental-deploy-journal";
/** The version this code writes; a file with a higher version is read but never written. */
export const JOURNAL_VERSION = 1;

/** What an entry records the creation of. */
export type EntryKind = "instance" | "api_key";

/** Why an entry needs no more attention. */
export type CloseReason =
  /** The request provably did not create anything (refused, or never reached the server). */
  | "unsent"
  /** A Terraform state holds the object (the provider saw it in a plan or a refresh). */
  | "claimed"
  /** The instance was destroyed. */
  | "destroyed"
  /** The key was revoked (a key nobody holds the secret of). */
  | "revoked"
  /** Nothing appeared for a request whose answer was lost, long after it was sent. */
  | "abandoned";

/** One deploy or key creation and what is known of it. */
export interface JournalEntry {
  /** Random id of the entry. */
  entry: string;
  kind: EntryKind;
  /** Hash of the configuration that asked for it (see fingerprint.ts); the key adoption matches on. */
  fingerprint: string;
  /** What was sent, secrets left out or hashed: enough to recognise the object in a listing. */
  request: Record<string, unknown>;
  /** Ids of matching objects that existed before the request was sent; never the request's. */
  before: string[];
  /** When the request was about to be sent (RFC 3339, the provider's clock). */
  sent_at: string;
  /** The process that sent it. */
  run: RunIdentity;
  /** The object's id, once known. */
  id: string | null;
  answered_at: string | null;
  /** When the object was returned to Terraform (which may still not have saved it). */
  handed_at: string | null;
  /** A create that adopted the entry, and its process. */
  taken: { run: RunIdentity; at: string } | null;
  closed: { reason: CloseReason; at: string; detail?: string; state?: StateMark } | null;
}

/**
 * The local state file that held an entry's object when its run was settled: its lineage and
 * serial. Terraform may rewrite the file after the run ended (a second Ctrl-C) and be cut short
 * writing it; the backup put back then has a lower serial and may not hold the object.
 */
export interface StateMark {
  lineage: string;
  serial: number;
}

/** The first line of a journal file. */
export interface JournalHeader {
  op: "header";
  format: typeof JOURNAL_FORMAT;
  version: number;
  workspace: string;
  backend: string;
  created_at: string;
}

/** One line of a journal file. */
export type JournalRecord =
  | JournalHeader
  | ({ op: "sent"; at: string } & Pick<
      JournalEntry,
      "entry" | "kind" | "fingerprint" | "request" | "before" | "run"
    >)
  | { op: "answered"; entry: string; id: string; at: string }
  | { op: "handed"; entry: string; at: string }
  | { op: "taken"; entry: string; run: RunIdentity; at: string }
  | { op: "closed"; entry: string; reason: CloseReason; at: string; detail?: string; state?: StateMark }
  /** A whole entry, as compaction rewrites it. */
  | ({ op: "entry" } & JournalEntry);

/** A journal file read back. */
export interface ParsedJournal {
  header: JournalHeader | null;
  /** By entry id, in the order they were sent. */
  entries: Map<string, JournalEntry>;
  /** Lines that could not be read (a torn last line is expected after a crash and not listed). */
  problems: string[];
  lines: number;
  /** The file ends in a torn line (no newline): the next append must start on a line of its own. */
  torn?: boolean;
}

/** Reads a journal's text; a damaged line is skipped and reported, never fatal. */
export function parseJournal(text: string): ParsedJournal {
  const entries = new Map<string, JournalEntry>();
  const problems: string[] = [];
  let header: JournalHeader | null = null;
  const lines = text.split("\n");
  // A file that does not end in a newline has a torn last line: a write cut short by a crash.
  const last = lines.length - 1;
  let count = 0;
  lines.forEach((line, i) => {
    if (!line.trim()) return;
    count++;
    let rec: JournalRecord;
    try {
      rec = JSON.parse(line) as JournalRecord;
      if (!rec || typeof rec !== "object" || typeof rec.op !== "string") throw new Error("not a record");
    } catch {
      if (i !== last) problems.push(`line ${i + 1} is not a journal record`);
      return;
    }
    apply(entries, rec, (h) => {
      header = h;
    });
  });
  return { header, entries, problems, lines: count, torn: text.length > 0 && !text.endsWith("\n") };
}

function apply(entries: Map<string, JournalEntry>, rec: JournalRecord, onHeader: (h: JournalHeader) => void) {
  if (rec.op === "header") {
    onHeader(rec);
    return;
  }
  if (rec.op === "entry") {
    const { op: _op, ...entry } = rec;
    entries.set(entry.entry, entry);
    return;
  }
  if (rec.op === "sent") {
    entries.set(rec.entry, {
      entry: rec.entry,
      kind: rec.kind,
      fingerprint: rec.fingerprint,
      request: rec.request ?? {},
      before: rec.before ?? [],
      sent_at: rec.at,
      run: rec.run,
      id: null,
      answered_at: null,
      handed_at: null,
      taken: null,
      closed: null,
    });
    return;
  }
  const e = entries.get(rec.entry);
  if (!e) return;
  switch (rec.op) {
    case "answered":
      e.id = rec.id;
      e.answered_at = rec.at;
      break;
    case "handed":
      e.handed_at = rec.at;
      break;
    case "taken":
      e.taken = { run: rec.run, at: rec.at };
      break;
    case "closed":
      e.closed = {
        reason: rec.reason,
        at: rec.at,
        ...(rec.detail ? { detail: rec.detail } : {}),
        ...(isStateMark(rec.state)
          ? { state: { lineage: rec.state.lineage, serial: rec.state.serial } }
          : {}),
      };
      break;
  }
}

function isStateMark(v: unknown): v is StateMark {
  if (!v || typeof v !== "object") return false;
  const m = v as Record<string, unknown>;
  return typeof m.lineage === "string" && typeof m.serial === "number" && Number.isFinite(m.serial);
}

/** How long a closed entry is kept, so that its id is not mistaken for a lost deploy's instance. */
export const CLOSED_KEPT_MS = 7 * 24 * 3600_000;
/** A lock file older than this is taken over: no holder keeps it longer than one file write. */
const STALE_LOCK_MS = 10_000;
/** The longest wait for the lock before the write is given up (and reported). */
const LOCK_WAIT_MS = 15_000;

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** A journal that cannot be written, with the reason; the resources report it instead of deploying blind. */
export class JournalError extends Error {
  constructor(
    message: string,
    readonly file: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "JournalError";
  }
}

/** Options of {@link DeployJournal}. */
export interface DeployJournalOptions {
  now?: () => number;
  run?: RunIdentity;
  /**
   * Aborted when the run has ended while its code may still be running: a session of a resident
   * provider process, ended by Terraform's Shutdown or with its launch gone. From then on the
   * journal writes nothing, as an ended provider process would not: no "handed" for an answer
   * Terraform never got.
   */
  ended?: AbortSignal;
  /**
   * Aborted when Terraform stopped the provider (StopProvider: a Ctrl-C). Where the state cannot be
   * read (a backend other than local), the handed objects of a run that was stopped are not taken
   * as saved when it ends (see settleHanded).
   */
  stopped?: AbortSignal;
  /** Told about damaged lines and compactions. */
  log?: (level: "debug" | "warn", message: string, fields?: Record<string, unknown>) => void;
}

/** What the local backend's state file holds: its objects' ids, and its lineage and serial. */
interface SavedState {
  ids: Set<string>;
  mark?: StateMark;
}

/** The deploy journal of one state (see locateJournal). */
export class DeployJournal {
  readonly location: JournalLocation;
  readonly run: RunIdentity;
  private readonly now: () => number;
  private readonly ended: AbortSignal | undefined;
  private readonly stopped: AbortSignal | undefined;
  private saved: { key: string; state: SavedState | null } | null = null;
  private readonly log: NonNullable<DeployJournalOptions["log"]>;
  private cache: { key: string; parsed: ParsedJournal } | null = null;
  private reported = new Set<string>();
  /** Closes queued by closeIdSoon: object id to reason. */
  private readonly queued = new Map<string, CloseReason>();
  /**
   * Writes the queued closes if the process exits first; registered only while closes are
   * queued, so that the journals of a long-lived process (the sessions of a resident provider
   * process, one journal each) are not all held by listeners on the process until it exits.
   */
  private exitHook: (() => void) | undefined;

  constructor(location: JournalLocation, opts: DeployJournalOptions = {}) {
    this.location = location;
    this.run = opts.run ?? currentRun();
    this.now = opts.now ?? Date.now;
    this.ended = opts.ended;
    this.stopped = opts.stopped;
    this.log = opts.log ?? (() => {});
  }

  /** The journal file. */
  get file(): string {
    return this.location.file;
  }

  private iso(): string {
    return new Date(this.now()).toISOString();
  }

  /** The file as it is now, read again only when it changed (a stat per call otherwise). */
  private read(): ParsedJournal {
    let key: string;
    try {
      const st = statSync(this.file);
      key = `${st.ino}:${st.size}:${st.mtimeMs}`;
    } catch {
      return { header: null, entries: new Map(), problems: [], lines: 0 };
    }
    if (this.cache?.key === key) return this.cache.parsed;
    const parsed = parseJournal(readFileSync(this.file, "utf8"));
    for (const p of parsed.problems) {
      if (this.reported.has(p)) continue;
      this.reported.add(p);
      this.log("warn", "deploy journal: skipped a damaged line", { file: this.file, problem: p });
    }
    this.cache = { key, parsed };
    return parsed;
  }

  /** Every entry, oldest first (a snapshot: later writes do not change it). */
  entries(): JournalEntry[] {
    this.writeQueuedCloses();
    return [...this.read().entries.values()].map((e) => structuredClone(e));
  }

  /**
   * The entries no state has claimed and nothing has closed (an entry settled as saved in a state
   * that was rolled back since is open again: see {@link isOpen}).
   */
  live(kind?: EntryKind): JournalEntry[] {
    this.writeQueuedCloses();
    return [...this.read().entries.values()]
      .filter((e) => this.isOpen(e) && (kind === undefined || e.kind === kind))
      .map((e) => ({ ...structuredClone(e), closed: null }));
  }

  /**
   * Whether an entry is open: never closed, or closed only because the local state file held its
   * object when its run ended (settleHanded) while the state file now is an earlier one (a lower
   * serial: a state cut short by a second Ctrl-C, and its backup put back) or another state (none,
   * or another lineage). A later state of the same lineage keeps it closed, whatever it holds: a
   * `terraform state rm` is never undone. A state file that cannot be read proves nothing and
   * changes nothing.
   */
  isOpen(e: JournalEntry): boolean {
    if (e.closed === null) return true;
    const mark = e.closed.state;
    if (!mark || !this.location.stateFile) return false;
    const now = this.savedState();
    if (now === undefined) return false;
    if (now === null) return true;
    if (!now.mark) return false;
    return now.mark.lineage !== mark.lineage || now.mark.serial < mark.serial;
  }

  /**
   * Whether an entry is left over from a process that is gone and can be taken by a create of this
   * run: open, not this run's own, not being worked on by a live process. `partial` (a `-target`
   * run) leaves out entries that were handed to Terraform, since a plan that skipped resources did
   * not get the chance to claim them.
   */
  isAdoptable(e: JournalEntry, partial = false): boolean {
    if (!this.isOpen(e)) return false;
    if (runAlive(e.run, this.run)) return false;
    if (e.taken && runAlive(e.taken.run, this.run)) return false;
    // What the saved state holds is its owner's, whatever the journal says.
    if (e.id && this.savedIds()?.has(e.id)) return false;
    return !(partial && e.handed_at !== null);
  }

  /**
   * The ids of the objects the local backend's state file holds now, read again only when it
   * changed; null when the state cannot be read (another backend, or a file cut short).
   */
  savedIds(): Set<string> | null {
    if (!this.location.stateFile) return null;
    const state = this.savedState();
    if (state === undefined) return null;
    return state?.ids ?? new Set();
  }

  /**
   * The local backend's state file as it is now, read again only when it changed: null when there
   * is none, undefined when it cannot be read (another backend, or a file cut short or being
   * written).
   */
  private savedState(): SavedState | null | undefined {
    const file = this.location.stateFile;
    if (!file) return undefined;
    let key: string;
    try {
      const st = statSync(file);
      key = `${st.ino}:${st.size}:${st.mtimeMs}`;
    } catch (err) {
      return (err as NodeJS.ErrnoException).code === "ENOENT" ? null : undefined;
    }
    if (this.saved?.key === key) return this.saved.state ?? undefined;
    let state: SavedState | null;
    try {
      const doc = JSON.parse(readFileSync(file, "utf8")) as JsonObject;
      const ids = new Set(
        readRawState(doc, file)
          .objects.map(objectId)
          .filter((id): id is string => id !== undefined),
      );
      state = {
        ids,
        ...(typeof doc.lineage === "string" && typeof doc.serial === "number"
          ? { mark: { lineage: doc.lineage, serial: doc.serial } }
          : {}),
      };
    } catch {
      state = null;
    }
    this.saved = { key, state };
    return state ?? undefined;
  }

  /**
   * Called when Terraform ends this run normally (its Shutdown): closes, as claimed, the entries
   * this run handed to Terraform that the saved state now holds. A local backend's state file is
   * read, and only what it holds is closed: an object Terraform never saved (a second Ctrl-C, a
   * state cut short) stays open, to be adopted. A local state file that cannot be read (Terraform
   * may be rewriting it, in place, at that very moment, or was cut short writing it) proves
   * nothing, so nothing is closed. Where the backend's state cannot be read at all (a backend
   * other than local), every handed entry is closed, unless Terraform stopped the run (a Ctrl-C),
   * when they stay open. A closed entry is never adopted, so a later `terraform state rm` is
   * respected. What a local state file held is closed with the file's lineage and serial: Terraform
   * may go on writing the file after the run ended (a second Ctrl-C) and be cut short doing it, and
   * should an earlier state be put back (its backup), or none, the entry is open again
   * ({@link isOpen}). Returns how many were closed.
   */
  settleHanded(): number {
    const mine = (m: Map<string, JournalEntry>) =>
      [...m.values()].filter(
        (e) => e.closed === null && e.handed_at !== null && e.id !== null && e.run.id === this.run.id,
      );
    if (mine(this.read().entries).length === 0) return 0;
    let saved: SavedState | null;
    if (this.location.stateFile) {
      const state = this.savedState();
      // A local state file that cannot be read (being written, or cut short) proves nothing.
      if (state === undefined) return 0;
      saved = state ?? { ids: new Set() };
    } else {
      // Another backend, whose state cannot be read: a run Terraform stopped settles nothing.
      if (this.stopped?.aborted) return 0;
      saved = null;
    }
    let n = 0;
    this.write((entries) => {
      const found = mine(entries).filter((e) => saved === null || saved.ids.has(e.id!));
      n = found.length;
      return found.map((e) => ({
        op: "closed" as const,
        entry: e.entry,
        reason: "claimed" as const,
        at: this.iso(),
        detail: saved ? "saved in the state" : "handed to Terraform, whose run ended normally",
        ...(saved?.mark ? { state: saved.mark } : {}),
      }));
    });
    return n;
  }

  /** The adoptable entries of a fingerprint, oldest first. */
  adoptable(kind: EntryKind, fingerprint: string, partial = false): JournalEntry[] {
    return this.live(kind).filter((e) => e.fingerprint === fingerprint && this.isAdoptable(e, partial));
  }

  /** Records a request about to be sent; returns its entry id. Durable when it returns. */
  sent(
    kind: EntryKind,
    fingerprint: string,
    request: Record<string, unknown>,
    before: readonly string[] = [],
  ): string {
    const entry = randomUUID();
    this.write(() => [
      { op: "sent", entry, kind, fingerprint, request, before: [...before], at: this.iso(), run: this.run },
    ]);
    return entry;
  }

  /** Records the id a request created. */
  answered(entry: string, id: string): void {
    this.write(() => [{ op: "answered", entry, id, at: this.iso() }]);
  }

  /** Records that the object was returned to Terraform. */
  handed(entry: string): void {
    this.write(() => [{ op: "handed", entry, at: this.iso() }]);
  }

  /** Closes an entry. */
  close(entry: string, reason: CloseReason, detail?: string): void {
    this.write(() => [{ op: "closed", entry, reason, at: this.iso(), ...(detail ? { detail } : {}) }]);
  }

  /**
   * Closes every open entry of this object id (a state holds it, or it is gone). Writes nothing,
   * and takes no lock, when no open entry names it: the common case of every plan.
   */
  closeId(id: string, reason: CloseReason): number {
    const open = (m: Map<string, JournalEntry>) =>
      [...m.values()].filter((e) => e.id === id && this.isOpen(e));
    if (open(this.read().entries).length === 0) return 0;
    let n = 0;
    this.write((entries) => {
      const found = open(entries);
      n = found.length;
      return found.map((e) => ({ op: "closed" as const, entry: e.entry, reason, at: this.iso() }));
    });
    return n;
  }

  /**
   * Like {@link closeId}, for the claim every read makes: the entries' closes of one turn of the
   * event loop (a refresh reads ten resources at a time) go into one append, and that append is
   * not flushed to disk. A lost claim costs nothing: the entry stays open and the next read of the
   * same resource claims it again. Anything that judges entries (adoption, another write) writes
   * the queued closes first; so does the process's exit.
   */
  closeIdSoon(id: string, reason: CloseReason): void {
    try {
      if (![...this.read().entries.values()].some((e) => e.id === id && this.isOpen(e))) return;
    } catch (err) {
      this.log("warn", "deploy journal: could not read it to record a claim", {
        file: this.file,
        error: err instanceof Error ? err.message : String(err),
      });
      return;
    }
    this.queued.set(id, reason);
    if (this.queued.size > 1) return;
    setImmediate(() => this.writeQueuedCloses());
    if (!this.exitHook) {
      this.exitHook = () => this.writeQueuedCloses();
      process.once("exit", this.exitHook);
    }
  }

  /** Writes the closes {@link closeIdSoon} queued; a failure is logged, never thrown. */
  writeQueuedCloses(): void {
    if (this.queued.size === 0) return;
    const queued = new Map(this.queued);
    this.queued.clear();
    if (this.exitHook) process.removeListener("exit", this.exitHook);
    this.exitHook = undefined;
    // A claim closes entries of a file that exists; a journal removed meanwhile is not written again.
    if (!existsSync(this.file)) return;
    try {
      this.write(
        (entries) =>
          [...entries.values()]
            .filter((e) => e.id !== null && queued.has(e.id) && this.isOpen(e))
            .map((e) => ({
              op: "closed" as const,
              entry: e.entry,
              reason: queued.get(e.id!)!,
              at: this.iso(),
            })),
        { durable: false },
      );
    } catch (err) {
      this.log("warn", "deploy journal: could not record claims", {
        file: this.file,
        error: err instanceof Error ? err.message : String(err),
      });
    }
  }

  /**
   * Takes the oldest adoptable entry of a fingerprint for this run, under the lock, so that each
   * of several identical creates gets a different one. Null when there is none.
   */
  take(kind: EntryKind, fingerprint: string, partial = false): JournalEntry | null {
    if (this.adoptable(kind, fingerprint, partial).length === 0) return null;
    let taken: JournalEntry | null = null;
    this.write((entries) => {
      const e = [...entries.values()].find(
        (x) => x.kind === kind && x.fingerprint === fingerprint && this.isAdoptable(x, partial),
      );
      if (!e) return [];
      taken = structuredClone(e);
      return [{ op: "taken", entry: e.entry, run: this.run, at: this.iso() }];
    });
    return taken;
  }

  /**
   * Takes one given entry for this run (the one a plan said its create adopts), under the lock;
   * null when it is no longer adoptable.
   */
  takeEntry(entry: string, partial = false): JournalEntry | null {
    let taken: JournalEntry | null = null;
    this.write((entries) => {
      const e = entries.get(entry);
      if (!e || !this.isAdoptable(e, partial)) return [];
      taken = structuredClone(e);
      return [{ op: "taken", entry: e.entry, run: this.run, at: this.iso() }];
    });
    return taken;
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

  /**
   * Appends what `build` returns for the entries as they are on disk, under the lock, flushed to
   * disk before returning; compacts the file when closed entries make up most of it.
   */
  private write(
    build: (entries: Map<string, JournalEntry>) => JournalRecord[],
    { durable = true }: { durable?: boolean } = {},
  ): void {
    if (this.ended?.aborted) {
      throw new JournalError(
        `The deploy journal ${this.file} is not written by this provider any more: Terraform's provider process ended.`,
        this.file,
      );
    }
    if (durable) this.writeQueuedCloses();
    const release = this.lock();
    try {
      const current = this.read();
      if (current.header && current.header.version > JOURNAL_VERSION) {
        throw new JournalError(
          `The deploy journal ${this.file} was written by a newer provider (format version ${current.header.version}); use that version or move the file away.`,
          this.file,
        );
      }
      const records = build(current.entries);
      if (records.length === 0) return;
      const lines: JournalRecord[] = current.header ? [] : [this.header()];
      lines.push(...records);
      this.cache = null;
      // After a torn line, a record appended to it would be torn with it.
      const text = `${current.torn ? "\n" : ""}${lines.map((r) => JSON.stringify(r)).join("\n")}\n`;
      append(this.file, text, {
        created: !current.header,
        durable,
      });
      this.remember(current, lines);
      this.compactIfWorth();
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
      apply(parsed.entries, rec, (h) => {
        header = h;
      });
    this.cache = { key, parsed: { ...parsed, header, lines: parsed.lines + lines.length, torn: false } };
  }

  private header(): JournalHeader {
    return {
      op: "header",
      format: JOURNAL_FORMAT,
      version: JOURNAL_VERSION,
      workspace: this.location.workspace,
      backend: this.location.backend,
      created_at: this.iso(),
    };
  }

  /** Rewrites the file with one line per kept entry; removes it when nothing is left. Under the lock. */
  private compactIfWorth(): void {
    const parsed = this.read();
    const cutoff = this.now() - CLOSED_KEPT_MS;
    const kept = [...parsed.entries.values()].filter(
      (e) => e.closed === null || Date.parse(e.closed.at) >= cutoff,
    );
    if (kept.length === 0) {
      rmSync(this.file, { force: true });
      this.cache = null;
      return;
    }
    if (parsed.lines < 64 || parsed.lines < 2 * (kept.length + 1)) return;
    const text = [this.header(), ...kept.map((e) => ({ op: "entry" as const, ...e }))]
      .map((r) => JSON.stringify(r))
      .join("\n");
    const tmp = `${this.file}.${process.pid}.tmp`;
    const fd = openSync(tmp, "w", 0o600);
    try {
      writeSync(fd, `${text}\n`);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, this.file);
    syncDir(dirname(this.file));
    this.cache = null;
    this.log("debug", "deploy journal compacted", {
      file: this.file,
      lines: parsed.lines,
      kept: kept.length,
    });
  }

  /** Takes the lock file of the journal; waits for another process's short hold, takes over a stale one. */
  private lock(): () => void {
    const lockPath = `${this.file}.lock`;
    try {
      mkdirSync(dirname(lockPath), { recursive: true, mode: 0o700 });
    } catch (err) {
      throw new JournalError(
        `Cannot create the deploy journal directory ${dirname(lockPath)}: ${String(err)}`,
        this.file,
        {
          cause: err,
        },
      );
    }
    const deadline = Date.now() + LOCK_WAIT_MS;
    for (;;) {
      try {
        const fd = openSync(lockPath, "wx", 0o600);
        writeSync(fd, `${JSON.stringify(this.run)}\n`);
        closeSync(fd);
        return () => rmSync(lockPath, { force: true });
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "EEXIST") {
          throw new JournalError(`Cannot lock the deploy journal ${this.file}: ${String(err)}`, this.file, {
            cause: err,
          });
        }
      }
      if (lockIsStale(lockPath, this.run)) {
        rmSync(lockPath, { force: true });
        continue;
      }
      if (Date.now() > deadline) {
        throw new JournalError(
          `The deploy journal ${this.file} stayed locked for ${LOCK_WAIT_MS / 1000} s (${lockPath}); if no other terraform command runs in this directory, delete the lock file.`,
          this.file,
        );
      }
      sleepSync(10);
    }
  }
}

function lockIsStale(lockPath: string, self: RunIdentity): boolean {
  try {
    const st = statSync(lockPath);
    if (Date.now() - st.mtimeMs > STALE_LOCK_MS) return true;
    const holder = JSON.parse(readFileSync(lockPath, "utf8")) as RunIdentity;
    return holder.id !== self.id && !runAlive(holder, self);
  } catch {
    // Half-written by a holder that has just created it: not stale.
    return false;
  }
}

function parseFile(path: string): ParsedJournal {
  try {
    return parseJournal(readFileSync(path, "utf8"));
  } catch {
    return { header: null, entries: new Map(), problems: [], lines: 0 };
  }
}

/** Appends `text` in one write and flushes it to disk; a new file's directory entry is flushed too. */
/** Appends to the file; `durable`: flushed to disk (with the directory entry of a new file) before returning. */
function append(
  file: string,
  text: string,
  { created, durable }: { created: boolean; durable: boolean },
): void {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const fd = openSync(file, "a", 0o600);
  try {
    writeSync(fd, text);
    if (durable) fdatasyncSync(fd);
  } finally {
    closeSync(fd);
  }
  if (created && durable) syncDir(dirname(file));
}

function syncDir(dir: string): void {
  try {
    const fd = openSync(dir, "r");
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {
    // Not every platform can open a directory; the file itself is flushed.
  }
}

/** Lists the journal files of a directory, for tools that read every state's journal. */
export function journalFiles(dir: string): string[] {
  try {
    return readdirSync(dir)
      .filter((f) => f.endsWith(".jsonl"))
      .map((f) => join(dir, f));
  } catch {
    return [];
  }
}

/** Reads a journal file (for tools); a missing file is an empty journal. */
export function readJournalFile(path: string): ParsedJournal {
  return parseFile(path);
}
