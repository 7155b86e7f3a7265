import { createHash } from "node:crypto";
import { lstatSync, mkdirSync, realpathSync, type Stats, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileContentId } from "../executable/bundle-id";

// A resident provider process: Terraform starts the provider executable two to five times per
// command, and each launch pays for Node's start, for loading grpc-js and the provider, and for code
// that runs for the first time. With this mode on, a launch is a small shim: it asks a provider
// process that stays up between launches (one per user, build and node) for a session, prints that
// session's handshake line, and Terraform talks gRPC to the resident process directly. Everything
// that makes one launch one provider (its environment, working directory, parent command, run
// identity in the journal, logs on its own stderr, the host's certificate) is the session's, never
// the resident process's.
//
// It is on by default where a person runs Terraform on Linux, and off in automation (a CI system,
// or TF_IN_AUTOMATION), where a process that outlives the command is nobody's to watch and most
// runners start afresh anyway; GPURENTAL_PROVIDER_RESIDENT=on or off decides it either way.
//
// The shim and the resident process speak JSON lines over a unix socket in a directory only the
// user can enter. This module holds what both sides share: the settings, the socket's place, and
// the messages.

/** "on", "off", or "auto" (the default): on for a person's commands on Linux, off in automation. */
export const RESIDENT_ENV = "GPURENTAL_PROVIDER_RESIDENT";
/** Seconds the resident process stays up with no session, 5 to 3600; default 300. */
export const RESIDENT_IDLE_ENV = "GPURENTAL_PROVIDER_RESIDENT_IDLE_SECONDS";
/** Where the resident processes' sockets live; default `gpurental-provider-run-<uid>` in the temp dir. */
export const RESIDENT_DIR_ENV = "GPURENTAL_PROVIDER_RESIDENT_DIR";

const DEFAULT_IDLE_SECONDS = 300;
const MIN_IDLE_SECONDS = 5;
const MAX_IDLE_SECONDS = 3600;
/** The longest message line either side accepts (a session's environment included). */
export const MAX_MESSAGE_BYTES = 1024 * 1024;
/** The longest unix socket path every supported system binds whole. */
const MAX_SOCKET_PATH_BYTES = 103;

/** A setting of the resident mode that cannot be used; the message names the variable and value. */
export class ResidentSettingError extends Error {}

/** Where a launch runs, as far as the default of the resident mode goes. */
export interface LaunchHost {
  /** Run by automation: a CI system, or TF_IN_AUTOMATION set (see inAutomation); asked only by default. */
  automated: () => boolean;
  platform: NodeJS.Platform;
}

/** The resident mode's settings, read from the launch's environment. */
export interface ResidentSettings {
  /** Whether this launch asks the resident process for a session. */
  enabled: boolean;
  /** Set by the variable ("on", "off") or left to the default ("auto"). */
  mode: "on" | "off" | "auto";
  /** Why it is on or off, for the launch's debug log. */
  reason: string;
  idleMs: number;
}

/**
 * Whether the launch runs in automation: TF_IN_AUTOMATION set to anything (Terraform's own
 * variable for wrappers that run it unattended), or a CI system ci-info recognises (CI, and the
 * variables of the systems that do not set it). Reads this process's environment.
 */
export function inAutomation(env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.TF_IN_AUTOMATION) return true;
  // Loaded here: a launch with the mode set on or off never needs it.
  return (require("ci-info") as typeof import("ci-info")).isCI;
}

/** Reads the resident mode's settings; throws ResidentSettingError on a value it cannot use. */
export function residentSettings(env: NodeJS.ProcessEnv, host: LaunchHost): ResidentSettings {
  const raw = (env[RESIDENT_ENV] ?? "").trim().toLowerCase();
  let mode: ResidentSettings["mode"];
  if (raw === "off" || raw === "0" || raw === "false") mode = "off";
  else if (raw === "on" || raw === "1" || raw === "true") mode = "on";
  else if (raw === "" || raw === "auto") mode = "auto";
  else
    throw new ResidentSettingError(
      `${RESIDENT_ENV} must be "on", "off" or "auto" (or 1/0, true/false), got ${JSON.stringify(env[RESIDENT_ENV])}`,
    );
  const idleMs = residentIdleMs(env);
  // Unix sockets and detached processes as the mode uses them: not on Windows.
  if (host.platform === "win32") return { enabled: false, mode, reason: "not available on Windows", idleMs };
  if (mode !== "auto") return { enabled: mode === "on", mode, reason: `${RESIDENT_ENV}=${mode}`, idleMs };
  if (host.automated())
    return { enabled: false, mode, reason: "off by default in automation (CI or TF_IN_AUTOMATION)", idleMs };
  // Tested on Linux; elsewhere it is there to be turned on.
  if (host.platform !== "linux")
    return { enabled: false, mode, reason: `off by default on ${host.platform}`, idleMs };
  return { enabled: true, mode, reason: "on by default outside automation", idleMs };
}

