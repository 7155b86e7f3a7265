/**
 * Where a working directory's deploy journal lives, and which state it belongs to. Terraform runs
 * the provider with the working directory as its current directory and does not tell it the
 * workspace or the backend, but both can be read from what `terraform init` and `terraform
 * workspace select` leave behind: `TF_WORKSPACE` or the data directory's `environment` file, and the
 * data directory's `terraform.tfstate` (the backend configuration, not the state). Each state gets
 * its own journal file, so two workspaces (or two backends configured in turn) with identical
 * configurations never adopt each other's instances.
 */
import { createHash } from "node:crypto";
import { accessSync, constants, readFileSync, statSync } from "node:fs";
import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import { libpqEnv, parseJournalUrl } from "./pg/url";
import type { StateDb } from "./saved-state";

/** The environment variable that moves the journal directory. */
export const JOURNAL_DIR_ENV = "GPURENTAL_JOURNAL_DIR";

/**
 * Why the journal directory `dir` (absolute) could not be used, or undefined when it exists as a
 * writable directory or could be created: its deepest existing part must be a directory this
 * process can write to. Creates nothing, so a plan can check what only an apply would write.
 */
export function journalDirProblem(dir: string): string | undefined {
  let at = dir;
  for (;;) {
    let isDir: boolean;
    try {
      isDir = statSync(at).isDirectory();
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      // Missing, or under something that is no directory (/dev/null/j): look further up.
      if ((code === "ENOENT" || code === "ENOTDIR") && dirname(at) !== at) {
        at = dirname(at);
        continue;
      }
      return `${at}: ${code ?? (err as Error).message}`;
    }
    if (!isDir) return `${at} is not a directory`;
    try {
      accessSync(at, constants.W_OK | constants.X_OK);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? "";
      return `${at} cannot be written${code === "EROFS" ? " (a read-only file system)" : code ? ` (${code})` : ""}`;
    }
    return undefined;
  }
}

/** The journal file of one state, and what it was derived from. */
export interface JournalLocation {
  /** The directory holding the journals of every state of the working directory. */
  dir: string;
  /** The journal file of this state. */
  file: string;
  /** The Terraform workspace. */
  workspace: string;
  /** The backend type (`local` when none is configured). */
  backend: string;
  /**
   * The state file of a local backend, which the provider may read to see what Terraform saved;
   * null for any other backend. Absent in locations built by hand (tests): treated as null.
   */
  stateFile?: string | null;
  /**
   * The command keeps its state elsewhere than the local backend's file (`-state`, `-state-out`:
   * ParentCommand's `stateElsewhere`). What that file holds is still never adopted, but the file
   * tells nothing of the command's own state: it settles nothing and opens no entry again (the
   * journal, shared by every command of the directory, never compares one file's lineage with
   * another's marks), and a `-target` plan's missing claims prove nothing.
   */
  stateElsewhere?: boolean;
  /**
   * The state of a `pg` backend whose `conn_str` is a URL, which the provider may read in its
   * database as it reads a local state file; absent for any other backend (and in locations built
   * by hand).
   */
  stateDb?: StateDb;
  /**
   * The journal file this state had under the key of provider versions that hashed the backend's
   * whole configuration, credentials included, when that key differs from today's: what it holds
   * is moved into this one at its first use (DeployJournal's `legacy`). Absent otherwise.
   */
  legacyFile?: string;
}

/** What {@link locateJournal} reads besides the file system. */
export interface LocateOptions {
  /** The provider's `journal_dir` argument, when set. */
  configured?: string | undefined;
  env?: NodeJS.ProcessEnv;
  /** Terraform's working directory; default the process's. */
  cwd?: string;
  /** The command keeps the state elsewhere than its local backend's file (JournalLocation's). */
  stateElsewhere?: boolean;
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
}

