/**
 * Records held by the fake backend. Everything here is plain JSON so that the whole state can be
 * written to a state file and read back. Times are epoch milliseconds of the fake clock.
 */

/** Role of a member in an organization. */
export type Role = "admin" | "member";

/** An organization with its prepaid balance. */
export interface OrgRecord {
  id: string;
  name: string;
  balance_micro: number;
  /** When the balance last became zero or negative (null while positive); drives auto-destroy. */
  non_positive_since: number | null;
  created_at: number;
}

/** A user; signs in by email or by phone. */
export interface UserRecord {
  id: string;
  email: string | null;
  phone: string | null;
  created_at: number;
}

/** Membership of a user in an organization. */
export interface MembershipRecord {
  org_id: string;
  user_id: string;
  role: Role;
}

/** A signed-in session; only the SHA-256 of its token is kept. */
export interface SessionRecord {
  id: string;
  user_id: string;
  org_id: string;
  token_hash: string;
  created_at: number;
}

/** An API key; only its 12-character prefix and the SHA-256 of the secret are kept. */
export interface ApiKeyRecord {
  id: string;
  org_id: string;
  name: string;
  kind: "personal" | "team";
  prefix: string;
  secret_hash: string;
  creator_id: string;
  created_at: number;
  last_used_at: number | null;
  revoked_at: number | null;
  seq: number;
}

/** A user's SSH public key. */
export interface SshKeyRecord {
  id: string;
  user_id: string;
  name: string;
  public_key: string;
  fingerprint: string;
  created_at: number;
}

/** A host machine that offers are rented on. */
export interface MachineRecord {
  id: string;
  public_ip: string;
  disk_gb: number;
  available_disk_gb: number;
  cuda_version: string;
  vm_capable: boolean;
  architecture: string;
  gpu_release_supported: boolean;
  /** Registered with the fleet control plane; an offer on an unregistered machine is not pinnable. */
  registered: boolean;
  /** Reachable from outside without a relay. When false, jupyter_url and open_url stay null: relay
   * addresses only exist once the CN deployment has moved to its own domain (contract 2.2). */
  directly_reachable?: boolean;
  ssh_port_range: [number, number];
  next_ssh_port: number;
}

/** A rentable GPU offer on a machine. */
export interface OfferRecord {
  id: string;
  machine_id: string;
  gpu_model: string;
  num_gpus: number;
  price_per_hour_micro: number;
  storage_price_per_gb_hour_micro: number;
  hold_price_per_hour_micro: number | null;
  availability: "available" | "sold_out" | "withdrawn";
  free_units: number;
  next_maintenance: number | null;
  region: string;
  created_at: number;
  seq: number;
}

/** One environment variable of a template or an instance. */
export interface EnvEntry {
  key: string;
  value: string;
  secret: boolean;
}

/** A template: the container or VM image definition an instance runs. */
export interface TemplateRecord {
  id: string;
  hash_id: string;
  name: string;
  mode: "ssh" | "jupyter" | "vm";
  image: string;
  cuda_max: string | null;
  architecture: string;
  coming_soon: boolean;
  active: boolean;
  recommended: boolean;
  visibility: "system" | "public" | "private";
  owner_org_id: string | null;
  uses_private_registry: boolean;
  uses_access_token: boolean;
  env: EnvEntry[];
  open_port: number | null;
  open_port_guarded: boolean;
  readme: string | null;
  onstart: string | null;
  created_at: number;
  seq: number;
}

/** Instance statuses of contract 2.2. */
export type InstanceStatus =
  | "creating"
  | "starting"
  | "running"
  | "stopping"
  | "stopped"
  | "destroying"
  | "destroyed"
  | "error";

/** The kinds of asynchronous work the platform does for an instance. */
export type OperationKind = "provision" | "stop" | "start" | "destroy";

/** A transition in flight. `due_at` null means it waits to be completed through the control API. */
export interface PendingOperation {
  kind: OperationKind;
  /** Re-send identity: every re-send of one request carries it; each client request gets a new one. */
  op_id: string;
  requested_at: number;
  due_at: number | null;
}

/** The billing segment an instance is in: GPU while running, storage while stopped. */
export interface BillingSegment {
  kind: "gpu" | "storage";
  since: number;
  rate_per_hour_micro: number;
  billed_micro: number;
  row_id: string | null;
}

/** Who deployed an instance, captured at deploy time. */
export interface DeployedVia {
  id: string;
  name: string;
  kind: "personal" | "team";
  prefix: string;
}

/** An instance with its internal bookkeeping. */
export interface InstanceRecord {
  id: string;
  org_id: string;
  offer_id: string;
  template_id: string;
  machine_id: string;
  label: string | null;
  status: InstanceStatus;
  disk_gb: number;
  price_per_hour_micro: number;
  storage_price_per_gb_hour_micro: number;
  ssh_host: string;
  ssh_port: number;
  ssh_user: string;
  ssh_key_id: string | null;
  access_token: string | null;
  workload_reported: boolean;
  error_code: string | null;
  error_message: string | null;
  gpus_released: boolean;
  gpu_release: "pending" | "released" | "unsupported" | null;
  gpu_release_requested_at: number | null;
  gpu_release_due_at: number | null;
  created_at: number;
  started_at: number | null;
  status_changed_at: number;
  destroyed_at: number | null;
  spend_micro: number;
  deployed_by: string;
  deployed_via_api_key: DeployedVia | null;
  env: EnvEntry[];
  logs: string[];
  pending: PendingOperation | null;
  /** The identity of the latest client request; a platform re-send with another identity is stale. */
  current_op_id: string | null;
  /** A stop that timed out and keeps being re-sent with its original identity. */
  stop_retry: { op_id: string; next_at: number } | null;
  segment: BillingSegment | null;
  seq: number;
}

