/**
 * The deploy journal file: an append-only JSON Lines log of deploys and key creations, written and
 * flushed to disk (fdatasync) before each request is sent, then completed as the request's fate
 * becomes known. Every write happens under a lock file shared by the provider processes of the
 * working directory (a second provider configuration of the same apply runs in its own process);
 * within a process the journal's methods are synchronous, so they never interleave. The format is
 * documented in README.md beside this file; what the entries mean to the resources is theirs to say.
 */
import { randomUUID } from "node:crypto";
import { JournalError } from "./disk";
import { FileStore } from "./file-store";
import type { JournalStore } from "./journal-store";
import { type JournalLocation, stableJson } from "./location";
import {
  type CloseReason,
  type EntryKind,
  isKnownKind,
  JOURNAL_FORMAT,
  JOURNAL_VERSION,
  type JournalEntry,
  type JournalHeader,
  type JournalRecord,
  type ParsedJournal,
  type StateMark,
} from "./records";
import { currentRun, type RunIdentity, runOver, runServing } from "./run";
import {
  type PgStateCache,
  readPgSavedState,
  readSavedState,
  reopenedBy,
  type SavedState,
  type SavedStateCache,
} from "./saved-state";

/** How long a closed entry is kept, so that its id is not mistaken for a lost deploy's instance. */
export const CLOSED_KEPT_MS = 7 * 24 * 3600_000;
/** How long the read of a `pg` backend's state at Shutdown may take, connecting included. */
const SHUTDOWN_READ_MS = 1_000;
/** How long after its close a pending entry of a run whose terraform cannot be watched is settled. */
const UNKNOWN_RUN_OVER_MS = 24 * 3600_000;

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
   * read (a backend other than local or a readable `pg`), the handed objects of a run that was
   * stopped are not taken as saved when it ends (see settleHanded).
   */
  stopped?: AbortSignal;
  /** Told about damaged lines and compactions. */
  log?: (level: "debug" | "warn", message: string, fields?: Record<string, unknown>) => void;
  /**
   * Where the records are kept: default the location's file (FileStore); a PostgreSQL store
   * (src/journal/pg) when the provider is given a journal_url.
   */
  store?: JournalStore;
  /**
   * The same state's journal under the key older versions gave it (JournalLocation.legacyFile), in
   * the same kind of store: what it holds is moved into this journal before this journal is first
   * read or written, and it is retired, so that one journal answers for the state and an
   * interrupted run of an older version is still found.
   */
  legacy?: JournalStore | undefined;
}

/** The deploy journal of one state (see locateJournal). */
export class DeployJournal {
  readonly location: JournalLocation;
  readonly run: RunIdentity;
  private readonly now: () => number;
  private readonly ended: AbortSignal | undefined;
  private readonly stopped: AbortSignal | undefined;
  private saved: SavedStateCache | null = null;
  private savedPg: PgStateCache | null = null;
  private pgStateFailureLogged = false;
  /**
   * The last resolvePending left entries pending (not settled: their run not over, the command
   * without the state's lock, the state unreadable, the write failed): a plan then leaves a
   * create's adoption to its apply, which settles them first.
   */
  pendingUnsettled = false;
  private readonly log: NonNullable<DeployJournalOptions["log"]>;
  /** Where the records are kept. */
  readonly store: JournalStore;
  /** Closes queued by closeIdSoon: object id to reason. */
  private readonly queued = new Map<string, CloseReason>();
  /**
   * Writes the queued closes if the process exits first; registered only while closes are
   * queued, so that the journals of a long-lived process (the sessions of a resident provider
   * process, one journal each) are not all held by listeners on the process until it exits.
   */
  private exitHook: (() => void) | undefined;
  /**
   * Ids this run learned whose `answered` record could not be written (a database out of reach
   * for a moment, a full disk), by entry. The next write that gets through carries them first,
   * and until then every read sees them: an entry must not stay without the id of the object its
   * request created, or a later create of the same configuration could adopt, by listing, the
   * object a state already holds.
   */
  private readonly unwrittenAnswers = new Map<string, { id: string; at: string }>();
  /** The older key's journal, until its entries have been moved here. */
  private legacy: JournalStore | undefined;

