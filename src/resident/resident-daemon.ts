import { AsyncLocalStorage } from "node:async_hooks";
import { randomBytes } from "node:crypto";
import { fstatSync, linkSync, rmSync, statSync } from "node:fs";
import { connect, createServer, type Server as NetServer, type Socket } from "node:net";
import { dirname, join } from "node:path";
import { newRun, processLives, procStat } from "../journal/run";
import { LOG_ROUTE_KEY, Logger, type LogRoute, levelFromEnv } from "../log";
import type { GrpcServer } from "../plugin/grpc-server";
import { HandshakeError, handshakeLine } from "../plugin/handshake";
import {
  checkHost,
  type HostHandshake,
  type ServerCertificate,
  serverCertificate,
  sessionTls,
  sweepStaleSockets,
} from "../plugin/lifecycle";
import type { ProviderService } from "../plugin/tfplugin6";
import {
  parseControlRequest,
  privateRunDir,
  type ResidentStatus,
  type ResidentStopping,
  readMessages,
  residentIdleMs,
  type SessionMessage,
  type SessionRequest,
} from "./resident";

// The resident provider process (see resident.ts): started by the first launch that finds none,
// it serves one gRPC session per launch until it has had no session for the idle time. Each
// session is what one provider process would be: its own listener, the host's certificate from the
// launch's environment as the only client accepted (the process's own certificate is shown to
// every session, as one process shows one), its own provider built from the launch's
// environment and working directory, its own journal run (the launch's pid), and its logs sent to
// the launch, which writes them on the stderr Terraform reads. When the launch goes away, its
// session is stopped as the process would have been: its calls are cancelled (Terraform gets no
// answer), its in-flight work aborted (what StopProvider does), and what that work still does is
// kept out of the journal, so the journal treats it as an interrupted run.

/** What the daemon needs from its launcher. */
export interface ResidentDaemonOptions {
  /** The control socket to serve (in a directory only the user can enter). */
  socket: string;
  /**
   * The terraform process this one serves alone (the command's provider process, see the README):
   * only launches whose parent it is get a session, and the process exits once it is gone and its
   * sessions have ended. Without it, any launch of the user's is served until the idle time.
   */
  owner?: number;
  /** The GetProviderSchema answer encoded at build time, if there is one. */
  schemaResponse?: () => Buffer | undefined;
  /** Builds a session's provider service (src/executable/provider-impl.ts). */
  createService: (session: {
    env: NodeJS.ProcessEnv;
    cwd: string;
    ppid: number;
    run: ReturnType<typeof newRun>;
    /** Aborted when the session ends: Terraform's Shutdown, or its launch gone (see startSession). */
    ended: AbortSignal;
  }) => ProviderService | Promise<ProviderService>;
  /**
   * Called as each session ends: loads what a later session's calls need while Terraform is busy
   * between its launches (its first launch of a command only reads the schema, answered from
   * `schemaResponse`). `createService` must not rely on it having run.
   */
  prepare?: () => void;
  /** Loads the gRPC half. */
  loadGrpcServer: () => Promise<typeof import("../plugin/grpc-server")>;
  /**
   * Called when Terraform ends a session normally (GRPCController.Shutdown), with the session's
   * journal run and logger; the executable settles the run's deploy journals here.
   */
  onShutdown?: (runId: string, log: Logger) => void;
  /** Ends the process; tests replace it. */
  exit?: (code: number) => void;
}

/** A running resident process. */
export interface ResidentDaemon {
  /** Sessions open now. */
  sessions(): number;
  /** Closes every session and the control socket. */
  close(): void;
}