/** JSON with object keys sorted, so equal configurations hash equally. */
export function stableJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stableJson).join(",")}]`;
  if (v !== null && typeof v === "object") {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o)
      .sort()
      .filter((k) => o[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${stableJson(o[k])}`)
      .join(",")}}`;
  }
  return JSON.stringify(v) ?? "null";
}

/**
 * A backend setting that holds a credential or who connects, not where the state is: it changes
 * from one CI job to the next (an http backend's `password=$CI_JOB_TOKEN`, an s3 session `token`,
 * a database user and password a secret store rotates) while the state stays where it is. (The
 * kubernetes backend's `secret_suffix` names where the state is.)
 */
const CREDENTIAL_SETTING =
  /password|passwd|token|secret(?!_suffix)|access_key|private_key|client_key|client_certificate|credentials|sas_|oidc|jwt|assume_role|auth|^user(name)?$/i;

/** A URL: its scheme, user (with a password or not), host and path. */
const URL_PARTS = /^([a-z][a-z0-9+.-]*:\/\/)(?:([^@/?#:]*)(?::[^@/?#]*)?@)?([^/?#]*)(\/[^?#]*)?/i;
/**
 * libpq's settings that say who connects and how it proves it, not where the state is: the user,
 * the passwords, and the files of a client certificate, its key, the server's CA and revocations,
 * and the password file. A CI job often gets those files at a path of its own
 * (`…/secretFiles/<uuid>/client.key`), so the key of a state must not follow them.
 */
const LIBPQ_CREDENTIALS = "password|sslpassword|sslcert|sslkey|sslrootcert|sslcrl|sslcrldir|passfile";
/** The name of a URL's query parameter that is a credential or names its file. */
const URL_CREDENTIAL_NAME = new RegExp(`^(?:${LIBPQ_CREDENTIALS})$`);
/** The credential parameters the version before took out of a URL, leaving their separator. */
const URL_CREDENTIAL_PARAM_BEFORE = /([?&])(password|sslpassword|user)=[^&#]*/gi;
/** libpq's key/value settings that are credentials; a value is quoted or runs to a space. */
const LIBPQ_SETTING = (name: string) =>
  new RegExp(`(^|\\s)${name}\\s*=\\s*('(?:[^'\\\\]|\\\\.)*'|\\S*)`, "gi");

/**
 * A connection string or address without its credentials: the password always, and the user
 * where it also names the database (where it does not, a PostgreSQL server takes the user's name
 * for the database, so the user says where the state is). Unchanged when it holds neither.
 */
function connectionWithoutCredentials(text: string, rule: KeyRule): string {
  const url = URL_PARTS.exec(text);
  if (url) {
    const [whole, scheme, user, host, path] = url;
    const namesDatabase = path !== undefined && path.length > 1;
    const kept = `${scheme}${user !== undefined && !namesDatabase ? `${user}@` : ""}${host}${path ?? ""}`;
    const rest = text.slice(whole.length);
    if (rule === "before-files") {
      return (kept + rest).replace(URL_CREDENTIAL_PARAM_BEFORE, (m, sep: string, name: string) =>
        name.toLowerCase() === "user" && !namesDatabase ? m : sep,
      );
    }
    // Each credential parameter goes whole, its `&` with it, so that which of them a job sets does
    // not count either.
    const hash = rest.indexOf("#");
    const query = hash < 0 ? rest : rest.slice(0, hash);
    const params = query
      .replace(/^\?/, "")
      .split("&")
      .filter((p) => {
        const name = p.split("=")[0]!.toLowerCase();
        return p !== "" && !URL_CREDENTIAL_NAME.test(name) && !(name === "user" && namesDatabase);
      });
    return `${kept}${params.length > 0 ? `?${params.join("&")}` : ""}${hash < 0 ? "" : rest.slice(hash)}`;
  }
  const namesDatabase = /(^|\s)dbname\s*=/i.test(text);
  if (rule === "before-files") {
    const out = text.replace(LIBPQ_SETTING("(?:ssl)?password"), "$1");
    return namesDatabase ? out.replace(LIBPQ_SETTING("user"), "$1") : out;
  }
  const out = text.replace(LIBPQ_SETTING(`(?:${LIBPQ_CREDENTIALS})`), "$1");
  // The spaces a setting leaves count no more than the setting.
  return (namesDatabase ? out.replace(LIBPQ_SETTING("user"), "$1") : out).trim().replace(/\s+/g, " ");
}

/**
 * Which rule a key is made by: today's, or the one before it, which left the files of a client
 * certificate in the key (a journal kept under that key is moved into today's at its first use).
 */
type KeyRule = "today" | "before-files";

