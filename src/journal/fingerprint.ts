/**
 * Fingerprints: what makes two creates "the same configuration" for adoption, as a hash, so that
 * the journal holds no configuration value it does not need. Secret values go through scrypt
 * first: a plain hash of a short secret could be guessed back from the journal at once; this one
 * costs a guess about 10 ms (a random secret is safe, a dictionary word is not: README.md).
 */
import { createHash, scryptSync } from "node:crypto";
import { stableJson } from "./location";

const SECRET_SALT = "gpurental-deploy-journal-v1";

/** A slow, salted digest of secret values (hex); the same values always give the same digest. */
export function secretDigest(values: Readonly<Record<string, string>>): string {
  return scryptSync(stableJson(values), SECRET_SALT, 16, { N: 1 << 12 }).toString("hex");
}

/** The fingerprint of a configuration: `sha256:` and the hash of its parts (and secrets, slow-hashed). */
export function fingerprintOf(parts: unknown, secrets?: Readonly<Record<string, string>> | null): string {
  const secret = secrets && Object.keys(secrets).length > 0 ? secretDigest(secrets) : null;
  return `sha256:${createHash("sha256").update(stableJson({ parts, secret })).digest("hex")}`;
}
