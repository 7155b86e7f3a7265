import { existsSync, readdirSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { terminalText } from "../../display";
import {
  type ControlRequest,
  privateRunDir,
  type ResidentStatus,
  type ResidentStopping,
  readMessages,
  residentDir,
} from "../../resident/resident";

// `gpurental provider resident status|stop`: the resident provider processes of this user (see
// src/resident/resident.ts), and the command's provider processes that the launchers in C start in
// automation (one per terraform command, src/resident/README.md), found by their control
// sockets in the resident directory and asked over them. A socket nothing answers on is what a
// process that was killed left behind.

/** How long a resident process has to answer. */
const ANSWER_TIMEOUT_MS = 3_000;
/**
 * A control socket's name: 16 hex digits of the build's hash for a resident process; for a
 * command's process `c`, the runtime's 16, the pid of the terraform process it serves and that
 * process's start time (command-session.c).
 */
const CONTROL_SOCKET = /^(?:[0-9a-f]{16}|c[0-9a-f]{16}-\d+-\d+)\.sock$/;

/**
 * What a process answered to a status request: the fields it gave that could be read. A process of
 * an older (or newer) build may leave some out or give them in another form; what is shown of
 * those is `?`, and nothing else of the answer is lost.
 */
export type StatusAnswer = Pick<ResidentStatus, "t"> & Partial<Omit<ResidentStatus, "t">>;

/** One control socket of the directory, and what its process answered. */
export type ResidentEntry =
  | { socket: string; status: StatusAnswer }
  | { socket: string; status: null; problem: string };

/** A directory that is not private to the user is never one the provider uses. */
export class ResidentDirError extends Error {}

/** The control sockets of `dir`; none when it does not exist. */
function controlSockets(dir: string): string[] {
  if (!existsSync(dir)) return [];
  if (!privateRunDir(dir))
    throw new ResidentDirError(
      `${dir} is not a directory only this user can use, so the provider never runs a resident process there`,
    );
  return readdirSync(dir)
    .filter((name) => CONTROL_SOCKET.test(name))
    .sort()
    .map((name) => join(dir, name));
}

/** Sends one request and reads one answer; the answer's problem when there is none. */
function ask(socket: string, request: ControlRequest): Promise<{ answer: unknown } | { problem: string }> {
  return new Promise((resolve) => {
    const ctl = connect(socket);
    let settled = false;
    const settle = (result: { answer: unknown } | { problem: string }) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      ctl.destroy();
      resolve(result);
    };
    const timer = setTimeout(
      () => settle({ problem: `no answer within ${ANSWER_TIMEOUT_MS / 1000} s` }),
      ANSWER_TIMEOUT_MS,
    );
    ctl.once("error", (err: NodeJS.ErrnoException) =>
      settle({
        problem:
          err.code === "ECONNREFUSED" || err.code === "ENOENT"
            ? "no process answers (left behind by one that was killed)"
            : `cannot connect: ${err.message}`,
      }),
    );
    ctl.once("close", () => settle({ problem: "closed without an answer" }));
    ctl.once("connect", () => ctl.write(`${JSON.stringify(request)}\n`));
    readMessages(
      ctl,
      (answer) => settle({ answer }),
      (message) => settle({ problem: `an answer it cannot read: ${message}` }),
    );
  });
}

/** A process id, or a count of sessions: a whole number from `min`. */
function wholeNumber(v: unknown, min: number): number | undefined {
  return typeof v === "number" && Number.isSafeInteger(v) && v >= min ? v : undefined;
}

/**
 * An answer to a status request, each field it gives checked on its own (a field that is missing
 * or of another type is left out); undefined when it is no status answer at all.
 */
export function statusOf(v: unknown): StatusAnswer | undefined {
  if (typeof v !== "object" || v === null || (v as { t?: unknown }).t !== "status") return undefined;
  const a = v as Record<string, unknown>;
  const text = (x: unknown) => (typeof x === "string" ? x : undefined);
  const fields: Omit<StatusAnswer, "t"> = {
    pid: wholeNumber(a.pid, 1),
    started_at: text(a.started_at),
    sessions: wholeNumber(a.sessions, 0),
    idle_exit_at: a.idle_exit_at === null ? null : text(a.idle_exit_at),
    executable: text(a.executable),
    node: text(a.node),
    serves: a.serves === null ? null : wholeNumber(a.serves, 1),
  };
  const known = Object.entries(fields).filter(([, x]) => x !== undefined);
  return { t: "status", ...Object.fromEntries(known) };
}

