// Identifiers of the /v1 API are UUID strings (contract, preamble). Checking the form before a call
// turns a typo into an error naming the field instead of a 404 or 422 from the service. The API's
// own address is read here too, once for the client, the provider and the constructs, which word
// its problems each their own way. This module imports nothing, so the constructs can use it.

/** The form of every identifier of the API: a UUID, any version, either case. */
export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** An example identifier for messages. */
export const EXAMPLE_ID = "00000000-0000-4000-8000-000000000041";

/** Whether a value has the form of an API identifier. */
export function isUuid(value: unknown): boolean {
  return typeof value === "string" && UUID_PATTERN.test(value);
}

/** Why a value is not an address of the API: no URL, not http(s), credentials, a query or fragment. */
export type ApiAddressProblem = "not-url" | "scheme" | "credentials" | "query";

/** A value read as the API's base address: the URL, and what is wrong with it if anything. */
export type ApiAddress = { url: URL; problem?: undefined } | { url?: URL; problem: ApiAddressProblem };

/**
 * Reads the API's base address: an http or https URL without credentials, query or fragment. The
 * first problem found wins, in the order of {@link ApiAddressProblem}.
 */
export function parseApiAddress(value: string): ApiAddress {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return { problem: "not-url" };
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return { url, problem: "scheme" };
  if (url.username || url.password) return { url, problem: "credentials" };
  if (url.search || url.hash) return { url, problem: "query" };
  return { url };
}