/** Serves sessions on `opts.socket` until idle; resolves once the control socket is bound. */
export async function runResidentDaemon(opts: ResidentDaemonOptions): Promise<ResidentDaemon> {
  // The process's own records go to its own log, never to a session's launch.
  const log = new Logger("gpurental.resident", levelFromEnv(), (line) => process.stderr.write(line));
  const exit = opts.exit ?? ((code: number) => process.exit(code));
  const dir = dirname(opts.socket);
  if (!privateRunDir(dir)) throw new Error(`${dir} is not a directory only this user can use`);
  const idleMs = residentIdleMs(process.env);
  const owner = opts.owner === undefined ? undefined : watchedProcess(opts.owner);
  const { startGrpcServer } = await opts.loadGrpcServer();
  // The process's own certificate, made at its first session and shown to every session's host,
  // as one provider process shows one: each host pins it, and each session accepts only its own
  // host's certificate (mutualTls).
  let own: ServerCertificate | undefined;
  const ownCertificate = () => {
    own ??= serverCertificate();
    return own;
  };

  // Each call of a session runs with that session's log route, and so does everything it awaits
  // (AsyncLocalStorage). A command's own process (in automation) serves the launches of one
  // terraform process, which come one at a time: there, while one session is open, the route is
  // that session's, and no call pays for async context tracking (on Node.js 20 and 22 a promise
  // hook on every promise). From the first time two are open at once, every call runs in its
  // session's route; work begun alone before that keeps the route of the session open alone then.
  // Work an ended session left running may log to the next one: a session of the same command.
  const routes = new AsyncLocalStorage<LogRoute>();
  const sharing: LogSharing = { shared: owner === undefined, sole: undefined };
  (globalThis as Record<symbol, unknown>)[LOG_ROUTE_KEY] = () => routes.getStore() ?? sharing.sole;

  const open = new Set<() => void>();
  const startedAt = new Date().toISOString();
  let idleTimer: NodeJS.Timeout | undefined;
  let idleExitAt: number | null = null;
  let closed = false;
  // A stop was asked: no new session, and the exit comes as soon as the last one ends.
  let stopping = false;
  let ownSocket: { dev: number; ino: number } | undefined;

  /** Stops taking sessions: the control socket is closed and its name freed for a newer process. */
  const stopListening = () => {
    control.close();
    // Remove the socket only if it is still ours: a newer process may have taken the name.
    try {
      const st = statSync(opts.socket);
      if (ownSocket && st.dev === ownSocket.dev && st.ino === ownSocket.ino) rmSync(opts.socket);
    } catch {
      // already gone
    }
  };
  const close = () => {
    if (closed) return;
    closed = true;
    if (idleTimer) clearTimeout(idleTimer);
    for (const end of [...open]) end();
    // Before the socket goes: until then a launch connects here and starts no process that would
    // open the same log name.
    removeEmptyLog(`${opts.socket}.log`);
    stopListening();
  };
  const idle = () => {
    if (idleTimer) clearTimeout(idleTimer);
    idleTimer = undefined;
    idleExitAt = null;
    if (open.size !== 0 || closed) return;
    if (owner && !owner.alive()) {
      log.debug("the terraform process it served has exited; exiting", { owner: owner.pid });
      close();
      setImmediate(() => exit(0));
      return;
    }
    if (stopping) {
      log.debug("stopped on request; exiting");
      close();
      // Once the answers written to the sockets have gone out.
      setImmediate(() => exit(0));
      return;
    }
    idleExitAt = Date.now() + idleMs;
    idleTimer = setTimeout(() => {
      log.debug("no session for the idle time; exiting", { idle_ms: idleMs });
      close();
      exit(0);
    }, idleMs);
  };
  const status = (): ResidentStatus => ({
    t: "status",
    pid: process.pid,
    started_at: startedAt,
    sessions: open.size,
    idle_exit_at: idleExitAt === null ? null : new Date(idleExitAt).toISOString(),
    executable: process.argv[1] ?? "",
    node: process.version,
    serves: owner?.pid ?? null,
  });

  const startSession = (ctl: Socket, req: SessionRequest) => {
    const send = (m: SessionMessage) => {
      if (!ctl.destroyed) ctl.write(`${JSON.stringify(m)}\n`);
    };
    const env: NodeJS.ProcessEnv = req.env;
    let host: HostHandshake;
    try {
      host = checkHost(env);
    } catch (err) {
      send({ t: "error", message: err instanceof HandshakeError ? err.message : String(err) });
      ctl.end();
      return;
    }
    const route: LogRoute = { level: levelFromEnv(env), sink: (line) => send({ t: "log", line }) };
    const sessionLog = new Logger("gpurental", route.level, route.sink).child("plugin");

    const { protocolVersion } = host;
    const { tls, certField } = sessionTls(host.clientCert, ownCertificate);

    // Aborted when the session ends, by Terraform's Shutdown or with its launch gone: a provider
    // process would exit then, so what the session's calls still do reaches no one and must leave
    // the journal as the ended process would have (no "handed" for an answer never delivered).
    const sessionEnded = new AbortController();
    const run = newRun(req.pid, req.ppid);
    let service: ProviderService | undefined;
    // One service per session, even when calls ask for it while it is being made.
    let creating: Promise<ProviderService> | undefined;
    const getService = () => {
      const make = () =>
        opts.createService({ env, cwd: req.cwd, ppid: req.ppid, run, ended: sessionEnded.signal });
      creating ??= (async () =>
        inSession(routes, sharing, route, await (sharing.shared ? routes.run(route, make) : make())))().then(
        (made) => {
          service = made;
          return made;
        },
        (err: unknown) => {
          creating = undefined;
          throw err;
        },
      );
      return creating;
    };

    const address = join(dir, `s${randomBytes(6).toString("hex")}.sock`);
    const listener = createServer({ pauseOnConnect: true });
    let grpc: GrpcServer | undefined;
    let ended = false;
    const end = (code?: number) => {
      if (ended) return;
      ended = true;
      sessionEnded.abort();
      open.delete(end);
      listener.close();
      grpc?.close();
      rmSync(address, { force: true });
      // Whatever the session still runs is stopped, as the end of its process would stop it, and
      // the ephemeral resources Terraform left open (after an error or a Ctrl-C) are closed.
      service?.StopProvider({}).catch(() => {});
      service?.closeOpenEphemeralResources?.().catch(() => {});
      if (code !== undefined) send({ t: "exit", code });
      ctl.end();
      sessionLog.debug("session ended", { pid: req.pid });
      if (sharing.sole === route) sharing.sole = undefined;
      idle();
      if (opts.prepare) setImmediate(opts.prepare);
    };
    if (open.size === 0 && !sharing.shared) sharing.sole = route;
    else sharing.shared = true;
    open.add(end);
    if (idleTimer) clearTimeout(idleTimer);
    idleTimer = undefined;
    idleExitAt = null;
    ctl.on("close", () => end());
    ctl.on("error", () => end());

    try {
      grpc = startGrpcServer({
        tls,
        getService,
        schemaResponse: opts.schemaResponse,
        onShutdown: () => {
          opts.onShutdown?.(run.id, sessionLog);
          end(0);
        },
        log: sessionLog,
      });
    } catch (err) {
      // What one launch sent never ends the process and the other launches' sessions with it.
      send({
        t: "error",
        message: `the session cannot start: ${err instanceof Error ? err.message : String(err)}`,
      });
      end();
      return;
    }
    listener.on("connection", (socket) => {
      if (grpc && !ended) grpc.serve(socket);
      else socket.destroy();
    });
    listener.on("error", (err) => {
      sessionLog.error("session listener failed", { error: err });
      end(1);
    });
    listener.listen(address, () => {
      if (ended) return;
      send({
        t: "ready",
        handshake: handshakeLine({ protocolVersion, network: "unix", address, serverCert: certField }),
      });
      sessionLog.debug("session started", { pid: req.pid, address, tls: Boolean(tls) });
    });
  };

  const control = createServer((ctl) => {
    ctl.on("error", () => ctl.destroy());
    let started = false;
    readMessages(
      ctl,
      (value) => {
        if (started) return; // a launch sends one request; nothing after it is read
        started = true;
        const req = parseControlRequest(value);
        if (typeof req === "string") {
          ctl.end(`${JSON.stringify({ t: "error", message: `bad session request: ${req}` })}\n`);
          return;
        }
        if (req.t === "status") {
          ctl.end(`${JSON.stringify(status())}\n`);
          return;
        }
        if (req.t === "stop") {
          if (!stopping) log.debug("asked to stop", { sessions: open.size });
          stopping = true;
          // The socket is gone before the answer leaves: whoever reads the answer finds the name free.
          stopListening();
          const answer: ResidentStopping = { t: "stopping", pid: process.pid, sessions: open.size };
          ctl.end(`${JSON.stringify(answer)}\n`);
          idle();
          return;
        }
        if (stopping || closed) {
          // A launch that connected before the socket was closed: it serves Terraform itself.
          ctl.end(
            `${JSON.stringify({ t: "error", message: "the resident provider process is stopping" })}\n`,
          );
          return;
        }
        if (owner && req.ppid !== owner.pid) {
          ctl.end(
            `${JSON.stringify({ t: "error", message: `this provider process serves only the launches of terraform process ${owner.pid}, not of ${req.ppid}` })}\n`,
          );
          return;
        }
        startSession(ctl, req);
      },
      (message) => {
        ctl.end(`${JSON.stringify({ t: "error", message: `bad session request: ${message}` })}\n`);
      },
    );
  });
  control.on("error", (err) => log.error("control socket failed", { error: err }));

  await bindControl(control, opts.socket);
  const st = statSync(opts.socket);
  ownSocket = { dev: st.dev, ino: st.ino };
  log.debug("resident provider serving", { socket: opts.socket, idle_ms: idleMs });
  // What resident processes killed outright left: session sockets, control sockets and temporary
  // names nobody listens on any more (this process's own control socket is kept).
  sweepStaleSockets(
    dir,
    /^(s[0-9a-f]{12}|[0-9a-f]{16}|c[0-9a-f]{16}-\d+-\d+)\.sock$|^b[0-9a-f]{12}\.tmp$/,
    [opts.socket],
    log,
    {
      dir,
    },
  );
  idle();
  if (owner) {
    // Once its command is gone and its sessions have ended, the process has no one left to serve.
    const watch = setInterval(() => {
      if (closed) clearInterval(watch);
      else if (open.size === 0 && !owner.alive()) idle();
    }, OWNER_POLL_MS);
    watch.unref();
  }
  return { sessions: () => open.size, close };
}