/**
 * A backend's settings as they locate the state: a credential's text becomes null, as an unset
 * setting is recorded (Terraform records every setting of the backend, unset ones as null, so a
 * configuration without credentials locates exactly as it always hashed), and a connection string
 * or address loses its user information.
 */
function locating(value: unknown, rule: KeyRule, name = ""): unknown {
  if (typeof value === "string") {
    if (CREDENTIAL_SETTING.test(name)) return null;
    return name === "conn_str" || /^[a-z][a-z0-9+.-]*:\/\//i.test(value)
      ? connectionWithoutCredentials(value, rule)
      : value;
  }
  if (Array.isArray(value)) return value.map((v) => locating(v, rule, name));
  if (value === null || typeof value !== "object") return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    // A block of credentials (s3's assume_role) is nulled whole, as an unset one is recorded.
    out[k] = CREDENTIAL_SETTING.test(k) && v !== null && typeof v === "object" ? null : locating(v, rule, k);
  }
  return out;
}

/**
 * Settings a backend reads from the environment when its block leaves them out, by backend type:
 * two stacks configured only that way differ only there.
 */
const SETTINGS_FROM_ENV: Readonly<Record<string, readonly (readonly [setting: string, variable: string])[]>> =
  {
    pg: [
      ["conn_str", "PG_CONN_STR"],
      ["schema_name", "PG_SCHEMA_NAME"],
    ],
    http: [["address", "TF_HTTP_ADDRESS"]],
    consul: [["address", "CONSUL_HTTP_ADDR"]],
    cloud: [
      ["hostname", "TF_CLOUD_HOSTNAME"],
      ["organization", "TF_CLOUD_ORGANIZATION"],
    ],
  };

/**
 * Where a backend keeps the state: its settings without credentials, with those it takes from the
 * environment filled in. A configuration with neither hashes as it always did.
 */
function stateLocation(type: string, config: unknown, env: NodeJS.ProcessEnv, rule: KeyRule): unknown {
  const place = locating(config, rule);
  const fromEnv = (SETTINGS_FROM_ENV[type] ?? []).filter(([setting, variable]) => {
    const given = (place as Record<string, unknown> | null)?.[setting];
    return (given === undefined || given === null || given === "") && env[variable];
  });
  if (fromEnv.length === 0) return place;
  const filled: Record<string, unknown> = { ...((place as Record<string, unknown> | null) ?? {}) };
  for (const [setting, variable] of fromEnv) filled[setting] = locating(env[variable]!, rule, setting);
  return filled;
}

/**
 * The identity of the state the working directory uses: for the local backend the absolute path
 * of its state file, for any other backend its type and where it keeps the state
 * ({@link stateLocation}); `legacy` is the identity older versions hashed (the whole configuration)
 * when it differs.
 */
function backendIdentity(
  dataDir: string,
  cwd: string,
  workspace: string,
  env: NodeJS.ProcessEnv,
): { type: string; identity: string; legacy?: string; stateFile: string | null; stateDb?: StateDb } {
  let backend: { type?: unknown; config?: unknown } | undefined;
  try {
    const meta = JSON.parse(readText(join(dataDir, "terraform.tfstate")) ?? "null") as {
      backend?: { type?: unknown; config?: unknown };
    } | null;
    backend = meta?.backend;
  } catch {
    backend = undefined;
  }
  const type = typeof backend?.type === "string" ? backend.type : "local";
  if (type === "local") {
    const cfg = (backend?.config ?? {}) as { path?: unknown; workspace_dir?: unknown };
    const path = typeof cfg.path === "string" && cfg.path ? cfg.path : "terraform.tfstate";
    const wsDir = typeof cfg.workspace_dir === "string" && cfg.workspace_dir ? cfg.workspace_dir : "";
    // The default workspace's state is at `path`; another workspace's under the workspace directory.
    const stateFile =
      workspace === "default"
        ? resolve(cwd, path)
        : resolve(cwd, wsDir || "terraform.tfstate.d", workspace, basename(path));
    return {
      type,
      identity: `local:${resolve(cwd, path)}:${wsDir ? resolve(cwd, wsDir) : ""}`,
      stateFile,
    };
  }
  const config = backend?.config ?? null;
  const identity = `${type}:${stableJson(stateLocation(type, config, env, "today"))}`;
  // The key the version before gave this state, else the one before it (the whole configuration,
  // credentials included): a journal there was moved to the one before at its first use, so only
  // a run of an older version still writes there.
  const before = `${type}:${stableJson(stateLocation(type, config, env, "before-files"))}`;
  const whole = `${type}:${stableJson(config)}`;
  const legacy = before !== identity ? before : whole;
  const stateDb = type === "pg" ? pgStateDb(config, workspace, env) : undefined;
  return {
    type,
    identity,
    ...(legacy === identity ? {} : { legacy }),
    stateFile: null,
    ...(stateDb ? { stateDb } : {}),
  };
}

