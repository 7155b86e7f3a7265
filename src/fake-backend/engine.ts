import { createHash, randomBytes, randomUUID, timingSafeEqual } from "node:crypto";
import {
  AUTO_DESTROY_AFTER_MS,
  AUTO_DESTROY_BALANCE_MICRO,
  Billing,
  type BillingHost,
  checkBalance,
  HOUR_MS,
  hourlyBurn,
  MICRO_PER_YUAN,
  segmentFor,
} from "./billing";
import type { Clock } from "./clock";
import {
  checkDeploy,
  INSTANCE_LIMIT,
  loseReservationRace,
  MAINTENANCE_WINDOW_MS,
  rentable,
  templateVisible,
} from "./deploy-checks";
import { ApiFailure, adminRequired, tokenInvalid } from "./errors";
import {
  type ApiKeyRecord,
  type EnvEntry,
  type FakeState,
  type HostBehaviour,
  type InstanceRecord,
  type InstanceStatus,
  MAP_FIELDS,
  type MachineRecord,
  type OfferRecord,
  type OperationKind,
  type OrgRecord,
  type Role,
  type SshKeyRecord,
  type TemplateRecord,
  type TransitionMode,
  type UserRecord,
} from "./types";

export {
  AUTO_DESTROY_AFTER_MS,
  AUTO_DESTROY_BALANCE_MICRO,
  INSTANCE_LIMIT,
  MAINTENANCE_WINDOW_MS,
  MICRO_PER_YUAN,
};

/** A stop the host has not confirmed after this long returns to running (contract 3.2). */
export const STOP_TIMEOUT_MS = 30 * 60 * 1000;
/** How often a timed-out stop is re-sent. */
export const STOP_RETRY_MS = 60 * 1000;
const REALISTIC_MS: Record<OperationKind | "gpu_release", number> = {
  provision: 3000,
  start: 2000,
  stop: 2000,
  destroy: 1000,
  gpu_release: 2000,
};

/** What the control API may change on an offer; absent fields stay as they are. */
export type OfferPatch = Partial<
  Pick<
    OfferRecord,
    | "availability"
    | "free_units"
    | "price_per_hour_micro"
    | "storage_price_per_gb_hour_micro"
    | "hold_price_per_hour_micro"
  >
> & { next_maintenance?: number | string | null };

/** Who is calling: resolved from the bearer token. */
export interface Caller {
  org: OrgRecord;
  /** The signed-in user, or the key's creator. */
  user: UserRecord;
  /** Session role; an API key always acts as a member. */
  role: Role;
  via: "session" | "api_key";
  key: ApiKeyRecord | null;
}

/** Deploy request body after validation. */
export interface DeployInput {
  offer_id: string;
  template_id: string;
  disk_gb: number;
  label?: string | null;
  ssh_key_id?: string | null;
  env_overrides?: { key: string; value: string | null; secret: boolean }[];
}

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

/**
 * The stateful domain of the fake: store, auth, API keys, offers and templates, instances and their
 * state machine; the deploy checks are deploy-checks.ts, money is billing.ts.
 */
export class Engine implements BillingHost {
  /** Called after every committed change (persistence hooks in here). */
  onChange: () => void = () => {};
  /** The balance rule, billing segments, the ledger and balance events, over this engine's state. */
  readonly billing: Billing = new Billing(this);

  /** Wraps `state`, reading time from `clock`. */
  constructor(
    public state: FakeState,
    readonly clock: Clock,
  ) {
    withoutPrototypes(state);
    if (state.settled_at === 0) state.settled_at = clock.nowMs();
  }

  /** Current fake time in ms. */
  now(): number {
    return this.clock.nowMs();
  }

  /** The next sequence number: the order records were created in. */
  nextSeq(): number {
    this.state.seq += 1;
    return this.state.seq;
  }

  /** Empties every record; keeps the transition mode. */
  reset(): void {
    const transitions = this.state.transitions;
    this.state = withoutPrototypes(emptyState());
    this.state.transitions = transitions;
    this.state.settled_at = this.now();
    this.onChange();
  }

  // ---- seeding ---------------------------------------------------------------------------------

  /** Creates an organization. */
  createOrg(input: { id?: string; name: string; balance_micro?: number }): OrgRecord {
    const org: OrgRecord = {
      id: input.id ?? randomUUID(),
      name: input.name,
      balance_micro: input.balance_micro ?? 0,
      non_positive_since: null,
      created_at: this.now(),
    };
    if ((input.balance_micro ?? 0) <= 0) org.non_positive_since = this.now();
    this.state.orgs[org.id] = org;
    this.onChange();
    return org;
  }

  /** Creates a user signing in by email or phone. */
  createUser(input: { id?: string; email?: string | null; phone?: string | null }): UserRecord {
    if (!input.email && !input.phone) throw new Error("a user needs an email or a phone number");
    const user: UserRecord = {
      id: input.id ?? randomUUID(),
      email: input.email ?? null,
      phone: input.phone ?? null,
      created_at: this.now(),
    };
    this.state.users[user.id] = user;
    this.onChange();
    return user;
  }

  /** Adds (or changes the role of) a member. */
  addMember(orgId: string, userId: string, role: Role): void {
    this.requireOrg(orgId);
    this.requireUser(userId);
    const existing = this.state.memberships.find((m) => m.org_id === orgId && m.user_id === userId);
    if (existing) existing.role = role;
    else this.state.memberships.push({ org_id: orgId, user_id: userId, role });
    this.onChange();
  }

