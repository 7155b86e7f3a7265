import { type Dispatcher, request } from "undici";
import type { z } from "zod";
import { userAgentProduct } from "../version";
import {
  AmbiguousRequestError,
  ApiError,
  type ApiErrorCarried,
  ClientConfigError,
  type Endpoint,
  NetworkError,
  RequestAbortedError,
  ResponseValidationError,
  TimeoutError,
  type ValidationIssue,
} from "./errors";
import { REDACTED, redactText, redactValue } from "./redact";
import {
  backoffDelay,
  parseRetryAfter,
  type ResolvedRetryOptions,
  type RetryOptions,
  realSleep,
  resolveRetryOptions,
  type Sleep,
} from "./retry";
import {
  type ApiKey,
  type ApiKeyKind,
  ApiKeySchema,
  type BillingOrder,
  BillingOrderSchema,
  type CreatedApiKey,
  CreatedApiKeySchema,
  type Instance,
  InstanceSchema,
  LogsSchema,
  listOf,
  type Me,
  type Member,
  MemberSchema,
  MeSchema,
  type Offer,
  OfferSchema,
  type SpendDay,
  SpendDaySchema,
  type SshKey,
  SshKeySchema,
  type Template,
  type TemplateMode,
  TemplateSchema,
  type Transaction,
  TransactionSchema,
} from "./schemas";

/** Log severity passed to {@link ClientOptions.logger}. */
export type LogLevel = "debug" | "info" | "warn" | "error";

/** Receives the client's log lines; credentials are masked before it is called. */
export type Logger = (level: LogLevel, msg: string, fields: Record<string, unknown>) => void;

/** Options of {@link GpurentalClient}. */
export interface ClientOptions {
  /** Service base address, http or https, e.g. `https://api.example.com`; paths `/v1/...` are appended. */
  baseUrl: string;
  /** Session token or API key secret, sent as `Authorization: Bearer`. */
  token: string;
  /** Sent as `X-Org-Id` when set. */
  orgId?: string | undefined;
  /** Appended to `gpurental/<version>` in the User-Agent, e.g. `Terraform/1.9.0`. */
  userAgent?: string | undefined;
  /** Time limit of one attempt, connect to last body byte. Default 30 000. */
  timeoutMs?: number | undefined;
  /** Retry settings; see {@link RetryOptions}. */
  retry?: RetryOptions | undefined;
  /** undici dispatcher to send with (an Agent, a MockAgent...); default the global one. */
  dispatcher?: Dispatcher | undefined;
  /** Receives one line per attempt, retry and failure. */
  logger?: Logger | undefined;
  /** Aborts every request of this client (e.g. on provider shutdown). */
  signal?: AbortSignal | undefined;
  /** Test seam: replaces the real-time sleep between retries. */
  sleep?: Sleep | undefined;
  /** Test seam: the clock the deadline is measured with (ms). Default Date.now. */
  now?: (() => number) | undefined;
  /** Test seam: the random source of the jitter, in [0, 1). Default Math.random. */
  random?: (() => number) | undefined;
}

/** Per-call options every method accepts. */
export interface RequestOptions {
  /** Cancels this call (in-flight attempt and retry waits). */
  signal?: AbortSignal | undefined;
  /**
   * Caps this call's time budget (attempts and retry waits) below the client's `retry.deadlineMs`,
   * so that a retry wait that would outlast the caller's own deadline ends the call with the last
   * error (e.g. 503 START_UNAVAILABLE) instead of an abort.
   */
  deadlineMs?: number | undefined;
}

/** Body of POST /v1/api-keys. */
export interface CreateApiKeyRequest {
  /** 1 to 64 characters. */
  name: string;
  /** Default personal. */
  kind?: ApiKeyKind;
}

/** One entry of `env_overrides` in a deploy request. */
export interface EnvOverride {
  key: string;
  /** null drops the variable. */
  value: string | null;
  secret: boolean;
}

/** Body of POST /v1/instances (contract 4.2). */
export interface DeployInstanceRequest {
  offer_id: string;
  template_id: string;
  /** 10 to 20000, and at most the machine's disk. */
  disk_gb: number;
  label?: string | null;
  ssh_key_id?: string | null;
  env_overrides?: EnvOverride[];
}

