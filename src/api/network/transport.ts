import { isIP } from "node:net";
import { connect as tlsConnect } from "node:tls";
import { type Dispatcher, request } from "undici";
import type { z } from "zod";
import {
  AmbiguousRequestError,
  ApiError,
  ClientConfigError,
  ConnectionSetupError,
  type Endpoint,
  NetworkError,
  RequestAbortedError,
  ResponseValidationError,
  TimeoutError,
} from "../errors";
import { REDACTED, redactText, redactValue } from "../redact";
import { apiErrorOf, isRecord, parseBody } from "../responses";
import { parseRetryAfter, type ResolvedRetryOptions, retryDelay, type Sleep } from "../retry";
import {
  type AttemptFailure,
  connectionPhase,
  type Method,
  mayHaveBeenApplied,
  retryVerdict,
} from "../retry-policy";
import { type ConnectionContext, classifyConnectionError, httpToTlsPort } from "./connection-errors";
import type { Network } from "./network";

// Sending one call of the client: attempts over undici, each bounded by the attempt timeout, retried
// as retry-policy.ts decides until the call's deadline, with jittered backoff or the server's
// Retry-After between them. Every attempt, answer and wait is logged with credentials masked.
// What the endpoints are is client.ts; reading the answers is responses.ts.
//
// Until the API has answered this client once, failing connections are more likely a wrong
// address, proxy or certificate than a passing outage: they are retried for at most
// FIRST_CONTACT_BUDGET_MS (counted from the first failure), with the wait logged at info, and the
// error then says how long it tried. Failures that no retry can mend (certificates, scheme against
// port, proxy credentials or policy: connection-errors.ts) are not retried at all. Once the API
// has answered, transient failures are retried until the call's deadline as before.

/** How long a client that has never reached the API keeps trying before it gives up. */
export const FIRST_CONTACT_BUDGET_MS = 20_000;

/** After this long without reaching the API, the wait is logged at info. */
const WAIT_NOTICE_MS = 3_000;

/** Log severity passed to the client's logger. */
export type LogLevel = "debug" | "info" | "warn" | "error";

/**
 * Receives the client's log lines; credentials are masked before it is called. A logger that
 * drops some levels may say which with `enabled`: the client then skips masking the lines it would
 * drop (a debug line per request, masked field by field, costs more than the request's own
 * bookkeeping).
 */
export type Logger = ((level: LogLevel, msg: string, fields: Record<string, unknown>) => void) & {
  enabled?: (level: LogLevel) => boolean;
};

/** A value of a query parameter; undefined and null leave the parameter out. */
export type QueryValue = string | number | boolean | undefined | null;

/** One call of an endpoint. */
export interface Call<T> {
  method: Method;
  /** Path template, e.g. `/v1/instances/{id}`; it names the endpoint in errors and logs. */
  path: `/${string}`;
  params?: Record<string, string>;
  query?: Record<string, QueryValue> | undefined;
  body?: unknown;
  /** Schema of a 2xx body; absent for 204 responses. */
  schema?: z.ZodType<T>;
  signal?: AbortSignal | undefined;
  /** The call's time budget; the transport's default when absent. */
  deadlineMs?: number | undefined;
  /** Not stopped by the client's signal when it has a signal of its own (RequestOptions.outlivesStop). */
  outlivesStop?: boolean | undefined;
  /**
   * Values this request sends that are secret (a deploy's secret environment values): masked,
   * with the client's token, in its errors and log records, should the server echo one back.
   */
  secrets?: readonly string[] | undefined;
}

/** What the transport is built with; the client validates it first. */
export interface TransportSettings {
  /** The normalised base URL, without a trailing slash. */
  baseUrl: string;
  /** Where the base URL was configured, named in connection errors (e.g. `base_url`). */
  baseUrlSource: string | undefined;
  token: string;
  headers: Record<string, string>;
  timeoutMs: number;
  retry: ResolvedRetryOptions;
  dispatcher: Dispatcher | undefined;
  /** The proxy and trust settings; the dispatcher comes from them unless one is given. */
  network: Network | undefined;
  logger: Logger | undefined;
  signal: AbortSignal | undefined;
  sleep: Sleep;
  now: () => number;
  random: () => number;
}

type AttemptOutcome =
  | { kind: "response"; status: number; headers: Record<string, string | string[] | undefined>; text: string }
  | { kind: "failure"; phase: "unsent" | "sent"; error: unknown; code: string | undefined }
  | { kind: "timeout" }
  | { kind: "aborted" };

