import { randomUUID } from "node:crypto";
import { type Billing, HOUR_MS, segmentFor } from "./billing";
import type { FakeState, HostBehaviour, InstanceRecord, InstanceStatus, OperationKind } from "./types";

// The instance state machine (contract 3.2): operations begun by the API land when the transition
// mode says, the host's behaviour decides how, timeouts and re-sent stops, auto-stop and
// auto-destroy as billing reports them due, and settle(), which brings it all up to a time in
// order. Billing (billing.ts) says what statuses cost; this module does the moving.

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

/** What the state machine needs of the engine: its state, the time, billing, host behaviour, the change hook. */
export interface LifecycleHost {
  readonly state: FakeState;
  readonly billing: Billing;
  now(): number;
  host(machineId: string): HostBehaviour;
  onChange(): void;
}

/** The state machine over one engine's instances. */
export class Lifecycle {
  /** Moves the instances of `host`'s state. */
  constructor(private readonly host: LifecycleHost) {}

  /** When an operation started at `now` lands in the current transition mode; null waits for completion. */
  dueAt(kind: OperationKind | "gpu_release", now: number): number | null {
    const mode = this.host.state.transitions;
    if (mode === "manual") return null;
    if (mode === "immediate") return now;
    if (mode === "realistic") return now + REALISTIC_MS[kind];
    return now + mode.afterMs;
  }

  /** Starts `kind` on an instance: a new operation id, due when the transition mode says. */
  beginOperation(inst: InstanceRecord, kind: OperationKind): void {
    const now = this.host.now();
    const opId = randomUUID();
    inst.current_op_id = opId;
    inst.pending = { kind, op_id: opId, requested_at: now, due_at: this.dueAt(kind, now) };
  }

  /** Moves an instance to `status` at `at`: the billing segment changes and the log says so. */
  setStatus(inst: InstanceRecord, status: InstanceStatus, at = this.host.now()): void {
    if (inst.status === status) return;
    inst.status = status;
    inst.status_changed_at = at;
    // Close the running billing segment; open the one of the new status.
    inst.segment = segmentFor(inst, status, at);
    const line = `[${new Date(at).toISOString()}] platform: instance is ${status}`;
    if (inst.started_at !== null || status === "running") inst.logs.push(line);
    this.trimLogs(inst);
  }

  /** Keeps the last 2000 log lines. */
  trimLogs(inst: InstanceRecord): void {
    if (inst.logs.length > 2000) inst.logs.splice(0, inst.logs.length - 2000);
  }

  private reachRunning(inst: InstanceRecord, at: number): void {
    const first = inst.started_at === null;
    if (first) {
      inst.started_at = at;
      const t = new Date(at).toISOString();
      const template = this.host.state.templates[inst.template_id];
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
    const offer = this.host.state.offers[inst.offer_id];
    const machine = this.host.state.machines[inst.machine_id];
    if (offer) offer.free_units += 1;
    if (machine)
      machine.available_disk_gb = Math.min(machine.disk_gb, machine.available_disk_gb + inst.disk_gb);
  }

  private land(inst: InstanceRecord, at: number): void {
    const op = inst.pending;
    if (!op) return;
    const host = this.host.host(inst.machine_id);
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
    for (const inst of Object.values(this.host.state.instances)) {
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
    let changed = this.host.billing.trackNonPositive(at);
    for (const inst of Object.values(this.host.state.instances)) {
      const org = this.host.state.orgs[inst.org_id];
      if (!org) continue;
      const host = this.host.host(inst.machine_id);
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
      if (this.host.billing.autoStopDue(inst, org)) {
        // Auto-stop: no stopping phase, the GPUs go back at once; a release may follow.
        this.setStatus(inst, "stopped", at);
        inst.pending = null;
        inst.stop_retry = null;
        inst.current_op_id = null;
        const machine = this.host.state.machines[inst.machine_id];
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
      if (this.host.billing.autoDestroyDue(inst, org, at)) {
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
    const instances = Object.values(this.host.state.instances).sort((a, b) => a.seq - b.seq);
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
        } else if (this.host.host(inst.machine_id).neverConfirmStop) {
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
  settle(until = this.host.now()): void {
    let cursor = Math.max(this.host.state.settled_at, 0);
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
      const hourEnd = this.host.billing.billing()
        ? (Math.floor(cursor / HOUR_MS) + 1) * HOUR_MS
        : Number.POSITIVE_INFINITY;
      const target = Math.min(
        this.nextEventAt(),
        this.host.billing.nextBalanceEventAt(cursor),
        hourEnd,
        until,
      );
      if (target <= cursor) break;
      // Only a charge is a change worth persisting; time passing alone is not.
      if (this.host.billing.accrue(target)) changed = true;
      cursor = target;
    }
    this.host.state.settled_at = cursor;
    if (changed) this.host.onChange();
  }
}