/** Query of GET /v1/instances. */
export interface ListInstancesQuery {
  /** Include destroyed instances. Default false. */
  include_destroyed?: boolean;
}

/** Query of GET /v1/instances/{id}/logs. */
export interface LogsQuery {
  /** 1 to 1000; default 200. */
  tail?: number;
}

/** Query of GET /v1/offers. */
export interface ListOffersQuery {
  /** Exact GPU model, case-insensitive. */
  gpu_model?: string;
  num_gpus?: number;
  /** Default newest first. */
  sort?: "price_asc" | "price_desc";
  /** Also list sold-out and withdrawn offers. Default false. */
  include_unavailable?: boolean;
}

/** Query of GET /v1/templates. */
export interface ListTemplatesQuery {
  /** Default all. */
  tab?: "recommended" | "system" | "public" | "mine" | "all";
  mode?: TemplateMode;
}

/** Query of GET /v1/billing/transactions. */
export interface ListTransactionsQuery {
  instance_id?: string;
  /** 1 to 1000; default 100. */
  limit?: number;
}

/** Query of GET /v1/billing/spend-daily. */
export interface SpendDailyQuery {
  /** 1 to 90; default 30. */
  days?: number;
}

/** Body of POST /v1/ssh-keys. */
export interface CreateSshKeyRequest {
  name: string;
  public_key: string;
}

/** Body of POST /v1/billing/orders. */
export interface CreateBillingOrderRequest {
  amount_micro: number;
}

type Method = "GET" | "POST" | "DELETE";
type QueryValue = string | number | boolean | undefined | null;

/**
 * How a request may be retried.
 * - `safe`: reading or idempotent; resent after any transport failure, timeout, 429, 502, 503, 504.
 * - `unsafe`: creates something or triggers a transition; resent only when it certainly did not
 *   reach the server (connect failure) or the server refused it (429, 503). Anything else after the
 *   request may have been written becomes an {@link AmbiguousRequestError}.
 */
type Safety = "safe" | "unsafe";

interface Call<T> {
  method: Method;
  /** Path template, e.g. `/v1/instances/{id}`; it names the endpoint in errors and logs. */
  path: `/${string}`;
  params?: Record<string, string>;
  query?: Record<string, QueryValue> | undefined;
  body?: unknown;
  /** Schema of a 2xx body; absent for 204 responses. */
  schema?: z.ZodType<T>;
  safety: Safety;
  signal?: AbortSignal | undefined;
  deadlineMs?: number | undefined;
}

type AttemptOutcome =
  | { kind: "response"; status: number; headers: Record<string, string | string[] | undefined>; text: string }
  | { kind: "failure"; phase: "unsent" | "sent"; error: unknown; code: string | undefined }
  | { kind: "timeout" }
  | { kind: "aborted" };

const SAFE_RETRY_STATUSES = new Set([429, 502, 503, 504]);
const REFUSAL_STATUSES = new Set([429, 503]);
const AMBIGUOUS_STATUSES = new Set([500, 502, 504]);

// Codes of transport errors that happen before a byte of the request is written.
const UNSENT_CODES = new Set([
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
]);

const FALLBACK_CODES: Record<number, string> = {
  400: "BAD_REQUEST",
  401: "TOKEN_INVALID",
  403: "FORBIDDEN",
  404: "NOT_FOUND",
  405: "METHOD_NOT_ALLOWED",
  409: "CONFLICT",
  413: "PAYLOAD_TOO_LARGE",
  415: "UNSUPPORTED_MEDIA_TYPE",
  422: "VALIDATION_ERROR",
  429: "RATE_LIMITED",
  500: "INTERNAL",
  502: "BAD_GATEWAY",
  503: "SERVICE_UNAVAILABLE",
  504: "GATEWAY_TIMEOUT",
};

const CARRIED_NUMBERS = [
  "balance_micro",
  "required_micro",
  "max_disk_gb",
  "available_disk_gb",
  "requested_disk_gb",
  "limit",
] as const;

/** Default time limit of one attempt. */
export const DEFAULT_TIMEOUT_MS = 30_000;

