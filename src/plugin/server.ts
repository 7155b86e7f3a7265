import { randomBytes } from "node:crypto";
import { rmSync } from "node:fs";
import { createServer, type Server as NetServer, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { Server } from "@grpc/grpc-js";
import { jsonEscaped, shellQuote } from "../display";
import { type Logger, logger as rootLogger } from "../log";
import type { GrpcServer } from "./grpc-server";
import { DEFAULT_PROVIDER_ADDRESS, handshakeLine, reattachConfig } from "./handshake";
import { checkHost, serverCertificate, sessionTls, sweepStaleSockets } from "./lifecycle";
import type { ProviderService } from "./tfplugin6";

/** The longest unix socket path every supported system binds whole (macOS: 104 bytes with the NUL). */
const MAX_SOCKET_PATH_BYTES = 103;
/** The provider service, or a function that loads it (called once, right after the handshake). */
export type ServiceSource = ProviderService | (() => ProviderService | Promise<ProviderService>);

/** Options of serveProvider. */
export interface ServeOptions {
  /** The environment to read the handshake variables from; defaults to process.env. */
  env?: NodeJS.ProcessEnv;
  /** Debug mode: no host, no cookie, plaintext; prints the TF_REATTACH_PROVIDERS value. */
  debug?: boolean;
  /** Source address used as the TF_REATTACH_PROVIDERS key in debug mode. */
  providerAddress?: string;
  /** "unix" (a socket in PLUGIN_UNIX_SOCKET_DIR or the temp dir; the default) or "tcp" (127.0.0.1, any free port; the default on Windows). */
  network?: "tcp" | "unix";
  /** Writes to stdout; the handshake line is the first and only thing written when managed. */
  stdout?: (text: string) => void;
  /** Ends the process; tests replace it. Defaults to process.exit. */
  exit?: (code: number) => void;
  /** Installs the SIGINT/SIGTERM handlers and the parent watch; defaults to true. */
  processHooks?: boolean;
  /** Logger for the server; defaults to the provider's root logger. */
  logger?: Logger;
  /** The GetProviderSchema answer encoded at build time, if there is one (see grpc-server.ts). */
  schemaResponse?: () => Buffer | undefined;
  /** Loads the gRPC half after the handshake; tests slow it down. */
  loadGrpcServer?: () => Promise<GrpcServerModule>;
  /**
   * Called when Terraform ends the run normally (GRPCController.Shutdown), before the process
   * exits, with the server's logger; the executable settles the deploy journals here.
   */
  onShutdown?: (log: Logger) => void;
}

/** The module serveProvider loads after the handshake. */
export type GrpcServerModule = typeof import("./grpc-server");

/** A running provider server. */
export interface ServingProvider {
  /** "tcp" or "unix". */
  network: "tcp" | "unix";
  /** host:port or socket path. */
  address: string;
  /** The handshake line that was printed (newline included). */
  handshake: string;
  /** The server certificate in PEM form when AutoMTLS is on, else undefined. */
  serverCertPem: string | undefined;
  /** The grpc-js server. */
  server: Server;
  /** Stops the server at once (in-flight calls are cancelled) and removes a unix socket. */
  close(): void;
}

/** How long closing the ephemeral resources left open may delay the exit (go-plugin waits 2 s). */
const SHUTDOWN_CLOSE_MS = 1200;

/** How often the parent process is checked, so that an orphaned provider does not linger. */
const PARENT_POLL_MS = 500;

/**
 * Serves a tfplugin6 provider the way go-plugin expects: checks the magic cookie, negotiates
 * protocol 6, binds a listener on loopback (a unix socket, or 127.0.0.1), prints the handshake
 * line (with a fresh certificate when the host sent PLUGIN_CLIENT_CERT), serves gRPC over that
 * listener (TLS requiring the host's certificate, or plaintext), and keeps running until the host
 * calls GRPCController.Shutdown, sends SIGTERM or goes away.
 * Throws HandshakeError when the cookie or protocol check fails.
 *
 * Start-up order, as go-plugin's own servers do it: the listener is bound and the certificate made
 * before the line is printed, and serving begins after. Here "after" includes loading grpc-js and
 * Node's http2 (loadGrpcServer), which is most of the process's start-up: a connection that arrives
 * meanwhile waits, unread, in the listener and is served as soon as the gRPC server exists.
 */
export async function serveProvider(
  source: ServiceSource,
  opts: ServeOptions = {},
): Promise<ServingProvider> {
  const env = opts.env ?? process.env;
  const debug = opts.debug ?? false;
  const log = (opts.logger ?? rootLogger).child("plugin");
  const write = opts.stdout ?? ((text: string) => void process.stdout.write(text));
  const exit = opts.exit ?? ((code: number) => process.exit(code));
  const hooks = opts.processHooks ?? true;

  const { protocolVersion, clientCert } = debug
    ? { protocolVersion: 6, clientCert: undefined }
    : checkHost(env);
  const { tls, certField } = sessionTls(clientCert, serverCertificate);

  // Connections are accepted paused: nothing is read from them until the gRPC server takes them.
  const listener = createServer({ pauseOnConnect: true });
  const waiting: Socket[] = [];
  let grpc: GrpcServer | undefined;
  listener.on("connection", (socket) => {
    if (grpc) {
      grpc.serve(socket);
      return;
    }
    socket.on("error", () => {}); // a host that gave up before we served it; nothing to do
    waiting.push(socket);
  });

  let closed = false;
  let socketPath: string | undefined;
  const close = () => {
    if (closed) return;
    closed = true;
    listener.close();
    for (const socket of waiting.splice(0)) socket.destroy();
    grpc?.close();
    if (socketPath) rmSync(socketPath, { force: true });
  };
  let service: ProviderService | undefined;
  let exiting = false;
  const shutdown = (reason: string, code = 0) => {
    if (exiting) return;
    exiting = true;
    log.debug("provider exiting", { reason });
    const done = () => {
      close();
      exit(code);
    };
    // Terraform skips closing ephemeral resources after an error or a Ctrl-C; what is still open
    // is closed now (a run's key revoked), within go-plugin's 2 s of grace (less the 0.5 s the
    // Shutdown reply may linger) before it kills us.
    const left = service?.closeOpenEphemeralResources?.();
    if (!left) return done();
    const grace = setTimeout(done, SHUTDOWN_CLOSE_MS);
    left
      .catch(() => {})
      .finally(() => {
        clearTimeout(grace);
        done();
      });
  };

  if (hooks) {
    // Installed before the handshake is printed: the host may signal as soon as it has read it.
    // Terraform does not give the provider its own process group, so a Ctrl-C in the terminal
    // reaches us too. Terraform handles it by calling StopProvider; dying here would abort the
    // apply under its feet. In debug mode there is no host, and Ctrl-C is how the user stops us.
    process.on("SIGINT", () => {
      if (debug) shutdown("SIGINT");
      else log.debug("ignoring SIGINT; Terraform will call StopProvider");
    });
    process.on("SIGTERM", () => shutdown("SIGTERM"));
    if (!debug) watchParent(() => shutdown("parent process exited"));
  }

  // A unix socket where there are unix sockets, as go-plugin's own servers do; but a socket path
  // longer than the system takes (a deep temp directory) would be bound cut short where the host
  // cannot find it, so loopback TCP serves then.
  const unixPath = join(
    env.PLUGIN_UNIX_SOCKET_DIR || tmpdir(),
    `plugin${randomBytes(6).toString("hex")}.sock`,
  );
  const network =
    opts.network ??
    (process.platform === "win32" || Buffer.byteLength(unixPath) > MAX_SOCKET_PATH_BYTES ? "tcp" : "unix");
  let address: string;
  if (network === "unix") {
    socketPath = unixPath;
    await listen(listener, socketPath);
    address = socketPath;
  } else {
    await listen(listener, { host: "127.0.0.1", port: 0 });
    const bound = listener.address();
    address = `127.0.0.1:${typeof bound === "object" && bound ? bound.port : 0}`;
  }
  listener.on("error", (err) => log.error("provider listener failed", { error: err }));

  const handshake = handshakeLine({ protocolVersion, network, address, serverCert: certField });
  if (debug) {
    const reattach = reattachConfig({
      providerAddress: opts.providerAddress ?? DEFAULT_PROVIDER_ADDRESS,
      pid: process.pid,
      network,
      address,
    });
    write(
      "Provider started. To attach Terraform CLI, set the TF_REATTACH_PROVIDERS environment variable with the following:\n\n" +
        // The socket path comes from TMPDIR: quoted for the shell it is pasted into, and with
        // nothing a terminal obeys.
        `\tTF_REATTACH_PROVIDERS=${shellQuote(jsonEscaped(reattach))}\n\n`,
    );
  } else {
    write(handshake);
  }

  const getService = memoize(async () => {
    service = typeof source === "function" ? await source() : source;
    return service;
  });
  try {
    const { startGrpcServer } = await (opts.loadGrpcServer ?? loadGrpcServer)();
    grpc = startGrpcServer({
      tls,
      getService,
      schemaResponse: opts.schemaResponse,
      onShutdown: () => {
        opts.onShutdown?.(log);
        shutdown("GRPCController.Shutdown");
      },
      log,
    });
  } catch (err) {
    close();
    throw err;
  }
  for (const socket of waiting.splice(0)) if (!socket.destroyed) grpc.serve(socket);
  log.debug("plugin server started", { network, address, tls: Boolean(tls), protocol: protocolVersion });
  if (socketPath && hooks) {
    // The sockets of provider processes killed outright (kill -9) in the same directory, once
    // Terraform has what it needs from this one.
    const own = socketPath;
    setTimeout(() => sweepStaleSockets(dirname(own), /^plugin[0-9a-f]{12}\.sock$/, [own], log), 1000).unref();
  }

  // The provider itself (resources, API client, schemas) loads on the first RPC that needs it.
  // The first process of every Terraform command only asks for the schema, which a production
  // build answers from its pre-encoded copy, so that process never loads it at all; in the others,
  // loading it now or at the first call takes the same time on this one thread.

  return {
    network,
    address,
    handshake,
    serverCertPem: tls?.certPem,
    server: grpc.server,
    close,
  };
}

/** Loads the gRPC half (in the production bundle a separate file, provider-transport.js). */
function loadGrpcServer(): Promise<GrpcServerModule> {
  return import("./grpc-server");
}

function listen(listener: NetServer, where: string | { host: string; port: number }): Promise<void> {
  return new Promise((resolve, reject) => {
    listener.once("error", reject);
    const done = () => {
      listener.off("error", reject);
      resolve();
    };
    if (typeof where === "string") listener.listen(where, done);
    else listener.listen(where.port, where.host, done);
  });
}

function memoize<T>(fn: () => Promise<T>): () => Promise<T> {
  let promise: Promise<T> | undefined;
  return () => {
    promise ??= fn();
    return promise;
  };
}

/**
 * Calls `onExit` once the parent process is gone. A Go host SIGKILLs only its direct child; if it
 * dies itself, we are re-parented and should not linger. stdin is no signal: Terraform hands the
 * provider its own terminal stdin, which must not be read.
 */
export function watchParent(onExit: () => void): void {
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid !== parent) {
      clearInterval(timer);
      onExit();
    }
  }, PARENT_POLL_MS);
  timer.unref();
}
