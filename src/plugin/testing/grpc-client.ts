import {
  type CallOptions,
  type ChannelCredentials,
  type ClientReadableStream,
  credentials,
  makeGenericClientConstructor,
  status,
} from "@grpc/grpc-js";
import { serviceDefinition } from "../proto";

// A go-plugin host in miniature for tests: a grpc-js client of the provider's services that dials
// the address from a handshake line, with or without a client certificate, for unary calls and
// server streams.

/** A client of one of the provider's services. */
export interface TestClient {
  /** Calls `method` with `request`; rejects with the gRPC error (with `.code`). */
  call(method: string, request?: object, options?: CallOptions): Promise<Record<string, unknown>>;
  /**
   * Calls a server-streaming `method` and collects its events until the stream ends; rejects with
   * the gRPC error. With `take`, cancels the call once it has that many events, as Terraform does
   * at a list's limit, and resolves with them.
   */
  stream(
    method: string,
    request?: object,
    opts?: { take?: number; options?: CallOptions },
  ): Promise<Record<string, unknown>[]>;
  /** Closes the channel. */
  close(): void;
}

/** Parsed fields of a handshake line. */
export interface ParsedHandshake {
  core: string;
  protocol: string;
  network: string;
  address: string;
  transport: string;
  cert: string;
}

/** Splits a handshake line into its fields. */
export function parseHandshake(line: string): ParsedHandshake {
  const [core = "", protocol = "", network = "", address = "", transport = "", cert = ""] = line
    .trim()
    .split("|");
  return { core, protocol, network, address, transport, cert };
}

/** TLS credentials as go-plugin's client builds them: the server cert as the only root, our cert as client cert. */
export function tlsCredentials(
  serverCertPem: string,
  client?: { certPem: string; keyPem: string },
): ChannelCredentials {
  return credentials.createSsl(
    Buffer.from(serverCertPem),
    client ? Buffer.from(client.keyPem) : null,
    client ? Buffer.from(client.certPem) : null,
  );
}

/** Connects to `address` (host:port or unix socket path) and returns a client of `service`. */
export function connect(
  address: string,
  service: "tfplugin6.Provider" | "plugin.GRPCController" | "grpc.health.v1.Health",
  creds: ChannelCredentials = credentials.createInsecure(),
): TestClient {
  const Ctor = makeGenericClientConstructor(serviceDefinition(service), service);
  const target = address.startsWith("/") ? `unix://${address}` : address;
  const client = new Ctor(target, creds, {
    "grpc.ssl_target_name_override": "localhost",
    "grpc.default_authority": "localhost",
    "grpc.max_receive_message_length": 256 * 1024 * 1024,
  });
  return {
    call(method, request = {}, options = { deadline: Date.now() + 10_000 }) {
      return new Promise((resolve, reject) => {
        type Unary = (
          req: object,
          opts: CallOptions,
          cb: (err: Error | null, res: Record<string, unknown>) => void,
        ) => void;
        const fn = (client as unknown as Record<string, Unary | undefined>)[method];
        if (typeof fn !== "function") return reject(new Error(`no method ${method}`));
        fn.call(client, request, options, (err, res) => (err ? reject(err) : resolve(res)));
      });
    },
    stream(method, request = {}, { take, options = { deadline: Date.now() + 30_000 } } = {}) {
      return new Promise((resolve, reject) => {
        type Streaming = (req: object, opts: CallOptions) => ClientReadableStream<Record<string, unknown>>;
        const fn = (client as unknown as Record<string, Streaming | undefined>)[method];
        if (typeof fn !== "function") return reject(new Error(`no method ${method}`));
        const call = fn.call(client, request, options);
        const events: Record<string, unknown>[] = [];
        call.on("data", (event: Record<string, unknown>) => {
          events.push(event);
          if (take !== undefined && events.length >= take) {
            call.cancel();
            resolve(events);
          }
        });
        call.on("error", (err: Error & { code?: number }) => {
          if (err.code === status.CANCELLED && take !== undefined) resolve(events);
          else reject(err);
        });
        call.on("end", () => resolve(events));
      });
    },
    close() {
      client.close();
    },
  };
}
