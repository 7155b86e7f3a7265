import type { Instance, InstanceStatus } from "./schemas";

/** Codes the /v1 API is known to return; any other string is still accepted. */
export type KnownApiErrorCode =
  | "TOKEN_INVALID"
  | "ADMIN_REQUIRED"
  | "ORG_MISMATCH"
  | "API_KEY_NOT_FOUND"
  | "INSTANCE_NOT_FOUND"
  | "INVALID_STATE"
  | "INSUFFICIENT_BALANCE"
  | "OFFER_UNAVAILABLE"
  | "MACHINE_IN_MAINTENANCE"
  | "DISK_TOO_LARGE"
  | "MACHINE_DISK_EXHAUSTED"
  | "TEMPLATE_NOT_FOUND"
  | "TEMPLATE_COMING_SOON"
  | "OFFER_NOT_VM_CAPABLE"
  | "TEMPLATE_CUDA_TOO_NEW"
  | "TEMPLATE_ARCH_UNSUPPORTED"
  | "TEMPLATE_REQUIRES_OWNER"
  | "OFFER_NOT_PINNABLE"
  | "SSH_KEY_NOT_FOUND"
  | "INSTANCE_LIMIT_REACHED"
  | "HOST_UNREACHABLE"
  | "START_REFUSED"
  | "START_UNAVAILABLE"
  | "CAPACITY_UNAVAILABLE"
  | "OFFER_NOT_FOUND"
  | "NOT_FOUND"
  | "INVALID_JSON"
  | "METHOD_NOT_ALLOWED"
  | "PAYLOAD_TOO_LARGE"
  | "UNSUPPORTED_MEDIA_TYPE"
  | "VALIDATION_ERROR"
  | "RATE_LIMITED"
  | "INTERNAL"
  | "BAD_GATEWAY"
  | "SERVICE_UNAVAILABLE"
  | "GATEWAY_TIMEOUT";

/** The API's error code: one of the known codes, or any string a newer server sends. */
export type ApiErrorCode = KnownApiErrorCode | (string & {});

/** An endpoint as `METHOD /path/{template}`, e.g. `GET /v1/instances/{id}`. */
export type Endpoint = `${string} /${string}`;

/** Base class of every error the client raises. */
export class GpurentalError extends Error {
  /** The endpoint the failing request was for, as `METHOD /path/{template}`, when there was one. */
  readonly endpoint: Endpoint | undefined;

  constructor(message: string, endpoint?: Endpoint, options?: { cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.endpoint = endpoint;
  }
}

/** The client was constructed or called with an invalid option. */
export class ClientConfigError extends GpurentalError {
  /** The option at fault, e.g. `baseUrl`. */
  readonly field: string;

  constructor(field: string, message: string) {
    super(message);
    this.field = field;
  }
}

/** Fields an error body may carry beside `code` and `message` (contract 7.2, docs/api-shapes.md). */
export interface ApiErrorCarried {
  /** INSUFFICIENT_BALANCE: the organization's balance. */
  balance_micro?: number;
  /** INSUFFICIENT_BALANCE: the balance needed for one hour of burn. */
  required_micro?: number;
  /** DISK_TOO_LARGE: the machine's total disk. */
  max_disk_gb?: number;
  /** MACHINE_DISK_EXHAUSTED: the disk still free on the machine. */
  available_disk_gb?: number;
  /** MACHINE_DISK_EXHAUSTED: the disk the deploy asked for. */
  requested_disk_gb?: number;
  /** MACHINE_IN_MAINTENANCE: when the machine goes offline, or null. */
  next_maintenance?: string | null;
  /** INSTANCE_LIMIT_REACHED (and some VALIDATION_ERRORs): the limit that was hit. */
  limit?: number;
  /** VALIDATION_ERROR: the dotted path of the offending field. */
  field?: string;
  /** VALIDATION_ERROR: the rejected value, when the server echoes it. */
  value?: unknown;
}

/** What an {@link ApiError} is built from. */
export interface ApiErrorInit extends ApiErrorCarried {
  status: number;
  code: ApiErrorCode;
  message: string;
  endpoint: Endpoint;
  requestId?: string | undefined;
  retryAfterMs?: number | undefined;
  details?: Readonly<Record<string, unknown>>;
  /** True when an earlier attempt of this same call may already have been applied. */
  afterPossiblyAppliedAttempt?: boolean;
}

/** The server answered with a non-2xx status; carries the API's code and the fields of contract 7. */
export class ApiError extends GpurentalError implements ApiErrorCarried {
  /** HTTP status. */
  readonly status: number;
  /** The API's error code, e.g. `DISK_TOO_LARGE`; derived from the status when the body had none. */
  readonly code: ApiErrorCode;
  /** The message as the server gave it, credentials masked. */
  readonly apiMessage: string;
  /** The `X-Request-Id` of the response (or `request_id` of the body). */
  readonly requestId: string | undefined;
  /** Retry-After of the response, in milliseconds, when it had one. */
  readonly retryAfterMs: number | undefined;
  /** Every field of the error body other than code, message and request_id. */
  readonly details: Readonly<Record<string, unknown>>;
  /** True when an earlier attempt of this call may already have been applied (see the retry policy). */
  readonly afterPossiblyAppliedAttempt: boolean;
  declare readonly endpoint: Endpoint;
  // `declare`: a carried field exists on the object only when the body carried it.
  declare readonly balance_micro?: number;
  declare readonly required_micro?: number;
  declare readonly max_disk_gb?: number;
  declare readonly available_disk_gb?: number;
  declare readonly requested_disk_gb?: number;
  declare readonly next_maintenance?: string | null;
  declare readonly limit?: number;
  declare readonly field?: string;
  declare readonly value?: unknown;