/** How long the resident process stays up without a session; throws ResidentSettingError on a bad value. */
export function residentIdleMs(env: NodeJS.ProcessEnv): number {
  const idle = (env[RESIDENT_IDLE_ENV] ?? "").trim();
  if (idle === "") return DEFAULT_IDLE_SECONDS * 1000;
  const seconds = Number(idle);
  if (!/^\d+$/.test(idle) || seconds < MIN_IDLE_SECONDS || seconds > MAX_IDLE_SECONDS)
    throw new ResidentSettingError(
      `${RESIDENT_IDLE_ENV} must be a whole number of seconds from ${MIN_IDLE_SECONDS} to ${MAX_IDLE_SECONDS}, got ${JSON.stringify(env[RESIDENT_IDLE_ENV])}`,
    );
  return seconds * 1000;
}

/** The directory of the resident processes' sockets (not created). */
export function residentDir(env: NodeJS.ProcessEnv): string {
  if (env[RESIDENT_DIR_ENV]) return env[RESIDENT_DIR_ENV];
  const uid = typeof process.getuid === "function" ? process.getuid() : "user";
  return join(tmpdir(), `gpurental-provider-run-${uid}`);
}

/**
 * Creates `dir` if needed and says whether only this user can use it: a real directory (not a
 * link), owned by the user, that nobody else can enter, and whose every ancestor nobody else can
 * change (see trustedAncestors). Sessions carry the launch's environment, credentials included, so
 * a socket anyone else could reach or replace is never used: a user who could rename the directory
 * or one of its parents could swap in a directory of their own between this check and the connect.
 */
export function privateRunDir(dir: string): boolean {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const st = lstatSync(dir);
    const ownUid = typeof process.getuid === "function" ? process.getuid() : st.uid;
    if (!(st.isDirectory() && st.uid === ownUid && (st.mode & 0o077) === 0)) return false;
    return trustedAncestors(resolve(dir), ownUid);
  } catch {
    return false;
  }
}

/**
 * Whether nobody but `uid` and root can change what the path of `dir`'s parent leads to: every
 * directory on the way from `/` is owned by the user or root and writable by nobody else, unless
 * sticky (as /tmp is: others cannot rename or remove what they do not own there). A symbolic link
 * on the way (macOS's /tmp) must be the user's or root's, and the path it leads to is checked the
 * same way.
 */
export function trustedAncestors(dir: string, uid: number, depth = 0): boolean {
  if (depth > 8) return false;
  const parts = dirname(dir).split("/").filter(Boolean);
  let at = "/";
  if (!trustedDirectory(lstatSync(at), uid)) return false;
  for (const part of parts) {
    const next = join(at, part);
    const st = lstatSync(next);
    if (st.isSymbolicLink()) {
      if (st.uid !== uid && st.uid !== 0) return false;
      const target = realpathSync(next);
      // The target itself, and every directory above it.
      if (!trustedDirectory(lstatSync(target), uid)) return false;
      if (!trustedAncestors(target, uid, depth + 1)) return false;
      at = target;
      continue;
    }
    if (!trustedDirectory(st, uid)) return false;
    at = next;
  }
  return true;
}

function trustedDirectory(st: Stats, uid: number): boolean {
  const ownedWell = st.uid === uid || st.uid === 0;
  const othersWrite = (st.mode & 0o022) !== 0;
  const sticky = (st.mode & 0o1000) !== 0;
  return st.isDirectory() && ownedWell && (!othersWrite || sticky);
}

/**
 * The control socket of the resident process for this build run by this node: one per bundle
 * location and build (the bundles' content ids, the schema's content), node binary and version, and
 * NODE_ variables, so that a rebuilt or reinstalled provider never talks to a process running older
 * code, even where the upgrade left files of the same size, time and inode. Undefined when the path
 * would be too long to bind.
 */
export function residentSocket(dir: string, bundleDir: string, env: NodeJS.ProcessEnv): string | undefined {
  const hash = createHash("sha256");
  hash.update(`${bundleDir}\0${process.execPath}\0${process.version}\0${process.execArgv.join(" ")}\0`);
  // NODE_OPTIONS, NODE_EXTRA_CA_CERTS and the like take effect when node starts: the resident
  // process runs with those of the launch that started it, so other values need another process.
  for (const name of Object.keys(env)
    .filter((k) => k.startsWith("NODE_"))
    .sort())
    hash.update(`${name}=${env[name]}\0`);
  // The standalone executable carries its bundles inside: the executable itself is the build, and
  // a new one is installed in a directory of its version.
  try {
    const st = statSync(process.execPath);
    hash.update(`${process.execPath}:${st.size}:${Math.trunc(st.mtimeMs)}:${st.ino}\0`);
  } catch {
    hash.update("node:none\0");
  }
  for (const name of [
    "provider-launcher.js",
    "provider.js",
    "provider-transport.js",
    "provider-impl.js",
    "provider-journal-pg.js",
    "provider-schema.pb",
  ]) {
    try {
      hash.update(`${name}:${fileContentId(join(bundleDir, name))}\0`);
    } catch {
      hash.update(`${name}:none\0`);
    }
  }
  const socket = join(dir, `${hash.digest("hex").slice(0, 16)}.sock`);
  return Buffer.byteLength(socket) > MAX_SOCKET_PATH_BYTES ? undefined : socket;
}

