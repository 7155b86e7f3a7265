/**
 * The deploy journal's format: the records of a JSON Lines journal file and how a reader applies
 * them, in order, to the entries they describe. Documented in README.md beside this file.
 */
import { z } from "zod";
import type { RunIdentity } from "./run";

/** The `format` of a journal header. */
export const JOURNAL_FORMAT = "gpurental-deploy-journal";
/** The version this code writes; a file with a higher version is read but never written. */
export const JOURNAL_VERSION = 1;

/** What an entry records the creation of. */
export type EntryKind = "instance" | "api_key";

/** The kinds this version acts on; a journal may hold a later version's others, kept as they are. */
export function isKnownKind(kind: string): kind is EntryKind {
  return kind === "instance" || kind === "api_key";
}

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
  /**
   * The id of the run that returned it last: the one that sent it, or one that adopted it. Absent
   * in what older versions wrote (the sender's, then).
   */
  handed_by?: string | null;
  /** A create that adopted the entry, and its process. */
  taken: { run: RunIdentity; at: string } | null;
  closed: { reason: CloseReason; at: string; detail?: string; state?: StateMark } | null;
}

/**
 * The state an entry was closed against when its run was settled: its lineage and serial.
 *
 * - The local backend's state file, which held the entry's object: Terraform may rewrite the file
 *   after the run ended (a second Ctrl-C) and be cut short writing it; the backup put back then
 *   has a lower serial and may not hold the object.
 * - `pending`: a `pg` backend's state, read before Terraform wrote the run's results (it writes a
 *   remote state after the run ends), which did not hold the object. The write that follows has
 *   a higher serial; while the state is still this one, the write failed and the object is in no
 *   state. A lineage of "" is no state at all.
 */
export interface StateMark {
  lineage: string;
  serial: number;
  pending?: true;
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
  | { op: "handed"; entry: string; at: string; run_id?: string }
  | { op: "taken"; entry: string; run: RunIdentity; at: string }
  | { op: "closed"; entry: string; reason: CloseReason; at: string; detail?: string; state?: StateMark }
  /** A whole entry, as compaction rewrites it. */
  | ({ op: "entry" } & JournalEntry);

/**
 * A line (a row) this version could not apply: a damaged one, or a record of a later version. No
 * rewrite drops it: a compaction writes it back as it is, after the entries.
 */
export interface UnreadRecord {
  /** As written: the line, or the row's record as JSON. */
  text: string;
  /** Why a damaged one is not a record ("line 3 is not a journal record"); none for the others. */
  problem?: string;
  /** A record this version reads, kept unapplied: it follows up an entry only a damaged line names. */
  follows?: true;
}

/** What an unread record is, in a few words: "damaged", "a later version's", or what it follows. */
export function unreadKind(u: UnreadRecord): string {
  return u.problem ? "damaged" : u.follows ? "following up a damaged record" : "a later version's";
}

/** A journal file read back. */
export interface ParsedJournal {
  header: JournalHeader | null;
  /** By entry id, in the order they were sent. */
  entries: Map<string, JournalEntry>;
  /** Lines that could not be read (a torn last line is expected after a crash and not listed). */
  problems: string[];
  /** What this version could not apply, in order: the lines of `problems` and a later version's records. */
  unread: UnreadRecord[];
  lines: number;
  /** The file ends in a torn line (no newline): the next append must start on a line of its own. */
  torn?: boolean;
  /**
   * That torn line is not even JSON: what remains of a write a crash cut short, which never took
   * effect (a `sent` is written before its request leaves). The next write cuts it off.
   */
  tornFragment?: boolean;
}

// What a record must hold to be applied. A journal is read from a file or a database row that
// anything may have damaged (a disk, an edit, another program), and an entry missing its run or
// its reason would fail every later plan with a TypeError; such a record is a damaged line instead.
// Fields a later version adds are kept; a field that only informs (a start time, a detail) is
// dropped when damaged rather than losing the record.
const text = z.string();
const when = z.string();
const run = z.looseObject({
  id: text,
  pid: z.number(),
  boot: text.nullable(),
  start: text.nullable().optional().catch(undefined),
  parent: z.looseObject({ pid: z.number(), start: text }).nullable().optional().catch(undefined),
});
// A kind this version does not know (a later version's) is kept as it is, and no view of this
// version acts on it (isKnownKind): its entry is neither lost nor used. Typed as the known kinds,
// as every writer of this version writes one; readers of another kind's entry go through the views.
const kind = z.string() as z.ZodType<EntryKind>;
const closed = z.looseObject({
  reason: text,
  at: when,
  detail: text.optional().catch(undefined),
  state: z
    .looseObject({ lineage: text, serial: z.number(), pending: z.literal(true).optional().catch(undefined) })
    .optional()
    .catch(undefined),
});
const requestFields = {
  request: z.record(z.string(), z.unknown()).optional(),
  before: z.array(text).optional(),
};
const RECORDS = {
  // A header is taken as it is: its fields are checked where they are used (the version before a
  // write), and a journal whose header was damaged keeps its entries.
  header: z.looseObject({ op: z.literal("header") }),
  sent: z.looseObject({
    op: z.literal("sent"),
    entry: text,
    kind,
    fingerprint: text,
    at: when,
    run,
    ...requestFields,
  }),
  answered: z.looseObject({ op: z.literal("answered"), entry: text, id: text, at: when }),
  handed: z.looseObject({
    op: z.literal("handed"),
    entry: text,
    at: when,
    run_id: text.optional().catch(undefined),
  }),
  taken: z.looseObject({ op: z.literal("taken"), entry: text, run, at: when }),
  closed: closed.extend({ op: z.literal("closed"), entry: text }),
  entry: z.looseObject({
    op: z.literal("entry"),
    entry: text,
    kind,
    fingerprint: text,
    request: z.record(z.string(), z.unknown()),
    before: z.array(text),
    sent_at: when,
    run,
    id: text.nullable(),
    answered_at: when.nullable(),
    handed_at: when.nullable(),
    handed_by: text.nullable().optional().catch(undefined),
    taken: z.looseObject({ run, at: when }).nullable(),
    closed: closed.nullable(),
  }),
} as const;

/**
 * One record of a journal as read: the record when it holds what its `op` needs, "other" for an
 * `op` this version does not know (a later version's, skipped and kept), undefined when it is damaged.
 */
export function readRecord(value: unknown): JournalRecord | "other" | undefined {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return undefined;
  const op = (value as { op?: unknown }).op;
  if (typeof op !== "string") return undefined;
  if (!Object.hasOwn(RECORDS, op)) return "other";
  const parsed = RECORDS[op as keyof typeof RECORDS].safeParse(value);
  return parsed.success ? (parsed.data as JournalRecord) : undefined;
}

/**
 * What a journal keeps of the lines it cannot apply: the entry ids they name, so that the records
 * that follow one of them (an `answered` carrying the object's id, after a damaged `sent`) are
 * kept with it rather than dropped as naming no entry, and a repaired line finds them.
 */
export class UnreadEntries {
  private readonly ids = new Set<string>();

