import { execFile, execFileSync } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";

// A private PostgreSQL server for a test suite: a cluster in a temp directory, on a free loopback
// port, with its unix socket in the same directory, stopped and removed at the end (and, should
// the process exit first, on exit). PostgreSQL refuses to run as root, so under root the server
// programs run as the `postgres` user through `runuser`, on a directory owned by that user.
// Nothing of the machine's own clusters (/var/run/postgresql, port 5432) is used.

/** The user the server runs as when the tests run as root. */
const SERVER_USER = "postgres";
/** The superuser the cluster is created with; trusted on loopback only. */
export const PG_USER = "tf";
/** The database created for Terraform state. */
export const PG_DATABASE = "tfstate";

/** Where the server programs are, or why there are none. */
export type PostgresInstall =
  | { binDir: string; missing?: undefined }
  | { binDir?: undefined; missing: string };

const PROGRAMS = ["initdb", "pg_ctl", "createdb"] as const;

function hasPrograms(dir: string): boolean {
  return PROGRAMS.every((p) => existsSync(join(dir, p)));
}

/**
 * Finds PostgreSQL's server programs: $GPURENTAL_PG_BINDIR, else the newest
 * /usr/lib/postgresql/<major>/bin (Debian and Ubuntu), else initdb on PATH.
 */
export function findPostgres(env: NodeJS.ProcessEnv = process.env): PostgresInstall {
  if (env.GPURENTAL_PG_BINDIR) {
    return hasPrograms(env.GPURENTAL_PG_BINDIR)
      ? { binDir: env.GPURENTAL_PG_BINDIR }
      : { missing: `GPURENTAL_PG_BINDIR=${env.GPURENTAL_PG_BINDIR} has no ${PROGRAMS.join(", ")}` };
  }
  const debian = "/usr/lib/postgresql";
  if (existsSync(debian)) {
    const majors = readdirSync(debian)
      .filter((v) => /^\d+$/.test(v) && hasPrograms(join(debian, v, "bin")))
      .sort((a, b) => Number(b) - Number(a));
    if (majors[0]) return { binDir: join(debian, majors[0], "bin") };
  }
  for (const dir of (env.PATH ?? "").split(delimiter)) {
    if (dir && hasPrograms(dir)) return { binDir: dir };
  }
  return {
    missing: `no PostgreSQL server programs (${PROGRAMS.join(", ")}) in /usr/lib/postgresql/*/bin or on PATH; install Debian's postgresql package or set GPURENTAL_PG_BINDIR`,
  };
}

