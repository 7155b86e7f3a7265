import { timingSafeEqual } from "node:crypto";
import { ApiFailure, adminRequired, tokenInvalid } from "./errors";
import { sha256 } from "./state/store";
import type { Caller, FakeState, Role } from "./types";

// Authentication (contract 5): a bearer token, a session's or an API key's, and X-Org-Id resolve
// to the caller every route acts for; the two requirements routes put on the kind of caller.

/** What authentication reads of the engine: its state, memberships, the time and the change hook. */
export interface AuthHost {
  readonly state: FakeState;
  now(): number;
  onChange(): void;
  membership(orgId: string, userId: string): { role: Role } | undefined;
}

/** Resolves credentials against one engine's state. */
export class Auth {
  /** Reads and stamps credentials in `host`'s state. */
  constructor(private readonly host: AuthHost) {}

  /** Resolves the bearer token and X-Org-Id to a caller, or throws 401/403. */
  authenticate(authorization: string | undefined, orgHeader: string | undefined): Caller {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? "");
    const token = match?.[1];
    if (!token) {
      throw tokenInvalid(
        "Missing or malformed Authorization header: it must hold the scheme Bearer, a space and the token",
      );
    }
    const caller = token.startsWith("gpr_") ? this.authenticateKey(token) : this.authenticateSession(token);
    if (orgHeader !== undefined && orgHeader !== "" && orgHeader !== caller.org.id) {
      throw new ApiFailure(403, "ORG_MISMATCH", "X-Org-Id names an organization other than the credential's");
    }
    return caller;
  }

  private authenticateSession(token: string): Caller {
    const hash = sha256(token);
    const wanted = Buffer.from(hash, "hex");
    const session = Object.values(this.host.state.sessions).find((s) =>
      timingSafeEqual(Buffer.from(s.token_hash, "hex"), wanted),
    );
    if (!session) throw tokenInvalid();
    const org = this.host.state.orgs[session.org_id];
    const user = this.host.state.users[session.user_id];
    const member = this.host.membership(session.org_id, session.user_id);
    if (!org || !user || !member) throw tokenInvalid();
    return { org, user, role: member.role, via: "session", key: null };
  }

  private authenticateKey(secret: string): Caller {
    if (!/^gpr_[0-9a-f]{48}$/.test(secret)) throw tokenInvalid();
    const prefix = secret.slice(0, 12);
    const wanted = Buffer.from(sha256(secret), "hex");
    // Look up by the stored prefix, then compare hashes in constant time.
    const key = Object.values(this.host.state.api_keys).find(
      (k) => k.prefix === prefix && timingSafeEqual(Buffer.from(k.secret_hash, "hex"), wanted),
    );
    if (!key || key.revoked_at !== null) throw tokenInvalid();
    const org = this.host.state.orgs[key.org_id];
    const creator = this.host.state.users[key.creator_id];
    if (!org || !creator) throw tokenInvalid();
    // A personal key re-checks its creator's membership on every request; a team key does not.
    if (key.kind === "personal" && !this.host.membership(key.org_id, key.creator_id)) {
      throw tokenInvalid("The API key's creator is no longer a member of the organization");
    }
    key.last_used_at = this.host.now();
    this.host.onChange();
    return { org, user: creator, role: "member", via: "api_key", key };
  }
}

/** Requires a signed-in session: API keys get 401 TOKEN_INVALID (account endpoints). */
export function requireSession(caller: Caller): void {
  if (caller.via !== "session") throw tokenInvalid("This endpoint needs a signed-in session, not an API key");
}

/** Requires an admin in a session: API keys and members get 403 ADMIN_REQUIRED. */
export function requireAdminSession(caller: Caller): void {
  if (caller.via !== "session" || caller.role !== "admin") throw adminRequired();
}