  /** Removes a member; all their personal keys in that organization are revoked at once (3.1). */
  removeMember(orgId: string, userId: string): boolean {
    const before = this.state.memberships.length;
    this.state.memberships = this.state.memberships.filter(
      (m) => !(m.org_id === orgId && m.user_id === userId),
    );
    if (this.state.memberships.length === before) return false;
    const now = this.now();
    for (const key of Object.values(this.state.api_keys)) {
      if (
        key.org_id === orgId &&
        key.creator_id === userId &&
        key.kind === "personal" &&
        key.revoked_at === null
      ) {
        key.revoked_at = now;
      }
    }
    for (const [id, s] of Object.entries(this.state.sessions)) {
      if (s.org_id === orgId && s.user_id === userId) delete this.state.sessions[id];
    }
    this.onChange();
    return true;
  }

  /** Signs a member in; returns the session token (only its hash is kept). */
  createSession(userId: string, orgId: string): string {
    this.requireUser(userId);
    if (!this.membership(orgId, userId)) throw new Error("the user is not a member of that organization");
    const token = `gps_${randomBytes(24).toString("hex")}`;
    const id = randomUUID();
    this.state.sessions[id] = {
      id,
      user_id: userId,
      org_id: orgId,
      token_hash: sha256(token),
      created_at: this.now(),
    };
    this.onChange();
    return token;
  }

  /** Adds an SSH key for a user. */
  createSshKey(input: { id?: string; user_id: string; name: string; public_key?: string }): SshKeyRecord {
    this.requireUser(input.user_id);
    const publicKey =
      input.public_key ??
      `ssh-ed25519 ${Buffer.concat([Buffer.from("fake-key:"), randomBytes(32)]).toString("base64")}`;
    const key: SshKeyRecord = {
      id: input.id ?? randomUUID(),
      user_id: input.user_id,
      name: input.name,
      public_key: publicKey,
      fingerprint: fingerprintOf(publicKey),
      created_at: this.now(),
    };
    this.state.ssh_keys[key.id] = key;
    this.onChange();
    return key;
  }

  /** Adds a host machine. */
  createMachine(input: Partial<MachineRecord> & { disk_gb: number }): MachineRecord {
    const range = input.ssh_port_range ?? [40000, 40999];
    const machine: MachineRecord = {
      id: input.id ?? randomUUID(),
      public_ip: input.public_ip ?? `203.0.113.${1 + (Object.keys(this.state.machines).length % 250)}`,
      disk_gb: input.disk_gb,
      available_disk_gb: input.available_disk_gb ?? input.disk_gb,
      cuda_version: input.cuda_version ?? "12.4",
      vm_capable: input.vm_capable ?? false,
      architecture: input.architecture ?? "x86_64",
      gpu_release_supported: input.gpu_release_supported ?? true,
      registered: input.registered ?? true,
      directly_reachable: input.directly_reachable ?? true,
      ssh_port_range: range,
      next_ssh_port: input.next_ssh_port ?? range[0],
    };
    this.state.machines[machine.id] = machine;
    this.onChange();
    return machine;
  }

  /** Adds an offer on an existing machine. */
  createOffer(
    input: Partial<Omit<OfferRecord, "next_maintenance" | "created_at" | "seq">> & {
      machine_id: string;
      next_maintenance?: number | string | null;
    },
  ): OfferRecord {
    this.requireMachine(input.machine_id);
    const nm = input.next_maintenance;
    const offer: OfferRecord = {
      id: input.id ?? randomUUID(),
      machine_id: input.machine_id,
      gpu_model: input.gpu_model ?? "RTX 4090",
      num_gpus: input.num_gpus ?? 1,
      price_per_hour_micro: input.price_per_hour_micro ?? 2_500_000,
      storage_price_per_gb_hour_micro: input.storage_price_per_gb_hour_micro ?? 200,
      hold_price_per_hour_micro: input.hold_price_per_hour_micro ?? null,
      availability: input.availability ?? "available",
      free_units: input.free_units ?? 4,
      next_maintenance: typeof nm === "string" ? Date.parse(nm) : (nm ?? null),
      region: input.region ?? "cn-east-1",
      created_at: this.now(),
      seq: this.nextSeq(),
    };
    this.state.offers[offer.id] = offer;
    this.onChange();
    return offer;
  }

  /**
   * Changes an offer the way the market does: sells it out or back in, withdraws it, changes its
   * prices or books its machine's maintenance. Instances already rented keep their price snapshot.
   */
  updateOffer(offerId: string, patch: OfferPatch): OfferRecord {
    const offer = this.state.offers[offerId];
    if (!offer) throw new ApiFailure(404, "OFFER_NOT_FOUND", `Offer ${offerId} not found`);
    this.settle();
    const p = patch;
    if (p.availability !== undefined) offer.availability = p.availability;
    if (p.free_units !== undefined) offer.free_units = p.free_units;
    if (p.price_per_hour_micro !== undefined) offer.price_per_hour_micro = p.price_per_hour_micro;
    if (p.storage_price_per_gb_hour_micro !== undefined)
      offer.storage_price_per_gb_hour_micro = p.storage_price_per_gb_hour_micro;
    if (p.hold_price_per_hour_micro !== undefined)
      offer.hold_price_per_hour_micro = p.hold_price_per_hour_micro;
    const nm = p.next_maintenance;
    if (nm !== undefined) offer.next_maintenance = typeof nm === "string" ? Date.parse(nm) : nm;
    this.onChange();
    return offer;
  }