/** What a launch asks the resident process for. */
export interface SessionRequest {
  t: "session";
  /** The launch's environment: the host's certificate, TF_LOG, the provider's variables. */
  env: Record<string, string>;
  /** The launch's working directory (Terraform's). */
  cwd: string;
  /** The launch's pid: the journal's run is this process, alive as long as Terraform's session. */
  pid: number;
  /** The launch's parent: the terraform command, whose arguments the journal reads. */
  ppid: number;
}

/** Messages of the resident process to a launch. */
export type SessionMessage =
  | { t: "ready"; handshake: string }
  | { t: "log"; line: string }
  | { t: "exit"; code: number }
  | { t: "error"; message: string };

/**
 * What `gpurental provider resident` asks: the process's state, or that it stop. Only the user can
 * reach the socket (its directory is private), and neither request carries or answers a secret.
 */
export type ControlRequest = SessionRequest | { t: "status" } | { t: "stop" };

/** The answer to a status request. */
export interface ResidentStatus {
  t: "status";
  pid: number;
  /** When the process started (ISO 8601). */
  started_at: string;
  /** Sessions open now: Terraform commands' provider launches it serves. */
  sessions: number;
  /** When it exits if no session starts before (ISO 8601); null while it serves a session. */
  idle_exit_at: string | null;
  /** The provider executable it runs, and the node that runs it. */
  executable: string;
  node: string;
  /**
   * The terraform process whose launches a command's provider process serves (it exits with it);
   * null or absent (older versions) for a resident process, which serves every command.
   */
  serves?: number | null;
}

/** The answer to a stop request. */
export interface ResidentStopping {
  t: "stopping";
  pid: number;
  /** Sessions it still serves before it exits; 0 when it exits now. */
  sessions: number;
}

/** Checks a control request read from the socket; returns a message naming the bad field, or the request. */
export function parseControlRequest(value: unknown): ControlRequest | string {
  if (typeof value === "object" && value !== null) {
    const t = (value as Record<string, unknown>).t;
    if (t === "status" || t === "stop") return { t };
  }
  return parseSessionRequest(value);
}

/** Checks a session request read from the socket; returns a message naming the bad field, or the request. */
export function parseSessionRequest(value: unknown): SessionRequest | string {
  if (typeof value !== "object" || value === null) return "the request is not an object";
  const v = value as Record<string, unknown>;
  if (v.t !== "session") return `t must be "session", "status" or "stop", got ${JSON.stringify(v.t)}`;
  if (typeof v.env !== "object" || v.env === null || Array.isArray(v.env)) return "env must be an object";
  const env: Record<string, string> = {};
  for (const [k, val] of Object.entries(v.env)) {
    if (typeof val !== "string") return `env.${k} must be a string`;
    env[k] = val;
  }
  if (typeof v.cwd !== "string" || !v.cwd.startsWith("/")) return "cwd must be an absolute path";
  for (const key of ["pid", "ppid"] as const) {
    const n = v[key];
    if (typeof n !== "number" || !Number.isSafeInteger(n) || n < 1)
      return `${key} must be a positive integer, got ${JSON.stringify(n)}`;
  }
  return { t: "session", env, cwd: v.cwd, pid: v.pid as number, ppid: v.ppid as number };
}

/**
 * Splits a socket's data into JSON messages, one per line, at most MAX_MESSAGE_BYTES each. Calls
 * `onError` once (and nothing after) when a line is too long or is not JSON.
 */
export function readMessages(
  socket: NodeJS.ReadableStream,
  onMessage: (value: unknown) => void,
  onError: (message: string) => void,
): void {
  let buffered = "";
  let failed = false;
  socket.setEncoding("utf8");
  socket.on("data", (chunk: string) => {
    if (failed) return;
    buffered += chunk;
    let nl = buffered.indexOf("\n");
    while (nl !== -1) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch {
        failed = true;
        onError("a message is not JSON");
        return;
      }
      onMessage(value);
      if (failed) return;
      nl = buffered.indexOf("\n");
    }
    if (Buffer.byteLength(buffered) > MAX_MESSAGE_BYTES) {
      failed = true;
      onError(`a message is longer than ${MAX_MESSAGE_BYTES} bytes`);
    }
  });
}
