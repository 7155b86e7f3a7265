/**
 * The PostgreSQL client of the deploy journal, run in a worker thread so that the journal stays
 * synchronous for its callers (bridge.ts waits for each answer). Loaded as a module on the
 * provider's own thread, it reads a state's journal once, asynchronously, when the provider is
 * configured (primeRead), so that a command that writes nothing starts no worker. It holds one connection per
 * database, creates and migrates the journal's schema on first use (schema.ts), and answers one
 * request at a time. It never writes to stdout (the provider's handshake channel) and never puts
 * the URL's password into an answer.
 */
import { isMainThread, workerData } from "node:worker_threads";
import { Client, type ClientConfig, type QueryConfig, type QueryResultRow } from "pg";
import { parse } from "pg-connection-string";
import type { JournalRecord } from "../records";
import type {
  Answer,
  PgTarget,
  ReadAnswer,
  Request,
  Since,
  StateAnswer,
  StateRow,
  WorkerSetup,
} from "./protocol";
import { ensureSchema, q, type SchemaState } from "./schema";

/** Waits between connection attempts before the database was first reached: doubling to this. */
const MAX_BACKOFF_MS = 2_000;
/** How long a connection to a database given up on is waited for. */
const GAVE_UP_CONNECT_MS = 2_000;
/** An idle transaction (a provider thread that stopped answering) is ended by the server after this. */
const IDLE_TX_MS = 60_000;

/** libpq's variables a URL may leave to the environment. */
const LIBPQ_ENV = {
  PGUSER: "user",
  PGPASSWORD: "password",
  PGSSLMODE: "sslmode",
  PGSSLROOTCERT: "sslrootcert",
  PGSSLCERT: "sslcert",
  PGSSLKEY: "sslkey",
} as const;

/** A failure with what the provider must know about it. */
class Failure extends Error {
  constructor(
    message: string,
    readonly unreachable = false,
  ) {
    super(message);
  }
}

interface Connection {
  client: Client | null;
  schema: SchemaState | null;
  /** The database answered once; from then on a refused connection is not waited for. */
  contacted: boolean;
  /** Connecting failed for a whole request's time before any contact: later requests try once. */
  gaveUp: boolean;
}

const connections = new Map<string, Connection>();
/** The write under way: its connection, inside a transaction holding the state's row. */
let tx: { client: Client; key: string; conn: Connection; seq: string } | null = null;

function connectionOf(target: PgTarget, journal: boolean): Connection {
  const id = `${target.url}\0${JSON.stringify(target.env)}${journal ? "" : "\0state"}`;
  let c = connections.get(id);
  if (!c) {
    c = { client: null, schema: null, contacted: false, gaveUp: false };
    connections.set(id, c);
  }
  return c;
}

/** The URL as pg's parser reads it, with libpq's meaning of sslmode and its default (require). */
function clientConfig(target: PgTarget, connectMs: number): ClientConfig {
  const url = new URL(target.url);
  for (const [variable, param] of Object.entries(LIBPQ_ENV)) {
    const v = target.env[variable];
    if (v && !url.searchParams.has(param) && !(param === "user" && url.username)) {
      if (param === "password" && url.password) continue;
      url.searchParams.set(param, v);
    }
  }
  // Terraform's pg backend (lib/pq) requires TLS unless told otherwise; so does the journal.
  if (!url.searchParams.has("sslmode")) url.searchParams.set("sslmode", "require");
  url.searchParams.delete("uselibpqcompat");
  const parsed = parse(url.toString(), { useLibpqCompat: true });
  const config: ClientConfig = {
    ...(parsed as ClientConfig),
    port: parsed.port ? Number(parsed.port) : 5432,
    host: parsed.host || "localhost",
    database: parsed.database ?? undefined,
    user: parsed.user || undefined,
    password: parsed.password || undefined,
    application_name: "gpurental-deploy-journal",
    connectionTimeoutMillis: Math.max(1, connectMs),
    query_timeout: target.timeoutMs,
    statement_timeout: target.timeoutMs,
    idle_in_transaction_session_timeout: IDLE_TX_MS,
    keepAlive: true,
  };
  return config;
}

