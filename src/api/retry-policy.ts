// Which failed attempts of a request are sent again: one pure function of the request's method
// and of what went wrong. The transport (transport.ts) acts on the verdict, within the deadline of
// the operation the request belongs to; retry-policy.test.ts pins every status x method x phase.
//
// The rule: a request is sent again when sending it twice cannot do anything twice. Reads and
// DELETEs can always be sent again (contract 3.2 and 4.1: a repeated DELETE finds the instance
// destroying or destroyed, the key gone, and the callers count that as done). A POST creates
// something (a deploy, a key, a top-up) or is a new stop or start (each client request has its own
// identity, contract 3.2), so it is sent again only when it provably did nothing: the connection
// failed before any byte of it can have reached the server, or the server answered that it did not
// act on it (429 rate limited, 503 unavailable). After anything else it may have been applied, and
// the caller reconciles (looks for what it created) instead.

/** HTTP methods of the /v1 API. */
/**
 * Codes by which a TCP connection was never opened: the address did not resolve or answer, the
 * connection was refused or its connect timed out. No byte of a request can have left, so the
 * retry policy counts them as unsent; network/connection-errors.ts adds its own.
 */
export const UNOPENED_CONNECTION: ReadonlySet<string> = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EADDRNOTAVAIL",
  "UND_ERR_CONNECT_TIMEOUT",
]);

export type Method = "GET" | "POST" | "DELETE";

/** What went wrong with one attempt of a request. */
export type AttemptFailure =
  /** The server answered with this non-2xx status. */
  | { kind: "status"; status: number }
  /**
   * The connection failed. `unsent`: before any byte of the request can have reached the server
   * (connection refused, DNS, TLS, connect timeout); `sent`: afterwards (reset, closed before the
   * answer was complete), so the server may have acted on it.
   */
  | { kind: "connection"; phase: "unsent" | "sent" }
  /** No complete answer within the attempt's time limit; the server may have acted on it. */
  | { kind: "timeout" };

/**
 * What to do after a failed attempt:
 * - `retry`: send it again after a wait, within the operation's deadline;
 * - `ambiguous`: it may have been applied and must not be sent again; the caller reconciles;
 * - `fail`: the answer is final; report it.
 */
export type RetryVerdict = "retry" | "ambiguous" | "fail";

/** Statuses by which the server says it did not act on the request and asks to be asked later. */
export const REFUSAL_STATUSES: ReadonlySet<number> = new Set([429, 503]);

/** Statuses after which the request may or may not have been applied (a proxy or the server failed). */
export const AMBIGUOUS_STATUSES: ReadonlySet<number> = new Set([500, 502, 504]);

/**
 * Codes of connection errors raised before a byte of the request can have been written: the
 * address did not resolve or answer, the connection was refused or timed out, or TLS refused the
 * server's certificate (the handshake precedes the request).
 */
export const UNSENT_CODES: ReadonlySet<string> = new Set([
  ...UNOPENED_CONNECTION,
  "ERR_TLS_CERT_ALTNAME_INVALID",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "CERT_HAS_EXPIRED",
]);

/**
 * The phase of a failed connection (see {@link AttemptFailure}): `unsent` only when no answer had
 * begun (`gotHeaders` false) and the error's code proves the request never left; any other failure
 * (a reset, a socket closed mid-answer, a code not known here) may have reached the server.
 */
export function connectionPhase(code: string | undefined, gotHeaders: boolean): "unsent" | "sent" {
  return !gotHeaders && code !== undefined && UNSENT_CODES.has(code) ? "unsent" : "sent";
}

/** Whether sending the request again is harmless: reads and DELETEs. */
export function isIdempotent(method: Method): boolean {
  return method === "GET" || method === "DELETE";
}

/** Whether the server may have acted on a request whose attempt failed this way. */
export function mayHaveBeenApplied(failure: AttemptFailure): boolean {
  switch (failure.kind) {
    case "status":
      return AMBIGUOUS_STATUSES.has(failure.status);
    case "connection":
      return failure.phase === "sent";
    case "timeout":
      return true;
  }
}

/** The verdict on a failed attempt of a request with this method; see {@link RetryVerdict}. */
export function retryVerdict(method: Method, failure: AttemptFailure): RetryVerdict {
  const refused = failure.kind === "status" && REFUSAL_STATUSES.has(failure.status);
  const unsent = failure.kind === "connection" && failure.phase === "unsent";
  if (refused || unsent) return "retry";
  if (!mayHaveBeenApplied(failure)) return "fail";
  return isIdempotent(method) ? "retry" : "ambiguous";
}
