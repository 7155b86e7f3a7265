import { existsSync, readFileSync, renameSync } from "node:fs";
import { dirname, resolve } from "node:path";
import type { Command } from "commander";
import { redactText } from "../../api/redact";
import {
  CLOSED_KEPT_MS,
  currentRun,
  DeployJournal,
  JOURNAL_FORMAT,
  JOURNAL_VERSION,
  type JournalEntry,
  type JournalHeader,
  type JournalLocation,
  journalFiles,
  locateJournal,
  parseJournal,
} from "../../journal";
import { journalUrlOf, legacyStoreOf } from "../../journal/open";
import { PgStore } from "../../journal/pg/store";
import { JOURNAL_URL_ENV } from "../../journal/pg/url";
import { type UnreadRecord, unreadKind } from "../../journal/records";
import { type CommandIO, processIO } from "../io";

// `gpurental journal import|export`: moves a working directory's deploy journal between its files
// and PostgreSQL (src/journal/README.md, "Moving between stores"), so that switching
// GPURENTAL_JOURNAL_URL on or off loses no entry an interrupted run left. Every entry the journal
// keeps moves (open ones, and those closed within a week, whose ids must not be taken for a lost
// deploy's); an entry the target already has is left as the target has it. The source is retired
// only once the target holds everything: a journal file is renamed aside (kept, but read by no
// one), a state's rows are deleted.

/** Exit codes of the command. */
export const JOURNAL_EXIT = { done: 0, failed: 1 } as const;

/** Options of the command. */
export interface JournalMoveOptions {
  /** The working directory (default the current one). */
  dir?: string;
  /** The journal directory (default GPURENTAL_JOURNAL_DIR, else the working directory's). */
  journalDir?: string;
}

/** What a journal file becomes once its entries are in PostgreSQL. */
export const IMPORTED_SUFFIX = ".imported";

function kept(entries: Iterable<JournalEntry>, now: number): JournalEntry[] {
  return [...entries].filter((e) => e.closed === null || Date.parse(e.closed.at) >= now - CLOSED_KEPT_MS);
}

function describe(entries: JournalEntry[]): string {
  const open = entries.filter((e) => e.closed === null).length;
  return `${open} open, ${entries.length - open} closed`;
}

/** Why a journal file's header cannot name the state its entries go to; undefined when it can. */
function headerProblem(header: JournalHeader | null): string | undefined {
  if (!header) return 'it has no header line (op "header"), which names the workspace and backend';
  const h = header as unknown as Record<string, unknown>;
  const got = (field: string) =>
    h[field] === undefined ? "none" : (JSON.stringify(h[field])?.slice(0, 80) ?? String(h[field]));
  if (h.format !== JOURNAL_FORMAT)
    return `its header's "format" must be "${JOURNAL_FORMAT}"; got ${got("format")}`;
  if (typeof h.version !== "number" || !Number.isInteger(h.version) || h.version < 1) {
    return `its header's "version" must be a whole number from 1; got ${got("version")}`;
  }
  if (h.version > JOURNAL_VERSION) {
    return `its header's "version" is ${h.version}: it was written by a newer provider, which must import it`;
  }
  for (const [field, what] of [
    ["workspace", "the Terraform workspace"],
    ["backend", "the backend's type"],
  ] as const) {
    if (typeof h[field] !== "string" || h[field] === "") {
      return `its header's "${field}" must name ${what} (a non-empty string); got ${got(field)}`;
    }
  }
  return undefined;
}

/**
 * Why a line this version cannot apply cannot be a row of the PostgreSQL journal as it is (a
 * jsonb value, read back with JSON.parse); undefined when it can.
 */
function rowProblem(text: string): string | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return "is not JSON";
  }
  // PostgreSQL's jsonb refuses the NUL character in a string.
  if (holdsNul(value)) return "holds a NUL character (\\u0000)";
  // A number JSON.parse cannot hold exactly would come back as another.
  const numbers = text.replace(/"(?:[^"\\]|\\.)*"/g, '""').match(/-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/g) ?? [];
  for (const n of numbers) {
    const v = Number(n);
    if (!Number.isFinite(v) || (/^-?\d+$/.test(n) && !Number.isSafeInteger(v))) {
      return `holds the number ${n.slice(0, 40)}, which cannot be kept exactly`;
    }
  }
  return undefined;
}

