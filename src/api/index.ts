// Public surface of the typed /v1 client: the client, its errors, the record schemas and types,
// and the instance waiter.

export * from "./client";
export * from "./errors";
export * from "./ids";
export * from "./reconcile";
export { maskUrl, REDACTED, redactText, redactValue } from "./redact";
export {
  backoffDelay,
  DEFAULT_RETRY,
  parseRetryAfter,
  type ResolvedRetryOptions,
  type RetryOptions,
  realSleep,
  retryDelay,
  type Sleep,
} from "./retry";
export * from "./retry-policy";
export * from "./schemas";
export * from "./waiter";
