// What the client's transport tests share: a tiny server that answers each request by the next
// handler of its script, the handlers, and a client of it whose sleeps and logs are recorded. It
// registers Jest hooks (a fresh server and agent per test), so the build leaves this folder out.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Agent } from "undici";
import { GpurentalClient, type LogLevel } from "../api/client";

export const TOKEN = `gpr_${"ab12".repeat(12)}`;
export const ORG = "00000000-0000-4000-8000-0000000000a1";

export interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: string;
}

export type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void;

export class ScriptedServer {
  readonly seen: Seen[] = [];
  private readonly script: Handler[] = [];
  private fallback: Handler = (_req, res) =>
    json(res, 500, { error: { code: "INTERNAL", message: "unscripted" } });
  private server!: Server;
  url = "";

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      let body = "";
      req.on("data", (c: Buffer) => {
        body += c.toString("utf8");
      });
      req.on("end", () => {
        this.seen.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers, body });
        const h = this.script.shift() ?? this.fallback;
        h(req, res, body);
      });
    });
    await new Promise<void>((r) => this.server.listen(0, "127.0.0.1", r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Queues handlers for the next requests, in order. */
  queue(...handlers: Handler[]): this {
    this.script.push(...handlers);
    return this;
  }

  always(h: Handler): this {
    this.fallback = h;
    return this;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}

export function json(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "x-request-id": "req-1", ...headers });
  res.end(text);
}

export const ok =
  (body: unknown, status = 200): Handler =>
  (_req, res) =>
    json(res, status, body);
export const fail =
  (
    status: number,
    code: string,
    extra: Record<string, unknown> = {},
    headers: Record<string, string> = {},
  ): Handler =>
  (_req, res) =>
    json(res, status, { error: { code, message: `${code} happened`, ...extra } }, headers);
export const drop: Handler = (req) => req.socket.destroy();
export const hang: Handler = () => {};

export let server: ScriptedServer;
export let agent: Agent;
export let sleeps: number[];
export let logs: { level: LogLevel; msg: string; fields: Record<string, unknown> }[];

export function client(
  extra: Partial<ConstructorParameters<typeof GpurentalClient>[0]> = {},
): GpurentalClient {
  return new GpurentalClient({
    baseUrl: server.url,
    token: TOKEN,
    dispatcher: agent,
    retry: { maxAttempts: 4, baseDelayMs: 10, maxDelayMs: 100, deadlineMs: 30_000 },
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    // Half of each jitter range: a Retry-After of 2 s waits 2005 ms, backoff n waits half its cap.
    random: () => 0.5,
    logger: (level, msg, fields) => logs.push({ level, msg, fields }),
    ...extra,
  });
}

beforeEach(async () => {
  server = new ScriptedServer();
  await server.start();
  // A fresh agent per test: no keep-alive socket outlives the server it was opened to.
  agent = new Agent({ keepAliveTimeout: 10 });
  sleeps = [];
  logs = [];
});

afterEach(async () => {
  await agent.close();
  await server.stop();
});

export const deployBody = { offer_id: "o-1", template_id: "t-1", disk_gb: 50 };
