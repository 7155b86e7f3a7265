import type { Dispatcher } from "undici";
import { userAgentProduct } from "../version";
import { ApiError, ClientConfigError } from "./errors";
import { isUuid, parseApiAddress } from "./ids";
import { Network, type NetworkOptions, TrustSettingError } from "./network/network";
import { ProxySettingError } from "./network/proxy";
import { type Call, type Logger, Transport } from "./network/transport";
import { maskUrl, redactText } from "./redact";
import type {
  CreateApiKeyRequest,
  CreateBillingOrderRequest,
  CreateSshKeyRequest,
  DeployInstanceRequest,
  ListInstancesQuery,
  ListOffersQuery,
  ListTemplatesQuery,
  ListTransactionsQuery,
  LogsQuery,
  RequestOptions,
  SpendDailyQuery,
} from "./requests";
import {
  type ResolvedRetryOptions,
  type RetryOptions,
  realSleep,
  resolveRetryOptions,
  type Sleep,
} from "./retry";
import {
  type ApiKey,
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
  TemplateSchema,
  type Transaction,
  TransactionSchema,
} from "./schemas";

// GpurentalClient: one method per /v1 endpoint, and the validation of its options. Sending,
// retrying and reading answers are transport.ts, retry-policy.ts and responses.ts; the shapes
// callers pass in are requests.ts (re-exported here).

export type { Logger, LogLevel } from "./network/transport";
export type * from "./requests";

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
  /** undici dispatcher to send with (an Agent, a MockAgent...); replaces `network` when given. */
  dispatcher?: Dispatcher | undefined;
  /**
   * Proxy and trust settings (network.ts), or the environment they are read from. Default: the
   * proxy variables and CA files of process.env, read as Go reads them.
   */
  network?: Network | NetworkOptions | undefined;
  /**
   * Where the base URL was configured, named beside it in connection errors so that the reader
   * knows what to correct, e.g. `base_url in the provider block`. Default: the URL alone.
   */
  baseUrlSource?: string | undefined;
  /** Receives one line per attempt, answer and retry wait (at debug), credentials masked. */
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

/** Default time limit of one attempt. */
export const DEFAULT_TIMEOUT_MS = 30_000;

/**
 * Typed client of the gpurental /v1 API.
 *
 * Retry policy, in short (retry-policy.ts): reads and DELETEs are retried on connection errors,
 * timeouts and 429/500/502/503/504; deploy, key creation, stop, start, SSH-key creation and top-ups
 * only when the request certainly never reached the server or the server refused it with 429/503,
 * and otherwise fail with {@link AmbiguousRequestError} so the caller reconciles instead of
 * duplicating. Retries go on until the call's deadline (`RequestOptions.deadlineMs`), not a fixed count.
 */
export class GpurentalClient {
  /** The normalised base URL, without a trailing slash. */
  readonly baseUrl: string;
  /** The organization sent as X-Org-Id, if any. */
  readonly orgId: string | undefined;
  /** The User-Agent header sent with every request. */
  readonly userAgent: string;
  readonly #transport: Transport;

