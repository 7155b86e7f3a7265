/**
 * The journals of a working directory, for the tools that read them outside the provider
 * (`gpurental strays`, `gpurental journal`): from PostgreSQL when GPURENTAL_JOURNAL_URL is set, as
 * the provider would use it, else the files of the directory's journal directory.
 */
import { dirname } from "node:path";
import { journalFiles, readJournalFile } from "./disk";
import { FileStore } from "./file-store";
import { type JournalLocation, locateJournal } from "./location";
import { PgStore, type PgStoreOptions } from "./pg/store";
import { JOURNAL_URL_ENV, type JournalUrl, parseJournalUrl } from "./pg/url";
import { currentRun, type RunIdentity } from "./run";
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

/**
 * The store of the same state's journal under the key older versions gave it, of the kind the
 * journal itself uses, when that key differs (DeployJournalOptions.legacy); undefined otherwise.
 */
export function legacyStoreOf(
  location: JournalLocation,
  url: JournalUrl | undefined,
  opts: { env: NodeJS.ProcessEnv; run: RunIdentity; timeoutMs?: number; log?: PgStoreOptions["log"] },
): FileStore | PgStore | undefined {
  if (!location.legacyFile) return undefined;
  const older: JournalLocation = { ...location, file: location.legacyFile };
  const log = opts.log ?? (() => {});
  return url
    ? new PgStore(url, older, {
        env: opts.env,
        log,
        ...(opts.timeoutMs ? { timeoutMs: opts.timeoutMs } : {}),
      })
    : new FileStore(older, { run: opts.run, log });
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
    const journal = new DeployJournal(location, {
      store: new PgStore(url, location, { env }),
      legacy: legacyStoreOf(location, url, { env, run: currentRun() }),
    });
    return [{ name: journal.file, journal }];
  }
  return journalFiles(location.dir).flatMap((file) => {
    const journal = fileJournal(file);
    return journal ? [{ name: file, journal }] : [];
  });
}
