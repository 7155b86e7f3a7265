import { parse } from "lossless-json";
import { UserFacingError } from "../user-facing";

// JSON as Terraform writes it. Terraform's numbers are arbitrary precision, and the amounts kept in
// a state (`spend_micro`, prices) must stay exact: integers JavaScript cannot hold exactly become
// bigint instead of a rounded number, everything else is what JSON.parse would give.

/** A JSON value with integers beyond 2^53 kept as bigint. */
export type JsonValue =
  | null
  | boolean
  | number
  | bigint
  | string
  | JsonValue[]
  | { [key: string]: JsonValue };

/** A JSON object. */
export type JsonObject = { [key: string]: JsonValue };

function parseNumber(text: string): number | bigint {
  if (/^-?\d+$/.test(text)) {
    const n = Number(text);
    return Number.isSafeInteger(n) ? n : BigInt(text);
  }
  return Number(text);
}

/**
 * A value of a document quoted in an error about it: as JSON (a bigint as its digits), cut to
 * `max` characters. The message is shown escaped by whoever prints it.
 */
export function shownJson(v: JsonValue | undefined, max = 60): string {
  const text =
    JSON.stringify(v ?? null, (_k, x: unknown) => (typeof x === "bigint" ? x.toString() : x)) ?? "null";
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/** Raised when a document is not JSON; names where it came from and, when known, the position. */
export class JsonDocumentError extends UserFacingError {
  constructor(
    readonly source: string,
    detail: string,
  ) {
    super(`${source} is not valid JSON: ${detail}`);
    this.name = "JsonDocumentError";
  }
}

/** Parses a JSON document exactly; `source` names it in errors. */
export function parseJsonDocument(text: string, source: string): JsonValue {
  try {
    return parse(text, null, parseNumber) as JsonValue;
  } catch (err) {
    throw new JsonDocumentError(source, err instanceof Error ? err.message : String(err));
  }
}

/** Whether a JSON value is an object (not an array, not null). */
export function isJsonObject(v: unknown): v is JsonObject {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