  constructor(options: ClientOptions) {
    this.baseUrl = normaliseBaseUrl(options.baseUrl);
    if (typeof options.token !== "string" || !/^[\x21-\x7e]+$/.test(options.token)) {
      // The value is deliberately not echoed: it is a credential.
      throw new ClientConfigError("token", "token must be a non-empty string of printable ASCII characters");
    }
    if (options.orgId !== undefined && !isUuid(options.orgId)) {
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
    let retry: ResolvedRetryOptions;
    try {
      retry = resolveRetryOptions(options.retry);
    } catch (err) {
      throw new ClientConfigError("retry", (err as Error).message);
    }
    this.orgId = options.orgId;
    this.userAgent = options.userAgent ? `${userAgentProduct} ${options.userAgent}` : userAgentProduct;
    const headers: Record<string, string> = {
      authorization: `Bearer ${options.token}`,
      accept: "application/json",
      "user-agent": this.userAgent,
    };
    if (this.orgId) headers["x-org-id"] = this.orgId;
    let network: Network | undefined;
    if (!options.dispatcher) {
      try {
        network =
          options.network instanceof Network
            ? options.network
            : new Network(new URL(this.baseUrl), options.network);
      } catch (err) {
        if (err instanceof ProxySettingError || err instanceof TrustSettingError) {
          throw new ClientConfigError(err instanceof ProxySettingError ? "proxy" : "caCertFile", err.message);
        }
        throw err;
      }
    }
    this.#transport = new Transport({
      baseUrl: this.baseUrl,
      baseUrlSource: options.baseUrlSource,
      token: options.token,
      headers,
      timeoutMs,
      retry,
      dispatcher: options.dispatcher,
      network,
      logger: options.logger,
      signal: options.signal,
      sleep: options.sleep ?? realSleep,
      now: options.now ?? Date.now,
      random: options.random ?? Math.random,
    });
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
    return this.#call(
      {
        method: "POST",
        path: "/v1/api-keys",
        body,
        schema: CreatedApiKeySchema,
      },
      opts,
    );
  }

  /** GET /v1/api-keys: the organization's active keys, newest first. */
  async listApiKeys(opts?: RequestOptions): Promise<ApiKey[]> {
    const r = await this.#call(
      {
        method: "GET",
        path: "/v1/api-keys",
        schema: listOf(ApiKeySchema),
      },
      opts,
    );
    return r.items;
  }

  /**
   * DELETE /v1/api-keys/{id}: revokes a key. When a resend follows an attempt that may have landed,
   * the resulting 404 API_KEY_NOT_FOUND means that attempt revoked it, and is not an error.
   */
  async revokeApiKey(id: string, opts?: RequestOptions): Promise<void> {
    try {
      await this.#call(
        {
          method: "DELETE",
          path: "/v1/api-keys/{id}",
          params: { id },
        },
        opts,
      );
    } catch (err) {
      if (err instanceof ApiError && err.afterPossiblyAppliedAttempt && err.code === "API_KEY_NOT_FOUND")
        return;
      throw err;
    }
  }

  // ---- Instances (contract 4.2) ----

  /** POST /v1/instances: deploys; never resent once it may have reached the server. */
  async deployInstance(body: DeployInstanceRequest, opts?: RequestOptions): Promise<Instance> {
    return this.#call(
      {
        method: "POST",
        path: "/v1/instances",
        body,
        schema: InstanceSchema,
        // A server that quotes the request back in an error must not print a secret value.
        secrets: (body.env_overrides ?? []).flatMap((e) => (e.secret && e.value !== null ? [e.value] : [])),
      },
      opts,
    );
  }

  /** GET /v1/instances: the organization's instances, newest first. */
  async listInstances(query?: ListInstancesQuery, opts?: RequestOptions): Promise<Instance[]> {
    const r = await this.#call(
      {
        method: "GET",
        path: "/v1/instances",
        query: { include_destroyed: query?.include_destroyed },
        schema: listOf(InstanceSchema),
      },
      opts,
    );
    return r.items;
  }

  /** GET /v1/instances/{id}; 404 INSTANCE_NOT_FOUND for unknown or foreign ids. */
  async getInstance(id: string, opts?: RequestOptions): Promise<Instance> {
    return this.#call(
      {
        method: "GET",
        path: "/v1/instances/{id}",
        params: { id },
        schema: InstanceSchema,
      },
      opts,
    );
  }

  /**
   * POST /v1/instances/{id}/stop. Each request is a new stop (contract 3.2 re-send identity), so it is
   * resent only when it never reached the server or was refused with 429/503.
   */
  async stopInstance(id: string, opts?: RequestOptions): Promise<Instance> {
    return this.#call(
      {
        method: "POST",
        path: "/v1/instances/{id}/stop",
        params: { id },
        schema: InstanceSchema,
      },
      opts,
    );
  }

  /** POST /v1/instances/{id}/start; same resend rule as {@link stopInstance}. */
  async startInstance(id: string, opts?: RequestOptions): Promise<Instance> {
    return this.#call(
      {
        method: "POST",
        path: "/v1/instances/{id}/start",
        params: { id },
        schema: InstanceSchema,
      },
      opts,
    );
  }

  /**
   * DELETE /v1/instances/{id}: returns the instance at destroying. DELETE is resent after transport
   * failures; if an earlier attempt may have landed and the resend gets 409 INVALID_STATE or 404,
   * the instance is read back and returned when it is destroying or destroyed.
   */
  async destroyInstance(id: string, opts?: RequestOptions): Promise<Instance> {
    try {
      return await this.#call(
        {
          method: "DELETE",
          path: "/v1/instances/{id}",
          params: { id },
          schema: InstanceSchema,
        },
        opts,
      );
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
    const r = await this.#call(
      {
        method: "GET",
        path: "/v1/instances/{id}/logs",
        params: { id },
        query: { tail: query?.tail },
        schema: LogsSchema,
      },
      opts,
    );
    return r.lines;
  }

  // ---- Offers and templates (contract 4.3, docs/api-shapes.md) ----

  /** GET /v1/offers. */
  async listOffers(query?: ListOffersQuery, opts?: RequestOptions): Promise<Offer[]> {
    const r = await this.#call(
      {
        method: "GET",
        path: "/v1/offers",
        query: { ...query },
        schema: listOf(OfferSchema),
      },
      opts,
    );
    return r.items;
  }

  /** GET /v1/offers/{id}; also returns unavailable offers; 404 OFFER_NOT_FOUND when unknown. */
  async getOffer(id: string, opts?: RequestOptions): Promise<Offer> {
    return this.#call(
      {
        method: "GET",
        path: "/v1/offers/{id}",
        params: { id },
        schema: OfferSchema,
      },
      opts,
    );
  }

  /** GET /v1/templates. */
  async listTemplates(query?: ListTemplatesQuery, opts?: RequestOptions): Promise<Template[]> {
    const r = await this.#call(
      {
        method: "GET",
        path: "/v1/templates",
        query: { ...query },
        schema: listOf(TemplateSchema),
      },
      opts,
    );
    return r.items;
  }

  /** GET /v1/templates/{id}: the full template; 404 TEMPLATE_NOT_FOUND when unknown or not visible. */
  async getTemplate(id: string, opts?: RequestOptions): Promise<Template> {
    return this.#call(
      {
        method: "GET",
        path: "/v1/templates/{id}",
        params: { id },
        schema: TemplateSchema,
      },
      opts,
    );
  }

  // ---- Account (session only) ----

  /** GET /v1/ssh-keys: the signed-in user's keys. Session only. */
  async listSshKeys(opts?: RequestOptions): Promise<SshKey[]> {
    const r = await this.#call(
      {
        method: "GET",
        path: "/v1/ssh-keys",
        schema: listOf(SshKeySchema),
      },
      opts,
    );
    return r.items;
  }

  /** POST /v1/ssh-keys: adds a key for the signed-in user. Session only. */
  async createSshKey(body: CreateSshKeyRequest, opts?: RequestOptions): Promise<SshKey> {
    return this.#call(
      {
        method: "POST",
        path: "/v1/ssh-keys",
        body,
        schema: SshKeySchema,
      },
      opts,
    );
  }

  /** GET /v1/me: the signed-in user, organization (with balance) and role. Session only. */
  async getMe(opts?: RequestOptions): Promise<Me> {
    return this.#call(
      {
        method: "GET",
        path: "/v1/me",
        schema: MeSchema,
      },
      opts,
    );
  }

  /** GET /v1/orgs/current/members. Admin session only. */
  async listMembers(opts?: RequestOptions): Promise<Member[]> {
    const r = await this.#call(
      {
        method: "GET",
        path: "/v1/orgs/current/members",
        schema: listOf(MemberSchema),
      },
      opts,
    );
    return r.items;
  }

  /** DELETE /v1/orgs/current/members/{user_id}: removes a member and revokes their personal keys. */
  async removeMember(userId: string, opts?: RequestOptions): Promise<void> {
    await this.#call(
      {
        method: "DELETE",
        path: "/v1/orgs/current/members/{user_id}",
        params: { user_id: userId },
      },
      opts,
    );
  }

  // ---- Billing ----

  /** GET /v1/billing/transactions: ledger rows, newest first. */
  async listTransactions(query?: ListTransactionsQuery, opts?: RequestOptions): Promise<Transaction[]> {
    const r = await this.#call(
      {
        method: "GET",
        path: "/v1/billing/transactions",
        query: { ...query },
        schema: listOf(TransactionSchema),
      },
      opts,
    );
    return r.items;
  }

  /** GET /v1/billing/spend-daily: spend per day, oldest first. */
  async getSpendDaily(query?: SpendDailyQuery, opts?: RequestOptions): Promise<SpendDay[]> {
    const r = await this.#call(
      {
        method: "GET",
        path: "/v1/billing/spend-daily",
        query: { ...query },
        schema: listOf(SpendDaySchema),
      },
      opts,
    );
    return r.items;
  }

  /** POST /v1/billing/orders: tops up the balance. Admin session only; never resent once it may have landed. */
  async createBillingOrder(body: CreateBillingOrderRequest, opts?: RequestOptions): Promise<BillingOrder> {
    return this.#call(
      {
        method: "POST",
        path: "/v1/billing/orders",
        body,
        schema: BillingOrderSchema,
      },
      opts,
    );
  }

  #call<T>(
    call: Omit<Call<T>, "signal" | "deadlineMs" | "outlivesStop">,
    opts: RequestOptions | undefined,
  ): Promise<T> {
    return this.#transport.send({
      ...call,
      signal: opts?.signal,
      deadlineMs: opts?.deadlineMs,
      outlivesStop: opts?.outlivesStop,
    });
  }
}

function normaliseBaseUrl(value: unknown): string {
  const shown = typeof value === "string" ? JSON.stringify(redactText(maskUrl(value))) : String(value);
  if (typeof value !== "string" || value.trim() === "") {
    throw new ClientConfigError("baseUrl", `baseUrl must be an http or https URL, got ${shown}`);
  }
  const { url, problem } = parseApiAddress(value.trim());
  switch (problem) {
    case "not-url":
      throw new ClientConfigError("baseUrl", `baseUrl must be an http or https URL, got ${shown}`);
    case "scheme":
      throw new ClientConfigError("baseUrl", `baseUrl must use http or https, got ${shown}`);
    case "credentials":
      throw new ClientConfigError("baseUrl", "baseUrl must not contain credentials; pass the token instead");
    case "query":
      throw new ClientConfigError("baseUrl", `baseUrl must not have a query or fragment, got ${shown}`);
    case undefined:
      return url.toString().replace(/\/+$/, "");
  }
}
