// The stores a journal suite runs against: the file store always, and the PostgreSQL store on a
// private server (test/e2e/postgres.ts) started for the suite, where PostgreSQL's server programs
// are installed (a missing server fails the suite under GPURENTAL_REQUIRE_POSTGRES=1, as CI sets
// it, and is otherwise said in one line). It registers Jest hooks, so the build leaves this folder
// out (tsconfig.build.json). Each test's journal lives in a temporary directory of its own, whose
// path is part of the state's key, so tests never see each other's rows.
import { appendFileSync, existsSync, readFileSync } from "node:fs";
import { Client } from "pg";
import { findPostgres, type PostgresServer, postgresRequired, startPostgres } from "../../test/e2e/postgres";
import { DeployJournal, type DeployJournalOptions, type JournalLocation } from "../journal";
import type { JournalStore } from "../journal/journal-store";
import { PgStore, stateKeyOf } from "../journal/pg/store";
import { parseJournalUrl } from "../journal/pg/url";

/** Which store a journal keeps its records in. */
export type StoreKind = "file" | "postgresql";

const install = findPostgres();
const withPostgres = Boolean(install.binDir) || postgresRequired();
if (!withPostgres) {
  process.stderr.write(`the PostgreSQL store's runs of the journal suites are skipped: ${install.missing}\n`);
}

/** The stores the suites run against. */
export const STORE_KINDS: readonly StoreKind[] = withPostgres ? ["file", "postgresql"] : ["file"];

let pg: PostgresServer | undefined;
beforeAll(async () => {
  if (!withPostgres) return;
  if (!install.binDir)
    throw new Error(`GPURENTAL_REQUIRE_POSTGRES=1, and PostgreSQL is missing: ${install.missing}`);
  pg = await startPostgres(install);
}, 120_000);
afterAll(() => pg?.stop());

/** The suite's PostgreSQL server (only while a postgresql run is going on). */
export function journalServer(): PostgresServer {
  if (!pg) throw new Error("no PostgreSQL server: the suite's set-up failed");
  return pg;
}

/** A store of `kind` for `location`; undefined for the file store (DeployJournal's default). */
export function storeOf(
  kind: StoreKind,
  location: JournalLocation,
  opts: Pick<DeployJournalOptions, "log"> = {},
): JournalStore | undefined {
  if (kind === "file") return undefined;
  return new PgStore(parseJournalUrl(journalServer().connStr(), "GPURENTAL_JOURNAL_URL"), location, opts);
}

/** A journal of `location` in a store of `kind`. */
export function journalIn(
  kind: StoreKind,
  location: JournalLocation,
  opts: DeployJournalOptions = {},
): DeployJournal {
  const store = storeOf(kind, location, opts);
  return new DeployJournal(location, { ...opts, ...(store ? { store } : {}) });
}

/** How many records a fresh reader finds in the journal (lines of a file, rows of the database). */
export function recordCount(kind: StoreKind, location: JournalLocation): number {
  const store = storeOf(kind, location);
  if (store) return store.read().lines;
  return new DeployJournal(location).store.read().lines;
}

/** Runs SQL on the suite's server, as another program would. */
async function sql(text: string, values: unknown[] = []): Promise<Record<string, unknown>[]> {
  const c = new Client({ connectionString: journalServer().connStr() });
  await c.connect();
  try {
    return (await c.query(text, values)).rows;
  } finally {
    await c.end();
  }
}

/**
 * Appends records as they are, past the journal's code (a damaged one, a later version's): lines
 * of its file (which must exist), JSON rows of the database.
 */
export async function appendRaw(kind: StoreKind, location: JournalLocation, texts: string[]): Promise<void> {
  if (kind === "file") {
    appendFileSync(location.file, texts.map((t) => `${t}\n`).join(""));
    return;
  }
  for (const text of texts) {
    await sql(
      `insert into gpurental_journal.records (state_key, seq, record)
         select state_key, seq + 1, $2::jsonb from gpurental_journal.journals where state_key = $1`,
      [stateKeyOf(location), text],
    );
    await sql("update gpurental_journal.journals set seq = seq + 1 where state_key = $1", [
      stateKeyOf(location),
    ]);
  }
}

/** The records of a journal as they are kept, in order: its file's lines, its rows' JSON as PostgreSQL writes it. */
export async function rawRecords(kind: StoreKind, location: JournalLocation): Promise<string[]> {
  if (kind === "file") {
    if (!existsSync(location.file)) return [];
    return readFileSync(location.file, "utf8")
      .split("\n")
      .filter((l) => l.trim());
  }
  const rows = await sql(
    "select record::text as record from gpurental_journal.records where state_key = $1 order by seq",
    [stateKeyOf(location)],
  );
  return rows.map((r) => r.record as string);
}