/** Sends the client's calls; one per client. */
export class Transport {
  // A private field: util.inspect, JSON.stringify and spreading never see the token.
  readonly #s: TransportSettings;
  /** Whether the API has answered this client at least once. */
  #reached = false;
  /** When the first failed attempt of a client that has not reached the API started. */
  #unreachedSince: number | undefined;
  #unreachedAttempts = 0;
  #lastWaitNotice = 0;

  constructor(settings: TransportSettings) {
    this.#s = settings;
  }

  /** Whether the API has answered this client at least once. */
  get reached(): boolean {
    return this.#reached;
  }

  /** Keeps the settings (and the token in them) out of `util.inspect`. */
  [Symbol.for("nodejs.util.inspect.custom")](): string {
    return "Transport {}";
  }

  /** Sends a call, retrying within its deadline; resolves with the parsed 2xx body. */
  async send<T>(call: Call<T>): Promise<T> {
    const endpoint: Endpoint = `${call.method} ${call.path}`;
    const url = this.#url(call);
    const linked = linkSignals([call.outlivesStop && call.signal ? undefined : this.#s.signal, call.signal]);
    try {
      return await this.#attempts(call, endpoint, url, linked.signal);
    } finally {
      linked.dispose();
    }
  }

  async #attempts<T>(call: Call<T>, endpoint: Endpoint, url: URL, signal: AbortSignal): Promise<T> {
    const { retry, now } = this.#s;
    const budgetMs = call.deadlineMs ?? retry.deadlineMs;
    const deadline = now() + budgetMs;
    // Set once an attempt failed after the request may have been applied; a later error then
    // carries the flag so callers (revoke, destroy) can tell "already done" from "never existed".
    let possiblyApplied = false;
    // The answer of the previous attempt: when the deadline cuts the next one short, the caller
    // learns what the API said (e.g. 500 INTERNAL) rather than that time ran out.
    let lastError: Error | undefined;
    const body = call.body === undefined ? undefined : JSON.stringify(call.body);
    const headers = {
      ...this.#s.headers,
      ...(body !== undefined ? { "content-type": "application/json" } : {}),
    };

    for (let attempt = 1; ; attempt++) {
      if (signal.aborted) throw new RequestAbortedError(endpoint);
      const remaining = deadline - now();
      if (remaining <= 0)
        throw this.#unreached(endpoint, lastError ?? new TimeoutError(endpoint, budgetMs, "deadline"));
      const attemptTimeout = Math.min(this.#s.timeoutMs, remaining);
      const t0 = now();
      this.#log("debug", "request", {
        endpoint,
        method: call.method,
        url: url.pathname + url.search,
        attempt,
        headers: { ...headers, authorization: `Bearer ${REDACTED}` },
      });
      const outcome = await this.#attempt(call.method, url, headers, body, attemptTimeout, signal);
      const durationMs = now() - t0;

      let failure: AttemptFailure;
      let error: Error;
      // What went wrong, in the words of an AmbiguousRequestError should this be one.
      let detail: string;
      let retryAfterMs: number | undefined;
      switch (outcome.kind) {
        case "aborted":
          this.#log("info", "aborted", { endpoint, attempt, durationMs });
          throw new RequestAbortedError(endpoint);
        case "response": {
          this.#reached = true;
          const requestId = headerValue(outcome.headers["x-request-id"]);
          const ok = outcome.status >= 200 && outcome.status < 300;
          this.#log(ok ? "debug" : "warn", "response", {
            endpoint,
            attempt,
            status: outcome.status,
            requestId,
            durationMs,
          });
          if (ok) return this.#parse(call, endpoint, outcome.status, outcome.text, requestId);
          // An HTTP-date Retry-After is wall-clock time, so it is read against Date.now, not the test clock.
          retryAfterMs = parseRetryAfter(outcome.headers["retry-after"], Date.now());
          failure = { kind: "status", status: outcome.status };
          error = apiErrorOf(
            {
              endpoint,
              status: outcome.status,
              text: outcome.text,
              headerRequestId: requestId,
              retryAfterMs,
              possiblyApplied,
            },
            this.#secrets(call),
          );
          detail = `HTTP ${outcome.status} ${(error as ApiError).code}`;
          break;
        }
        case "timeout":
          this.#log("warn", "attempt timed out", { endpoint, attempt, timeoutMs: attemptTimeout });
          failure = { kind: "timeout" };
          error = new TimeoutError(endpoint, attemptTimeout, "request", this.#where());
          detail = `no response from ${this.#where()} within ${attemptTimeout} ms`;
          break;
        case "failure": {
          const described = this.#describe(outcome.error);
          this.#log("warn", "connection failed", {
            endpoint,
            attempt,
            phase: outcome.phase,
            error: described,
            durationMs,
          });
          const verdict = await this.#classify(outcome, url, described);
          if (verdict?.kind === "setup") {
            // Nothing of the request reached the API (the handshake, the tunnel or the scheme failed
            // first), and trying again cannot help: say what to change.
            this.#log("error", "cannot connect as configured", { endpoint, problem: verdict.problem });
            throw new ConnectionSetupError(
              endpoint,
              verdict.problem,
              `cannot connect to ${this.#where()}: ${verdict.message}`,
              verdict.setting,
              outcome.code,
              { cause: this.#cleanCause(outcome.error), apiReached: this.#reached },
            );
          }
          // A proxy that could not open the tunnel never passed the request on.
          const phase =
            verdict?.kind === "transient" && /CONNECT\)$/.test(verdict.message) ? "unsent" : outcome.phase;
          failure = { kind: "connection", phase };
          detail =
            verdict?.kind === "transient"
              ? `${verdict.message} (API address ${this.#where()})`
              : `${
                  phase === "unsent"
                    ? `cannot connect to ${this.#where()}`
                    : `the connection to ${this.#where()} failed`
                }: ${described}`;
          error = new NetworkError(endpoint, detail, outcome.code, {
            cause: this.#cleanCause(outcome.error),
            apiReached: this.#reached,
          });
          break;
        }
      }

      // Never reached the API: a bounded number of tries, announced while they last.
      if (!this.#reached && failure.kind !== "status") {
        this.#unreachedSince ??= t0;
        this.#unreachedAttempts++;
        const tried = now() - this.#unreachedSince;
        if (tried >= FIRST_CONTACT_BUDGET_MS && retryVerdict(call.method, failure) === "retry") {
          throw this.#gaveUp(endpoint, error, tried);
        }
        if (tried >= WAIT_NOTICE_MS && now() - this.#lastWaitNotice >= 5_000) {
          this.#lastWaitNotice = now();
          this.#log("info", "waiting for the API", {
            endpoint,
            triedMs: tried,
            givingUpAfterMs: FIRST_CONTACT_BUDGET_MS,
            reason: error.message,
          });
        }
      }

      const verdict = retryVerdict(call.method, failure);
      if (verdict === "ambiguous") {
        throw new AmbiguousRequestError(endpoint, failure.kind, detail, {
          status: failure.kind === "status" ? failure.status : undefined,
          requestId: error instanceof ApiError ? error.requestId : undefined,
          cause: error instanceof ApiError ? error : error.cause,
        });
      }
      const cutByDeadline = failure.kind === "timeout" && attemptTimeout < this.#s.timeoutMs;
      if (cutByDeadline && lastError) throw this.#unreached(endpoint, lastError);
      if (verdict === "fail" || attempt >= retry.maxAttempts) throw this.#unreached(endpoint, error);
      let delay = retryDelay(attempt, retryAfterMs, retry, this.#s.random);
      if (!this.#reached && this.#unreachedSince !== undefined) {
        // The last try of a client that never reached the API falls at the end of its budget.
        const left = this.#unreachedSince + FIRST_CONTACT_BUDGET_MS - now();
        delay = Math.max(0, Math.min(delay, left));
      }
      // A wait the deadline cannot hold (a long Retry-After included) ends the call now, with the
      // answer that asked for it, instead of sleeping into an abort.
      if (now() + delay >= deadline) throw this.#unreached(endpoint, error);
      if (mayHaveBeenApplied(failure)) possiblyApplied = true;
      lastError = error;
      this.#log("debug", "retrying", {
        endpoint,
        attempt,
        delayMs: delay,
        retryAfterMs: retryAfterMs ?? null,
        remainingMs: deadline - now(),
        reason: error.message,
      });
      try {
        await this.#s.sleep(delay, signal);
      } catch {
        throw new RequestAbortedError(endpoint);
      }
    }
  }

  async #attempt(
    method: Method,
    url: URL,
    headers: Record<string, string>,
    body: string | undefined,
    timeoutMs: number,
    outer: AbortSignal,
  ): Promise<AttemptOutcome> {
    let timedOut = false;
    const linked = linkSignals([outer]);
    const handle = setTimeout(() => {
      timedOut = true;
      linked.abort();
    }, timeoutMs);
    // Headers arriving proves the request was written; until then a failure may be either way.
    let gotHeaders = false;
    try {
      const res = await request(url, {
        method,
        headers,
        body,
        signal: linked.signal,
        dispatcher: this.#s.dispatcher ?? this.#s.network?.dispatcher(),
        // The attempt timer bounds the whole exchange; undici's own timers would only race it.
        headersTimeout: 0,
        bodyTimeout: 0,
      });
      // Only a connection lost mid-answer can fail after the headers (UND_ERR_SOCKET, ECONNRESET),
      // and no such code proves a request unsent; the flag keeps the rule true whatever undici reports.
      // Stryker disable next-line BooleanLiteral: equivalent with undici's codes, as above.
      gotHeaders = true;
      const text = await res.body.text();
      return { kind: "response", status: res.statusCode, headers: res.headers, text };
    } catch (error) {
      if (outer.aborted) return { kind: "aborted" };
      if (timedOut) return { kind: "timeout" };
      const code = errorCode(error);
      return { kind: "failure", phase: connectionPhase(code, gotHeaders), error, code };
    } finally {
      clearTimeout(handle);
      linked.dispose();
    }
  }

  #parse<T>(call: Call<T>, endpoint: Endpoint, status: number, text: string, requestId?: string): T {
    try {
      return parseBody(call.schema, endpoint, status, text, requestId, this.#secrets(call));
    } catch (err) {
      if (err instanceof ResponseValidationError) {
        this.#log(
          "error",
          "response does not match schema",
          { endpoint, status, requestId, issues: err.issues },
          call,
        );
      }
      throw err;
    }
  }

  /** A call's last error, saying how long it tried when the API has never answered this client. */
  #unreached(endpoint: Endpoint, error: Error): Error {
    // One try says nothing of how long; a timeout keeps its own kind and words.
    if (this.#reached || this.#unreachedSince === undefined || this.#unreachedAttempts < 2) return error;
    if (!(error instanceof NetworkError) || error instanceof ConnectionSetupError) return error;
    return this.#gaveUp(endpoint, error, this.#s.now() - this.#unreachedSince);
  }

  /** The error of a call that gave up because the API was never reached: says how long it tried. */
  #gaveUp(endpoint: Endpoint, error: Error, triedMs: number): Error {
    const seconds = Math.round(triedMs / 1000);
    const tries = this.#unreachedAttempts;
    const base = error.message.startsWith(`${endpoint}: `)
      ? error.message.slice(endpoint.length + 2)
      : error.message;
    const message = `${base}; tried ${tries} time${tries === 1 ? "" : "s"} over ${seconds} s without reaching the API once, so the address, proxy or network is more likely wrong than the API briefly down`;
    this.#log("error", "gave up reaching the API", { endpoint, triedMs, attempts: tries });
    if (error instanceof NetworkError) {
      return new NetworkError(endpoint, message, error.errorCode, { cause: error.cause, apiReached: false });
    }
    if (error instanceof TimeoutError) {
      return new NetworkError(endpoint, message, undefined, { apiReached: false });
    }
    return error;
  }

  /** What a failed connection says about the settings (connection-errors.ts). */
  async #classify(
    outcome: { phase: "unsent" | "sent"; code: string | undefined; error: unknown },
    url: URL,
    described: string,
  ) {
    const network = this.#s.network;
    const ctx: ConnectionContext = {
      url,
      baseUrlSetting: this.#s.baseUrlSource ?? "the API address",
      proxy: network?.describeProxy(),
      proxySetting: network?.proxy?.source,
      proxyHasCredentials: !!(network?.proxy?.url.username || network?.proxy?.url.password),
      trustSettings: network?.trustSettings() ?? "ca_cert_file (GPURENTAL_CA_CERT_FILE) or SSL_CERT_FILE",
    };
    const verdict = classifyConnectionError(outcome.code, described, ctx);
    if (verdict) return verdict;
    // A TLS server closes a plain-HTTP connection without a word; before the API ever answered,
    // ask the port whether it speaks TLS, so that the error says so instead of "socket closed".
    if (
      !this.#reached &&
      url.protocol === "http:" &&
      !network?.proxy &&
      (outcome.code === "UND_ERR_SOCKET" || outcome.code === "ECONNRESET") &&
      (await speaksTls(url))
    ) {
      return httpToTlsPort(ctx);
    }
    return undefined;
  }

  /** The API's address as connection errors name it: the URL and where it was configured. */
  #where(): string {
    const { baseUrl, baseUrlSource } = this.#s;
    return baseUrlSource ? `${baseUrl} (${baseUrlSource})` : baseUrl;
  }

  #url(call: Call<unknown>): URL {
    const path = call.path.replace(/\{(\w+)\}/g, (_, name: string) => {
      const v = call.params?.[name];
      if (typeof v !== "string" || v === "") {
        throw new ClientConfigError(name, `${call.method} ${call.path}: ${name} must be a non-empty string`);
      }
      return encodeURIComponent(v);
    });
    const url = new URL(this.#s.baseUrl + path);
    for (const [k, v] of Object.entries(call.query ?? {})) {
      if (v !== undefined && v !== null) url.searchParams.set(k, String(v));
    }
    return url;
  }

  #describe(error: unknown): string {
    const code = errorCode(error);
    // Not `instanceof Error`: errors made in another realm (Node's own, under a test runner) fail it.
    const msg = isRecord(error) && typeof error.message === "string" ? error.message : String(error);
    return redactText(code && !msg.includes(code) ? `${code}: ${msg}` : msg || code || "connection failed", [
      this.#s.token,
    ]);
  }

  // undici errors can hold sockets and request state; keep only a plain, masked copy as the cause.
  #cleanCause(error: unknown): Error {
    const e = new Error(this.#describe(error));
    e.name = error instanceof Error ? error.name : "Error";
    return e;
  }

  /** The secrets masked in a call's errors and log records: the token, and what the call sends. */
  #secrets(call?: Pick<Call<unknown>, "secrets">): string[] {
    return [this.#s.token, ...(call?.secrets ?? [])];
  }

  #log(
    level: LogLevel,
    msg: string,
    fields: Record<string, unknown>,
    call?: Pick<Call<unknown>, "secrets">,
  ): void {
    const logger = this.#s.logger;
    if (!logger) return;
    try {
      if (logger.enabled?.(level) === false) return;
      const secrets = this.#secrets(call);
      logger(level, redactText(msg, secrets), redactValue(fields, secrets) as Record<string, unknown>);
    } catch {
      // A failing logger must not fail the request.
    }
  }
}

interface LinkedSignal {
  signal: AbortSignal;
  abort(): void;
  dispose(): void;
}

// A signal that aborts when any source does. Unlike AbortSignal.any, the listeners on the sources
// are removed when the call ends: a provider's client-wide signal lives for the whole process and
// would otherwise collect one listener per request.
function linkSignals(sources: (AbortSignal | undefined)[]): LinkedSignal {
  const ctl = new AbortController();
  const present = sources.filter((s): s is AbortSignal => s !== undefined);
  const onAbort = () => ctl.abort();
  for (const s of present) {
    if (s.aborted) ctl.abort();
    else s.addEventListener("abort", onAbort, { once: true });
  }
  return {
    signal: ctl.signal,
    abort: onAbort,
    dispose: () => {
      for (const s of present) s.removeEventListener("abort", onAbort);
    },
  };
}

/** Whether the server at the URL's host and port answers a TLS handshake (within two seconds). */
function speaksTls(url: URL): Promise<boolean> {
  return new Promise((resolve) => {
    const host = url.hostname.replace(/^\[|\]$/g, "");
    const socket = tlsConnect({
      host,
      port: Number(url.port || 80),
      ...(isIP(host) ? {} : { servername: host }),
    });
    const done = (answer: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(answer);
    };
    const timer = setTimeout(() => done(false), 2_000);
    socket.once("secureConnect", () => done(true));
    // A certificate refusal still proves a TLS server answered; anything else does not.
    socket.once("error", (err: NodeJS.ErrnoException) =>
      done(
        typeof err.code === "string" &&
          /CERT|SELF_SIGNED|ISSUER|ALTNAME|LEAF_SIGNATURE|INVALID_CA/.test(err.code),
      ),
    );
  });
}

function headerValue(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

function errorCode(error: unknown): string | undefined {
  if (!isRecord(error)) return undefined;
  if (typeof error.code === "string") return error.code;
  // Happy-eyeballs connects fail with an AggregateError of per-address errors.
  if (Array.isArray(error.errors)) {
    for (const e of error.errors) {
      const c = errorCode(e);
      if (c) return c;
    }
  }
  if (error.cause !== undefined && error.cause !== error) return errorCode(error.cause);
  return undefined;
}