/** Whether a missing server fails the suite instead of skipping it (CI sets GPURENTAL_REQUIRE_POSTGRES=1). */
export function postgresRequired(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.GPURENTAL_REQUIRE_POSTGRES === "1" || env.GPURENTAL_REQUIRE_POSTGRES === "true";
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** A running private server. */
export interface PostgresServer {
  /** The temp directory holding the cluster, its socket and its log. */
  readonly dir: string;
  /** The loopback TCP port. */
  readonly port: number;
  /** A libpq URL for `PG_CONN_STR` (no password: the cluster trusts loopback). */
  connStr(database?: string): string;
  /** Runs one SQL statement with psql and returns its unaligned, tuples-only output. */
  query(sql: string, database?: string): Promise<string>;
  /** Stops the server, keeping its data: a database that goes down under its clients. */
  halt(): Promise<void>;
  /** Starts a halted server again on the same port. */
  resume(): Promise<void>;
  /** Stops the server and removes its directory; safe to call twice. */
  stop(): Promise<void>;
}

/** Starts a private PostgreSQL with a `tfstate` database; see the file comment. */
export async function startPostgres(install: { binDir: string }): Promise<PostgresServer> {
  const asRoot = process.getuid?.() === 0;
  const bin = (name: string) => join(install.binDir, name);
  // As root, every server program runs as the postgres user; psql, a plain client, does not need to.
  const command = (name: string, args: string[]): [string, string[]] =>
    asRoot ? ["runuser", ["-u", SERVER_USER, "--", bin(name), ...args]] : [bin(name), args];
  const run = (name: string, args: string[]): Promise<string> =>
    new Promise((resolve, reject) => {
      const [file, argv] = command(name, args);
      execFile(file, argv, { env: serverEnv() }, (err, stdout, stderr) => {
        if (err) reject(new Error(`${name} ${args.join(" ")} failed: ${err.message}\n${stdout}${stderr}`));
        else resolve(stdout);
      });
    });

  const dir = mkdtempSync(join(tmpdir(), "gpurental-pg-"));
  const data = join(dir, "data");
  const log = join(dir, "server.log");
  let port = 0;
  let options = "";
  let stopped = false;
  const stopSync = () => {
    if (stopped) return;
    stopped = true;
    try {
      const [file, argv] = command("pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"]);
      if (existsSync(join(data, "postmaster.pid"))) execFileSync(file, argv, { stdio: "ignore" });
    } catch {
      // The server is gone already; the directory is removed below either way.
    }
    rmSync(dir, { recursive: true, force: true });
  };
  // Jest runs afterAll even when tests fail; this covers a process that ends before it.
  process.once("exit", stopSync);

  try {
    if (asRoot) {
      const [uid, gid] = ["-u", "-g"].map((flag) =>
        Number(execFileSync("id", [flag, SERVER_USER], { encoding: "utf8" }).trim()),
      ) as [number, number];
      chownSync(dir, uid, gid);
      try {
        execFileSync("runuser", ["-u", SERVER_USER, "--", "test", "-w", dir], { stdio: "ignore" });
      } catch {
        throw new Error(
          `PostgreSQL refuses to run as root, and the ${SERVER_USER} user cannot write ${dir}: point TMPDIR at a directory it can reach`,
        );
      }
    }
    await run("initdb", [
      "-D",
      data,
      "-A",
      "trust",
      "-U",
      PG_USER,
      "-E",
      "UTF8",
      "--no-locale",
      "--no-sync",
      "--no-instructions",
    ]);
    // A port found free can be taken before the server binds it: try a few.
    for (let attempt = 1; ; attempt++) {
      port = await freePort();
      options = [
        `-p ${port}`,
        `-k ${dir}`,
        "-c listen_addresses=127.0.0.1",
        // A throwaway cluster needs no durability (on this machine's disks it made no measurable
        // difference either way: docs/development.md, "Tests").
        "-c fsync=off",
        "-c synchronous_commit=off",
        "-c full_page_writes=off",
      ].join(" ");
      try {
        await run("pg_ctl", ["-D", data, "-o", options, "-l", log, "-w", "-t", "60", "start"]);
        break;
      } catch (err) {
        if (attempt === 3) {
          const serverLog = existsSync(log) ? readFileSync(log, "utf8") : "";
          throw new Error(`${(err as Error).message}\n--- server log\n${serverLog}`);
        }
      }
    }
    await run("createdb", ["-h", "127.0.0.1", "-p", String(port), "-U", PG_USER, PG_DATABASE]);
  } catch (err) {
    stopSync();
    process.removeListener("exit", stopSync);
    throw err;
  }

  const connStr = (database = PG_DATABASE) =>
    `postgres://${PG_USER}@127.0.0.1:${port}/${database}?sslmode=disable`;
  return {
    dir,
    port,
    connStr,
    query: (sql, database) =>
      new Promise((resolve, reject) => {
        execFile(
          existsSync(bin("psql")) ? bin("psql") : "psql",
          ["-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d", connStr(database), "-c", sql],
          { env: serverEnv() },
          (err, stdout, stderr) => {
            if (err) reject(new Error(`psql -c ${JSON.stringify(sql)} failed: ${stderr || err.message}`));
            else resolve(stdout.trim());
          },
        );
      }),
    halt: async () => {
      await run("pg_ctl", ["-D", data, "-m", "fast", "-w", "stop"]);
    },
    resume: async () => {
      await run("pg_ctl", ["-D", data, "-o", options, "-l", log, "-w", "-t", "60", "start"]);
    },
    stop: async () => {
      if (stopped) return;
      try {
        await run("pg_ctl", ["-D", data, "-m", "fast", "-w", "stop"]);
      } finally {
        stopSync();
        process.removeListener("exit", stopSync);
      }
    },
  };
}

/** The environment of the server programs: the caller's, without libpq settings meant for other servers. */
function serverEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (!/^PG/.test(k)) env[k] = v;
  }
  return env;
}
