import { randomBytes } from "node:crypto";
import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  Server,
  ServerCredentials,
  type ServerUnaryCall,
  type ServiceDefinition,
  type sendUnaryData,
  status,
  type UntypedServiceImplementation,
} from "@grpc/grpc-js";
import { generateServerCertificate, handshakeCertificate } from "./cert";
import {
  checkMagicCookie,
  DEFAULT_PROVIDER_ADDRESS,
  handshakeLine,
  negotiateProtocol,
  reattachConfig,
} from "./handshake";
import { type Logger, logger as rootLogger } from "./log";
import { serviceDefinition } from "./proto";
import type { ProviderService } from "./tfplugin6";

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
}

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

/** Message size limit in both directions; grpc-js's 4 MiB default is too small for large states. */
export const MAX_MESSAGE_BYTES = 256 * 1024 * 1024;

/** How often the parent process is checked, so that an orphaned provider does not linger. */
const PARENT_POLL_MS = 500;

/**
 * Serves a tfplugin6 provider the way go-plugin expects: checks the magic cookie, negotiates
 * protocol 6, starts a grpc-js server on loopback (TLS with a fresh certificate when the host sent
 * PLUGIN_CLIENT_CERT, requiring that client certificate), prints the handshake line, and keeps
 * running until the host calls GRPCController.Shutdown, sends SIGTERM or goes away.
 * Throws HandshakeError when the cookie or protocol check fails.
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

  let protocolVersion = 6;
  if (!debug) {
    checkMagicCookie(env);
    protocolVersion = negotiateProtocol(env);
  }

  const clientCert = debug ? undefined : env.PLUGIN_CLIENT_CERT;
  let credentials: ServerCredentials;
  let certField = "";
  let serverCertPem: string | undefined;
  if (clientCert) {
    const cert = generateServerCertificate();
    // checkClientCertificate=true: only the host holding the certificate it passed us may call.
    credentials = ServerCredentials.createSsl(
      Buffer.from(clientCert),
      [{ private_key: Buffer.from(cert.keyPem), cert_chain: Buffer.from(cert.certPem) }],
      true,
    );
    certField = handshakeCertificate(cert.der);
    serverCertPem = cert.certPem;
  } else {
    credentials = ServerCredentials.createInsecure();
  }

  const server = new Server({
    "grpc.max_receive_message_length": MAX_MESSAGE_BYTES,
    "grpc.max_send_message_length": MAX_MESSAGE_BYTES,
  });

  let closed = false;
  let socketPath: string | undefined;
  const close = () => {
    if (closed) return;
    closed = true;
    server.forceShutdown();
    if (socketPath) rmSync(socketPath, { force: true });
  };
  const shutdown = (reason: string, code = 0) => {
    log.debug("provider exiting", { reason });
    close();
    exit(code);
  };

  const getService = memoize(async () => (typeof source === "function" ? await source() : source));
  const providerService = serviceDefinition("tfplugin6.Provider");
  server.addService(providerService, providerHandlers(providerService, getService, log));
  server.addService(serviceDefinition("plugin.GRPCController"), {
    Shutdown: (_call: ServerUnaryCall<object, object>, callback: sendUnaryData<object>) => {
      callback(null, {});
      // Give grpc-js a moment to flush the reply; the host waits up to 2 s for the exit.
      setTimeout(() => shutdown("GRPCController.Shutdown"), 5);
    },
  });
  server.addService(serviceDefinition("grpc.health.v1.Health"), {
    Check: (_call: ServerUnaryCall<object, object>, callback: sendUnaryData<object>) => {
      callback(null, { status: 1 /* SERVING */ });
    },
  });

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

  // A unix socket where there are unix sockets, as go-plugin's own servers do; binding TCP on
  // 127.0.0.1 costs grpc-js ~15 ms more at start-up (address parsing), paid on every launch.
  const network = opts.network ?? (process.platform === "win32" ? "tcp" : "unix");
  let address: string;
  if (network === "unix") {
    const dir = env.PLUGIN_UNIX_SOCKET_DIR || tmpdir();
    socketPath = join(dir, `plugin${randomBytes(6).toString("hex")}.sock`);
    await bind(server, `unix://${socketPath}`, credentials);
    address = socketPath;
  } else {
    const port = await bind(server, "127.0.0.1:0", credentials);
    address = `127.0.0.1:${port}`;
  }

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
        `\tTF_REATTACH_PROVIDERS='${reattach}'\n\n`,
    );
  } else {
    write(handshake);
  }
  log.debug("plugin server started", {
    network,
    address,
    tls: Boolean(clientCert),
    protocol: protocolVersion,
  });

  // Load the provider (resources, API client, schemas) now, after the handshake: the host is busy
  // connecting meanwhile, and the first RPC awaits the same promise.
  setImmediate(() => {
    getService().catch((err: unknown) => log.error("cannot load the provider", { error: err }));
  });

  return { network, address, handshake, serverCertPem, server, close };
}

type Handler = (request: object) => Promise<object>;

/** The RPC names the tfplugin6 service answers; the rest are absent, and so UNIMPLEMENTED. */
function providerHandlers(
  def: ServiceDefinition,
  getService: () => Promise<ProviderService>,
  log: Logger,
): UntypedServiceImplementation {
  const handlers: UntypedServiceImplementation = {};
  for (const [name, method] of Object.entries(def)) {
    if (method.requestStream || method.responseStream) continue;
    handlers[name] = (call: ServerUnaryCall<object, object>, callback: sendUnaryData<object>) => {
      const started = Date.now();
      if (log.enabled("trace")) log.trace("received RPC", { tf_rpc: name });
      getService()
        .then((service) => {
          const fn = (service as unknown as Record<string, unknown>)[name];
          if (typeof fn !== "function") {
            // StopProvider must succeed even for a service without in-flight work to cancel.
            if (name === "StopProvider") return { Error: "" };
            throw Object.assign(new Error(`${name} is not implemented by this provider`), {
              code: status.UNIMPLEMENTED,
            });
          }
          return (fn as Handler).call(service, call.request);
        })
        .then(
          (response) => {
            if (log.enabled("trace"))
              log.trace("served RPC", { tf_rpc: name, duration_ms: Date.now() - started });
            callback(null, response);
          },
          (err: unknown) => {
            const code = grpcCode(err);
            if (code !== status.UNIMPLEMENTED) log.error("RPC failed", { tf_rpc: name, error: err });
            callback({ code, details: err instanceof Error ? err.message : String(err) });
          },
        );
    };
  }
  return handlers;
}

function grpcCode(err: unknown): status {
  const code = (err as { code?: unknown } | null)?.code;
  return code === status.UNIMPLEMENTED ? status.UNIMPLEMENTED : status.INTERNAL;
}

function bind(server: Server, address: string, credentials: ServerCredentials): Promise<number> {
  return new Promise((resolve, reject) => {
    server.bindAsync(address, credentials, (err, port) => (err ? reject(err) : resolve(port)));
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
function watchParent(onExit: () => void): void {
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid !== parent) {
      clearInterval(timer);
      onExit();
    }
  }, PARENT_POLL_MS);
  timer.unref();
}
