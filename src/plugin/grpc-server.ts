import { X509Certificate } from "node:crypto";
import type { Socket } from "node:net";
import { createServer as createTlsServer, type TLSSocket } from "node:tls";
import {
  Server,
  ServerCredentials,
  type ServerUnaryCall,
  type ServerWritableStream,
  type ServiceDefinition,
  type sendUnaryData,
  status,
  type UntypedServiceImplementation,
} from "@grpc/grpc-js";
import type { Logger } from "../log";
import { serviceDefinition } from "./proto";
import type { EventStream, ProviderService } from "./tfplugin6";

// The gRPC half of the provider process: grpc-js, Node's http2 and tls, and the protocol's service
// definitions. server.ts prints the handshake as soon as its listener is bound and loads this
// module afterwards (in the production bundle, as a file of its own through the code cache), then
// hands it every connection the listener accepts, the ones that arrived meanwhile first.

/** Message size limit in both directions; grpc-js's 4 MiB default is too small for large states. */
export const MAX_MESSAGE_BYTES = 256 * 1024 * 1024;

/** TLS material for AutoMTLS: the host's certificate and our own. */
export interface TlsMaterial {
  /** The certificate the host passed in PLUGIN_CLIENT_CERT (PEM); the only client accepted. */
  clientCertPem: string;
  /** Our certificate (PEM). */
  certPem: string;
  /** Our private key (PKCS#8 PEM). */
  keyPem: string;
}

/** What startGrpcServer needs. */
export interface GrpcServerOptions {
  /** TLS material; plaintext when undefined. */
  tls: TlsMaterial | undefined;
  /** The provider service, loaded once; the first RPC awaits it. */
  getService: () => Promise<ProviderService>;
  /**
   * The GetProviderSchema answer encoded at build time, if there is one: served without loading
   * the provider, which the first process of every Terraform command then never does.
   */
  schemaResponse?: (() => Buffer | undefined) | undefined;
  /** Called once GRPCController.Shutdown has been answered. */
  onShutdown: () => void;
  log: Logger;
}

/** A gRPC server fed with connections accepted elsewhere. */
export interface GrpcServer {
  /** The grpc-js server. */
  server: Server;
  /** Serves a connection accepted by the provider's listener. */
  serve(socket: Socket): void;
  /** Stops at once; in-flight calls are cancelled. */
  close(): void;
}

/** The longest wait, after answering Shutdown, for the host to close its connections. */
export const SHUTDOWN_LINGER_MS = 500;

/** Calls `then` once, when every connection has closed or after `maxMs`, whichever comes first. */
function afterConnectionsClose(connections: Set<Socket>, maxMs: number, then: () => void): void {
  let done = false;
  const finish = () => {
    if (done) return;
    done = true;
    clearTimeout(timer);
    then();
  };
  const timer = setTimeout(finish, maxMs);
  let open = connections.size;
  if (open === 0) {
    finish();
    return;
  }
  for (const socket of connections) {
    socket.once("close", () => {
      open -= 1;
      if (open === 0) finish();
    });
  }
}

