import { randomBytes, randomUUID } from "node:crypto";
import { ApiKeys } from "./api-keys";
import { Auth } from "./auth";
import { Billing, type BillingHost } from "./billing";
import { Catalog } from "./catalog";
import { ApiFailure } from "./errors";
import { Instances } from "./instances";
import { Lifecycle } from "./lifecycle";
import type { Clock } from "./state/clock";
import { emptyState, fingerprintOf, sha256, withoutPrototypes } from "./state/store";
import type {
  FakeState,
  HostBehaviour,
  InstanceRecord,
  MachineRecord,
  OfferPatch,
  OfferRecord,
  OrgRecord,
  Role,
  SshKeyRecord,
  TemplateRecord,
  TransitionMode,
  UserRecord,
} from "./types";

/**
 * The stateful domain of the fake: it holds the state, the clock and the change hook, seeds and
 * changes records directly (the demo seed, the control API, in-process tests), and composes the
 * parts that act on the state, each in a file of its own: authentication (auth.ts), API keys
 * (api-keys.ts), offers and templates (catalog.ts), instances (instances.ts, with the deploy
 * checks of deploy-checks.ts), the state machine (lifecycle.ts) and money (billing.ts).
 */
export class Engine implements BillingHost {
  /** Called after every committed change (persistence hooks in here). */
  onChange: () => void = () => {};
  /** The balance rule, billing segments, the ledger and balance events, over this engine's state. */
  readonly billing: Billing = new Billing(this);
  /** Transitions, timeouts, auto-stop and auto-destroy, and `settle()`. */
  readonly lifecycle: Lifecycle = new Lifecycle(this);
  /** Bearer tokens to callers. */
  readonly auth: Auth = new Auth(this);
  /** API keys: create, list, revoke, render. */
  readonly apiKeys: ApiKeys = new ApiKeys(this);
  /** Offers and templates as the API shows them; template duplicates. */
  readonly catalog: Catalog = new Catalog(this);
  /** Instances: deploy, read, stop, start, destroy, logs, render. */
  readonly instances: Instances = new Instances(this);

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

  /** Brings billing and every scheduled transition up to `until` (default now), in time order. */
  settle(until = this.now()): void {
    this.lifecycle.settle(until);
  }

  // ---- seeding and direct changes ----------------------------------------------------------------

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
      if (inst.pending) inst.pending.due_at = this.lifecycle.dueAt(inst.pending.kind, now);
      if (inst.gpu_release === "pending") inst.gpu_release_due_at = this.lifecycle.dueAt("gpu_release", now);
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
    this.lifecycle.trimLogs(inst);
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
}
