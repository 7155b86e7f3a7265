import { randomBytes, randomUUID } from "node:crypto";
import { ApiFailure, adminRequired } from "./errors";
import { displayName, iso, sha256 } from "./state/store";
import type { ApiKeyRecord, Caller, FakeState, Role } from "./types";

// API keys (contract 2.1, 3.1, 4.1): created in a signed-in session, listed, revoked, and the key
// object the API answers with. Only a key's hash is kept; its secret is shown once.

/** What API keys read of the engine: its state, memberships, time, sequence numbers, the change hook. */
export interface ApiKeysHost {
  readonly state: FakeState;
  now(): number;
  nextSeq(): number;
  onChange(): void;
  membership(orgId: string, userId: string): { role: Role } | undefined;
}

/** The API keys of one engine's state. */
export class ApiKeys {
  /** Keeps keys in `host`'s state. */
  constructor(private readonly host: ApiKeysHost) {}

  /** Creates a key; returns it with its secret, which is never available again. */
  create(
    caller: Caller,
    input: { name: string; kind: "personal" | "team" },
  ): { key: ApiKeyRecord; secret: string } {
    if (caller.via !== "session") throw adminRequired("API keys can only be created in a signed-in session");
    if (input.kind === "team" && caller.role !== "admin")
      throw adminRequired("Team keys need an admin session");
    const secret = `gpr_${randomBytes(24).toString("hex")}`;
    const key: ApiKeyRecord = {
      id: randomUUID(),
      org_id: caller.org.id,
      name: input.name,
      kind: input.kind,
      prefix: secret.slice(0, 12),
      secret_hash: sha256(secret),
      creator_id: caller.user.id,
      created_at: this.host.now(),
      last_used_at: null,
      revoked_at: null,
      seq: this.host.nextSeq(),
    };
    this.host.state.api_keys[key.id] = key;
    this.host.onChange();
    return { key, secret };
  }

  /** Active keys of the caller's organization, newest first. */
  list(caller: Caller): ApiKeyRecord[] {
    return Object.values(this.host.state.api_keys)
      .filter((k) => k.org_id === caller.org.id && k.revoked_at === null)
      .sort((a, b) => b.seq - a.seq);
  }

  /** Revokes a key per 4.1. */
  revoke(caller: Caller, id: string): void {
    if (caller.via !== "session") throw adminRequired("API keys cannot revoke API keys");
    const key = this.host.state.api_keys[id];
    if (!key || key.revoked_at !== null || key.org_id !== caller.org.id) {
      throw new ApiFailure(404, "API_KEY_NOT_FOUND", `No active API key ${id} in this organization`);
    }
    if (caller.role !== "admin" && !(key.kind === "personal" && key.creator_id === caller.user.id)) {
      throw adminRequired("Members can only revoke their own personal keys");
    }
    key.revoked_at = this.host.now();
    this.host.onChange();
  }

  /** The API key object of 2.1. */
  render(key: ApiKeyRecord): Record<string, unknown> {
    const creator = this.host.state.users[key.creator_id];
    return {
      id: key.id,
      name: key.name,
      kind: key.kind,
      prefix: key.prefix,
      creator_email: creator ? displayName(creator) : "",
      creator_id: key.creator_id,
      created_at: iso(key.created_at),
      last_used_at: iso(key.last_used_at),
      creator_is_member: this.host.membership(key.org_id, key.creator_id) !== undefined,
    };
  }
}
