import { createHash } from "node:crypto";
import { type FakeState, MAP_FIELDS, type UserRecord } from "../types";

// The plain helpers every part of the fake shares: a fresh state, the record maps without
// prototypes, secret hashing and fingerprints, and the ISO form of a fake-clock time.

/** A fresh, empty state. */
export function emptyState(): FakeState {
  return {
    version: 1,
    clock_offset_ms: 0,
    settled_at: 0,
    seq: 0,
    orgs: {},
    users: {},
    memberships: [],
    sessions: {},
    api_keys: {},
    ssh_keys: {},
    machines: {},
    offers: {},
    templates: {},
    instances: {},
    ledger: [],
    host_behaviour: {},
    race_losses: {},
    transitions: "immediate",
  };
}

/**
 * Re-creates every id-keyed record map without a prototype, so an id taken from a request path
 * ("__proto__", "constructor", "toString") finds nothing instead of an inherited member.
 */
export function withoutPrototypes(state: FakeState): FakeState {
  const target = state as unknown as Record<string, Record<string, unknown>>;
  for (const key of MAP_FIELDS) {
    target[key] = Object.assign(Object.create(null) as Record<string, unknown>, target[key]);
  }
  return state;
}

/** SHA-256 hex of a secret; the only form secrets are kept in. */
export function sha256(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

/** Fingerprint of an OpenSSH public key, as ssh-keygen prints it. */
export function fingerprintOf(publicKey: string): string {
  const blob = publicKey.trim().split(/\s+/)[1] ?? publicKey;
  const digest = createHash("sha256").update(Buffer.from(blob, "base64")).digest("base64");
  return `SHA256:${digest.replace(/=+$/, "")}`;
}

/** ISO form of a fake-clock time, or null. */
export function iso(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}

/** How a user is named to others: email, or phone with country code when there is no email. */
export function displayName(user: UserRecord): string {
  return user.email ?? user.phone ?? user.id;
}