  /** Adds a template. */
  createTemplate(
    input: Partial<Omit<TemplateRecord, "created_at" | "seq">> & { name: string },
  ): TemplateRecord {
    const mode = input.mode ?? "ssh";
    const id = input.id ?? randomUUID();
    const template: TemplateRecord = {
      id,
      hash_id: input.hash_id ?? `t-${sha256(id).slice(0, 6)}`,
      name: input.name,
      mode,
      image: input.image ?? "pytorch/pytorch:2.5.1-cuda12.4",
      cuda_max: input.cuda_max ?? null,
      architecture: input.architecture ?? "x86_64",
      coming_soon: input.coming_soon ?? false,
      active: input.active ?? true,
      recommended: input.recommended ?? false,
      visibility: input.visibility ?? "system",
      owner_org_id: input.owner_org_id ?? null,
      uses_private_registry: input.uses_private_registry ?? false,
      uses_access_token: input.uses_access_token ?? mode !== "ssh",
      env: input.env ?? [],
      open_port: input.open_port ?? (mode === "jupyter" ? 8888 : null),
      open_port_guarded: input.open_port_guarded ?? true,
      readme: input.readme ?? `# ${input.name}`,
      onstart: input.onstart ?? null,
      created_at: this.now(),
      seq: this.nextSeq(),
    };
    this.state.templates[template.id] = template;
    this.onChange();
    return template;
  }

  /** Sets an organization's balance directly (no ledger row). */
  setBalance(orgId: string, balanceMicro: number): void {
    this.settle();
    const org = this.requireOrg(orgId);
    org.balance_micro = balanceMicro;
    this.billing.afterBalanceChange(org);
    this.settle();
    this.onChange();
  }

  /** Credits an organization's balance with a top_up ledger row; returns the new balance. */
  topUp(orgId: string, amountMicro: number): number {
    this.settle();
    const org = this.requireOrg(orgId);
    this.billing.topUp(org, amountMicro);
    this.settle();
    this.onChange();
    return org.balance_micro;
  }

  /** Chooses how asynchronous transitions land; rescheduling transitions already in flight. */
  setTransitions(mode: TransitionMode): void {
    this.state.transitions = mode;
    const now = this.now();
    for (const inst of Object.values(this.state.instances)) {
      if (inst.pending) inst.pending.due_at = this.dueAt(inst.pending.kind, now);
      if (inst.gpu_release === "pending") inst.gpu_release_due_at = this.dueAt("gpu_release", now);
    }
    this.onChange();
  }

  /** Sets part of a machine's host behaviour. */
  setHostBehaviour(machineId: string, behaviour: Partial<HostBehaviour>): void {
    this.requireMachine(machineId);
    this.state.host_behaviour[machineId] = { ...this.state.host_behaviour[machineId], ...behaviour };
    this.settle();
    this.onChange();
  }

  /** Makes the next `times` deploys on an offer lose the reservation race (7.2 row 15). */
  loseNextRace(offerId: string, times = 1): void {
    this.state.race_losses[offerId] = (this.state.race_losses[offerId] ?? 0) + times;
    this.onChange();
  }

  /** Lands a transition waiting in manual mode (or any in flight) now; false when none is pending. */
  completeTransition(instanceId: string): boolean {
    this.settle();
    const inst = this.state.instances[instanceId];
    if (!inst) return false;
    let done = false;
    if (inst.pending) {
      inst.pending.due_at = this.now();
      done = true;
    }
    if (inst.gpu_release === "pending") {
      inst.gpu_release_due_at = this.now();
      done = true;
    }
    this.settle();
    this.onChange();
    return done;
  }

  /** Appends log lines to an instance (tests of the tail limits). */
  appendLogs(instanceId: string, lines: string[]): void {
    const inst = this.requireInstance(instanceId);
    inst.logs.push(...lines);
    this.trimLogs(inst);
    this.onChange();
  }

  // ---- lookups ---------------------------------------------------------------------------------

  private requireOrg(id: string): OrgRecord {
    const org = this.state.orgs[id];
    if (!org) throw new Error(`unknown organization ${id}`);
    return org;
  }
  private requireUser(id: string): UserRecord {
    const user = this.state.users[id];
    if (!user) throw new Error(`unknown user ${id}`);
    return user;
  }
  private requireMachine(id: string): MachineRecord {
    const machine = this.state.machines[id];
    if (!machine) throw new Error(`unknown machine ${id}`);
    return machine;
  }
  private requireInstance(id: string): InstanceRecord {
    const inst = this.state.instances[id];
    if (!inst) throw new Error(`unknown instance ${id}`);
    return inst;
  }

  /** The membership of a user in an organization, if any. */
  membership(orgId: string, userId: string): { role: Role } | undefined {
    return this.state.memberships.find((m) => m.org_id === orgId && m.user_id === userId);
  }

  /** Behaviour of a machine's host with defaults filled in. */
  host(machineId: string): HostBehaviour {
    return {
      unreachable: false,
      refuseStart: false,
      startUnavailable: false,
      capacityUnavailable: false,
      neverConfirmStop: false,
      neverConfirmStart: false,
      provisionFails: false,
      workloadCompletes: false,
      workloadVanishes: false,
      ...this.state.host_behaviour[machineId],
    };
  }

  /** Email, or phone with country code when there is no email. */
  displayName(user: UserRecord): string {
    return user.email ?? user.phone ?? user.id;
  }

  // ---- authentication (contract 5) -------------------------------------------------------------

