import { closeSync, openSync } from "node:fs";
import { connect } from "node:net";
import { logger } from "../log";
import { watchParent } from "../plugin/server";
import {
  privateRunDir,
  RESIDENT_DIR_ENV,
  readMessages,
  residentDir,
  residentSocket,
  type SessionMessage,
  type SessionRequest,
} from "./resident";

// The launch side of the resident mode (see resident.ts): a provider launch asks the resident
// process for a session, prints its handshake line, writes its log lines on stderr and exits when
// the session ends. When there is no resident process yet, the launch starts one for the launches
// after it and serves Terraform itself, as without the mode.

const log = logger.child("resident");

/** How long a launch waits for the resident process's answer before serving Terraform itself. */
const READY_TIMEOUT_MS = 5000;

/** What attachResident needs. */
export interface AttachOptions {
  env: NodeJS.ProcessEnv;
  /** The production bundle's directory (the resident process runs the same build). */
  bundleDir: string;
  /**
   * The provider executable as this launch was started: node and the script, or the standalone
   * executable and an empty script.
   */
  command: { node: string; script: string };
  /** Writes the handshake line. */
  stdout: (text: string) => void;
  /** Writes a log line. */
  stderr: (text: string) => void;
  /** Ends the launch when its session ends. */
  exit: (code: number) => void;
  /** Installs the signal handlers and the parent watch; default true. */
  processHooks?: boolean;
  /**
   * The mode was asked for (GPURENTAL_PROVIDER_RESIDENT=on): a directory or socket it cannot use is
   * then a warning; by default only a debug record, since nobody asked.
   */
  explicit?: boolean;
}

/**
 * Attaches this launch to a session of the resident process. Resolves true once the handshake
 * line is printed (the launch then lives until the session ends), or false when this launch must
 * serve Terraform itself: no resident process yet (one is started), or none usable.
 */
export async function attachResident(opts: AttachOptions): Promise<boolean> {
  const dir = residentDir(opts.env);
  const unusable = opts.explicit ? log.warn.bind(log) : log.debug.bind(log);
  if (!privateRunDir(dir)) {
    unusable(
      "the resident provider's directory is not private to this user; this launch serves Terraform itself",
      { dir },
    );
    return false;
  }
  const socket = residentSocket(dir, opts.bundleDir, opts.env);
  if (!socket) {
    unusable(
      "the resident provider's socket path would be longer than 103 bytes; this launch serves Terraform itself (set GPURENTAL_PROVIDER_RESIDENT_DIR to a shorter directory)",
      { dir },
    );
    return false;
  }

  const ctl = connect(socket);
  const ready = await new Promise<boolean>((resolve) => {
    let settled = false;
    const settle = (ok: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (!ok) ctl.destroy();
      resolve(ok);
    };
    const timer = setTimeout(() => settle(false), READY_TIMEOUT_MS);
    ctl.once("error", (err: NodeJS.ErrnoException) => {
      if (err.code === "ENOENT" || err.code === "ECONNREFUSED") startResident(opts, socket);
      settle(false);
    });
    ctl.once("close", () => settle(false));
    ctl.once("connect", () => {
      const request: SessionRequest = {
        t: "session",
        env: stringsOf(opts.env),
        cwd: process.cwd(),
        pid: process.pid,
        ppid: process.ppid,
      };
      ctl.write(`${JSON.stringify(request)}\n`);
    });
    readMessages(
      ctl,
      (value) => {
        const m = value as SessionMessage;
        if (!settled) {
          if (m.t === "ready" && typeof m.handshake === "string") {
            opts.stdout(m.handshake);
            settle(true);
          } else settle(false);
          return;
        }
        if (m.t === "log" && typeof m.line === "string") opts.stderr(m.line);
        else if (m.t === "exit") opts.exit(typeof m.code === "number" ? m.code : 1);
      },
      () => settle(false),
    );
  });
  if (!ready) return false;

  ctl.on("error", () => {});
  // An end without an exit message: the resident process went away under the session.
  ctl.on("close", () => opts.exit(1));
  if (opts.processHooks ?? true) {
    // As a provider process of its own: Ctrl-C is Terraform's to handle (it calls StopProvider,
    // which reaches the session); SIGTERM or a parent gone ends the session with this launch.
    process.on("SIGINT", () => {});
    process.on("SIGTERM", () => {
      ctl.destroy();
      opts.exit(0);
    });
    watchParent(() => {
      ctl.destroy();
      opts.exit(0);
    });
  }
  return true;
}

function stringsOf(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (typeof v === "string") out[k] = v;
  return out;
}

/** Variables the resident process itself runs with; a session's own environment goes with it. */
function residentEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined) continue;
    if (
      k === "PATH" ||
      k === "HOME" ||
      k === "TMPDIR" ||
      k === "LANG" ||
      k === RESIDENT_DIR_ENV ||
      k.startsWith("NODE_") ||
      k.startsWith("GPURENTAL_PROVIDER_")
    )
      out[k] = v;
  }
  return out;
}

/**
 * Starts the resident process, detached from Terraform's process group and terminal, with none of
 * the launch's credentials: only what node and the code cache need. Its own messages go to a log
 * file beside its socket.
 */
function startResident(opts: AttachOptions, socket: string): void {
  let logFd: number | undefined;
  try {
    logFd = openSync(`${socket}.log`, "w", 0o600);
    // Loaded here: no other launch needs child_process.
    const { spawn } = require("node:child_process") as typeof import("node:child_process");
    const args = [...(opts.command.script ? [opts.command.script] : []), "--resident", socket];
    const child = spawn(opts.command.node, args, {
      detached: true,
      stdio: ["ignore", "ignore", logFd],
      cwd: "/",
      env: residentEnv(opts.env),
    });
    child.on("error", () => {});
    child.unref();
  } catch {
    // Serving this launch does not depend on it; the next launch tries again.
  } finally {
    if (logFd !== undefined) closeSync(logFd);
  }
}