/** Builds the grpc-js server with the provider's three services. */
export function startGrpcServer(opts: GrpcServerOptions): GrpcServer {
  const { tls, log } = opts;
  const server = new Server({
    "grpc.max_receive_message_length": MAX_MESSAGE_BYTES,
    "grpc.max_send_message_length": MAX_MESSAGE_BYTES,
    // Channelz keeps call counters and traces of every call and session for an admin service the
    // provider never registers.
    "grpc.enable_channelz": 0,
  });
  // The connections handed in, for close(): grpc-js closes an injector's sessions gracefully,
  // letting calls in flight answer, and forceShutdown cancels only the sessions it tracks for
  // channelz, which is off. A resident provider process closes a session's server while Terraform,
  // its launch killed, still waits on calls; they must end there, as with the provider process gone.
  const connections = new Set<Socket>();
  const providerService = serviceDefinition("tfplugin6.Provider");
  server.addService(
    providerService,
    providerHandlers(providerService, opts.getService, log, opts.schemaResponse ?? (() => undefined)),
  );
  server.addService(serviceDefinition("plugin.GRPCController"), {
    Shutdown: (_call: ServerUnaryCall<object, object>, callback: sendUnaryData<object>) => {
      callback(null, {});
      // The host closes its connection once it has the reply (go-plugin's client does), so the end
      // waits for that and never cuts the reply off on a busy machine; but not for long, as the
      // host kills a provider that has not exited 2 s after Shutdown.
      afterConnectionsClose(connections, SHUTDOWN_LINGER_MS, opts.onShutdown);
    },
  });
  server.addService(serviceDefinition("grpc.health.v1.Health"), {
    Check: (_call: ServerUnaryCall<object, object>, callback: sendUnaryData<object>) => {
      callback(null, { status: 1 /* SERVING */ });
    },
  });

  // grpc-js's public way to serve connections accepted by someone else: the listener is bound
  // before this module is even loaded (see server.ts). With AutoMTLS, the TLS layer is ours (see
  // mutualTls) and grpc-js serves HTTP/2 on the connection once the host has proved who it is.
  const injector = server.createConnectionInjector(ServerCredentials.createInsecure());
  const secure = tls ? mutualTls(tls, (connection) => injector.injectConnection(connection)) : undefined;
  return {
    server,
    serve: (socket) => {
      connections.add(socket);
      socket.once("close", () => connections.delete(socket));
      if (secure) {
        secure(socket);
        return;
      }
      injector.injectConnection(socket);
      // The listener accepts connections paused; a plaintext HTTP/2 session takes over the
      // socket's handle and needs the reading started.
      socket.resume();
    },
    close: () => {
      injector.destroy();
      server.forceShutdown();
      for (const socket of connections) socket.destroy();
      connections.clear();
    },
  };
}

/**
 * The AutoMTLS layer: TLS with our certificate, offering h2, that hands on a connection only when
 * the host presented exactly the certificate it passed in PLUGIN_CLIENT_CERT (and, by the TLS
 * handshake itself, proved it holds its key). go-plugin's own servers trust that certificate as
 * their only CA; Terraform presents that very certificate, and nothing else is accepted here.
 *
 * Why not grpc-js's ServerCredentials.createSsl: any `ca` given to Node's TLS makes it copy its
 * whole bundled root store into the context, and without `ca` it loads that store as the default
 * trust. Parsing the ~140 root certificates took 15-30 ms of CPU in every provider process, and
 * Terraform starts 2-5 of them per command. An empty CA list (`ca: []`) loads none; the peer is
 * then checked here, against the one certificate, instead of by OpenSSL against a store.
 */
function mutualTls(material: TlsMaterial, serve: (connection: TLSSocket) => void): (socket: Socket) => void {
  const expected = new X509Certificate(material.clientCertPem).raw;
  // A TLS server that never listens: the provider's listener hands it each connection.
  const tlsServer = createTlsServer({
    ca: [],
    cert: material.certPem,
    key: material.keyPem,
    requestCert: true,
    // OpenSSL has no CA to check the host's certificate against; it is checked below instead.
    rejectUnauthorized: false,
    ALPNProtocols: ["h2"],
  });
  tlsServer.on("secureConnection", (connection: TLSSocket) => {
    const peer = connection.getPeerX509Certificate();
    if (!peer?.raw.equals(expected) || connection.alpnProtocol !== "h2") {
      connection.destroy();
      return;
    }
    // A host that goes away mid-call; grpc-js reports its sessions itself.
    connection.on("error", () => {});
    serve(connection);
  });
  // The documented way to hand a server a connection accepted elsewhere; TLS then reads the
  // socket itself (the listener accepted it paused).
  return (socket) => tlsServer.emit("connection", socket);
}

type Handler = (request: object) => Promise<object>;
type StreamHandler = (request: object, stream: EventStream<object>) => Promise<void>;

/** The service's method of an RPC, or an UNIMPLEMENTED error to answer with. */
function methodOf(service: ProviderService, name: string): ((...args: never[]) => Promise<unknown>) | Error {
  const fn = (service as unknown as Record<string, unknown>)[name];
  if (typeof fn === "function") return fn as (...args: never[]) => Promise<unknown>;
  return Object.assign(new Error(`${name} is not implemented by this provider`), {
    code: status.UNIMPLEMENTED,
  });
}