/** A billing ledger row. `amount_micro` is positive; gpu and storage rows are debits. */
export interface LedgerRow {
  id: string;
  org_id: string;
  created_at: number;
  kind: "gpu" | "storage" | "top_up";
  amount_micro: number;
  instance_id: string | null;
  description: string;
  balance_after_micro: number;
  /** Hour bucket the row aggregates (debits only), so a long run does not produce a row per second. */
  bucket: number | null;
  seq: number;
}

/** Per-machine host behaviour, settable through the control API. */
export interface HostBehaviour {
  /** The machine is not connected: starts fail with HOST_UNREACHABLE. */
  unreachable: boolean;
  /** The host refuses a resume ("refused") or no longer holds the workload ("workload_missing"). */
  refuseStart: false | "refused" | "workload_missing";
  /** Resume cannot complete right now: starts fail with 503 START_UNAVAILABLE. */
  startUnavailable: boolean;
  /** GPUs are in use or out of service: starts fail with CAPACITY_UNAVAILABLE. */
  capacityUnavailable: boolean;
  /** The host never confirms a stop: after 30 minutes the instance returns to running. */
  neverConfirmStop: boolean;
  /** The host never confirms a start: after 30 minutes the instance is stopped with start_timed_out. */
  neverConfirmStart: boolean;
  /** Provisioning fails: a new instance ends in error with provision_failed. */
  provisionFails: boolean;
  /** The workload exits on its own: a running instance ends in error with workload_completed. */
  workloadCompletes: boolean;
  /** The workload disappears from the host: a running instance ends in error with workload_gone. */
  workloadVanishes: boolean;
}

/** The full persisted state of the fake backend. */
export interface FakeState {
  version: 1;
  clock_offset_ms: number;
  settled_at: number;
  seq: number;
  orgs: Record<string, OrgRecord>;
  users: Record<string, UserRecord>;
  memberships: MembershipRecord[];
  sessions: Record<string, SessionRecord>;
  api_keys: Record<string, ApiKeyRecord>;
  ssh_keys: Record<string, SshKeyRecord>;
  machines: Record<string, MachineRecord>;
  offers: Record<string, OfferRecord>;
  templates: Record<string, TemplateRecord>;
  instances: Record<string, InstanceRecord>;
  ledger: LedgerRow[];
  host_behaviour: Record<string, Partial<HostBehaviour>>;
  /** Offers whose next deploys lose the reservation race (7.2 row 15), with the count left. */
  race_losses: Record<string, number>;
  transitions: TransitionMode;
}

/** The top-level fields of {@link FakeState} that are maps from id to record. */
export const MAP_FIELDS = [
  "orgs",
  "users",
  "sessions",
  "api_keys",
  "ssh_keys",
  "machines",
  "offers",
  "templates",
  "instances",
  "host_behaviour",
  "race_losses",
] as const satisfies readonly (keyof FakeState)[];

/** One of {@link MAP_FIELDS}. */
export type MapField = (typeof MAP_FIELDS)[number];

/**
 * How asynchronous transitions land: "immediate" (on the next request or clock step), "manual"
 * (they wait until completed through the control API), "realistic" (creating 3 s, start and stop
 * 2 s, destroy 1 s) or after a fixed number of milliseconds.
 */
export type TransitionMode = "immediate" | "manual" | "realistic" | { afterMs: number };

/** An injected HTTP fault. */
export interface FaultSpec {
  /** Method to match; also accepted as the first word of `route`. Any method when absent. */
  method?: string;
  /**
   * Route pattern ("/v1/instances/:id"), concrete path, or a prefix ending in "/*" ("/v1/*" for every
   * /v1 request), optionally prefixed by a method.
   */
  route: string;
  /** status: answer with `status`; latency: delay then process; drop: destroy the socket before
   * processing; lost-response: process and commit, then destroy the socket without answering;
   * late-commit: read the request, hold it `delayMs`, then process and commit it whether or not the
   * client is still connected (a client still there gets the answer then). */
  kind: "status" | "latency" | "drop" | "lost-response" | "late-commit";
  status?: number;
  retryAfterSeconds?: number;
  latencyMs?: number;
  /** How long a late-commit fault holds the request before committing it. */
  delayMs?: number;
  /** Chance of firing per matching request, 0..1 (default 1). */
  probability?: number;
  /** How many times it fires at most (default unlimited). */
  times?: number;
}

/** Credentials and ids of the demo seed. */
export interface DemoCredentials {
  base_url: string;
  control_token: string;
  org_id: string;
  admin_user_id: string;
  member_user_id: string;
  admin_email: string;
  member_phone: string;
  admin_session_token: string;
  member_session_token: string;
  /** An available offer on a 2000 GB machine. */
  offer_id: string;
  /** An active ssh template. */
  template_id: string;
  /** The admin's SSH key. */
  ssh_key_id: string;
  member_ssh_key_id: string;
  jupyter_template_id: string;
  vm_template_id: string;
  coming_soon_template_id: string;
  inactive_template_id: string;
  /** An offer on a small (500 GB) machine. */
  small_disk_offer_id: string;
  vm_offer_id: string;
  maintenance_offer_id: string;
  sold_out_offer_id: string;
  new_cuda_offer_id: string;
  other_org_id: string;
  other_admin_session_token: string;
}

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