/**
 * How long a read of a `pg` backend's state may take, connecting included (the read at Shutdown
 * has less: DeployJournal.settleHanded).
 */
const STATE_DB_TIMEOUT_MS = 5_000;

/**
 * Where a `pg` backend keeps the state of `workspace`, as the backend reads its settings (the
 * block's, else PG_CONN_STR, PG_SCHEMA_NAME and OpenTofu's PG_TABLE_NAME; the table
 * `terraform_remote_state.states` by default; PGPORT when the URL has no port); undefined when its
 * `conn_str` is not a postgres:// URL (a key/value string is not read).
 */
function pgStateDb(config: unknown, workspace: string, env: NodeJS.ProcessEnv): StateDb | undefined {
  const cfg = (config ?? {}) as { conn_str?: unknown; schema_name?: unknown; table_name?: unknown };
  const setting = (v: unknown) => (typeof v === "string" && v ? v : undefined);
  const connStr = setting(cfg.conn_str) ?? env.PG_CONN_STR;
  if (!connStr) return undefined;
  const schema = setting(cfg.schema_name) ?? (env.PG_SCHEMA_NAME || "terraform_remote_state");
  const table = setting(cfg.table_name) ?? (env.PG_TABLE_NAME || "states");
  let url: URL;
  try {
    url = new URL(parseJournalUrl(connStr, "the pg backend's conn_str").value);
  } catch {
    return undefined;
  }
  // libpq takes the port from PGPORT when the URL has none, as Terraform's backend does.
  if (!url.port && env.PGPORT) {
    if (!/^\d{1,5}$/.test(env.PGPORT)) return undefined;
    url.port = env.PGPORT;
  }
  const target = { url: url.toString(), env: libpqEnv(env), timeoutMs: STATE_DB_TIMEOUT_MS };
  return { target, schema, table, workspace };
}

/** A workspace name as a file name part (Terraform allows letters, digits, `-`, `_` and `.`). */
function safeName(s: string): string {
  return s.replace(/[^A-Za-z0-9_.-]/g, "_").slice(0, 64) || "default";
}

/**
 * Finds the journal of the state this provider process works on. The directory is the `journal_dir`
 * argument, else `GPURENTAL_JOURNAL_DIR`, else `gpurental-journal` in Terraform's data directory
 * (`TF_DATA_DIR`, default `.terraform`); a relative path is taken from the working directory.
 */
export function locateJournal(opts: LocateOptions = {}): JournalLocation {
  const env = opts.env ?? process.env;
  const cwd = opts.cwd ?? process.cwd();
  const dataDir = resolve(cwd, env.TF_DATA_DIR || ".terraform");
  const given = opts.configured || env[JOURNAL_DIR_ENV] || undefined;
  const dir = given ? (isAbsolute(given) ? given : resolve(cwd, given)) : join(dataDir, "gpurental-journal");
  const workspace = env.TF_WORKSPACE || readText(join(dataDir, "environment"))?.trim() || "default";
  const { type, identity, legacy, stateFile, stateDb } = backendIdentity(dataDir, cwd, workspace, env);
  const fileOf = (id: string) =>
    join(
      dir,
      `${safeName(workspace)}-${createHash("sha256").update(`${workspace}\0${id}`).digest("hex").slice(0, 12)}.jsonl`,
    );
  const file = fileOf(identity);
  const legacyFile = legacy === undefined ? undefined : fileOf(legacy);
  return {
    dir,
    file,
    workspace,
    backend: type,
    stateFile,
    ...(opts.stateElsewhere ? { stateElsewhere: true } : {}),
    ...(stateDb ? { stateDb } : {}),
    ...(legacyFile ? { legacyFile } : {}),
  };
}