  /** Resolves the bearer token and X-Org-Id to a caller, or throws 401/403. */
  authenticate(authorization: string | undefined, orgHeader: string | undefined): Caller {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? "");
    const token = match?.[1];
    if (!token) throw tokenInvalid("Missing or malformed Authorization header; expected 'Bearer <token>'");
    const caller = token.startsWith("gpr_") ? this.authenticateKey(token) : this.authenticateSession(token);
    if (orgHeader !== undefined && orgHeader !== "" && orgHeader !== caller.org.id) {
      throw new ApiFailure(403, "ORG_MISMATCH", "X-Org-Id names an organization other than the credential's");
    }
    return caller;
  }

  private authenticateSession(token: string): Caller {
    const hash = sha256(token);
    const wanted = Buffer.from(hash, "hex");
    const session = Object.values(this.state.sessions).find((s) =>
      timingSafeEqual(Buffer.from(s.token_hash, "hex"), wanted),
    );
    if (!session) throw tokenInvalid();
    const org = this.state.orgs[session.org_id];
    const user = this.state.users[session.user_id];
    const member = this.membership(session.org_id, session.user_id);
    if (!org || !user || !member) throw tokenInvalid();
    return { org, user, role: member.role, via: "session", key: null };
  }

  private authenticateKey(secret: string): Caller {
    if (!/^gpr_[0-9a-f]{48}$/.test(secret)) throw tokenInvalid();
    const prefix = secret.slice(0, 12);
    const wanted = Buffer.from(sha256(secret), "hex");
    // Look up by the stored prefix, then compare hashes in constant time.
    const key = Object.values(this.state.api_keys).find(
      (k) => k.prefix === prefix && timingSafeEqual(Buffer.from(k.secret_hash, "hex"), wanted),
    );
    if (!key || key.revoked_at !== null) throw tokenInvalid();
    const org = this.state.orgs[key.org_id];
    const creator = this.state.users[key.creator_id];
    if (!org || !creator) throw tokenInvalid();
    // A personal key re-checks its creator's membership on every request; a team key does not.
    if (key.kind === "personal" && !this.membership(key.org_id, key.creator_id)) {
      throw tokenInvalid("The API key's creator is no longer a member of the organization");
    }
    key.last_used_at = this.now();
    this.onChange();
    return { org, user: creator, role: "member", via: "api_key", key };
  }

  /** Requires a signed-in session: API keys get 401 TOKEN_INVALID (account endpoints). */
  requireSession(caller: Caller): void {
    if (caller.via !== "session")
      throw tokenInvalid("This endpoint needs a signed-in session, not an API key");
  }

  /** Requires an admin in a session: API keys and members get 403 ADMIN_REQUIRED. */
  requireAdminSession(caller: Caller): void {
    if (caller.via !== "session" || caller.role !== "admin") throw adminRequired();
  }

  // ---- API keys (contract 2.1, 3.1, 4.1) -------------------------------------------------------

  /** Creates a key; returns it with its secret, which is never available again. */
  createApiKey(
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
      created_at: this.now(),
      last_used_at: null,
      revoked_at: null,
      seq: this.nextSeq(),
    };
    this.state.api_keys[key.id] = key;
    this.onChange();
    return { key, secret };
  }

  /** Active keys of the caller's organization, newest first. */
  listApiKeys(caller: Caller): ApiKeyRecord[] {
    return Object.values(this.state.api_keys)
      .filter((k) => k.org_id === caller.org.id && k.revoked_at === null)
      .sort((a, b) => b.seq - a.seq);
  }

  /** Revokes a key per 4.1. */
  revokeApiKey(caller: Caller, id: string): void {
    if (caller.via !== "session") throw adminRequired("API keys cannot revoke API keys");
    const key = this.state.api_keys[id];
    if (!key || key.revoked_at !== null || key.org_id !== caller.org.id) {
      throw new ApiFailure(404, "API_KEY_NOT_FOUND", `No active API key ${id} in this organization`);
    }
    if (caller.role !== "admin" && !(key.kind === "personal" && key.creator_id === caller.user.id)) {
      throw adminRequired("Members can only revoke their own personal keys");
    }
    key.revoked_at = this.now();
    this.onChange();
  }

  /** The API key object of 2.1. */
  renderApiKey(key: ApiKeyRecord): Record<string, unknown> {
    const creator = this.state.users[key.creator_id];
    return {
      id: key.id,
      name: key.name,
      kind: key.kind,
      prefix: key.prefix,
      creator_email: creator ? this.displayName(creator) : "",
      creator_id: key.creator_id,
      created_at: iso(key.created_at),
      last_used_at: iso(key.last_used_at),
      creator_is_member: this.membership(key.org_id, key.creator_id) !== undefined,
    };
  }

  // ---- offers and templates --------------------------------------------------------------------

  /** Whether an offer can still be rented. */
  rentable(offer: OfferRecord): boolean {
    return rentable(offer);
  }

  /** Whether a template is visible to an organization. */
  templateVisible(t: TemplateRecord, orgId: string): boolean {
    return templateVisible(t, orgId);
  }

  /** The offer object of docs/api-shapes.md. */
  renderOffer(offer: OfferRecord): Record<string, unknown> {
    const m = this.state.machines[offer.machine_id];
    return {
      id: offer.id,
      gpu_model: offer.gpu_model,
      num_gpus: offer.num_gpus,
      price_per_hour_micro: offer.price_per_hour_micro,
      storage_price_per_gb_hour_micro: offer.storage_price_per_gb_hour_micro,
      hold_price_per_hour_micro: offer.hold_price_per_hour_micro,
      availability: offer.availability,
      free_units: offer.free_units,
      next_maintenance: iso(offer.next_maintenance),
      region: offer.region,
      machine: m
        ? {
            id: m.id,
            disk_gb: m.disk_gb,
            available_disk_gb: m.available_disk_gb,
            cuda_version: m.cuda_version,
            vm_capable: m.vm_capable,
            architecture: m.architecture,
            gpu_release_supported: m.gpu_release_supported,
          }
        : null,
      created_at: iso(offer.created_at),
    };
  }

  /** The template object of docs/api-shapes.md; `embedded` nulls readme and onstart. */
  renderTemplate(t: TemplateRecord, embedded = false): Record<string, unknown> {
    return {
      id: t.id,
      hash_id: t.hash_id,
      name: t.name,
      mode: t.mode,
      image: t.image,
      cuda_max: t.cuda_max,
      architecture: t.architecture,
      coming_soon: t.coming_soon,
      active: t.active,
      recommended: t.recommended,
      visibility: t.visibility,
      owner_org_id: t.owner_org_id,
      uses_private_registry: t.uses_private_registry,
      env: t.env.map((e) => ({ key: e.key, value: e.secret ? null : e.value, secret: e.secret })),
      open_port: t.open_port,
      readme: embedded ? null : t.readme,
      onstart: embedded ? null : t.onstart,
      created_at: iso(t.created_at),
    };
  }

  /** Duplicates a visible template as a private one of the caller's organization. */
  duplicateTemplate(caller: Caller, id: string): TemplateRecord {
    const t = this.state.templates[id];
    if (!t || !this.templateVisible(t, caller.org.id)) {
      throw new ApiFailure(404, "TEMPLATE_NOT_FOUND", `Template ${id} not found`);
    }
    const { id: _id, hash_id: _h, created_at: _c, seq: _s, ...rest } = t;
    return this.createTemplate({
      ...rest,
      name: `${t.name} (copy)`,
      visibility: "private",
      owner_org_id: caller.org.id,
      recommended: false,
      env: t.env.map((e) => ({ ...e })),
    });
  }

  // ---- instances (contract 2.2, 3.2, 4.2, 7.2) -------------------------------------------------

  /** Deploys an instance, running the checks of 7.2 in order; a refusal changes nothing. */
  deploy(caller: Caller, input: DeployInput): InstanceRecord {
    const now = this.now();
    const { offer, machine, template, sshKey } = checkDeploy(this, caller, input, now);
    if (loseReservationRace(this.state, offer.id)) {
      this.onChange();
      throw new ApiFailure(409, "OFFER_UNAVAILABLE", "Another deploy took the last free unit of this offer");
    }

    offer.free_units -= 1;
    machine.available_disk_gb -= input.disk_gb;
    const [low, high] = machine.ssh_port_range;
    const port = machine.next_ssh_port === 22 ? machine.next_ssh_port + 1 : machine.next_ssh_port;
    machine.next_ssh_port = port + 1 > high ? low : port + 1;
    const accessToken = template.uses_access_token ? randomBytes(16).toString("hex") : null;
    const key = caller.key;
    const inst: InstanceRecord = {
      id: randomUUID(),
      org_id: caller.org.id,
      offer_id: offer.id,
      template_id: template.id,
      machine_id: machine.id,
      label: input.label ?? null,
      status: "creating",
      disk_gb: input.disk_gb,
      price_per_hour_micro: offer.price_per_hour_micro,
      storage_price_per_gb_hour_micro: offer.storage_price_per_gb_hour_micro,
      ssh_host: machine.public_ip,
      ssh_port: port,
      ssh_user: "root",
      ssh_key_id: sshKey?.id ?? null,
      access_token: accessToken,
      workload_reported: false,
      error_code: null,
      error_message: null,
      gpus_released: false,
      gpu_release: null,
      gpu_release_requested_at: null,
      gpu_release_due_at: null,
      created_at: now,
      started_at: null,
      status_changed_at: now,
      destroyed_at: null,
      spend_micro: 0,
      deployed_by: key?.kind === "team" ? `${key.name} (${key.prefix})` : this.displayName(caller.user),
      deployed_via_api_key: key ? { id: key.id, name: key.name, kind: key.kind, prefix: key.prefix } : null,
      env: mergeEnv(template, input.env_overrides ?? [], accessToken, offer.num_gpus),
      logs: [],
      pending: null,
      current_op_id: null,
      stop_retry: null,
      segment: null,
      seq: this.nextSeq(),
    };
    this.state.instances[inst.id] = inst;
    this.beginOperation(inst, "provision");
    this.onChange();
    return inst;
  }

  /** The caller's organization's instances, newest first. */
  listInstances(orgId: string, includeDestroyed: boolean): InstanceRecord[] {
    return Object.values(this.state.instances)
      .filter((i) => i.org_id === orgId && (includeDestroyed || i.status !== "destroyed"))
      .sort((a, b) => b.seq - a.seq);
  }

  /** An instance of the caller's organization, or 404 INSTANCE_NOT_FOUND. */
  getInstance(caller: Caller, id: string): InstanceRecord {
    const inst = this.state.instances[id];
    if (!inst || inst.org_id !== caller.org.id) {
      throw new ApiFailure(404, "INSTANCE_NOT_FOUND", `Instance ${id} not found`);
    }
    return inst;
  }

  private invalidState(inst: InstanceRecord, action: string): ApiFailure {
    return new ApiFailure(409, "INVALID_STATE", `Cannot ${action} an instance that is ${inst.status}`);
  }

  /** POST /stop: running -> stopping. */
  stop(caller: Caller, id: string): InstanceRecord {
    const inst = this.getInstance(caller, id);
    if (inst.status !== "running") throw this.invalidState(inst, "stop");
    this.setStatus(inst, "stopping");
    inst.error_code = null;
    inst.error_message = null;
    inst.stop_retry = null;
    this.beginOperation(inst, "stop");
    this.onChange();
    return inst;
  }

  /** POST /start: stopped -> starting, after the balance rule and the host's answer (7.3). */
  start(caller: Caller, id: string): InstanceRecord {
    const inst = this.getInstance(caller, id);
    if (inst.status !== "stopped") throw this.invalidState(inst, "start");
    checkBalance(caller.org, hourlyBurn(inst, true) + this.billing.orgHourlyBurn(caller.org.id, inst.id));
    const host = this.host(inst.machine_id);
    let failure: ApiFailure | null = null;
    if (host.unreachable) {
      failure = new ApiFailure(409, "HOST_UNREACHABLE", "The machine is not connected; try later");
    } else if (host.refuseStart === "refused") {
      failure = new ApiFailure(409, "START_REFUSED", "The host refused the resume");
    } else if (host.refuseStart === "workload_missing" || host.workloadVanishes) {
      failure = new ApiFailure(
        409,
        "START_REFUSED",
        "The host no longer holds the workload; destroy the instance and deploy again",
      );
    } else if (host.startUnavailable) {
      failure = new ApiFailure(
        503,
        "START_UNAVAILABLE",
        "The resume cannot be completed right now; retry shortly",
        {},
        {
          "retry-after": "5",
        },
      );
    } else if (host.capacityUnavailable) {
      inst.error_code = "gpus_unavailable";
      inst.error_message = "The released GPUs are in use or out of service";
      this.onChange();
      failure = new ApiFailure(
        409,
        "CAPACITY_UNAVAILABLE",
        "The GPUs released at balance exhaustion are now in use or out of service; retry later",
      );
    }
    // Every start failure leaves the instance stopped with its disk.
    if (failure) throw failure;
    this.setStatus(inst, "starting");
    inst.error_code = null;
    inst.error_message = null;
    inst.stop_retry = null;
    this.beginOperation(inst, "start");
    this.onChange();
    return inst;
  }

  /** DELETE: any status but destroyed -> destroying; on destroying it re-sends the teardown. */
  destroy(caller: Caller, id: string): InstanceRecord {
    const inst = this.getInstance(caller, id);
    if (inst.status === "destroyed") throw this.invalidState(inst, "destroy");
    if (inst.status !== "destroying") this.setStatus(inst, "destroying");
    inst.stop_retry = null;
    inst.gpu_release_due_at = null;
    const dueBefore = inst.pending?.kind === "destroy" ? inst.pending.due_at : undefined;
    this.beginOperation(inst, "destroy");
    // A repeated DELETE is a new request but does not push the teardown further out.
    if (dueBefore !== undefined && inst.pending && dueBefore !== null && inst.pending.due_at !== null) {
      inst.pending.due_at = Math.min(dueBefore, inst.pending.due_at);
    }
    this.onChange();
    return inst;
  }

  /** Last `tail` log lines; empty until the workload first ran. */
  logs(caller: Caller, id: string, tail: number): string[] {
    const inst = this.getInstance(caller, id);
    if (inst.started_at === null) return [];
    return inst.logs.slice(-tail);
  }

  /** The actions the API accepts in a status. */
  allowedActions(status: InstanceStatus): string[] {
    switch (status) {
      case "running":
        return ["stop", "destroy"];
      case "stopped":
        return ["start", "destroy"];
      case "destroyed":
        return [];
      default:
        return ["destroy"];
    }
  }

  /** The instance object of 2.2; `abbreviated` embeds the short offer of a deploy response. */
  renderInstance(inst: InstanceRecord, abbreviated = false): Record<string, unknown> {
    const offer = this.state.offers[inst.offer_id];
    const template = this.state.templates[inst.template_id];
    const via = inst.deployed_via_api_key;
    const reported = inst.workload_reported && inst.status !== "destroyed" && inst.status !== "destroying";
    const base = `http://${inst.ssh_host}`;
    let jupyterUrl: string | null = null;
    let openUrl: string | null = null;
    const reachable = this.state.machines[inst.machine_id]?.directly_reachable !== false;
    if (reported && template && reachable) {
      if (template.mode === "jupyter") {
        jupyterUrl = `${base}:${inst.ssh_port + 10000}/lab?token=${inst.access_token ?? ""}`;
      }
      if (template.open_port !== null) {
        const guarded = template.open_port_guarded && inst.access_token !== null;
        openUrl = `${base}:${inst.ssh_port + 20000}/${guarded ? `?token=${inst.access_token}` : ""}`;
      }
    }
    return {
      id: inst.id,
      label: inst.label,
      status: inst.status,
      disk_gb: inst.disk_gb,
      price_per_hour_micro: inst.price_per_hour_micro,
      storage_price_per_gb_hour_micro: inst.storage_price_per_gb_hour_micro,
      ssh_host: inst.ssh_host,
      ssh_port: inst.ssh_port,
      ssh_user: inst.ssh_user,
      jupyter_url: jupyterUrl,
      open_url: openUrl,
      access_token: inst.status === "destroyed" ? null : inst.access_token,
      error_code: inst.error_code,
      error_message: inst.error_message,
      allowed_actions: this.allowedActions(inst.status),
      gpus_released: inst.gpus_released,
      gpu_release: inst.gpu_release,
      gpu_release_requested_at: iso(inst.gpu_release_requested_at),
      hold_price_per_hour_micro: null,
      stop_hold_price_per_hour_micro: null,
      suspended_hold_price_per_hour_micro: null,
      stop_releases_gpus: false,
      created_at: iso(inst.created_at),
      started_at: iso(inst.started_at),
      status_changed_at: iso(inst.status_changed_at),
      destroyed_at: iso(inst.destroyed_at),
      spend_micro: inst.spend_micro,
      deployed_by: inst.deployed_by,
      deployed_via_api_key: via
        ? { ...via, revoked: this.state.api_keys[via.id]?.revoked_at != null || !this.state.api_keys[via.id] }
        : null,
      offer: offer
        ? abbreviated
          ? { id: offer.id, gpu_model: offer.gpu_model, num_gpus: offer.num_gpus }
          : this.renderOffer(offer)
        : { id: inst.offer_id },
      template: template ? this.renderTemplate(template, true) : { id: inst.template_id },
    };
  }

  // ---- the state machine -----------------------------------------------------------------------

  private dueAt(kind: OperationKind | "gpu_release", now: number): number | null {
    const mode = this.state.transitions;
    if (mode === "manual") return null;
    if (mode === "immediate") return now;
    if (mode === "realistic") return now + REALISTIC_MS[kind];
    return now + mode.afterMs;
  }

  private beginOperation(inst: InstanceRecord, kind: OperationKind): void {
    const now = this.now();
    const opId = randomUUID();
    inst.current_op_id = opId;
    inst.pending = { kind, op_id: opId, requested_at: now, due_at: this.dueAt(kind, now) };
  }

  private setStatus(inst: InstanceRecord, status: InstanceStatus, at = this.now()): void {
    if (inst.status === status) return;
    inst.status = status;
    inst.status_changed_at = at;
    // Close the running billing segment; open the one of the new status.
    inst.segment = segmentFor(inst, status, at);
    const line = `[${new Date(at).toISOString()}] platform: instance is ${status}`;
    if (inst.started_at !== null || status === "running") inst.logs.push(line);
    this.trimLogs(inst);
  }

  private trimLogs(inst: InstanceRecord): void {
    if (inst.logs.length > 2000) inst.logs.splice(0, inst.logs.length - 2000);
  }

  private reachRunning(inst: InstanceRecord, at: number): void {
    const first = inst.started_at === null;
    if (first) {
      inst.started_at = at;
      const t = new Date(at).toISOString();
      const template = this.state.templates[inst.template_id];
      inst.logs.push(
        `[${t}] workload: pulling ${template?.image ?? "image"}`,
        `[${t}] workload: container created`,
        `[${t}] workload: sshd listening on port 22`,
      );
      if (template?.mode === "jupyter") inst.logs.push(`[${t}] workload: JupyterLab is running`);
    }
    this.setStatus(inst, "running", at);
    inst.workload_reported = true;
    inst.gpus_released = false;
  }

  private release(inst: InstanceRecord): void {
    const offer = this.state.offers[inst.offer_id];
    const machine = this.state.machines[inst.machine_id];
    if (offer) offer.free_units += 1;
    if (machine)
      machine.available_disk_gb = Math.min(machine.disk_gb, machine.available_disk_gb + inst.disk_gb);
  }

  private land(inst: InstanceRecord, at: number): void {
    const op = inst.pending;
    if (!op) return;
    const host = this.host(inst.machine_id);
    switch (op.kind) {
      case "provision":
        inst.pending = null;
        if (host.provisionFails) {
          this.setStatus(inst, "error", at);
          inst.error_code = "provision_failed";
          inst.error_message = "The host could not provision the workload";
        } else {
          this.reachRunning(inst, at);
        }
        return;
      case "start":
        if (host.neverConfirmStart) {
          // Not confirmed: the start times out (start_timed_out) after the same 30 minutes as a stop.
          op.due_at = Number.POSITIVE_INFINITY;
          return;
        }
        inst.pending = null;
        this.reachRunning(inst, at);
        return;
      case "stop":
        if (host.neverConfirmStop) {
          // The host has not confirmed; wait for the timeout of 3.2.
          op.due_at = Number.POSITIVE_INFINITY;
          return;
        }
        inst.pending = null;
        this.setStatus(inst, "stopped", at);
        return;
      case "destroy":
        inst.pending = null;
        this.setStatus(inst, "destroyed", at);
        inst.destroyed_at = at;
        inst.access_token = null;
        inst.gpu_release = null;
        inst.gpu_release_requested_at = null;
        inst.gpu_release_due_at = null;
        this.release(inst);
        return;
    }
  }

  /** Next time something scheduled happens, or Infinity. */
  private nextEventAt(): number {
    let next = Number.POSITIVE_INFINITY;
    for (const inst of Object.values(this.state.instances)) {
      const p = inst.pending;
      if (p?.due_at != null && Number.isFinite(p.due_at)) next = Math.min(next, p.due_at);
      if (p?.kind === "stop" && inst.status === "stopping")
        next = Math.min(next, p.requested_at + STOP_TIMEOUT_MS);
      if (p?.kind === "start" && inst.status === "starting")
        next = Math.min(next, p.requested_at + STOP_TIMEOUT_MS);
      if (inst.gpu_release_due_at !== null) next = Math.min(next, inst.gpu_release_due_at);
      if (inst.stop_retry) next = Math.min(next, inst.stop_retry.next_at);
    }
    return next;
  }

  /** Applies every condition that holds at `at` (status rules that are not timers). */
  private applyConditions(at: number): boolean {
    let changed = this.billing.trackNonPositive(at);
    for (const inst of Object.values(this.state.instances)) {
      const org = this.state.orgs[inst.org_id];
      if (!org) continue;
      const host = this.host(inst.machine_id);
      if (inst.status === "running" && (host.workloadCompletes || host.workloadVanishes)) {
        this.setStatus(inst, "error", at);
        inst.pending = null;
        inst.stop_retry = null;
        inst.error_code = host.workloadCompletes ? "workload_completed" : "workload_gone";
        inst.error_message = host.workloadCompletes
          ? "The workload exited on its own"
          : "The workload is no longer on the host";
        changed = true;
        continue;
      }
      if (this.billing.autoStopDue(inst, org)) {
        // Auto-stop: no stopping phase, the GPUs go back at once; a release may follow.
        this.setStatus(inst, "stopped", at);
        inst.pending = null;
        inst.stop_retry = null;
        inst.current_op_id = null;
        const machine = this.state.machines[inst.machine_id];
        inst.gpu_release_requested_at = at;
        if (machine?.gpu_release_supported) {
          inst.gpu_release = "pending";
          inst.gpu_release_due_at = this.dueAt("gpu_release", at);
        } else {
          inst.gpu_release = "unsupported";
        }
        changed = true;
        continue;
      }
      if (this.billing.autoDestroyDue(inst, org, at)) {
        this.setStatus(inst, "destroyed", at);
        inst.destroyed_at = at;
        inst.access_token = null;
        inst.pending = null;
        inst.gpu_release = null;
        inst.gpu_release_requested_at = null;
        inst.gpu_release_due_at = null;
        inst.error_message = "Destroyed after 24 hours at or below ¥0 and at or below -¥35";
        this.release(inst);
        changed = true;
      }
    }
    return changed;
  }

  private processDue(at: number): boolean {
    let changed = false;
    const instances = Object.values(this.state.instances).sort((a, b) => a.seq - b.seq);
    for (const inst of instances) {
      const p = inst.pending;
      if (p && p.kind === "stop" && inst.status === "stopping" && at >= p.requested_at + STOP_TIMEOUT_MS) {
        // 3.2: the host has not confirmed after 30 minutes; back to running, stop keeps being re-sent.
        inst.pending = null;
        this.setStatus(inst, "running", p.requested_at + STOP_TIMEOUT_MS);
        inst.error_code = "stop_timed_out";
        inst.error_message = "The host did not confirm the stop within 30 minutes; it is being retried";
        inst.stop_retry = { op_id: p.op_id, next_at: p.requested_at + STOP_TIMEOUT_MS + STOP_RETRY_MS };
        changed = true;
        continue;
      }
      if (p && p.kind === "start" && inst.status === "starting" && at >= p.requested_at + STOP_TIMEOUT_MS) {
        inst.pending = null;
        this.setStatus(inst, "stopped", p.requested_at + STOP_TIMEOUT_MS);
        inst.error_code = "start_timed_out";
        inst.error_message = "The host did not confirm the start within 30 minutes";
        changed = true;
        continue;
      }
      if (p && p.due_at !== null && p.due_at <= at) {
        this.land(inst, Math.max(p.due_at, inst.status_changed_at));
        changed = true;
      }
      if (inst.gpu_release_due_at !== null && inst.gpu_release_due_at <= at) {
        inst.gpu_release_due_at = null;
        if (inst.gpu_release === "pending" && inst.status === "stopped") {
          inst.gpu_release = "released";
          inst.gpus_released = true;
        }
        changed = true;
      }
      const retry = inst.stop_retry;
      if (retry && retry.next_at <= at) {
        changed = true;
        // A stale re-send (a later request superseded it) does nothing.
        if (retry.op_id !== inst.current_op_id || inst.status !== "running") {
          inst.stop_retry = null;
        } else if (this.host(inst.machine_id).neverConfirmStop) {
          retry.next_at += STOP_RETRY_MS;
        } else {
          inst.stop_retry = null;
          this.setStatus(inst, "stopped", retry.next_at);
          inst.error_code = null;
          inst.error_message = null;
        }
      }
    }
    return changed;
  }

  /** Brings billing and every scheduled transition up to `until` (default now), in time order. */
  settle(until = this.now()): void {
    let cursor = Math.max(this.state.settled_at, 0);
    if (until < cursor) until = cursor;
    let changed = false;
    for (let guard = 0; guard < 100_000; guard++) {
      // Apply everything due at the cursor until nothing moves, then jump to the next event.
      for (let inner = 0; inner < 50; inner++) {
        const due = this.processDue(cursor);
        const cond = this.applyConditions(cursor);
        if (!due && !cond) break;
        changed = true;
      }
      // Ledger rows are hourly, so a long jump is cut at hour boundaries while anything is billed.
      const hourEnd = this.billing.billing()
        ? (Math.floor(cursor / HOUR_MS) + 1) * HOUR_MS
        : Number.POSITIVE_INFINITY;
      const target = Math.min(this.nextEventAt(), this.billing.nextBalanceEventAt(cursor), hourEnd, until);
      if (target <= cursor) break;
      // Only a charge is a change worth persisting; time passing alone is not.
      if (this.billing.accrue(target)) changed = true;
      cursor = target;
    }
    this.state.settled_at = cursor;
    if (changed) this.onChange();
  }
}

