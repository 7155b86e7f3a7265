/**
 * The PostgreSQL journal's schema, `gpurental_journal`: created on first use, versioned in its
 * table `schema_version`, and migrated forward (each migration in order, under an advisory lock, in
 * one transaction with the version it reaches). A schema newer than this code is read but never
 * written. The tables are described in src/journal/README.md ("The PostgreSQL store").
 */
import type { Client } from "pg";
import { JOURNAL_SCHEMA } from "./url";

/** The schema version this code writes. */
export const SCHEMA_VERSION = 1;

/** A table (or sequence) of the journal's schema, quoted. */
export function q(name: string): string {
  return `"${JOURNAL_SCHEMA}"."${name}"`;
}

/** The migrations, by the version each reaches. */
const MIGRATIONS: Record<number, string[]> = {
  1: [
    // Numbers the generations of a state's journal (a compaction starts a new one).
    `CREATE SEQUENCE ${q("seq")}`,
    // One row per state: its header, and where its records stand. Its row lock is the state's lock.
    `CREATE TABLE ${q("journals")} (
      state_key text PRIMARY KEY,
      workspace text NOT NULL,
      backend text NOT NULL,
      header jsonb NOT NULL,
      generation bigint NOT NULL,
      seq bigint NOT NULL
    )`,
    // The records of each state, in order: the JSON Lines of a journal file, one row each.
    `CREATE TABLE ${q("records")} (
      state_key text NOT NULL REFERENCES ${q("journals")} (state_key) ON DELETE CASCADE,
      seq bigint NOT NULL,
      record jsonb NOT NULL,
      PRIMARY KEY (state_key, seq)
    )`,
  ],
};

/** The schema as one connection found it. */
export interface SchemaState {
  version: number;
  /** Written by a newer provider: read, never written. */
  newer: boolean;
}

/** An advisory lock key of the migration (any bigint; this one spells "gpr-jrnl"). */
const MIGRATION_LOCK = "7451460313458895468";

async function currentVersion(client: Client): Promise<number> {
  try {
    const r = await client.query(`SELECT coalesce(max(version), 0) AS v FROM ${q("schema_version")}`);
    return Number(r.rows[0].v);
  } catch (err) {
    // No schema, or no version table yet: nothing was created.
    const code = (err as { code?: string }).code;
    if (code === "3F000" || code === "42P01") return 0;
    throw err;
  }
}

/**
 * Brings the schema to SCHEMA_VERSION, unless `known` says this connection did so already. A user
 * who may only read and write the tables never runs DDL here once the schema is in place.
 */
export async function ensureSchema(client: Client, known: SchemaState | null): Promise<SchemaState> {
  if (known && (known.newer || known.version === SCHEMA_VERSION)) return known;
  const found = await currentVersion(client);
  if (found >= SCHEMA_VERSION) return { version: found, newer: found > SCHEMA_VERSION };
  await client.query("BEGIN");
  try {
    await client.query("SELECT pg_advisory_xact_lock($1::bigint)", [MIGRATION_LOCK]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS "${JOURNAL_SCHEMA}"`);
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${q("schema_version")} (version integer PRIMARY KEY, migrated_at timestamptz NOT NULL DEFAULT now())`,
    );
    // Another run may have migrated while this one waited for the lock.
    const version = await currentVersion(client);
    for (let v = version + 1; v <= SCHEMA_VERSION; v++) {
      for (const statement of MIGRATIONS[v] ?? []) await client.query(statement);
      await client.query(`INSERT INTO ${q("schema_version")} (version) VALUES ($1)`, [v]);
    }
    await client.query("COMMIT");
    return { version: Math.max(version, SCHEMA_VERSION), newer: version > SCHEMA_VERSION };
  } catch (err) {
    await client.query("ROLLBACK").catch(() => {});
    throw err;
  }
}