/**
 * Removes the log file beside the control socket (where the launch that started this process sent
 * its stderr) when nothing was written to it, so an exit leaves no empty file behind; a log with
 * something in it stays for whoever looks. Only the file this process writes to: its stderr must
 * be that very file.
 */
function removeEmptyLog(path: string): void {
  try {
    const mine = fstatSync(2);
    const st = statSync(path);
    if (st.dev === mine.dev && st.ino === mine.ino && st.size === 0) rmSync(path);
  } catch {
    // no log file, or stderr is not a file
  }
}

/**
 * Binds the control socket under a name of its own, then moves it to `socket` unless a live
 * resident process already answers there (two launches may each have started one).
 */
async function bindControl(control: NetServer, socket: string): Promise<void> {
  if (await answers(socket)) throw new AlreadyServing(socket);
  // No longer than the socket's own name, whose path resident.ts keeps within what can be bound.
  const temporary = join(dirname(socket), `b${randomBytes(6).toString("hex")}.tmp`);
  rmSync(temporary, { force: true });
  await new Promise<void>((resolve, reject) => {
    control.once("error", reject);
    control.listen(temporary, () => {
      control.off("error", reject);
      resolve();
    });
  });
  const giveUp = () => {
    control.close();
    rmSync(temporary, { force: true });
  };
  // Linked, not renamed: link fails when the name exists, where rename would replace the socket of
  // a process that bound it since the check above (two launches starting one at once), leaving
  // that one up and unreachable. A name nobody answers on (a killed process's) is replaced.
  for (;;) {
    try {
      linkSync(temporary, socket);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") {
        giveUp();
        throw err;
      }
      if (await answers(socket)) {
        giveUp();
        throw new AlreadyServing(socket);
      }
      rmSync(socket, { force: true });
    }
  }
  rmSync(temporary, { force: true });
}