  constructor(location: JournalLocation, opts: DeployJournalOptions = {}) {
    this.location = location;
    this.run = opts.run ?? currentRun();
    this.now = opts.now ?? Date.now;
    this.ended = opts.ended;
    this.stopped = opts.stopped;
    this.log = opts.log ?? (() => {});
    this.store = opts.store ?? new FileStore(location, { run: this.run, log: this.log });
    this.legacy = opts.legacy;
  }

  /**
   * Moves the older key's journal here (see DeployJournalOptions.legacy): every entry, open or
   * closed, that this journal lacks, then retires it. A journal that cannot be read stops the read
   * or write that asked, as this one would (nothing is decided without it); one that cannot be
   * retired is left, and moved again by the next process (an entry already here is not added twice).
   */
  private moveLegacy(): void {
    const legacy = this.legacy;
    if (!legacy) return;
    const old = legacy.read();
    this.legacy = undefined;
    if (!old.header && old.entries.size === 0) return;
    // What is left there is only what this version cannot move (see retire).
    if (old.entries.size === 0 && old.unread.length > 0) return;
    try {
      const moved = this.importEntries([...old.entries.values()]);
      this.log("warn", "deploy journal: moved the entries an older version kept under another key", {
        from: legacy.name,
        to: this.file,
        entries: old.entries.size,
        added: moved,
      });
    } catch (err) {
      this.legacy = legacy;
      throw err;
    }
    try {
      legacy.retire();
    } catch (err) {
      this.log("warn", "deploy journal: could not retire the older journal; the next run moves it again", {
        journal: legacy.name,
        error: err instanceof Error ? err.message : String(err),
      });
    }
  }

  /** The journal in messages: its file, or its database (no password) and state. */
  get file(): string {
    return this.store.name;
  }

  private iso(): string {
    return new Date(this.now()).toISOString();
  }

  /** The journal as its store holds it now, with the ids this run could not write yet. */
  private read(): ParsedJournal {
    this.moveLegacy();
    const journal = this.store.read();
    return this.unwrittenAnswers.size === 0
      ? journal
      : { ...journal, entries: this.withAnswers(journal.entries) };
  }

  /** `entries` with the ids of {@link unwrittenAnswers} on the entries that still lack one. */
  private withAnswers(entries: Map<string, JournalEntry>): Map<string, JournalEntry> {
    if (this.unwrittenAnswers.size === 0) return entries;
    const out = new Map(entries);
    for (const [entry, { id, at }] of this.unwrittenAnswers) {
      const e = out.get(entry);
      if (e && e.id === null) out.set(entry, { ...e, id, answered_at: at });
    }
    return out;
  }

  /** Every entry, oldest first (a snapshot: later writes do not change it). */
  entries(): JournalEntry[] {
    this.writeQueuedCloses();
    return [...this.read().entries.values()].map((e) => structuredClone(e));
  }

  /**
   * The entries no state has claimed and nothing has closed (an entry settled as saved in a state
   * that was rolled back since is open again: see {@link isOpen}), of `kind` or of either kind this
   * version knows (a later version's kind is kept in the journal, never acted on here).
   */
  live(kind?: EntryKind): JournalEntry[] {
    this.writeQueuedCloses();
    return [...this.read().entries.values()]
      .filter((e) => this.isOpen(e) && (kind === undefined ? isKnownKind(e.kind) : e.kind === kind))
      .map((e) => ({ ...structuredClone(e), closed: null }));
  }

  /**
   * Whether an entry is open: never closed, or closed because the local state file held its object
   * when its run ended (settleHanded) while the state file now is an earlier one (a lower serial: a
   * state cut short by a second Ctrl-C, and its backup put back) or another state (none, or
   * another lineage). A later state of the same lineage keeps it closed, whatever it holds: a
   * `terraform state rm` is never undone. A state file that cannot be read proves nothing and
   * changes nothing. An entry closed with a pending mark (a `pg` backend) is closed until
   * {@link resolvePending} opens it again, in a record.
   */
  isOpen(e: JournalEntry): boolean {
    if (e.closed === null) return true;
    const mark = e.closed.state;
    if (!mark || mark.pending || !this.location.stateFile || this.location.stateElsewhere) return false;
    return reopenedBy(mark, this.savedState());
  }

