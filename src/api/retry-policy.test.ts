import {
  type AttemptFailure,
  connectionPhase,
  isIdempotent,
  type Method,
  mayHaveBeenApplied,
  type RetryVerdict,
  retryVerdict,
} from "./retry-policy";

// The whole retry classification as one table: every method against every status the API or a
// proxy can answer, every connection phase and the attempt timeout. A change to any cell (500
// added to deploy retries, 504 dropped from safe retries, a POST resent after a lost connection)
// fails here, naming the cell.

const METHODS: readonly Method[] = ["GET", "DELETE", "POST"];

/** Every 4xx and 5xx status HTTP defines, plus a few unassigned ones servers send anyway. */
const STATUSES: readonly number[] = [
  400, 401, 402, 403, 404, 405, 406, 407, 408, 409, 410, 411, 412, 413, 414, 415, 416, 417, 418, 421, 422,
  423, 424, 425, 426, 428, 429, 431, 451, 499, 500, 501, 502, 503, 504, 505, 506, 507, 508, 510, 511, 520,
  599,
];

/** The expected verdict of every cell, written out: idempotent methods, then POST. */
function expected(method: Method, failure: AttemptFailure): RetryVerdict {
  const idempotent = method !== "POST";
  if (failure.kind === "status") {
    switch (failure.status) {
      case 429: // rate limited: not acted on
      case 503: // unavailable: not acted on
        return "retry";
      case 500:
      case 502:
      case 504:
        return idempotent ? "retry" : "ambiguous";
      default:
        return "fail";
    }
  }
  if (failure.kind === "connection" && failure.phase === "unsent") return "retry";
  return idempotent ? "retry" : "ambiguous";
}

const FAILURES: readonly AttemptFailure[] = [
  ...STATUSES.map((status): AttemptFailure => ({ kind: "status", status })),
  { kind: "connection", phase: "unsent" },
  { kind: "connection", phase: "sent" },
  { kind: "timeout" },
];

const describeFailure = (f: AttemptFailure) =>
  f.kind === "status" ? `HTTP ${f.status}` : f.kind === "connection" ? `connection ${f.phase}` : "timeout";

describe("retryVerdict: every method x status x phase", () => {
  const cells = METHODS.flatMap((method) =>
    FAILURES.map(
      (failure) => [method, describeFailure(failure), failure, expected(method, failure)] as const,
    ),
  );
  test.each(cells)("%s after %s", (method, _name, failure, verdict) => {
    expect(retryVerdict(method, failure)).toBe(verdict);
  });
});

describe("the rules the table encodes", () => {
  test("a deploy (POST) is never sent again after a 500, 502 or 504, nor after a lost connection or timeout", () => {
    for (const f of [
      { kind: "status", status: 500 },
      { kind: "status", status: 502 },
      { kind: "status", status: 504 },
      { kind: "connection", phase: "sent" },
      { kind: "timeout" },
    ] as AttemptFailure[]) {
      expect([describeFailure(f), retryVerdict("POST", f)]).toEqual([describeFailure(f), "ambiguous"]);
    }
  });

  test("reads and DELETEs are retried on connection errors, 429, 500, 502, 503 and 504, and nothing else", () => {
    for (const method of ["GET", "DELETE"] as const) {
      const retried = STATUSES.filter(
        (status) => retryVerdict(method, { kind: "status", status }) === "retry",
      );
      expect([method, retried]).toEqual([method, [429, 500, 502, 503, 504]]);
      expect(retryVerdict(method, { kind: "connection", phase: "unsent" })).toBe("retry");
      expect(retryVerdict(method, { kind: "connection", phase: "sent" })).toBe("retry");
      expect(retryVerdict(method, { kind: "timeout" })).toBe("retry");
    }
  });

  test("a POST is resent only when it provably did nothing: refused before it left, or 429/503", () => {
    const retried = FAILURES.filter((f) => retryVerdict("POST", f) === "retry").map(describeFailure);
    expect(retried).toEqual(["HTTP 429", "HTTP 503", "connection unsent"]);
  });

  test("what may have been applied is exactly what a POST must not resend", () => {
    for (const f of FAILURES) {
      expect([describeFailure(f), mayHaveBeenApplied(f)]).toEqual([
        describeFailure(f),
        retryVerdict("POST", f) === "ambiguous",
      ]);
    }
  });

  test("only GET and DELETE are idempotent", () => {
    expect(METHODS.filter(isIdempotent)).toEqual(["GET", "DELETE"]);
  });
});

describe("connectionPhase: which connection failures prove the request never left", () => {
  // Failures before the request is written: DNS, routing, refused or timed-out connects, and TLS
  // refusing the server's certificate (the handshake comes before the request).
  const BEFORE_SENDING = [
    "ECONNREFUSED",
    "ENOTFOUND",
    "EAI_AGAIN",
    "EHOSTUNREACH",
    "ENETUNREACH",
    "EADDRNOTAVAIL",
    "UND_ERR_CONNECT_TIMEOUT",
    "ERR_TLS_CERT_ALTNAME_INVALID",
    "DEPTH_ZERO_SELF_SIGNED_CERT",
    "SELF_SIGNED_CERT_IN_CHAIN",
    "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
    "CERT_HAS_EXPIRED",
  ];
  // Failures that can come after the request reached the server.
  const MAYBE_SENT = [
    "ECONNRESET",
    "EPIPE",
    "ETIMEDOUT",
    "UND_ERR_SOCKET",
    "UND_ERR_CLOSED",
    "UND_ERR_HEADERS_TIMEOUT",
    "UND_ERR_BODY_TIMEOUT",
    "ERR_SSL_WRONG_VERSION_NUMBER",
    "",
  ];

  test.each(BEFORE_SENDING)("%s before any answer: unsent, so even a deploy is sent again", (code) => {
    expect(connectionPhase(code, false)).toBe("unsent");
    expect(retryVerdict("POST", { kind: "connection", phase: connectionPhase(code, false) })).toBe("retry");
  });

  test.each(BEFORE_SENDING)("%s once the answer's headers came: sent", (code) => {
    expect(connectionPhase(code, true)).toBe("sent");
  });

  test.each(MAYBE_SENT)("%j: sent, so a deploy is ambiguous", (code) => {
    expect(connectionPhase(code, false)).toBe("sent");
    expect(retryVerdict("POST", { kind: "connection", phase: connectionPhase(code, false) })).toBe(
      "ambiguous",
    );
  });

  test("an error without a code: sent", () => {
    expect(connectionPhase(undefined, false)).toBe("sent");
  });
});