const UNREACHABLE =
  /ECONNREFUSED|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|ECONNRESET|timeout expired|Connection terminated|the database system is (starting up|shutting down)|too many clients|Connection terminated due to connection timeout/i;

/** What a pg error means to the journal's user, without the URL. */
function explain(err: unknown): Failure {
  if (err instanceof Failure) return err;
  const e = err as { message?: string; code?: string };
  const message = e.message ?? String(err);
  switch (e.code) {
    case "28P01":
    case "28000":
      return new Failure(`the server refused the credentials (${message})`);
    case "3D000":
      return new Failure(`${message}: create the database first, or name one that exists`);
    case "42501":
      return new Failure(
        `${message}: the journal's database user needs USAGE on the schema gpurental_journal, SELECT, INSERT, UPDATE and DELETE on its tables and USAGE and UPDATE on its sequence (and CREATE on the database the first time, to create the schema): see docs/ci.md, "The deploy journal in the same database"`,
      );
    case "55P03":
      return new Failure(`the state's journal stayed locked by another run (${message})`);
    case "57014":
      return new Failure(`the database did not answer in time (${message})`);
    case "57P03":
    case "53300":
      return new Failure(message, true);
  }
  return new Failure(message, UNREACHABLE.test(message) || UNREACHABLE.test(e.code ?? ""));
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A connected client with the schema in place. Before the database was first reached, a failing
 * connection is tried again until the request's deadline (a database starting, a network coming
 * up); once it was reached, or once a whole request's time went by without reaching it, once.
 */
async function connect(
  target: PgTarget,
  deadline: number,
  journal: boolean,
): Promise<{ client: Client; conn: Connection }> {
  const conn = connectionOf(target, journal);
  if (conn.client) return { client: conn.client, conn };
  const started = Date.now();
  let attempt = 0;
  let backoff = 100;
  for (;;) {
    attempt++;
    // A database given up on is tried once more per request, briefly: a command of many requests
    // must not wait its whole deadline at each of them.
    const left = Math.max(1, deadline - Date.now());
    const client = new Client(clientConfig(target, conn.gaveUp ? Math.min(left, GAVE_UP_CONNECT_MS) : left));
    // A connection that breaks while idle is dropped; the next request connects again.
    client.on("error", () => {
      if (conn.client === client) conn.client = null;
    });
    try {
      await client.connect();
      // A connection to read a backend's state (journal false) leaves that database as it is.
      if (journal) conn.schema = await ensureSchema(client, conn.schema);
      conn.contacted = true;
      conn.gaveUp = false;
      conn.client = client;
      return { client, conn };
    } catch (err) {
      client.end().catch(() => {});
      const failure = explain(err);
      const retry = failure.unreachable && !conn.contacted && !conn.gaveUp;
      const wait = Math.min(backoff, MAX_BACKOFF_MS);
      if (!retry || Date.now() + wait >= deadline) {
        if (failure.unreachable && !conn.contacted) conn.gaveUp = true;
        const tried =
          attempt > 1
            ? ` (tried ${attempt} times over ${Math.round((Date.now() - started) / 1000)} s without reaching it)`
            : "";
        throw new Failure(`cannot connect: ${failure.message}${tried}`, failure.unreachable);
      }
      await sleep(wait);
      backoff *= 2;
    }
  }
}

/** Runs `fn` on a connection; a connection that broke under it is dropped. */
async function withClient<T>(
  target: PgTarget,
  deadline: number,
  fn: (client: Client, conn: Connection) => Promise<T>,
  journal = true,
): Promise<T> {
  const { client, conn } = await connect(target, deadline, journal);
  try {
    return await fn(client, conn);
  } catch (err) {
    const failure = explain(err);
    if (failure.unreachable) {
      conn.client = null;
      client.end().catch(() => {});
    }
    throw failure;
  }
}

function rowRecords(rows: QueryResultRow[]): JournalRecord[] {
  return rows.map((r) => r.record as JournalRecord);
}

