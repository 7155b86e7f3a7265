/**
 * Answers to requests that never become requests: bytes Node's HTTP parser refuses (headers over
 * 16 KiB, broken chunked encoding, Content-Length with Transfer-Encoding, TLS sent to the plain
 * port) and requests that stall before they are complete. Node reports these as `clientError`
 * before Fastify sees anything, so the documented error body is written on the socket here.
 * Routes, faults and the error shape of real requests stay in `http.ts`.
 */
import { randomUUID } from "node:crypto";
import { type ServerOptions, STATUS_CODES } from "node:http";
import type { Socket } from "node:net";

/** Time limits on receiving one request; docs/api-shapes.md states the defaults. */
export interface RequestTimeouts {
  /** The request line and headers must be in within this long of the request's start. */
  headersMs: number;
  /** The whole request, body included, must be in within this long of its start. */
  requestMs: number;
}

/** Default limits: generous for any real client, short enough that a stalled one is told. */
export const DEFAULT_REQUEST_TIMEOUTS: RequestTimeouts = { headersMs: 10_000, requestMs: 30_000 };

/** How long a refused connection keeps draining what the client still sends before it is cut. */
const LINGER_MS = 5_000;

interface Refusal {
  status: number;
  code: string;
  message: string;
}

type ParserError = NodeJS.ErrnoException & { rawPacket?: Buffer; reason?: string };

// The HTTP parser (llhttp) names what it refused in `reason`, a fixed text such as
// "Transfer-Encoding can't be present with Content-Length" or "Expected LF after chunk data"; it
// never repeats the request's bytes, so it is safe to pass on.
function refusalFor(err: ParserError, timeouts: RequestTimeouts): Refusal {
  if (err.code === "HPE_HEADER_OVERFLOW") {
    return { status: 431, code: "HEADERS_TOO_LARGE", message: "The request line and headers exceed 16 KiB" };
  }
  if (err.code === "ERR_HTTP_REQUEST_TIMEOUT") {
    return {
      status: 408,
      code: "REQUEST_TIMEOUT",
      message: `The request was not complete in time (headers within ${timeouts.headersMs} ms, the whole request within ${timeouts.requestMs} ms)`,
    };
  }
  // A TLS record starts with 0x16 (handshake) then the major version 3.
  const raw = err.rawPacket;
  if (raw && raw.length >= 2 && raw[0] === 0x16 && raw[1] === 0x03) {
    return {
      status: 400,
      code: "BAD_REQUEST",
      message: "This port speaks plain HTTP; TLS was sent to it (use http://, not https://)",
    };
  }
  const reason =
    typeof err.reason === "string" && err.reason !== "" ? err.reason : (err.code ?? "unreadable");
  return { status: 400, code: "BAD_REQUEST", message: `The request is not valid HTTP/1.1: ${reason}` };
}

/** What Node keeps on a server socket about the response in progress, if any. */
type ServerSocket = Socket & { _httpMessage?: { headersSent?: boolean } | null };

const answered = new WeakSet<Socket>();

/** Node server options carrying the limits (Fastify's own `requestTimeout` must repeat requestMs). */
export function serverOptions(timeouts: RequestTimeouts): ServerOptions {
  return {
    headersTimeout: timeouts.headersMs,
    requestTimeout: timeouts.requestMs,
    // Node looks for expired requests on this period (30 s by default), so it bounds how late a
    // timeout answer can come.
    connectionsCheckingInterval: Math.max(10, Math.min(1_000, Math.floor(timeouts.headersMs / 2))),
  };
}

/**
 * The `clientError` handler: every refused or stalled request gets the documented error body with
 * its X-Request-Id, a Content-Length that matches, and a clean close.
 */
export function clientErrorHandler(
  timeouts: RequestTimeouts,
): (err: NodeJS.ErrnoException, socket: Socket) => void {
  return (e, s) => {
    const socket = s as ServerSocket;
    const err = e as ParserError;
    // The parser may report again on data that follows; the first answer is the only one.
    if (answered.has(socket)) return;
    answered.add(socket);
    // Nothing can be said on a reset connection, nor in the middle of a response already begun.
    if (err.code === "ECONNRESET" || !socket.writable || socket._httpMessage?.headersSent) {
      socket.destroy();
      return;
    }
    const refusal = refusalFor(err, timeouts);
    const requestId = randomUUID();
    const body = JSON.stringify({
      error: { code: refusal.code, message: refusal.message, request_id: requestId },
    });
    socket.end(
      [
        `HTTP/1.1 ${refusal.status} ${STATUS_CODES[refusal.status] ?? "Error"}`,
        "Content-Type: application/json; charset=utf-8",
        `Content-Length: ${Buffer.byteLength(body)}`,
        `X-Request-Id: ${requestId}`,
        "Connection: close",
        "",
        body,
      ].join("\r\n"),
    );
    // Lingering close: closing while the client is still sending (the rest of a 70 KB header)
    // would reset the connection, and a client that reads only once it has written everything
    // would lose the answer. Drain and drop its bytes until it closes, for a few seconds at most.
    socket.on("data", () => {});
    socket.resume();
    const cut = setTimeout(() => socket.destroy(), LINGER_MS);
    cut.unref();
    socket.once("close", () => clearTimeout(cut));
  };
}