  /** The entries named by the lines a journal could not apply, as read. */
  static of(unread: readonly UnreadRecord[]): UnreadEntries {
    const u = new UnreadEntries();
    for (const { text } of unread) {
      try {
        u.note(JSON.parse(text));
      } catch {
        // Not JSON: it names no entry.
      }
    }
    return u;
  }

  /** Notes the entry a line this version cannot apply names, if it names one. */
  note(value: unknown): void {
    if (value === null || typeof value !== "object" || Array.isArray(value)) return;
    const entry = (value as { entry?: unknown }).entry;
    if (typeof entry === "string") this.ids.add(entry);
  }

  /** Whether `rec` follows up an entry known only from such a line (not applied: kept as it is). */
  follows(entries: ReadonlyMap<string, JournalEntry>, rec: JournalRecord): boolean {
    return (
      "entry" in rec &&
      rec.op !== "sent" &&
      rec.op !== "entry" &&
      !entries.has(rec.entry) &&
      this.ids.has(rec.entry)
    );
  }
}

/** Reads a journal's text; a damaged line is skipped, reported and kept (`unread`), never fatal. */
export function parseJournal(text: string): ParsedJournal {
  const entries = new Map<string, JournalEntry>();
  const problems: string[] = [];
  const unread: UnreadRecord[] = [];
  let header: JournalHeader | null = null;
  const lines = text.split("\n");
  // A file that does not end in a newline has a torn last line: a write cut short by a crash.
  const last = lines.length - 1;
  let count = 0;
  let tornFragment = false;
  const unreadEntries = new UnreadEntries();
  lines.forEach((line, i) => {
    if (!line.trim()) return;
    count++;
    let rec: JournalRecord | "other" | undefined;
    let json = true;
    let value: unknown;
    try {
      value = JSON.parse(line);
      rec = readRecord(value);
    } catch {
      json = false;
      rec = undefined;
    }
    if (rec === "other" || (rec !== undefined && unreadEntries.follows(entries, rec))) {
      unreadEntries.note(value);
      unread.push(rec === "other" ? { text: line } : { text: line, follows: true });
      return;
    }
    if (rec === undefined) {
      // Cut short by a crash: not even JSON. A whole JSON value this version cannot apply is kept.
      if (i === last && !json) {
        tornFragment = true;
        return;
      }
      const problem = `line ${i + 1} is not a journal record`;
      problems.push(problem);
      unreadEntries.note(value);
      unread.push({ text: line, problem });
      return;
    }
    applyRecord(entries, rec, (h) => {
      header = h;
    });
  });
  return {
    header,
    entries,
    problems,
    unread,
    lines: count,
    torn: text.length > 0 && !text.endsWith("\n"),
    tornFragment,
  };
}

/** Applies one record to the entries it names; a record naming an unknown entry is ignored. */
export function applyRecord(
  entries: Map<string, JournalEntry>,
  rec: JournalRecord,
  onHeader: (h: JournalHeader) => void,
) {
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
      e.handed_by = rec.run_id ?? null;
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
          ? {
              state: {
                lineage: rec.state.lineage,
                serial: rec.state.serial,
                ...(rec.state.pending === true ? { pending: true as const } : {}),
              },
            }
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