/** The resident processes of `dir`, each with its status or why it has none. */
export async function residentStatus(dir: string): Promise<ResidentEntry[]> {
  return Promise.all(
    controlSockets(dir).map(async (socket): Promise<ResidentEntry> => {
      const r = await ask(socket, { t: "status" });
      if ("problem" in r) return { socket, status: null, problem: r.problem };
      const status = statusOf(r.answer);
      if (!status) return { socket, status: null, problem: "an answer that is not a status" };
      return { socket, status };
    }),
  );
}

/** What a stop did to one control socket. */
export type StopResult =
  | { socket: string; pid: number; sessions: number }
  | { socket: string; removed: true; problem: string }
  | { socket: string; problem: string };

/**
 * Asks every resident process of `dir` to stop: each takes no new session, frees its socket at
 * once (the next command starts a new one) and exits when the sessions it serves end. A socket
 * nothing answers on is removed.
 */
export async function stopResident(dir: string): Promise<StopResult[]> {
  return Promise.all(
    controlSockets(dir).map(async (socket): Promise<StopResult> => {
      const r = await ask(socket, { t: "stop" });
      if ("problem" in r) {
        if (!r.problem.startsWith("no process answers")) return { socket, problem: r.problem };
        rmSync(socket, { force: true });
        return { socket, removed: true, problem: r.problem };
      }
      const a = r.answer as Partial<ResidentStopping> | null;
      if (a?.t !== "stopping" || typeof a.pid !== "number" || typeof a.sessions !== "number")
        return { socket, problem: "an answer that is not a stop's" };
      return { socket, pid: a.pid, sessions: a.sessions };
    }),
  );
}

/** The text `status` prints; what the processes answered is shown as text, never as commands. */
export function formatStatus(dir: string, entries: ResidentEntry[]): string {
  const t = terminalText;
  if (entries.length === 0) return `No resident provider process in ${t(dir)}.\n`;
  const lines = [`Resident provider processes in ${t(dir)}:`];
  for (const e of entries) {
    if (e.status === null) {
      lines.push(`  ${t(e.socket)}: ${t(e.problem)}`);
      continue;
    }
    const s = e.status;
    // What the answer left out (an older build's) is shown as "?".
    const known = (x: string | number | null | undefined) =>
      x === undefined || x === null ? "?" : t(String(x));
    const ran = `    ${known(s.executable)} (node ${known(s.node)})`;
    const serving = (n: number) => `serving ${plural(n, "session")}`;
    if (typeof s.serves === "number") {
      const state =
        s.sessions === undefined ? "sessions ?" : s.sessions > 0 ? serving(s.sessions) : "between launches";
      lines.push(
        `  pid ${known(s.pid)}: the command of terraform process ${s.serves}, ${state}; up since ${known(s.started_at)}`,
      );
      lines.push(`${ran}; exits with that command`);
      continue;
    }
    const state =
      s.sessions === undefined
        ? "sessions ?"
        : s.sessions > 0
          ? serving(s.sessions)
          : `idle, exits at ${known(s.idle_exit_at)} unless a command starts`;
    lines.push(`  pid ${known(s.pid)}: ${state}; up since ${known(s.started_at)}`);
    lines.push(ran);
  }
  return `${lines.join("\n")}\n`;
}

/** The text `stop` prints. */
export function formatStop(dir: string, results: StopResult[]): string {
  const t = terminalText;
  if (results.length === 0) return `No resident provider process in ${t(dir)}.\n`;
  const lines = results.map((r) => {
    if ("pid" in r)
      return r.sessions === 0
        ? `pid ${r.pid}: stopped`
        : `pid ${r.pid}: stops once the ${plural(r.sessions, "session")} it serves end (it takes no new one, and no longer shows in status)`;
    if ("removed" in r) return `${t(r.socket)}: ${t(r.problem)}; removed`;
    return `${t(r.socket)}: ${t(r.problem)}`;
  });
  return `${lines.join("\n")}\n`;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

/** The directory the command reads: --dir, else the one the provider would use in this environment. */
export function chosenDir(dir: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  return dir ?? residentDir(env);
}