/** The journal of `key` after `since` (all of it when the generation changed); null when there is none. */
async function readJournal(client: Client, key: string, since: Since | null): Promise<ReadAnswer | null> {
  const row = await client.query(
    `SELECT generation::text AS generation, seq::text AS seq, header FROM ${q("journals")} WHERE state_key = $1`,
    [key],
  );
  const j = row.rows[0];
  if (!j) return null;
  const full = !since || since.generation !== j.generation;
  if (!full && since.seq === j.seq) {
    return { generation: j.generation, seq: j.seq, header: j.header, full: false, records: [], seqs: [] };
  }
  const records = await client.query(
    // Ordered by the column, a number: `ORDER BY seq` would name the text alias, and row 10 would
    // come before row 2.
    `SELECT r.seq::text AS seq, r.record FROM ${q("records")} AS r WHERE r.state_key = $1 AND r.seq > $2 ORDER BY r.seq`,
    [key, full ? "0" : since.seq],
  );
  return {
    generation: j.generation,
    seq: j.seq,
    header: j.header,
    full,
    records: rowRecords(records.rows),
    seqs: records.rows.map((r) => r.seq as string),
  };
}

async function handle(req: Request, deadline: number): Promise<unknown> {
  switch (req.kind) {
    case "read":
      return withClient(req.target, deadline, (client) => readJournal(client, req.key, req.since));
    case "begin": {
      if (tx) throw new Failure("a journal write is already under way");
      return withClient(req.target, deadline, async (client, conn) => {
        if (conn.schema?.newer) {
          throw new Failure(
            `the journal's schema is version ${conn.schema.version}, written by a newer provider; use that version`,
          );
        }
        await client.query("BEGIN");
        try {
          await client.query(`SET LOCAL lock_timeout = ${Math.max(1, deadline - Date.now())}`);
          // A record is written before the request it names is sent: its commit must be on disk
          // when it returns, whatever the database's default (synchronous_commit = off would
          // acknowledge it first, and a crash of the server would lose it).
          await client.query("SET LOCAL synchronous_commit = on");
          // The state's row is its lock: writers of one state wait for each other, other states'
          // writers never do. A state written for the first time gets its row here.
          await client.query(
            `INSERT INTO ${q("journals")} (state_key, workspace, backend, header, generation, seq)
             VALUES ($1, $2, $3, $4, nextval('${q("seq")}'), 0) ON CONFLICT (state_key) DO NOTHING`,
            [req.key, req.header.workspace, req.header.backend, JSON.stringify(req.header)],
          );
          await client.query(`SELECT 1 FROM ${q("journals")} WHERE state_key = $1 FOR UPDATE`, [req.key]);
          const read = await readJournal(client, req.key, req.since);
          tx = { client, key: req.key, conn, seq: read?.seq ?? "0" };
          return read;
        } catch (err) {
          await client.query("ROLLBACK").catch(() => {});
          throw err;
        }
      });
    }
    case "commit": {
      const t = tx;
      if (!t) throw new Failure("no journal write is under way");
      tx = null;
      try {
        const { client, key } = t;
        if (req.drop) {
          await client.query(`DELETE FROM ${q("journals")} WHERE state_key = $1`, [key]);
          await client.query("COMMIT");
          return null;
        }
        let generation: string | null = null;
        if (req.compact) {
          await client.query(
            `DELETE FROM ${q("records")} WHERE state_key = $1 AND NOT (seq = ANY($2::bigint[]))`,
            [key, req.keep],
          );
          generation = (await client.query(`SELECT nextval('${q("seq")}')::text AS g`)).rows[0].g;
        }
        const records: JournalRecord[] = req.compact
          ? req.compact.map((e) => ({ op: "entry" as const, ...e }))
          : req.records;
        // Numbered after the state's last record, in order; the state's row lock is held.
        await client.query(
          `INSERT INTO ${q("records")} (state_key, seq, record)
           SELECT $1, $3::bigint + n, r FROM jsonb_array_elements($2::jsonb) WITH ORDINALITY AS t(r, n)`,
          [key, JSON.stringify(records), t.seq],
        );
        const kept = req.compact ? req.keep.length : 0;
        if (kept > 0) {
          // The rows a compaction keeps, untouched, follow the entries in their order.
          await client.query(
            `UPDATE ${q("records")} AS r SET seq = $2::bigint + $3::bigint + k.n
             FROM (SELECT seq, row_number() OVER (ORDER BY seq) AS n FROM ${q("records")}
                   WHERE state_key = $1 AND seq = ANY($4::bigint[])) AS k
             WHERE r.state_key = $1 AND r.seq = k.seq`,
            [key, t.seq, String(records.length), req.keep],
          );
        }
        const updated = await client.query(
          `UPDATE ${q("journals")} SET seq = $3::bigint + $4::bigint, generation = coalesce($2::bigint, generation)
           WHERE state_key = $1 RETURNING generation::text AS generation, seq::text AS seq`,
          [key, generation, t.seq, String(records.length + kept)],
        );
        await client.query("COMMIT");
        return updated.rows[0];
      } catch (err) {
        await t.client.query("ROLLBACK").catch(() => {});
        throw err;
      }
    }
    case "rollback": {
      const t = tx;
      tx = null;
      if (t) await t.client.query("ROLLBACK");
      return null;
    }
    case "referenced":
      return withClient(req.target, deadline, async (client) => {
        const r = await client.query(
          `SELECT DISTINCT record->>'id' AS id FROM ${q("records")} WHERE record ? 'id' AND jsonb_typeof(record->'id') = 'string'`,
        );
        return r.rows.map((row) => row.id as string);
      });
    case "state":
      return withClient(
        req.target,
        deadline,
        async (client): Promise<StateAnswer> => {
          const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;
          // Within what is left of the request's time: connecting took some of it.
          // pg reads a query's own query_timeout (QueryConfig's type leaves it out).
          const query: QueryConfig & { query_timeout: number } = {
            text: `SELECT xmin::text AS version, CASE WHEN xmin::text = $2 THEN NULL ELSE data END AS data
                   FROM ${quote(req.schema)}.${quote(req.table)} WHERE name = $1`,
            values: [req.workspace, req.known ?? ""],
            query_timeout: Math.max(1, deadline - Date.now()),
          };
          const r = await client.query(query);
          const row = r.rows[0];
          return row ? { version: row.version as string, data: (row.data as string | null) ?? null } : null;
        },
        false,
      );
    case "states":
      return withClient(req.target, deadline, async (client) => {
        const r = await client.query(
          `SELECT state_key AS key, workspace, backend FROM ${q("journals")} ORDER BY state_key`,
        );
        return r.rows.map(
          (row): StateRow => ({ key: row.key, workspace: row.workspace, backend: row.backend }),
        );
      });
  }
}