/** Another resident process serves the socket already; this one has nothing to do. */
export class AlreadyServing extends Error {
  constructor(socket: string) {
    super(`a resident provider process already serves ${socket}`);
  }
}

function answers(socket: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = connect(socket);
    probe.once("connect", () => {
      probe.destroy();
      resolve(true);
    });
    probe.once("error", () => resolve(false));
  });
}

/** The log route of calls made outside `routes.run`: the session open alone, until two are open. */
interface LogSharing {
  /** Two sessions have been open at once: every call since runs in its session's route. */
  shared: boolean;
  /** The route of the session open alone before that, if it is still open. */
  sole: LogRoute | undefined;
}

/**
 * Wraps every method of `service` so that it runs, with all it awaits, in the session's route:
 * under `routes` once sessions have shared the process, and otherwise in the sole route.
 */
function inSession(
  routes: AsyncLocalStorage<LogRoute>,
  sharing: LogSharing,
  route: LogRoute,
  service: ProviderService,
): ProviderService {
  const wrapped: Record<string, unknown> = {};
  for (const [name, fn] of Object.entries(service as unknown as Record<string, unknown>)) {
    if (typeof fn !== "function") {
      wrapped[name] = fn;
      continue;
    }
    const call = fn as (...a: unknown[]) => unknown;
    wrapped[name] = (...args: unknown[]) =>
      sharing.shared ? routes.run(route, () => call(...args)) : call(...args);
  }
  return wrapped as unknown as ProviderService;
}

/** How often the command's provider process looks for its terraform process. */
const OWNER_POLL_MS = 200;

/**
 * A process to outlive no longer than it lives: `alive` is false once it has exited (a zombie
 * too), and also once its pid belongs to a later process (its start time in /proc differs, where
 * there is a /proc): processLives with the start time seen now.
 */
export function watchedProcess(pid: number): { pid: number; alive: () => boolean } {
  const started = procStat(pid);
  const ticks = typeof started === "object" ? started.ticks : null;
  return { pid, alive: () => processLives(pid, ticks) };
}