  /**
   * Settles the entries closed with a pending mark (settleHanded, a `pg` backend) whose run is
   * over: the terraform process it served is gone, so its state write has happened or never will.
   * The state is read once. Where it is still the one the mark names (or an earlier one of its
   * lineage, or none), the write failed: the entry is written back open (a whole entry record), to
   * be adopted or revoked as any open entry, and whatever writes the state from then on changes
   * that only by holding it. Where a later state was written, the entry is closed for good. A state
   * that cannot be read settles nothing. Called once per configure, before anything judges the
   * entries; `settle` false (a command that holds no state lock) only tells whether any is left
   * ({@link pendingUnsettled}). Returns the entries opened again.
   */
  resolvePending(settle = true): JournalEntry[] {
    const pending = (m: Map<string, JournalEntry>) =>
      [...m.values()].filter((e) => e.closed?.state?.pending === true);
    const ripe = (m: Map<string, JournalEntry>) => pending(m).filter((e) => this.runIsOver(e));
    const before = this.read().entries;
    // Cleared only once a write settled them all: a plan must not promise a deploy its apply, which
    // settles first, would not make.
    this.pendingUnsettled = pending(before).length > 0;
    if (!settle || ripe(before).length === 0) return [];
    const state = this.savedState(true);
    if (state === undefined) return [];
    const reopened: JournalEntry[] = [];
    this.write((entries) =>
      ripe(entries).map((e) => {
        const failed = reopenedBy(e.closed!.state!, state) && !state?.ids.has(e.id ?? "");
        if (failed) {
          const open = { ...structuredClone(e), closed: null };
          reopened.push(open);
          return { op: "entry" as const, ...open };
        }
        return {
          op: "closed" as const,
          entry: e.entry,
          reason: e.closed!.reason,
          at: this.iso(),
          detail: state?.ids.has(e.id ?? "") ? "saved in the state" : "a later state was written",
        };
      }),
    );
    this.pendingUnsettled = pending(this.read().entries).length > 0;
    return reopened;
  }

  /**
   * Whether the terraform command that handed a pending entry is over (runOver). Where that cannot
   * be known (no /proc: macOS, Windows), a day after the entry was closed.
   */
  private runIsOver(e: JournalEntry): boolean {
    const run = handler(e);
    if (run.parent || run.boot !== this.run.boot) return runOver(run, this.run);
    return this.now() - Date.parse(e.closed?.at ?? "") > UNKNOWN_RUN_OVER_MS;
  }

  /** Whether the provider reads the state: a local backend's file, or a `pg` backend's row. */
  private readsState(): boolean {
    return !!this.location.stateFile || !!this.location.stateDb;
  }

  /**
   * Whether a claim of `id` (a state holds it, or it is gone) closes this entry: open, or closed
   * with a pending mark, which the claim makes final.
   */
  private claimable(e: JournalEntry, id: string): boolean {
    return e.id === id && (e.closed?.state?.pending === true || this.isOpen(e));
  }

  /**
   * Whether an entry is left over from a process that is gone and can be taken by a create of this
   * run: open, not this run's own, not being worked on by a live process, and not held by the
   * saved state. When that state cannot be read, only the plans' claims tell what it holds: then
   * `partial` (a `-target` run) leaves out entries that were handed to Terraform, since a plan that
   * skipped resources did not get the chance to claim them.
   */
  isAdoptable(e: JournalEntry, partial = false): boolean {
    if (!this.isOpen(e)) return false;
    if (runServing(e.run, this.run)) return false;
    if (e.taken && runServing(e.taken.run, this.run)) return false;
    // What the saved state holds is its owner's, whatever the journal says.
    // One read for both questions: Terraform rewrites a local state file in place, so two reads
    // may find it whole and then cut short, or the reverse.
    const saved = this.savedIds();
    if (e.id && saved?.has(e.id)) return false;
    return !(partial && e.handed_at !== null && (saved === null || this.location.stateElsewhere));
  }

  /**
   * The ids of the objects the saved state holds now (a local backend's file, read again only when
   * it changed; a `pg` backend's row); null when the state cannot be read (another backend, a file
   * cut short, a database out of reach).
   */
  savedIds(): Set<string> | null {
    if (!this.readsState()) return null;
    const state = this.savedState();
    if (state === undefined) return null;
    return state?.ids ?? new Set();
  }

