import type { z } from "zod";
import {
  ApiError,
  type ApiErrorCarried,
  type Endpoint,
  ResponseValidationError,
  type ValidationIssue,
} from "./errors";
import { redactText, redactValue } from "./redact";

// Reading the API's answers: a 2xx body parsed with its schema, or an error body turned into an
// ApiError carrying the contract's fields (docs/api-shapes.md, "Errors"). Server-supplied text is
// masked with the client's own secrets before it reaches an error.

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

/** Parses a 2xx body with `schema`; no schema (a 204) gives undefined. */
export function parseBody<T>(
  schema: z.ZodType<T> | undefined,
  endpoint: Endpoint,
  status: number,
  text: string,
  requestId: string | undefined,
  secrets: readonly string[],
): T {
  if (!schema) return undefined as T;
  // The request id is the server's text, as any other.
  const rid = requestId === undefined ? undefined : redactText(requestId, secrets);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new ResponseValidationError(endpoint, status, [{ path: "", message: "body is not JSON" }], rid);
  }
  // Without zod's JIT, which compiles a parser for each object schema with `new Function` at its
  // first use: 6 to 9 ms of CPU for the first instance answer of every provider process, against
  // about 1 ms more for the next 24 parsed without it (bench/RESULTS.md, 2026-11-29, "the
  // command's process, second pass"). Passed per call, not through zod's global configuration,
  // which a program that imports this client shares.
  const parsed = schema.safeParse(json, { jitless: true });
  if (parsed.success) return parsed.data;
  const issues: ValidationIssue[] = parsed.error.issues.map((i) => ({
    path: i.path.map(String).join("."),
    message: redactText(i.message, secrets),
  }));
  throw new ResponseValidationError(endpoint, status, issues, rid);
}

/** What an error answer is read from. */
export interface ErrorAnswer {
  endpoint: Endpoint;
  status: number;
  text: string;
  /** The X-Request-Id header, preferred to the body's request_id. */
  headerRequestId: string | undefined;
  retryAfterMs: number | undefined;
  /** Whether an earlier attempt of the same call may have been applied. */
  possiblyApplied: boolean;
}

/** The ApiError of a non-2xx answer; a body that is not the documented shape falls back on the status. */
export function apiErrorOf(answer: ErrorAnswer, secrets: readonly string[]): ApiError {
  const { endpoint, status, text } = answer;
  let obj: Record<string, unknown> | undefined;
  try {
    const json: unknown = JSON.parse(text);
    const inner = isRecord(json) ? json.error : undefined;
    if (isRecord(inner)) obj = inner;
  } catch {
    // A proxy's HTML page or an empty body: fall back to the status below.
  }
  const code =
    typeof obj?.code === "string" && obj.code
      ? redactText(obj.code, secrets)
      : (FALLBACK_CODES[status] ?? `HTTP_${status}`);
  // Masked before it is cut (a credential cut in two would no longer be found whole), on a part
  // long enough to hold any credential that starts within the 200 characters kept.
  const shown = redactText(text.trim().slice(0, 200 + 1024), secrets);
  const rawMessage =
    typeof obj?.message === "string"
      ? obj.message
      : shown
        ? `HTTP ${status}: ${shown.slice(0, 200)}`
        : `HTTP ${status}`;
  const rawRequestId =
    answer.headerRequestId ?? (typeof obj?.request_id === "string" ? obj.request_id : undefined);
  const requestId = rawRequestId === undefined ? undefined : redactText(rawRequestId, secrets);
  const details: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj ?? {})) {
    if (k !== "code" && k !== "message" && k !== "request_id") details[k] = v;
  }
  const safeDetails = redactValue(details, secrets) as Record<string, unknown>;
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
    message: redactText(rawMessage, secrets),
    endpoint,
    requestId,
    retryAfterMs: answer.retryAfterMs,
    details: safeDetails,
    afterPossiblyAppliedAttempt: answer.possiblyApplied,
    ...carried,
  });
}

/** Whether a value is a plain object (not null, not an array). */
export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