/** The RPC names the tfplugin6 service answers; the rest are absent, and so UNIMPLEMENTED. */
function providerHandlers(
  def: ServiceDefinition,
  getService: () => Promise<ProviderService>,
  log: Logger,
  schemaResponse: () => Buffer | undefined,
): UntypedServiceImplementation {
  const handlers: UntypedServiceImplementation = {};
  const failed = (name: string, err: unknown) => {
    const code = grpcCode(err);
    if (code !== status.UNIMPLEMENTED) log.error("RPC failed", { tf_rpc: name, error: err });
    return { code, details: err instanceof Error ? err.message : String(err) };
  };
  for (const [name, method] of Object.entries(def)) {
    if (method.requestStream) continue;
    if (method.responseStream) {
      handlers[name] = (call: ServerWritableStream<object, object>) => serveStream(name, call);
      continue;
    }
    handlers[name] = (call: ServerUnaryCall<object, object>, callback: sendUnaryData<object>) => {
      const started = Date.now();
      if (log.enabled("trace")) log.trace("received RPC", { tf_rpc: name });
      const encoded = name === "GetProviderSchema" ? schemaResponse() : undefined;
      if (encoded) {
        if (log.enabled("trace")) log.trace("served RPC from the build's schema", { tf_rpc: name });
        callback(null, encoded);
        return;
      }
      getService()
        .then((service) => {
          const fn = methodOf(service, name);
          if (fn instanceof Error) {
            // StopProvider must succeed even for a service without in-flight work to cancel.
            if (name === "StopProvider") return { Error: "" };
            throw fn;
          }
          return (fn as unknown as Handler).call(service, call.request);
        })
        .then(
          (response) => {
            if (log.enabled("trace"))
              log.trace("served RPC", { tf_rpc: name, duration_ms: Date.now() - started });
            callback(null, response);
          },
          (err: unknown) => callback(failed(name, err)),
        );
    };
  }

  /**
   * A server stream (ListResource, InvokeAction): the service writes events through an
   * EventStream, each encoded as it is sent, waiting while the client reads slower than it
   * writes. A client that cancels (Terraform has its limit, or is stopping) aborts the stream's
   * signal; what the service sends after that is dropped.
   */
  function serveStream(name: string, call: ServerWritableStream<object, object>): void {
    const started = Date.now();
    if (log.enabled("trace")) log.trace("received RPC", { tf_rpc: name, stream: true });
    const cancelled = new AbortController();
    call.on("cancelled", () => cancelled.abort());
    let sent = 0;
    const stream: EventStream<object> = {
      signal: cancelled.signal,
      send: (event) =>
        new Promise<void>((resolve) => {
          if (cancelled.signal.aborted || call.writableEnded) return resolve();
          sent += 1;
          if (call.write(event)) return resolve();
          const go = () => {
            call.off("drain", go);
            cancelled.signal.removeEventListener("abort", go);
            resolve();
          };
          call.on("drain", go);
          cancelled.signal.addEventListener("abort", go);
        }),
    };
    getService()
      .then((service) => {
        const fn = methodOf(service, name);
        if (fn instanceof Error) throw fn;
        return (fn as unknown as StreamHandler).call(service, call.request, stream);
      })
      .then(
        () => {
          if (log.enabled("trace"))
            log.trace("served RPC", { tf_rpc: name, events: sent, duration_ms: Date.now() - started });
          if (!call.writableEnded) call.end();
        },
        (err: unknown) => {
          if (!call.writableEnded) call.emit("error", failed(name, err));
        },
      );
  }
  return handlers;
}

function grpcCode(err: unknown): status {
  const code = (err as { code?: unknown } | null)?.code;
  return code === status.UNIMPLEMENTED ? status.UNIMPLEMENTED : status.INTERNAL;
}

/**
 * Encodes the response of an RPC as this server sends it. The build encodes the GetProviderSchema
 * answer with it (scripts/build/bundle-provider.js), and a handler may then answer with those bytes.
 */
export function encodeResponse(service: string, rpc: string, response: object): Buffer {
  const method = serviceDefinition(service)[rpc];
  if (!method) throw new Error(`no RPC ${rpc} in ${service}`);
  return method.responseSerialize(response);
}