  /**
   * The saved state as it is now: the local backend's file, read again only when it changed, or a
   * `pg` backend's row (saved-state.ts, readPgSavedState). Null when there is none, undefined when
   * it cannot be read (another backend, a file cut short or being written, a database out of
   * reach).
   */
  private savedState(fresh = false, timeoutMs?: number): SavedState | null | undefined {
    const file = this.location.stateFile;
    if (file) {
      const read = readSavedState(file, this.saved);
      this.saved = read.cache;
      return read.state;
    }
    const db = this.location.stateDb;
    if (!db) return undefined;
    const read = readPgSavedState(db, fresh ? null : this.savedPg, Date.now(), timeoutMs);
    this.savedPg = read.cache;
    if (read.failed !== undefined && !this.pgStateFailureLogged) {
      this.pgStateFailureLogged = true;
      this.log("warn", "deploy journal: the pg backend's state could not be read", {
        file: this.file,
        error: read.failed,
      });
    }
    return read.state;
  }

  /**
   * Called when Terraform ends this run normally (its Shutdown): closes, as claimed, the entries
   * this run handed to Terraform (sent, or adopted) that the saved state now holds. A local backend's state file is
   * read, and only what it holds is closed: an object Terraform never saved (a second Ctrl-C, a
   * state cut short) stays open, to be adopted. A local state file that cannot be read (Terraform
   * may be rewriting it, in place, at that very moment, or was cut short writing it) proves
   * nothing, so nothing is closed. What a local state file held is closed with the file's lineage
   * and serial: Terraform may go on writing the file after the run ended (a second Ctrl-C) and be
   * cut short doing it, and should an earlier state be put back (its backup), or none, the entry
   * is open again ({@link isOpen}).
   *
   * Any other backend gets the run's results only after this (Terraform writes a remote state once
   * the run ended): every handed entry is closed, unless Terraform stopped the run (a Ctrl-C), when
   * they stay open for the next plan to claim. A `pg` backend's state is read first: what it does
   * not hold yet is closed with a pending mark of that state, stopped run or not, so that should
   * Terraform's write fail (the database out of reach, the job killed, a second Ctrl-C), the state
   * is still that one and the entries are open again, to be adopted by the next apply instead of
   * deployed twice. A closed entry is never adopted, so a later `terraform state rm` is respected.
   * Returns how many were closed.
   */
  settleHanded(): number {
    // Ids this run could not write before: the last chance to (a failure is the caller's to log).
    if (this.unwrittenAnswers.size > 0) this.write(() => []);
    const mine = (m: Map<string, JournalEntry>) =>
      [...m.values()].filter((e) => e.closed === null && e.id !== null && handedByRun(e, this.run));
    if (mine(this.read().entries).length === 0) return 0;
    /** What the state holds now; null when it cannot be read (all handed entries then close). */
    let saved: SavedState | null;
    /** A `pg` backend's state, read before Terraform's write: the mark of what it does not hold. */
    let pending: StateMark | undefined;
    if (this.location.stateFile && !this.location.stateElsewhere) {
      const state = this.savedState();
      // A local state file that cannot be read (being written, or cut short) proves nothing.
      if (state === undefined) return 0;
      saved = state ?? { ids: new Set() };
    } else {
      // Read now, not from a copy (a long apply writes its state every 20 s), and well within the
      // 2 s Terraform gives a provider to exit after Shutdown.
      const state = this.location.stateDb ? this.savedState(true, SHUTDOWN_READ_MS) : undefined;
      // A state that cannot be read: a run Terraform stopped settles nothing (a second Ctrl-C may
      // end Terraform before it writes). One that is read marks what it lacks as pending, which
      // such an end leaves open again.
      if (state === undefined && this.stopped?.aborted) return 0;
      saved = state === undefined ? null : (state ?? { ids: new Set() });
      if (saved) pending = { ...(saved.mark ?? { lineage: "", serial: 0 }), pending: true };
    }
    let n = 0;
    this.write((entries) => {
      const found = mine(entries).filter((e) => saved === null || pending || saved.ids.has(e.id!));
      n = found.length;
      return found.map((e) => {
        const held = saved?.ids.has(e.id!) === true;
        const mark = pending ? (held ? undefined : pending) : saved?.mark;
        return {
          op: "closed" as const,
          entry: e.entry,
          reason: "claimed" as const,
          at: this.iso(),
          detail: held
            ? "saved in the state"
            : pending
              ? "handed to Terraform, whose run ended normally; open again should the state's write fail"
              : "handed to Terraform, whose run ended normally",
          ...(mark ? { state: mark } : {}),
        };
      });
    });
    return n;
  }