  constructor(init: ApiErrorInit) {
    const rid = init.requestId ? `, request ${init.requestId}` : "";
    super(`${init.endpoint}: ${init.status} ${init.code}: ${init.message}${rid}`, init.endpoint);
    this.status = init.status;
    this.code = init.code;
    this.apiMessage = init.message;
    this.requestId = init.requestId;
    this.retryAfterMs = init.retryAfterMs;
    this.details = init.details ?? {};
    this.afterPossiblyAppliedAttempt = init.afterPossiblyAppliedAttempt ?? false;
    if (init.balance_micro !== undefined) this.balance_micro = init.balance_micro;
    if (init.required_micro !== undefined) this.required_micro = init.required_micro;
    if (init.max_disk_gb !== undefined) this.max_disk_gb = init.max_disk_gb;
    if (init.available_disk_gb !== undefined) this.available_disk_gb = init.available_disk_gb;
    if (init.requested_disk_gb !== undefined) this.requested_disk_gb = init.requested_disk_gb;
    if (init.next_maintenance !== undefined) this.next_maintenance = init.next_maintenance;
    if (init.limit !== undefined) this.limit = init.limit;
    if (init.field !== undefined) this.field = init.field;
    if (init.value !== undefined) this.value = init.value;
  }

  /** A plain rendering for logs and JSON.stringify; holds nothing the message does not. */
  toJSON(): Record<string, unknown> {
    return {
      name: this.name,
      message: this.message,
      endpoint: this.endpoint,
      status: this.status,
      code: this.code,
      requestId: this.requestId,
      details: this.details,
    };
  }
}

/** Why a non-idempotent request may or may not have been applied. */
export type AmbiguityReason = "connection" | "timeout" | "aborted" | "status";

/**
 * A non-idempotent request (deploy, create key, stop, start, top-up) may have reached the server,
 * and the client did not resend it. The caller must reconcile, e.g. list instances and look for the
 * one it tried to create, before trying again.
 */
export class AmbiguousRequestError extends GpurentalError {
  declare readonly endpoint: Endpoint;
  /** What went wrong after the request may have been sent. */
  readonly reason: AmbiguityReason;
  /** The HTTP status when the reason is `status` (500, 502, 504...). */
  readonly status: number | undefined;
  /** The request id of the response, when there was one. */
  readonly requestId: string | undefined;

  constructor(
    endpoint: Endpoint,
    reason: AmbiguityReason,
    detail: string,
    extra?: { status?: number; requestId?: string | undefined; cause?: unknown },
  ) {
    super(
      `${endpoint}: the request may have been applied (${detail}); it was not resent, reconcile before retrying`,
      endpoint,
      { cause: extra?.cause },
    );
    this.reason = reason;
    this.status = extra?.status;
    this.requestId = extra?.requestId;
  }
}

/** The connection failed in a way that leaves the request unapplied, or the request was safe to resend and every attempt failed. */
export class NetworkError extends GpurentalError {
  /** The transport error code (e.g. ECONNREFUSED, UND_ERR_SOCKET), when known. */
  readonly errorCode: string | undefined;
  /**
   * False when this client has not had a single answer from the API yet: the address, the proxy or
   * the certificates are more likely wrong than the API briefly down, and the call failed fast.
   */
  readonly apiReached: boolean;

  constructor(
    endpoint: Endpoint,
    message: string,
    errorCode?: string,
    options?: { cause?: unknown; apiReached?: boolean },
  ) {
    super(`${endpoint}: ${message}`, endpoint, options);
    this.errorCode = errorCode;
    this.apiReached = options?.apiReached ?? true;
  }
}

/** What a {@link ConnectionSetupError} says is wrong. */
export type ConnectionSetupProblem =
  | "unknown_ca"
  | "host_mismatch"
  | "expired_certificate"
  | "certificate_invalid"
  | "http_to_tls_port"
  | "tls_to_http_port"
  | "proxy_auth_required"
  | "proxy_refused";

/**
 * The connection cannot work as configured: the server's certificate is not trusted, not for this
 * host name or expired; the URL's scheme does not match the port; the proxy wants credentials or
 * refuses the tunnel. The request was never sent; it is not retried, since it would fail the same
 * way until a setting changes. The message names the host and the setting to change.
 */
export class ConnectionSetupError extends NetworkError {
  /** What is wrong. */
  readonly problem: ConnectionSetupProblem;
  /** The setting to change, e.g. `ca_cert_file (GPURENTAL_CA_CERT_FILE) or SSL_CERT_FILE`. */
  readonly setting: string;