/**
 * Typed client of the gpurental /v1 API.
 *
 * Retry policy, in short: reads and DELETEs are retried on transport failures, timeouts and
 * 429/502/503/504; deploy, key creation, stop, start, SSH-key creation and top-ups are retried only
 * when the request certainly never reached the server or the server refused it with 429/503, and
 * otherwise fail with {@link AmbiguousRequestError} so the caller reconciles instead of duplicating.
 */
export class GpurentalClient {
  /** The normalised base URL, without a trailing slash. */
  readonly baseUrl: string;
  /** The organization sent as X-Org-Id, if any. */
  readonly orgId: string | undefined;
  /** The User-Agent header sent with every request. */
  readonly userAgent: string;
  // A private field: util.inspect, JSON.stringify and spreading never see it.
  readonly #token: string;
  readonly #timeoutMs: number;
  readonly #retry: ResolvedRetryOptions;
  readonly #dispatcher: Dispatcher | undefined;
  readonly #logger: Logger | undefined;
  readonly #signal: AbortSignal | undefined;
  readonly #sleep: Sleep;
  readonly #now: () => number;
  readonly #random: () => number;

  constructor(options: ClientOptions) {
    this.baseUrl = normaliseBaseUrl(options.baseUrl);
    if (typeof options.token !== "string" || !/^[\x21-\x7e]+$/.test(options.token)) {
      // The value is deliberately not echoed: it is a credential.
      throw new ClientConfigError("token", "token must be a non-empty string of printable ASCII characters");
    }
    if (
      options.orgId !== undefined &&
      (typeof options.orgId !== "string" ||
        !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(options.orgId))
    ) {
      // Identifiers are UUIDs (contract, preamble); anything else would only ever earn 403 ORG_MISMATCH.
      throw new ClientConfigError(
        "orgId",
        `orgId must be an organization ID (a UUID), got ${JSON.stringify(String(options.orgId).slice(0, 100))}`,
      );
    }
    if (options.userAgent !== undefined && /[\r\n]/.test(options.userAgent)) {
      throw new ClientConfigError("userAgent", "userAgent must not contain line breaks");
    }
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) {
      throw new ClientConfigError(
        "timeoutMs",
        `timeoutMs must be a positive number, got ${String(timeoutMs)}`,
      );
    }
    try {
      this.#retry = resolveRetryOptions(options.retry);
    } catch (err) {
      throw new ClientConfigError("retry", (err as Error).message);
    }
    this.#token = options.token;
    this.orgId = options.orgId;
    this.userAgent = options.userAgent ? `${userAgentProduct} ${options.userAgent}` : userAgentProduct;
    this.#timeoutMs = timeoutMs;
    this.#dispatcher = options.dispatcher;
    this.#logger = options.logger;
    this.#signal = options.signal;
    this.#sleep = options.sleep ?? realSleep;
    this.#now = options.now ?? Date.now;
    this.#random = options.random ?? Math.random;
  }

  /** Keeps the token out of `util.inspect` even if a future field exposed it. */
  [Symbol.for("nodejs.util.inspect.custom")](): string {
    return `GpurentalClient { baseUrl: ${JSON.stringify(this.baseUrl)}, orgId: ${JSON.stringify(this.orgId)} }`;
  }

  /** Plain rendering without the token. */
  toJSON(): Record<string, unknown> {
    return { baseUrl: this.baseUrl, orgId: this.orgId, userAgent: this.userAgent };
  }

  // ---- API keys (contract 4.1) ----

  /** POST /v1/api-keys: creates a key; the secret is in the result only. Needs a session. */
  async createApiKey(body: CreateApiKeyRequest, opts?: RequestOptions): Promise<CreatedApiKey> {
    return this.#call({
      method: "POST",
      path: "/v1/api-keys",
      body,
      schema: CreatedApiKeySchema,
      safety: "unsafe",
      signal: opts?.signal,
    });
  }

  /** GET /v1/api-keys: the organization's active keys, newest first. */
  async listApiKeys(opts?: RequestOptions): Promise<ApiKey[]> {
    const r = await this.#call({
      method: "GET",
      path: "/v1/api-keys",
      schema: listOf(ApiKeySchema),
      safety: "safe",
      signal: opts?.signal,
    });
    return r.items;
  }

  /**
   * DELETE /v1/api-keys/{id}: revokes a key. When a resend follows an attempt that may have landed,
   * the resulting 404 API_KEY_NOT_FOUND means that attempt revoked it, and is not an error.
   */
  async revokeApiKey(id: string, opts?: RequestOptions): Promise<void> {
    try {
      await this.#call({
        method: "DELETE",
        path: "/v1/api-keys/{id}",
        params: { id },
        safety: "safe",
        signal: opts?.signal,
      });
    } catch (err) {
      if (err instanceof ApiError && err.afterPossiblyAppliedAttempt && err.code === "API_KEY_NOT_FOUND")
        return;
      throw err;
    }
  }

  // ---- Instances (contract 4.2) ----

  /** POST /v1/instances: deploys; never resent once it may have reached the server. */
  async deployInstance(body: DeployInstanceRequest, opts?: RequestOptions): Promise<Instance> {
    return this.#call({
      method: "POST",
      path: "/v1/instances",
      body,
      schema: InstanceSchema,
      safety: "unsafe",
      signal: opts?.signal,
    });
  }

  /** GET /v1/instances: the organization's instances, newest first. */
  async listInstances(query?: ListInstancesQuery, opts?: RequestOptions): Promise<Instance[]> {
    const r = await this.#call({
      method: "GET",
      path: "/v1/instances",
      query: { include_destroyed: query?.include_destroyed },
      schema: listOf(InstanceSchema),
      safety: "safe",
      signal: opts?.signal,
    });
    return r.items;
  }

  /** GET /v1/instances/{id}; 404 INSTANCE_NOT_FOUND for unknown or foreign ids. */
  async getInstance(id: string, opts?: RequestOptions): Promise<Instance> {
    return this.#call({
      method: "GET",
      path: "/v1/instances/{id}",
      params: { id },
      schema: InstanceSchema,
      safety: "safe",
      signal: opts?.signal,
    });
  }

  /**
   * POST /v1/instances/{id}/stop. Each request is a new stop (contract 3.2 re-send identity), so it is
   * resent only when it never reached the server or was refused with 429/503.
   */
  async stopInstance(id: string, opts?: RequestOptions): Promise<Instance> {
    return this.#call({
      method: "POST",
      path: "/v1/instances/{id}/stop",
      params: { id },
      schema: InstanceSchema,
      safety: "unsafe",
      signal: opts?.signal,
      deadlineMs: opts?.deadlineMs,
    });
  }

  /** POST /v1/instances/{id}/start; same resend rule as {@link stopInstance}. */
  async startInstance(id: string, opts?: RequestOptions): Promise<Instance> {
    return this.#call({
      method: "POST",
      path: "/v1/instances/{id}/start",
      params: { id },
      schema: InstanceSchema,
      safety: "unsafe",
      signal: opts?.signal,
      deadlineMs: opts?.deadlineMs,
    });
  }

  /**
   * DELETE /v1/instances/{id}: returns the instance at destroying. DELETE is resent after transport
   * failures; if an earlier attempt may have landed and the resend gets 409 INVALID_STATE or 404,
   * the instance is read back and returned when it is destroying or destroyed.
   */
  async destroyInstance(id: string, opts?: RequestOptions): Promise<Instance> {
    try {
      return await this.#call({
        method: "DELETE",
        path: "/v1/instances/{id}",
        params: { id },
        schema: InstanceSchema,
        safety: "safe",
        signal: opts?.signal,
      });
    } catch (err) {
      if (
        err instanceof ApiError &&
        err.afterPossiblyAppliedAttempt &&
        (err.code === "INVALID_STATE" || err.code === "INSTANCE_NOT_FOUND")
      ) {
        const current = await this.getInstance(id, opts).catch(() => undefined);
        if (current && (current.status === "destroyed" || current.status === "destroying")) return current;
      }
      throw err;
    }
  }

  /** GET /v1/instances/{id}/logs: the most recent lines (tail 1..1000, default 200). */
  async getInstanceLogs(id: string, query?: LogsQuery, opts?: RequestOptions): Promise<string[]> {
    const r = await this.#call({
      method: "GET",
      path: "/v1/instances/{id}/logs",
      params: { id },
      query: { tail: query?.tail },
      schema: LogsSchema,
      safety: "safe",
      signal: opts?.signal,
    });
    return r.lines;
  }

  // ---- Offers and templates (contract 4.3, docs/api-shapes.md) ----

  /** GET /v1/offers. */
  async listOffers(query?: ListOffersQuery, opts?: RequestOptions): Promise<Offer[]> {
    const r = await this.#call({
      method: "GET",
      path: "/v1/offers",
      query: { ...query },
      schema: listOf(OfferSchema),
      safety: "safe",
      signal: opts?.signal,
    });
    return r.items;
  }

  /** GET /v1/offers/{id}; also returns unavailable offers; 404 OFFER_NOT_FOUND when unknown. */
  async getOffer(id: string, opts?: RequestOptions): Promise<Offer> {
    return this.#call({
      method: "GET",
      path: "/v1/offers/{id}",
      params: { id },
      schema: OfferSchema,
      safety: "safe",
      signal: opts?.signal,
    });
  }

  /** GET /v1/templates. */
  async listTemplates(query?: ListTemplatesQuery, opts?: RequestOptions): Promise<Template[]> {
    const r = await this.#call({
      method: "GET",
      path: "/v1/templates",
      query: { ...query },
      schema: listOf(TemplateSchema),
      safety: "safe",
      signal: opts?.signal,
    });
    return r.items;
  }

  /** GET /v1/templates/{id}: the full template; 404 TEMPLATE_NOT_FOUND when unknown or not visible. */
  async getTemplate(id: string, opts?: RequestOptions): Promise<Template> {
    return this.#call({
      method: "GET",
      path: "/v1/templates/{id}",
      params: { id },
      schema: TemplateSchema,
      safety: "safe",
      signal: opts?.signal,
    });
  }

  // ---- Account (session only) ----

  /** GET /v1/ssh-keys: the signed-in user's keys. Session only. */
  async listSshKeys(opts?: RequestOptions): Promise<SshKey[]> {
    const r = await this.#call({
      method: "GET",
      path: "/v1/ssh-keys",
      schema: listOf(SshKeySchema),
      safety: "safe",
      signal: opts?.signal,
    });
    return r.items;
  }

  /** POST /v1/ssh-keys: adds a key for the signed-in user. Session only. */
  async createSshKey(body: CreateSshKeyRequest, opts?: RequestOptions): Promise<SshKey> {
    return this.#call({
      method: "POST",
      path: "/v1/ssh-keys",
      body,
      schema: SshKeySchema,
      safety: "unsafe",
      signal: opts?.signal,
    });
  }

  /** GET /v1/me: the signed-in user, organization (with balance) and role. Session only. */
  async getMe(opts?: RequestOptions): Promise<Me> {
    return this.#call({
      method: "GET",
      path: "/v1/me",
      schema: MeSchema,
      safety: "safe",
      signal: opts?.signal,
    });
  }

  /** GET /v1/orgs/current/members. Admin session only. */
  async listMembers(opts?: RequestOptions): Promise<Member[]> {
    const r = await this.#call({
      method: "GET",
      path: "/v1/orgs/current/members",
      schema: listOf(MemberSchema),
      safety: "safe",
      signal: opts?.signal,
    });
    return r.items;
  }

  /** DELETE /v1/orgs/current/members/{user_id}: removes a member and revokes their personal keys. */
  async removeMember(userId: string, opts?: RequestOptions): Promise<void> {
    await this.#call({
      method: "DELETE",
      path: "/v1/orgs/current/members/{user_id}",
      params: { user_id: userId },
      safety: "safe",
      signal: opts?.signal,
    });
  }

  // ---- Billing ----

  /** GET /v1/billing/transactions: ledger rows, newest first. */
  async listTransactions(query?: ListTransactionsQuery, opts?: RequestOptions): Promise<Transaction[]> {
    const r = await this.#call({
      method: "GET",
      path: "/v1/billing/transactions",
      query: { ...query },
      schema: listOf(TransactionSchema),
      safety: "safe",
      signal: opts?.signal,
    });
    return r.items;
  }

  /** GET /v1/billing/spend-daily: spend per day, oldest first. */
  async getSpendDaily(query?: SpendDailyQuery, opts?: RequestOptions): Promise<SpendDay[]> {
    const r = await this.#call({
      method: "GET",
      path: "/v1/billing/spend-daily",
      query: { ...query },
      schema: listOf(SpendDaySchema),
      safety: "safe",
      signal: opts?.signal,
    });
    return r.items;
  }

  /** POST /v1/billing/orders: tops up the balance. Admin session only; never resent once it may have landed. */
  async createBillingOrder(body: CreateBillingOrderRequest, opts?: RequestOptions): Promise<BillingOrder> {
    return this.#call({
      method: "POST",
      path: "/v1/billing/orders",
      body,
      schema: BillingOrderSchema,
      safety: "unsafe",
      signal: opts?.signal,
    });
  }

  // ---- transport ----

  async #call<T>(call: Call<T>): Promise<T> {
    const endpoint: Endpoint = `${call.method} ${call.path}`;
    const url = this.#url(call);
    const linked = linkSignals([this.#signal, call.signal]);
    try {
      return await this.#attempts(call, endpoint, url, linked.signal);
    } finally {
      linked.dispose();
    }
  }

  async #attempts<T>(
    call: Call<T>,
    endpoint: Endpoint,
    url: URL,
    signal: AbortSignal | undefined,
  ): Promise<T> {
    const started = this.#now();
    const deadline = started + Math.min(this.#retry.deadlineMs, call.deadlineMs ?? Number.POSITIVE_INFINITY);
    // Set once an attempt failed after the request may have been applied; a later error then
    // carries the flag so callers (revoke, destroy) can tell "already done" from "never existed".
    let possiblyApplied = false;
    const body = call.body === undefined ? undefined : JSON.stringify(call.body);
    const headers = this.#headers(body !== undefined);

    for (let attempt = 1; ; attempt++) {
      if (signal?.aborted) throw new RequestAbortedError(endpoint);
      const remaining = deadline - this.#now();
      if (remaining <= 0) throw new TimeoutError(endpoint, this.#retry.deadlineMs, "deadline");
      const attemptTimeout = Math.min(this.#timeoutMs, remaining);
      const t0 = this.#now();
      this.#log("debug", "request", {
        endpoint,
        method: call.method,
        url: url.pathname + url.search,
        attempt,
        headers: { ...headers, authorization: `Bearer ${REDACTED}` },
      });
      const outcome = await this.#attempt(call.method, url, headers, body, attemptTimeout, signal);
      const durationMs = this.#now() - t0;
      const last = attempt >= this.#retry.maxAttempts;

      let retryError: Error;
      let retryAfterMs: number | undefined;
      switch (outcome.kind) {
        case "response": {
          const requestId = headerValue(outcome.headers["x-request-id"]);
          this.#log(outcome.status >= 400 ? "warn" : "debug", "response", {
            endpoint,
            attempt,
            status: outcome.status,
            requestId,
            durationMs,
          });
          if (outcome.status >= 200 && outcome.status < 300) {
            return this.#parse(call, endpoint, outcome.status, outcome.text, requestId);
          }
          // An HTTP-date Retry-After is wall-clock time, so it is read against Date.now, not the test clock.
          retryAfterMs = parseRetryAfter(outcome.headers["retry-after"], Date.now());
          const apiError = this.#apiError(
            endpoint,
            outcome.status,
            outcome.text,
            requestId,
            retryAfterMs,
            possiblyApplied,
          );
          if (call.safety === "unsafe" && AMBIGUOUS_STATUSES.has(outcome.status)) {
            throw new AmbiguousRequestError(endpoint, "status", `HTTP ${outcome.status} ${apiError.code}`, {
              status: outcome.status,
              requestId,
              cause: apiError,
            });
          }
          const retryable =
            call.safety === "safe"
              ? SAFE_RETRY_STATUSES.has(outcome.status)
              : REFUSAL_STATUSES.has(outcome.status);
          if (!retryable || last) throw apiError;
          if (retryAfterMs !== undefined && retryAfterMs > this.#retry.maxRetryAfterMs) throw apiError;
          if (!REFUSAL_STATUSES.has(outcome.status)) possiblyApplied = true;
          retryError = apiError;
          break;
        }
        case "aborted":
          this.#log("info", "aborted", { endpoint, attempt, durationMs });
          throw new RequestAbortedError(endpoint);
        case "timeout": {
          this.#log("warn", "attempt timed out", { endpoint, attempt, timeoutMs: attemptTimeout });
          if (call.safety === "unsafe") {
            throw new AmbiguousRequestError(endpoint, "timeout", `no response within ${attemptTimeout} ms`);
          }
          const timeout = new TimeoutError(endpoint, attemptTimeout, "request");
          if (last) throw timeout;
          possiblyApplied = true;
          retryError = timeout;
          break;
        }
        case "failure": {
          const detail = this.#describe(outcome.error);
          this.#log("warn", "connection failed", {
            endpoint,
            attempt,
            phase: outcome.phase,
            error: detail,
            durationMs,
          });
          if (outcome.phase === "sent" && call.safety === "unsafe") {
            throw new AmbiguousRequestError(endpoint, "connection", detail, {
              cause: this.#cleanCause(outcome.error),
            });
          }
          const netErr = new NetworkError(endpoint, detail, outcome.code, {
            cause: this.#cleanCause(outcome.error),
          });
          if (last) throw netErr;
          if (outcome.phase === "sent") possiblyApplied = true;
          retryError = netErr;
          break;
        }
      }

      const delay = retryAfterMs ?? backoffDelay(attempt, this.#retry, this.#random);
      if (this.#now() + delay >= deadline) throw retryError;
      this.#log("info", "retrying", { endpoint, attempt, delayMs: delay, reason: retryError.message });
      try {
        await this.#sleep(delay, signal);
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
    outer: AbortSignal | undefined,
  ): Promise<AttemptOutcome> {
    let timedOut = false;
    const linked = linkSignals([outer]);
    const handle = setTimeout(() => {
      timedOut = true;
      linked.abort();
    }, timeoutMs);
    const signal = linked.signal;
    // Headers arriving proves the request was written; until then a failure may be either way.
    let gotHeaders = false;
    try {
      const res = await request(url, {
        method,
        headers,
        body,
        signal,
        dispatcher: this.#dispatcher,
        // The attempt timer bounds the whole exchange; undici's own timers would only race it.
        headersTimeout: 0,
        bodyTimeout: 0,
      });
      gotHeaders = true;
      const text = await res.body.text();
      return { kind: "response", status: res.statusCode, headers: res.headers, text };
    } catch (error) {
      if (outer?.aborted) return { kind: "aborted" };
      if (timedOut) return { kind: "timeout" };
      const code = errorCode(error);
      const unsent = !gotHeaders && code !== undefined && UNSENT_CODES.has(code);
      return { kind: "failure", phase: unsent ? "unsent" : "sent", error, code };
    } finally {
      clearTimeout(handle);
      linked.dispose();
    }
  }

  #parse<T>(
    call: Call<T>,
    endpoint: Endpoint,
    status: number,
    text: string,
    requestId: string | undefined,
  ): T {
    if (!call.schema) return undefined as T;
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new ResponseValidationError(
        endpoint,
        status,
        [{ path: "", message: "body is not JSON" }],
        requestId,
      );
    }
    const parsed = call.schema.safeParse(json);
    if (parsed.success) return parsed.data;
    const issues: ValidationIssue[] = parsed.error.issues.map((i) => ({
      path: i.path.map(String).join("."),
      message: redactText(i.message, [this.#token]),
    }));
    this.#log("error", "response does not match schema", { endpoint, status, requestId, issues });
    throw new ResponseValidationError(endpoint, status, issues, requestId);
  }

  #apiError(
    endpoint: Endpoint,
    status: number,
    text: string,
    headerRequestId: string | undefined,
    retryAfterMs: number | undefined,
    possiblyApplied: boolean,
  ): ApiError {
    let obj: Record<string, unknown> | undefined;
    try {
      const json: unknown = JSON.parse(text);
      const inner = isRecord(json) ? json.error : undefined;
      if (isRecord(inner)) obj = inner;
    } catch {
      // A proxy's HTML page or an empty body: fall back to the status below.
    }
    const code =
      typeof obj?.code === "string" && obj.code ? obj.code : (FALLBACK_CODES[status] ?? `HTTP_${status}`);
    const rawMessage =
      typeof obj?.message === "string"
        ? obj.message
        : text.trim()
          ? `HTTP ${status}: ${text.trim().slice(0, 200)}`
          : `HTTP ${status}`;
    const requestId = headerRequestId ?? (typeof obj?.request_id === "string" ? obj.request_id : undefined);
    const details: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(obj ?? {})) {
      if (k !== "code" && k !== "message" && k !== "request_id") details[k] = v;
    }
    const safeDetails = redactValue(details, [this.#token]) as Record<string, unknown>;
    const carried: ApiErrorCarried = {};
    for (const k of CARRIED_NUMBERS) {
      const v = safeDetails[k];
      if (typeof v === "number") carried[k] = v;
    }
    const nm = safeDetails.next_maintenance;
    if (typeof nm === "string" || nm === null) carried.next_maintenance = nm;
    if (typeof safeDetails.field === "string") carried.field = safeDetails.field;
    if ("value" in safeDetails) carried.value = safeDetails.value;
    return new ApiError({
      status,
      code,
      message: redactText(rawMessage, [this.#token]),
      endpoint,
      requestId,
      retryAfterMs,
      details: safeDetails,
      afterPossiblyAppliedAttempt: possiblyApplied,
      ...carried,
    });
  }

  #url(call: Call<unknown>): URL {
    const path = call.path.replace(/\{(\w+)\}/g, (_, name: string) => {
      const v = call.params?.[name];
      if (typeof v !== "string" || v === "") {
        throw new ClientConfigError(name, `${call.method} ${call.path}: ${name} must be a non-empty string`);
      }
      return encodeURIComponent(v);
    });
    const url = new URL(this.baseUrl + path);
    for (const [k, v] of Object.entries(call.query ?? {})) {
      if (v !== undefined && v !== null) url.searchParams.set(k, String(v));
    }
    return url;
  }

  #headers(hasBody: boolean): Record<string, string> {
    const h: Record<string, string> = {
      authorization: `Bearer ${this.#token}`,
      accept: "application/json",
      "user-agent": this.userAgent,
    };
    if (this.orgId) h["x-org-id"] = this.orgId;
    if (hasBody) h["content-type"] = "application/json";
    return h;
  }

  #describe(error: unknown): string {
    const code = errorCode(error);
    const msg = error instanceof Error ? error.message : String(error);
    return redactText(code && !msg.includes(code) ? `${code}: ${msg}` : msg || code || "connection failed", [
      this.#token,
    ]);
  }

  // undici errors can hold sockets and request state; keep only a plain, masked copy as the cause.
  #cleanCause(error: unknown): Error {
    const e = new Error(this.#describe(error));
    e.name = error instanceof Error ? error.name : "Error";
    return e;
  }

  #log(level: LogLevel, msg: string, fields: Record<string, unknown>): void {
    if (!this.#logger) return;
    try {
      this.#logger(
        level,
        redactText(msg, [this.#token]),
        redactValue(fields, [this.#token]) as Record<string, unknown>,
      );
    } catch {
      // A failing logger must not fail the request.
    }
  }
}

function normaliseBaseUrl(value: unknown): string {
  const shown = typeof value === "string" ? JSON.stringify(redactText(value)) : String(value);
  if (typeof value !== "string" || value.trim() === "") {
    throw new ClientConfigError("baseUrl", `baseUrl must be an http or https URL, got ${shown}`);
  }
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    throw new ClientConfigError("baseUrl", `baseUrl must be an http or https URL, got ${shown}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new ClientConfigError("baseUrl", `baseUrl must use http or https, got ${shown}`);
  }
  if (url.username || url.password) {
    throw new ClientConfigError("baseUrl", "baseUrl must not contain credentials; pass the token instead");
  }
  if (url.search || url.hash) {
    throw new ClientConfigError("baseUrl", `baseUrl must not have a query or fragment, got ${shown}`);
  }
  return url.toString().replace(/\/+$/, "");
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

function headerValue(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
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