  /**
   * Called by a read of an object a state holds (an instance, an API key): the entries of its kind
   * whose answer was never recorded (the journal was out of reach when it came, or the process died
   * just then) are looked at, and one whose request this object answers (`answers`: the same
   * request, created after it was sent, absent before it, named by no entry of `referenced`) is
   * this object's. The state holds it, so the entry is closed with its id: otherwise a create of
   * the same configuration would adopt, by listing, an instance another address holds, and the
   * next apply would revoke a key a state holds. Entries of a live run are left to it. Returns
   * whether one was closed; a failure is the caller's to log.
   */
  claimLanded(
    kind: EntryKind,
    id: string,
    answers: (e: JournalEntry, referenced: ReadonlySet<string>) => boolean,
  ): boolean {
    const unanswered = (e: JournalEntry) =>
      e.kind === kind && e.id === null && this.isOpen(e) && !runServing(e.run, this.run);
    // Read without writing the queued claims first (live() would): a refresh's claims go out in
    // one append, and most reads find no such entry.
    if (![...this.read().entries.values()].some(unanswered)) return false;
    const referenced = this.referencedIds();
    if (referenced.has(id)) return false;
    let closed = false;
    this.write((entries) => {
      const e = [...entries.values()].find((x) => unanswered(x) && answers(x, referenced));
      if (!e) return [];
      closed = true;
      const at = this.iso();
      return [
        { op: "answered" as const, entry: e.entry, id, at },
        { op: "closed" as const, entry: e.entry, reason: "claimed" as const, at, detail: "read in a state" },
      ];
    });
    return closed;
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

  /**
   * Records the id a request created. When the write fails the id is kept, for every read of this
   * journal and for the next write that gets through (settleHanded writes at the latest), and the
   * error is thrown.
   */
  answered(entry: string, id: string): void {
    const at = this.iso();
    this.unwrittenAnswers.set(entry, { id, at });
    this.write(() => []);
  }

  /** Records that the object was returned to Terraform. */
  handed(entry: string): void {
    this.write(() => [{ op: "handed", entry, at: this.iso(), run_id: this.run.id }]);
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
    const open = (m: Map<string, JournalEntry>) => [...m.values()].filter((e) => this.claimable(e, id));
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
      if (![...this.read().entries.values()].some((e) => this.claimable(e, id))) return;
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
    // Not for a database: each write would wait on it while the process ends, for a claim whose
    // loss costs nothing (the next plan claims again).
    if (!this.exitHook && this.store.kind === "file") {
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
    try {
      // A claim closes entries of a journal that exists; one removed meanwhile is not written again.
      if (!this.store.exists()) return;
      this.write(
        (entries) =>
          [...entries.values()]
            .filter((e) => e.id !== null && queued.has(e.id) && this.claimable(e, e.id))
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

  /**
   * Writes whole entries moved from another store (`gpurental journal import|export`), under the
   * lock and durably; an entry this journal has already is left as it is. Returns how many were
   * added.
   */
  importEntries(entries: readonly JournalEntry[]): number {
    return this.importJournal(entries, []).entries;
  }

  /**
   * Writes whole entries moved from another store, then the records that store kept without
   * applying them (`unread`: damaged ones, a later version's, as JSON values), in one durable write
   * under the lock. An entry this journal has already is left as it is, and so is a record it
   * holds already (as many times as it holds it), so that moving the same journal twice doubles
   * nothing. The records follow the entries, as a compaction writes them: an entry record sets its
   * entry whole, and would undo a later version's record about it written before. Returns how
   * many of each were added.
   */
  importJournal(
    entries: readonly JournalEntry[],
    unread: readonly unknown[],
  ): { entries: number; unread: number } {
    const added = { entries: 0, unread: 0 };
    this.write((current, parsed) => {
      const missing = entries.filter((e) => !current.has(e.entry));
      const held = new Map<string, number>();
      for (const u of parsed.unread) {
        const key = canonicalText(u.text);
        held.set(key, (held.get(key) ?? 0) + 1);
      }
      const records = unread.filter((value) => {
        const key = stableJson(value);
        const n = held.get(key) ?? 0;
        if (n > 0) held.set(key, n - 1);
        return n === 0;
      });
      added.entries = missing.length;
      added.unread = records.length;
      return [
        ...missing.map((e) => ({ op: "entry" as const, ...structuredClone(e) })),
        // Written as they are: the stores apply none of them, and keep them through every rewrite.
        ...(records as JournalRecord[]),
      ];
    });
    return added;
  }

  /** Ids named by the entries of every journal of the same place (other workspaces' too). */
  referencedIds(): Set<string> {
    const ids = this.store.referencedIds();
    for (const { id } of this.unwrittenAnswers.values()) ids.add(id);
    return ids;
  }

  /**
   * Appends what `build` returns for the entries as they are on disk, under the lock, flushed to
   * disk before returning; compacts the file when closed entries make up most of it.
   */
  private write(
    build: (entries: Map<string, JournalEntry>, current: ParsedJournal) => JournalRecord[],
    { durable = true }: { durable?: boolean } = {},
  ): void {
    if (this.ended?.aborted) {
      throw new JournalError(
        `The deploy journal ${this.file} is not written by this provider any more: Terraform's provider process ended.`,
        this.file,
      );
    }
    this.moveLegacy();
    if (durable) this.writeQueuedCloses();
    let answers: string[] = [];
    this.store.update(
      (current) => {
        if (current.header && current.header.version > JOURNAL_VERSION) {
          throw new JournalError(
            `The deploy journal ${this.file} was written by a newer provider (format version ${current.header.version}); use that version or move the file away.`,
            this.file,
          );
        }
        // The ids not written yet go first, and what `build` decides sees them; only with a write
        // that is flushed (a claim's is not), as their own would have been.
        const late: JournalRecord[] = [];
        if (durable) {
          answers = [...this.unwrittenAnswers.keys()];
          for (const [entry, { id, at }] of this.unwrittenAnswers) {
            if (current.entries.get(entry)?.id === null) late.push({ op: "answered", entry, id, at });
          }
        }
        return [...late, ...build(this.withAnswers(current.entries), current)];
      },
      { durable, header: () => this.header(), keep: (entries) => this.kept(entries) },
    );
    for (const entry of answers) this.unwrittenAnswers.delete(entry);
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

  /**
   * The entries a compaction keeps: every open one, those closed within CLOSED_KEPT_MS, and those
   * closed with a pending mark, whatever their age, until resolvePending settles them.
   */
  private kept(entries: Iterable<JournalEntry>): JournalEntry[] {
    const cutoff = this.now() - CLOSED_KEPT_MS;
    return [...entries].filter(
      (e) => e.closed === null || e.closed.state?.pending === true || Date.parse(e.closed.at) >= cutoff,
    );
  }
}

/**
 * The run that handed an entry's object to Terraform last, and settles it: the one that took it
 * (an adoption) when that one handed it, else the one that sent it.
 */
function handler(e: JournalEntry): RunIdentity {
  return e.taken && e.handed_by === e.taken.run.id ? e.taken.run : e.run;
}

/**
 * Whether `run` handed the entry's object to Terraform last: it sent it and handed it, or took it
 * (an adoption) and handed it. A take whose adoption failed hands nothing. A record of an older
 * version does not say who handed it: the sender, then.
 */
function handedByRun(e: JournalEntry, run: RunIdentity): boolean {
  return e.handed_at !== null && (e.handed_by ?? e.run.id) === run.id;
}

/** A line or row as written, as JSON with its keys sorted (stableJson); the text itself when it is no JSON. */
function canonicalText(text: string): string {
  try {
    return stableJson(JSON.parse(text));
  } catch {
    return text;
  }
}