/** A write cut short (its thread gave up waiting) leaves no transaction open: its connection goes. */
function dropTransaction(): void {
  const t = tx;
  tx = null;
  if (!t) return;
  t.conn.client = null;
  t.client.end().catch(() => {});
}

function main(): void {
  const { port, signal } = workerData as WorkerSetup;
  const flag = new Int32Array(signal);
  // Nothing of pg's may reach the provider's stdout, the handshake channel.
  console.log = console.info = console.warn = console.error = console.debug = () => {};
  process.emitWarning = () => {};
  const answer = (a: Answer) => {
    port.postMessage(a);
    Atomics.add(flag, 0, 1);
    Atomics.notify(flag, 0);
  };
  let queue = Promise.resolve();
  port.on("message", (msg: { id: number; deadline: number; req: Request } | { abandon: true }) => {
    queue = queue.then(async () => {
      if ("abandon" in msg) {
        dropTransaction();
        return;
      }
      try {
        const value = await handle(msg.req, msg.deadline);
        answer({ id: msg.id, ok: true, value });
      } catch (err) {
        const f = explain(err);
        if (msg.req.kind === "commit" || msg.req.kind === "begin") dropTransaction();
        answer({ id: msg.id, ok: false, message: f.message, unreachable: f.unreachable });
      }
    });
  });
}

/**
 * Reads a state's journal on the calling thread (the provider's, while it is configured: an async
 * step), schema checked; the connection is closed after.
 */
export async function primeRead(target: PgTarget, key: string): Promise<ReadAnswer | null> {
  try {
    return await withClient(target, Date.now() + target.timeoutMs, (client) =>
      readJournal(client, key, null),
    );
  } finally {
    for (const c of connections.values()) {
      c.client?.end().catch(() => {});
      c.client = null;
    }
  }
}

if (!isMainThread && (workerData as Partial<WorkerSetup> | undefined)?.signal) main();