  constructor(
    endpoint: Endpoint,
    problem: ConnectionSetupProblem,
    message: string,
    setting: string,
    errorCode: string | undefined,
    options?: { cause?: unknown; apiReached?: boolean },
  ) {
    super(endpoint, message, errorCode, options);
    this.problem = problem;
    this.setting = setting;
  }
}

/** A request (or the whole call, retries included) ran past its time limit. */
export class TimeoutError extends GpurentalError {
  /** The limit that was exceeded, in milliseconds. */
  readonly timeoutMs: number;
  /** Which limit: one attempt's (`request`: no answer in time) or the whole call's (`deadline`). */
  readonly limit: "request" | "deadline";

  /** `from` names the API's address in the message of a request that got no answer. */
  constructor(endpoint: Endpoint, timeoutMs: number, what: "request" | "deadline", from?: string) {
    super(
      what === "request"
        ? `${endpoint}: no response${from ? ` from ${from}` : ""} within ${timeoutMs} ms`
        : `${endpoint}: gave up after the ${timeoutMs} ms deadline`,
      endpoint,
    );
    this.timeoutMs = timeoutMs;
    this.limit = what;
  }
}

/** The caller's AbortSignal fired. Named `AbortError` so generic abort checks recognise it. */
export class RequestAbortedError extends GpurentalError {
  constructor(endpoint: Endpoint | undefined, options?: { cause?: unknown }) {
    super(`${endpoint ?? "request"}: aborted`, endpoint, options);
    this.name = "AbortError";
  }
}

/** One mismatch between a response and its schema. */
export interface ValidationIssue {
  /** Dotted field path, e.g. `items.0.status`; empty for the body itself. */
  path: string;
  /** What was wrong. */
  message: string;
}

/** A 2xx response did not fit the expected schema; names the endpoint and the field. */
export class ResponseValidationError extends GpurentalError {
  declare readonly endpoint: Endpoint;
  /** The HTTP status of the response. */
  readonly status: number;
  /** Every mismatch found. */
  readonly issues: readonly ValidationIssue[];
  /** The request id of the response. */
  readonly requestId: string | undefined;

  constructor(endpoint: Endpoint, status: number, issues: readonly ValidationIssue[], requestId?: string) {
    const first = issues[0];
    const where = first ? `${first.path || "(body)"}: ${first.message}` : "unexpected body";
    const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : "";
    super(`${endpoint}: response does not match the expected shape at ${where}${more}`, endpoint);
    this.status = status;
    this.issues = issues;
    this.requestId = requestId;
  }
}

/** The waiter gave up before the instance reached a target status. */
export class WaitTimeoutError extends GpurentalError {
  /** The instance as last seen, if any poll succeeded. */
  readonly lastInstance: Instance | undefined;
  /** The status last seen, if any. */
  readonly lastStatus: InstanceStatus | undefined;
  /** The statuses that were waited for. */
  readonly target: readonly InstanceStatus[];
  /** The error of the last failed poll, if the last poll failed. */
  readonly lastError: unknown;

  constructor(
    instanceId: string,
    target: readonly InstanceStatus[],
    timeoutMs: number,
    lastInstance: Instance | undefined,
    lastError?: unknown,
  ) {
    const seen = lastInstance ? `last status ${lastInstance.status}` : "no status seen";
    super(
      `instance ${instanceId} did not reach ${target.join(" or ")} within ${timeoutMs} ms (${seen})`,
      "GET /v1/instances/{id}",
    );
    this.lastInstance = lastInstance;
    this.lastStatus = lastInstance?.status;
    this.target = target;
    this.lastError = lastError;
  }
}

/** The instance reached a status the waiter treats as failure (by default `error`). */
export class InstanceErrorStateError extends GpurentalError {
  /** The instance in its failed state; see `error_code` and `error_message`. */
  readonly instance: Instance;
  /** The failed status. */
  readonly status: InstanceStatus;
  /** The instance's `error_code`, e.g. provision_failed. */
  readonly errorCode: string | null;

  constructor(instance: Instance, target: readonly InstanceStatus[]) {
    const why = instance.error_code
      ? ` (${instance.error_code}${instance.error_message ? `: ${instance.error_message}` : ""})`
      : "";
    super(
      `instance ${instance.id} is ${instance.status}${why} while waiting for ${target.join(" or ")}`,
      "GET /v1/instances/{id}",
    );
    this.instance = instance;
    this.status = instance.status;
    this.errorCode = instance.error_code;
  }
}

/** Whether `err` is an {@link ApiError} with the given code (and, optionally, status). */
export function isApiError(err: unknown, code?: ApiErrorCode, status?: number): err is ApiError {
  return (
    err instanceof ApiError &&
    (code === undefined || err.code === code) &&
    (status === undefined || err.status === status)
  );
}
