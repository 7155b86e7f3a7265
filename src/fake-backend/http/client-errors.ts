/**
 * Answers to requests that never become requests: bytes Node's HTTP parser refuses (headers over
 * 16 KiB, broken chunked encoding, Content-Length with Transfer-Encoding, TLS sent to the plain
 * port) and requests that stall before they are complete. Node reports these as `clientError`
 * before Fastify sees anything, so the documented error body is written on the socket here. The
 * same raw answer, with its lingering close, serves the requests Fastify refuses before reading
 * their body (413) and unknown expectations (417). Routes, faults and the error shape of real
 * requests stay in `http.ts`.
 */
import { randomUUID } from "node:crypto";
import { type IncomingMessage, type Server, type ServerOptions, STATUS_CODES } from "node:http";
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

/** An error answer written on the socket itself. */
export interface Refusal {
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
type ServerSocket = Socket & {
  _httpMessage?: {
    writableFinished?: boolean;
    /** The request answered; `complete` once its body was read whole. */
    req?: { complete?: boolean };
    once(event: "finish", fn: () => void): unknown;
  } | null;
};

const answered = new WeakSet<Socket>();

/** Node server options carrying the limits (Fastify's own `requestTimeout` must repeat requestMs). */
export function serverOptions(timeouts: RequestTimeouts): ServerOptions {
  return {
    headersTimeout: timeouts.headersMs,
    requestTimeout: timeouts.requestMs,
    // A missing Host is answered by the fake in the documented shape (http.ts), not by Node.
    requireHostHeader: false,
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
    // Nothing can be said on a reset connection.
    if (err.code === "ECONNRESET" || !socket.writable) {
      socket.destroy();
      return;
    }
    // The bytes the parser refused may follow requests it read before (pipelining): their answers
    // come first, whole, and this one after them, so that none is cut short or lost.
    afterAnswersInFlight(socket, () => answerOnSocket(socket, refusalFor(err, timeouts)));
  };
}

/**
 * Runs `then` once the answers to the requests read whole before on the socket have been written
 * out. The request the refused bytes belong to (its body broken or stalled) is not waited for.
 */
function afterAnswersInFlight(socket: ServerSocket, then: () => void): void {
  const current = socket._httpMessage;
  if (socket.destroyed) return;
  if (!current || current.writableFinished || current.req?.complete !== true) {
    then();
    return;
  }
  // Node hands the socket to the next queued answer right after this one finishes.
  current.once("finish", () => setImmediate(() => afterAnswersInFlight(socket, then)));
}

/**
 * Writes the documented error answer on the socket and closes it with a lingering close: closing
 * while the client is still sending (the rest of a 70 KB header, a body over the limit) would
 * reset the connection, and a client that reads only once it has written everything would lose
 * the answer. What the client still sends is read and dropped until it closes, for a few seconds
 * at most. No other answer is written on the socket after this one.
 */
export function answerOnSocket(s: Socket, refusal: Refusal, requestId: string = randomUUID()): void {
  answered.add(s);
  const body = JSON.stringify({
    error: { code: refusal.code, message: refusal.message, request_id: requestId },
  });
  s.end(
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
  s.on("data", () => {});
  s.resume();
  const cut = setTimeout(() => s.destroy(), LINGER_MS);
  cut.unref();
  s.once("close", () => clearTimeout(cut));
}

/**
 * Answers requests carrying an `Expect` other than `100-continue` (Node's own answer is a bare 417)
 * with 417 EXPECTATION_FAILED in the documented shape.
 */
export function answerUnknownExpectations(server: Server): void {
  server.on("checkExpectation", (req: IncomingMessage) => {
    // The body the request announced is never read: the answer closes the connection.
    answerOnSocket(req.socket, {
      status: 417,
      code: "EXPECTATION_FAILED",
      message: "Only Expect: 100-continue is supported",
    });
  });
}
