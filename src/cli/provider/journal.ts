import { existsSync, renameSync } from "node:fs";
import { resolve } from "node:path";
import type { Command } from "commander";
import { redactText } from "../../api/redact";
import {
  CLOSED_KEPT_MS,
  currentRun,
  DeployJournal,
  type JournalEntry,
  journalFiles,
  locateJournal,
} from "../../journal";
import { fileJournal, journalUrlOf, legacyStoreOf } from "../../journal/open";
import { PgStore } from "../../journal/pg/store";
import { JOURNAL_URL_ENV } from "../../journal/pg/url";
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
    for (const file of files) {
      const source = fileJournal(file);
      if (!source) {
        io.stderr(`${file}: no header, not a journal; left as it is\n`);
        continue;
      }
      const entries = kept(source.entries(), Date.now());
      const target = new DeployJournal(source.location, {
        store: new PgStore(url, source.location, { env: io.env }),
      });
      const added = target.importEntries(entries);
      renameSync(file, `${file}${IMPORTED_SUFFIX}`);
      io.stdout(
        `${file}: ${describe(entries)} entries; ${added} added to ${target.file}, ${entries.length - added} there already. The file is now ${file}${IMPORTED_SUFFIX}.\n`,
      );
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
    const source = new DeployJournal(location, {
      store,
      legacy: legacyStoreOf(location, url, { env: io.env, run: currentRun() }),
    });
    const entries = kept(source.entries(), Date.now());
    if (entries.length === 0) {
      io.stdout(`${source.file}: no entries: nothing to export.\n`);
      return JOURNAL_EXIT.done;
    }
    const existed = existsSync(location.file);
    const added = new DeployJournal(location).importEntries(entries);
    const copied = `${source.file}: ${describe(entries)} entries; ${added} added to ${location.file}${existed ? `, ${entries.length - added} there already` : ""}.`;
    // Rows that could not be read (damaged, or a later version's) were not copied: deleting them
    // would lose them for good.
    const unread = store.read().unread.map((u) => u.problem ?? "a record of a later version");
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
