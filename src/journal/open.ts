/**
 * The journals of a working directory, for the tools that read them outside the provider
 * (`gpurental strays`, `gpurental journal`): from PostgreSQL when GPURENTAL_JOURNAL_URL is set, as
 * the provider would use it, else the files of the directory's journal directory.
 */
import { dirname } from "node:path";
import { journalFiles, readJournalFile } from "./disk";
import { type JournalLocation, locateJournal } from "./location";
import { PgStore } from "./pg/store";
import { JOURNAL_URL_ENV, parseJournalUrl } from "./pg/url";
import { DeployJournal } from "./store";

/** One state's journal of a working directory, read. */
export interface OpenedJournal {
  /** The journal in messages (a file, or the database and state). */
  name: string;
  journal: DeployJournal;
}

/** The file store's journal of a journal file, as tools open it (no local state to consult). */
export function fileJournal(file: string): DeployJournal | null {
  const parsed = readJournalFile(file);
  if (!parsed.header) return null;
  const location: JournalLocation = {
    dir: dirname(file),
    file,
    workspace: parsed.header.workspace,
    backend: parsed.header.backend,
  };
  return new DeployJournal(location);
}

/** The PostgreSQL URL the tools use, from the environment; undefined when none is set. */
export function journalUrlOf(env: NodeJS.ProcessEnv) {
  const value = env[JOURNAL_URL_ENV];
  return value ? parseJournalUrl(value, `the ${JOURNAL_URL_ENV} environment variable`) : undefined;
}

/**
 * The journals of the working directory `cwd`: with GPURENTAL_JOURNAL_URL, the PostgreSQL journal
 * of the state the directory uses (its workspace and backend); else every journal file of its
 * journal directory.
 */
export function workingDirJournals(cwd: string, env: NodeJS.ProcessEnv): OpenedJournal[] {
  const location = locateJournal({ cwd, env });
  const url = journalUrlOf(env);
  if (url) {
    const journal = new DeployJournal(location, { store: new PgStore(url, location, { env }) });
    return [{ name: journal.file, journal }];
  }
  return journalFiles(location.dir).flatMap((file) => {
    const journal = fileJournal(file);
    return journal ? [{ name: file, journal }] : [];
  });
}
