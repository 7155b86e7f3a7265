import { randomBytes, randomUUID } from "node:crypto";
import { type Billing, checkBalance, hourlyBurn } from "./billing";
import type { Catalog } from "./catalog";
import { checkDeploy, loseReservationRace } from "./deploy-checks";
import { mergeEnv } from "./env";
import { ApiFailure } from "./errors";
import type { Lifecycle } from "./lifecycle";
import { displayName, iso } from "./state/store";
import type {
  Caller,
  DeployInput,
  FakeState,
  HostBehaviour,
  InstanceRecord,
  InstanceStatus,
  Role,
} from "./types";

// Instances (contract 2.2, 3.2, 4.2, 7.2): deploy after the checks of 7.2, list, read, stop,
// start, destroy, logs, and the instance object the API answers with. The requests begin
// operations; the state machine (lifecycle.ts) lands them.

/** What instances need of the engine: state, time, billing, the state machine, the catalog, hosts. */
export interface InstancesHost {
  readonly state: FakeState;
  readonly billing: Billing;
  readonly lifecycle: Lifecycle;
  readonly catalog: Catalog;
  now(): number;
  nextSeq(): number;
  onChange(): void;
  host(machineId: string): HostBehaviour;
  membership(orgId: string, userId: string): { role: Role } | undefined;
}

/** The actions the API accepts in a status. */
export function allowedActions(status: InstanceStatus): string[] {
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

/** The instances of one engine's state, as the API acts on them. */
export class Instances {
  /** Acts on the instances of `host`'s state. */
  constructor(private readonly host: InstancesHost) {}

  /** Deploys an instance, running the checks of 7.2 in order; a refusal changes nothing. */
  deploy(caller: Caller, input: DeployInput): InstanceRecord {
    const now = this.host.now();
    const { offer, machine, template, sshKey } = checkDeploy(this.host, caller, input, now);
    if (loseReservationRace(this.host.state, offer.id)) {
      this.host.onChange();
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
      deployed_by: key?.kind === "team" ? `${key.name} (${key.prefix})` : displayName(caller.user),
      deployed_via_api_key: key ? { id: key.id, name: key.name, kind: key.kind, prefix: key.prefix } : null,
      env: mergeEnv(template, input.env_overrides ?? [], accessToken, offer.num_gpus),
      logs: [],
      pending: null,
      current_op_id: null,
      stop_retry: null,
      segment: null,
      seq: this.host.nextSeq(),
    };
    this.host.state.instances[inst.id] = inst;
    this.host.lifecycle.beginOperation(inst, "provision");
    this.host.onChange();
    return inst;
  }

  /** The caller's organization's instances, newest first. */
  list(orgId: string, includeDestroyed: boolean): InstanceRecord[] {
    return Object.values(this.host.state.instances)
      .filter((i) => i.org_id === orgId && (includeDestroyed || i.status !== "destroyed"))
      .sort((a, b) => b.seq - a.seq);
  }

  /** An instance of the caller's organization, or 404 INSTANCE_NOT_FOUND. */
  get(caller: Caller, id: string): InstanceRecord {
    const inst = this.host.state.instances[id];
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
    const inst = this.get(caller, id);
    if (inst.status !== "running") throw this.invalidState(inst, "stop");
    this.host.lifecycle.setStatus(inst, "stopping");
    inst.error_code = null;
    inst.error_message = null;
    inst.stop_retry = null;
    this.host.lifecycle.beginOperation(inst, "stop");
    this.host.onChange();
    return inst;
  }

  /** POST /start: stopped -> starting, after the balance rule and the host's answer (7.3). */
  start(caller: Caller, id: string): InstanceRecord {
    const inst = this.get(caller, id);
    if (inst.status !== "stopped") throw this.invalidState(inst, "start");
    checkBalance(
      caller.org,
      hourlyBurn(inst, true) + this.host.billing.orgHourlyBurn(caller.org.id, inst.id),
    );
    const host = this.host.host(inst.machine_id);
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
      this.host.onChange();
      failure = new ApiFailure(
        409,
        "CAPACITY_UNAVAILABLE",
        "The GPUs released at balance exhaustion are now in use or out of service; retry later",
      );
    }
    // Every start failure leaves the instance stopped with its disk.
    if (failure) throw failure;
    this.host.lifecycle.setStatus(inst, "starting");
    inst.error_code = null;
    inst.error_message = null;
    inst.stop_retry = null;
    this.host.lifecycle.beginOperation(inst, "start");
    this.host.onChange();
    return inst;
  }

  /** DELETE: any status but destroyed -> destroying; on destroying it re-sends the teardown. */
  destroy(caller: Caller, id: string): InstanceRecord {
    const inst = this.get(caller, id);
    if (inst.status === "destroyed") throw this.invalidState(inst, "destroy");
    if (inst.status !== "destroying") this.host.lifecycle.setStatus(inst, "destroying");
    inst.stop_retry = null;
    inst.gpu_release_due_at = null;
    const dueBefore = inst.pending?.kind === "destroy" ? inst.pending.due_at : undefined;
    this.host.lifecycle.beginOperation(inst, "destroy");
    // A repeated DELETE is a new request but does not push the teardown further out.
    if (dueBefore !== undefined && inst.pending && dueBefore !== null && inst.pending.due_at !== null) {
      inst.pending.due_at = Math.min(dueBefore, inst.pending.due_at);
    }
    this.host.onChange();
    return inst;
  }

  /** Last `tail` log lines; empty until the workload first ran. */
  logs(caller: Caller, id: string, tail: number): string[] {
    const inst = this.get(caller, id);
    if (inst.started_at === null) return [];
    return inst.logs.slice(-tail);
  }

  /** The instance object of 2.2; `abbreviated` embeds the short offer of a deploy response. */
  render(inst: InstanceRecord, abbreviated = false): Record<string, unknown> {
    const offer = this.host.state.offers[inst.offer_id];
    const template = this.host.state.templates[inst.template_id];
    const via = inst.deployed_via_api_key;
    const reported = inst.workload_reported && inst.status !== "destroyed" && inst.status !== "destroying";
    const base = `http://${inst.ssh_host}`;
    let jupyterUrl: string | null = null;
    let openUrl: string | null = null;
    const reachable = this.host.state.machines[inst.machine_id]?.directly_reachable !== false;
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
      allowed_actions: allowedActions(inst.status),
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
        ? {
            ...via,
            revoked:
              this.host.state.api_keys[via.id]?.revoked_at != null || !this.host.state.api_keys[via.id],
          }
        : null,
      offer: offer
        ? abbreviated
          ? { id: offer.id, gpu_model: offer.gpu_model, num_gpus: offer.num_gpus }
          : this.host.catalog.renderOffer(offer)
        : { id: inst.offer_id },
      template: template ? this.host.catalog.renderTemplate(template, true) : { id: inst.template_id },
    };
  }
}
