// Identifiers of the /v1 API are UUID strings (contract, preamble). Checking the form before a call
// turns a typo into an error naming the field instead of a 404 or 422 from the service.

/** The form of every identifier of the API: a UUID, any version, either case. */
export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** An example identifier for messages. */
export const EXAMPLE_ID = "00000000-0000-4000-8000-000000000041";

/** Whether a value has the form of an API identifier. */
export function isUuid(value: unknown): boolean {
  return typeof value === "string" && UUID_PATTERN.test(value);
}