/** Protected variables the platform overlay sets; overrides cannot shadow them. */
export const PROTECTED_ENV = ["JUPYTER_TOKEN", "GPU_COUNT", "SERVICE_ACCESS_TOKEN"] as const;
/** The template env value that carries the instance access token. */
// biome-ignore lint/suspicious/noTemplateCurlyInString: the literal placeholder is the documented marker
export const ACCESS_TOKEN_REF = "${SERVICE_ACCESS_TOKEN}";

/** Merges overrides over the template env, then lays the platform overlay over both. */
export function mergeEnv(
  template: TemplateRecord,
  overrides: { key: string; value: string | null; secret: boolean }[],
  accessToken: string | null,
  gpuCount: number,
): EnvEntry[] {
  const carriers = new Set(template.env.filter((e) => e.value === ACCESS_TOKEN_REF).map((e) => e.key));
  const isProtected = (key: string) =>
    (PROTECTED_ENV as readonly string[]).includes(key) || carriers.has(key);
  const merged = new Map<string, EnvEntry>();
  for (const e of template.env) merged.set(e.key, { ...e });
  for (const o of overrides) {
    if (isProtected(o.key)) continue;
    if (o.value === null) merged.delete(o.key);
    else merged.set(o.key, { key: o.key, value: o.value, secret: o.secret });
  }
  const overlay: EnvEntry[] = [{ key: "GPU_COUNT", value: String(gpuCount), secret: false }];
  if (accessToken !== null) {
    overlay.push({ key: "SERVICE_ACCESS_TOKEN", value: accessToken, secret: true });
    overlay.push({ key: "JUPYTER_TOKEN", value: accessToken, secret: true });
    for (const key of carriers) overlay.push({ key, value: accessToken, secret: true });
  } else {
    for (const key of carriers) merged.delete(key);
  }
  for (const e of overlay) merged.set(e.key, e);
  return [...merged.values()];
}