/** Whether a string of `value` (a key or a value, at any depth) holds the NUL character. */
function holdsNul(value: unknown): boolean {
  if (typeof value === "string") return value.includes("\0");
  if (Array.isArray(value)) return value.some(holdsNul);
  if (value !== null && typeof value === "object") {
    return Object.entries(value).some(([k, v]) => k.includes("\0") || holdsNul(v));
  }
  return false;
}

/** The line numbers of `unread` in the file's `text`, in order (they are its lines, in order). */
function lineNumbers(text: string, unread: readonly UnreadRecord[]): number[] {
  const lines = text.split("\n");
  const numbers: number[] = [];
  let at = 0;
  for (const u of unread) {
    while (at < lines.length && lines[at] !== u.text) at++;
    numbers.push(at + 1);
    at++;
  }
  return numbers;
}

/** Lists the first few of `items`, and how many more. */
function listed(items: readonly string[]): string {
  return `${items.slice(0, 3).join("; ")}${items.length > 3 ? `; and ${items.length - 3} more` : ""}`;
}

/** `gpurental journal import`: the journal files of the directory into PostgreSQL. */
export function runJournalImport(opts: JournalMoveOptions, io: CommandIO): number {
  try {
    const url = journalUrlOf(io.env);
    if (!url) throw new Error(`set ${JOURNAL_URL_ENV} to the PostgreSQL database to import into`);
    const cwd = resolve(io.cwd, opts.dir ?? ".");
    const dir = opts.journalDir ? resolve(io.cwd, opts.journalDir) : locateJournal({ cwd, env: io.env }).dir;
    const files = journalFiles(dir);
    if (files.length === 0) {
      io.stdout(`No journal files in ${dir}: nothing to import.\n`);
      return JOURNAL_EXIT.done;
    }
    const refused: string[] = [];
    const refuse = (file: string, why: string) => {
      refused.push(file);
      io.stderr(`${file}: ${why}. Nothing of it was imported; the file is left as it is.\n`);
    };
    for (const file of files) {
      let text: string;
      try {
        text = readFileSync(file, "utf8");
      } catch (err) {
        refuse(file, `it cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
        continue;
      }
      const parsed = parseJournal(text);
      if (!parsed.header && parsed.entries.size === 0 && parsed.unread.length === 0) {
        io.stderr(`${file}: holds no journal record; left as it is\n`);
        continue;
      }
      const problem = headerProblem(parsed.header);
      if (problem) {
        refuse(file, problem);
        continue;
      }
      // What this version cannot apply (damaged lines, a later version's records) goes along as it
      // is, as the database keeps such rows; a line the database cannot keep as it is stops the file.
      const at = lineNumbers(text, parsed.unread);
      const unkept = parsed.unread.flatMap((u, i) => {
        const why = rowProblem(u.text);
        return why ? [`line ${at[i]} ${why}`] : [];
      });
      if (unkept.length > 0) {
        refuse(
          file,
          `the database keeps a record it cannot apply only as the JSON value it is, and ${listed(unkept)}; repair or delete ${unkept.length === 1 ? "that line" : "those lines"}, then import again`,
        );
        continue;
      }
      const header = parsed.header as JournalHeader;
      const location: JournalLocation = {
        dir: dirname(file),
        file,
        workspace: header.workspace,
        backend: header.backend,
      };
      const entries = kept(parsed.entries.values(), Date.now());
      const target = new DeployJournal(location, {
        store: new PgStore(url, location, { env: io.env }),
      });
      const added = target.importJournal(
        entries,
        parsed.unread.map((u) => JSON.parse(u.text) as unknown),
      );
      renameSync(file, `${file}${IMPORTED_SUFFIX}`);
      const unread =
        parsed.unread.length === 0
          ? ""
          : ` ${parsed.unread.length} ${parsed.unread.length === 1 ? "record" : "records"} this version cannot apply (${listed(
              parsed.unread.map((u, i) => `line ${at[i]}: ${unreadKind(u)}`),
            )}) kept as ${parsed.unread.length === 1 ? "it is" : "they are"}: ${added.unread} added, ${parsed.unread.length - added.unread} there already.`;
      io.stdout(
        `${file}: ${describe(entries)} entries; ${added.entries} added to ${target.file}, ${entries.length - added.entries} there already.${unread} The file is now ${file}${IMPORTED_SUFFIX}.\n`,
      );
    }
    if (refused.length > 0) {
      io.stderr(
        `gpurental journal import: ${files.length === 1 ? "the journal file was" : `${refused.length} of ${files.length} journal files ${refused.length === 1 ? "was" : "were"}`} not imported (said above); ${refused.length === 1 ? "it is left as it is" : "they are left as they are"}.\n`,
      );
      return JOURNAL_EXIT.failed;
    }
    return JOURNAL_EXIT.done;
  } catch (err) {
    io.stderr(`gpurental journal import: ${redactText(err instanceof Error ? err.message : String(err))}\n`);
    return JOURNAL_EXIT.failed;
  }
}

/** `gpurental journal export`: the working directory's state's journal from PostgreSQL into its file. */
export function runJournalExport(opts: JournalMoveOptions, io: CommandIO): number {
  try {
    const url = journalUrlOf(io.env);
    if (!url) throw new Error(`set ${JOURNAL_URL_ENV} to the PostgreSQL database to export from`);
    const cwd = resolve(io.cwd, opts.dir ?? ".");
    const location = locateJournal({
      cwd,
      env: io.env,
      ...(opts.journalDir ? { configured: resolve(io.cwd, opts.journalDir) } : {}),
    });
    const store = new PgStore(url, location, { env: io.env });
    // What an older version kept under the state's older key comes along.
    const legacy = legacyStoreOf(location, url, { env: io.env, run: currentRun() });
    const source = new DeployJournal(location, { store, legacy });
    const entries = kept(source.entries(), Date.now());
    // Rows that could not be read (damaged, or a later version's) are not copied: deleting them
    // would lose them for good. So are those left under the state's older key.
    const unread = [store, ...(legacy ? [legacy] : [])]
      .flatMap((s) => s.read().unread)
      .map(
        (u) =>
          u.problem ?? (u.follows ? "a record following up a damaged one" : "a record of a later version"),
      );
    if (entries.length === 0 && unread.length === 0) {
      io.stdout(`${source.file}: no entries: nothing to export.\n`);
      return JOURNAL_EXIT.done;
    }
    const existed = existsSync(location.file);
    const added = entries.length > 0 ? new DeployJournal(location).importEntries(entries) : 0;
    const copied =
      entries.length > 0
        ? `${source.file}: ${describe(entries)} entries; ${added} added to ${location.file}${existed ? `, ${entries.length - added} there already` : ""}.`
        : `${source.file}: no entries.`;
    if (unread.length > 0) {
      io.stdout(
        `${copied} The state's rows are kept in the database: ${unread.length} of them could not be read (${unread.slice(0, 3).join("; ")}${unread.length > 3 ? "; …" : ""}); repair or delete them, then export again.\n`,
      );
      return JOURNAL_EXIT.failed;
    }
    store.drop();
    io.stdout(`${copied} The state's rows are deleted from the database.\n`);
    return JOURNAL_EXIT.done;
  } catch (err) {
    io.stderr(`gpurental journal export: ${redactText(err instanceof Error ? err.message : String(err))}\n`);
    return JOURNAL_EXIT.failed;
  }
}

export function register(program: Command): void {
  const journal = program
    .command("journal")
    .description(
      "Move a working directory's deploy journal between its files and PostgreSQL (GPURENTAL_JOURNAL_URL)",
    );
  const dirOption = "--journal-dir <dir>";
  const dirHelp = "the journal directory (default GPURENTAL_JOURNAL_DIR, else .terraform/gpurental-journal)";
  journal
    .command("import")
    .description(
      "Copy every journal file of the directory into PostgreSQL, then rename each file aside (<file>.imported)",
    )
    .argument("[dir]", "the Terraform working directory (default the current one)")
    .option(dirOption, dirHelp)
    .action((dir: string | undefined, opts: { journalDir?: string }) => {
      process.exitCode = runJournalImport({ ...opts, ...(dir ? { dir } : {}) }, processIO());
    });
  journal
    .command("export")
    .description(
      "Copy the journal of the directory's state (workspace and backend) from PostgreSQL into its journal file, then delete its rows",
    )
    .argument("[dir]", "the Terraform working directory (default the current one)")
    .option(dirOption, dirHelp)
    .action((dir: string | undefined, opts: { journalDir?: string }) => {
      process.exitCode = runJournalExport({ ...opts, ...(dir ? { dir } : {}) }, processIO());
    });
}
