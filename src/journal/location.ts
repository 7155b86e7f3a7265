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
}

/** What {@link locateJournal} reads besides the file system. */
export interface LocateOptions {
  /** The provider's `journal_dir` argument, when set. */
  configured?: string | undefined;
  env?: NodeJS.ProcessEnv;
  /** Terraform's working directory; default the process's. */
  cwd?: string;
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
 * The identity of the state the working directory uses: for the local backend the absolute path
 * of its state file, for any other backend its type and configuration (hashed: a configuration may
 * hold credentials, such as a `pg` connection string).
 */
function backendIdentity(
  dataDir: string,
  cwd: string,
  workspace: string,
): { type: string; identity: string; stateFile: string | null } {
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
  return { type, identity: `${type}:${stableJson(backend?.config ?? null)}`, stateFile: null };
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
  const { type, identity, stateFile } = backendIdentity(dataDir, cwd, workspace);
  const key = createHash("sha256").update(`${workspace}\0${identity}`).digest("hex").slice(0, 12);
  return {
    dir,
    file: join(dir, `${safeName(workspace)}-${key}.jsonl`),
    workspace,
    backend: type,
    stateFile,
  };
}
