import { createServer, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { createProxy, type ProxyServer } from "proxy";

// A real HTTP proxy for tests (the `proxy` package: CONNECT tunnels and plain forwarding) that
// resolves test host names itself, as a corporate proxy resolves names the client cannot: Go and
// this client never proxy localhost or loopback addresses, so tests reach the fake backend through
// the proxy by a name such as api.gpurental.test that only the proxy maps to 127.0.0.1. It counts
// tunnels, can ask for credentials (407), refuse hosts (403), and be killed and restarted on its port.

/** The name tests use for the fake backend behind the proxy. */
export const TEST_API_HOST = "api.gpurental.test";

/** Options of {@link startTestProxy}. */
export interface TestProxyOptions {
  /** Host names the proxy resolves itself: name -> address. Default api.gpurental.test -> 127.0.0.1. */
  hosts?: Record<string, string>;
  /** `user:password` the proxy requires (answering 407 without it). */
  credentials?: string;
  /** Host names whose tunnels are refused with 403. */
  deny?: readonly string[];
  /** Port to listen on; default a free one. */
  port?: number;
}

/** A running test proxy. */
export interface TestProxy {
  /** `http://127.0.0.1:PORT`. */
  readonly url: string;
  readonly port: number;
  /** `host:port` of every CONNECT received, in order (before mapping). */
  readonly connects: string[];
  /** Stops listening and cuts every open tunnel (as a killed proxy would). */
  kill(): Promise<void>;
  /** Listens again on the same port. */
  restart(): Promise<void>;
}

/** Starts a test proxy on 127.0.0.1. */
export async function startTestProxy(opts: TestProxyOptions = {}): Promise<TestProxy> {
  const hosts = opts.hosts ?? { [TEST_API_HOST]: "127.0.0.1" };
  const connects: string[] = [];
  const sockets = new Set<Socket>();
  let server: Server;
  let port = opts.port ?? 0;

  const make = (): ProxyServer => {
    const s = createProxy(createServer());
    s.on("connection", (sock: Socket) => {
      sockets.add(sock);
      sock.on("close", () => sockets.delete(sock));
    });
    // The package's CONNECT handler runs after this one has recorded, refused or mapped the target.
    const tunnel = s.listeners("connect")[0] as (req: unknown, socket: Socket, head: Buffer) => void;
    s.removeAllListeners("connect");
    s.on("connect", (req: { url?: string }, socket: Socket, head: Buffer) => {
      const target = req.url ?? "";
      connects.push(target);
      const i = target.lastIndexOf(":");
      const host = target.slice(0, i).replace(/^\[|\]$/g, "");
      if (opts.deny?.includes(host)) {
        socket.end("HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n");
        return;
      }
      const mapped = hosts[host];
      if (mapped) req.url = `${mapped}${target.slice(i)}`;
      tunnel.call(s, req, socket, head);
    });
    if (opts.credentials) {
      const expected = `Basic ${Buffer.from(opts.credentials).toString("base64")}`;
      s.authenticate = (req) => req.headers["proxy-authorization"] === expected;
    }
    return s;
  };

  const listen = async () => {
    server = make();
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, "127.0.0.1", () => resolve());
    });
    port = (server.address() as AddressInfo).port;
  };
  await listen();

  return {
    get url() {
      return `http://127.0.0.1:${port}`;
    },
    get port() {
      return port;
    },
    connects,
    kill: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
    restart: listen,
  };
}
