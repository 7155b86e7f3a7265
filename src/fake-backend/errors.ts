/** Extra fields an error may carry beside code and message (contract 7, docs/api-shapes.md). */
export type ErrorExtras = Record<string, string | number | boolean | null>;

/** A refusal the fake answers with the documented error body. */
export class ApiFailure extends Error {
  /** Builds a failure with HTTP status, API code, message and carried fields. */
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly extras: ErrorExtras = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = "ApiFailure";
  }
}

/**
 * 401 TOKEN_INVALID with a message that never repeats the token. Its words must read the same once
 * masked (src/api/redact.ts): "Bearer" followed by a space and a word is masked as a credential
 * wherever it stands, so no message puts a word after it.
 */
export function tokenInvalid(message = "The token is missing, unknown or revoked"): ApiFailure {
  return new ApiFailure(401, "TOKEN_INVALID", message);
}

/** 403 ADMIN_REQUIRED. */
export function adminRequired(message = "This action needs an admin in a signed-in session"): ApiFailure {
  return new ApiFailure(403, "ADMIN_REQUIRED", message);
}

/** A body that could not be read, kept until the checks that come before it have passed. */
export class UnreadableBody {
  /** Wraps the refusal to answer once the route reaches its body. */
  constructor(readonly failure: ApiFailure) {}
}
