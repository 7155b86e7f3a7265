import { randomUUID } from "node:crypto";
import { ApiFailure } from "./errors";
import type {
  BillingSegment,
  FakeState,
  InstanceRecord,
  InstanceStatus,
  LedgerRow,
  OrgRecord,
} from "./types";

// The fake's money (contract 2.2, 3.2, 7): what an instance costs per hour in each status, the
// balance rule of deploy and start, the billing segment each status opens, accrual into hourly
// ledger rows, top-ups, and when a balance crosses ¥0 or the auto-destroy threshold. The state
// machine (lifecycle.ts) moves instances between statuses and asks this module what that costs and
// when an instance must be stopped or destroyed for want of money; it does the moving itself.

/** One ¥ in micro units. */
export const MICRO_PER_YUAN = 1_000_000;
/** Auto-destroy: balance at or below zero for this long ... */
export const AUTO_DESTROY_AFTER_MS = 24 * 60 * 60 * 1000;
/** ... and at or below this balance. */
export const AUTO_DESTROY_BALANCE_MICRO = -35 * MICRO_PER_YUAN;
/** Ledger rows are hourly. */
export const HOUR_MS = 3_600_000;

/** Statuses billed the GPU (and the disk) by the balance rule: the instance holds or is taking GPUs. */
const GPU_HOLDING: readonly InstanceStatus[] = ["running", "starting", "creating", "stopping"];

/** What billing needs of the engine: its current state (replaced by a reset), the time and sequence numbers. */
export interface BillingHost {
  readonly state: FakeState;
  now(): number;
  nextSeq(): number;
}

/** What an instance costs per hour: its disk, plus its GPUs when `withGpu`. */
export function hourlyBurn(inst: InstanceRecord, withGpu: boolean): number {
  const disk = inst.disk_gb * inst.storage_price_per_gb_hour_micro;
  return withGpu ? disk + inst.price_per_hour_micro : disk;
}

/** 402 INSUFFICIENT_BALANCE unless the balance covers `required` (one hour of burn). */
export function checkBalance(org: OrgRecord, required: number): void {
  if (org.balance_micro < required) {
    throw new ApiFailure(
      402,
      "INSUFFICIENT_BALANCE",
      `The balance does not cover one hour of the organization's burn (${required} micro needed)`,
      { balance_micro: org.balance_micro, required_micro: required },
    );
  }
}

/** The billing segment an instance enters with `status` at `at`: GPU time when running, disk when stopped. */
export function segmentFor(inst: InstanceRecord, status: InstanceStatus, at: number): BillingSegment | null {
  if (status === "running") {
    return {
      kind: "gpu",
      since: at,
      rate_per_hour_micro: inst.price_per_hour_micro,
      billed_micro: 0,
      row_id: null,
    };
  }
  if (status === "stopped") {
    return {
      kind: "storage",
      since: at,
      rate_per_hour_micro: inst.disk_gb * inst.storage_price_per_gb_hour_micro,
      billed_micro: 0,
      row_id: null,
    };
  }
  return null;
}

/** The billing of one engine; it reads the host's state on every call, so a reset needs nothing here. */
export class Billing {
  // Rows are only ever appended (reset replaces the whole state), so an id index stays valid
  // until the state object changes.
  private rowIndex = new Map<string, LedgerRow>();
  private indexedState: FakeState | null = null;

  constructor(private readonly host: BillingHost) {}

  private get state(): FakeState {
    return this.host.state;
  }

  /** What the organization's instances other than `except` cost per hour (balance rule). */
  orgHourlyBurn(orgId: string, except?: string): number {
    let total = 0;
    for (const inst of Object.values(this.state.instances)) {
      if (inst.org_id !== orgId || inst.id === except) continue;
      if (GPU_HOLDING.includes(inst.status)) total += hourlyBurn(inst, true);
      else if (inst.status === "stopped") total += hourlyBurn(inst, false);
    }
    return total;
  }

  /** Credits a balance with a top_up ledger row. */
  topUp(org: OrgRecord, amountMicro: number): void {
    org.balance_micro += amountMicro;
    this.state.ledger.push({
      id: randomUUID(),
      org_id: org.id,
      created_at: this.host.now(),
      kind: "top_up",
      amount_micro: amountMicro,
      instance_id: null,
      description: "Top-up",
      balance_after_micro: org.balance_micro,
      bucket: null,
      seq: this.host.nextSeq(),
    });
    this.afterBalanceChange(org);
  }

  /**
   * After a balance was set or credited: a positive balance ends the count towards auto-destroy
   * and clears the GPU release of every instance (2.2); one at or below zero starts the count.
   */
  afterBalanceChange(org: OrgRecord): void {
    if (org.balance_micro > 0) {
      org.non_positive_since = null;
      for (const inst of Object.values(this.state.instances)) {
        if (inst.org_id !== org.id) continue;
        inst.gpu_release = null;
        inst.gpu_release_requested_at = null;
        inst.gpu_release_due_at = null;
      }
    } else if (org.non_positive_since === null) {
      org.non_positive_since = this.host.now();
    }
  }

  /** Starts or ends each organization's count towards auto-destroy as its balance says at `at`; true when one moved. */
  trackNonPositive(at: number): boolean {
    let changed = false;
    for (const org of Object.values(this.state.orgs)) {
      if (org.balance_micro <= 0 && org.non_positive_since === null) {
        org.non_positive_since = at;
        changed = true;
      }
      if (org.balance_micro > 0 && org.non_positive_since !== null) {
        org.non_positive_since = null;
        changed = true;
      }
    }
    return changed;
  }

  /** Auto-stop (3.2): a running instance of an organization whose balance reached ¥0. */
  autoStopDue(inst: InstanceRecord, org: OrgRecord): boolean {
    return inst.status === "running" && org.balance_micro <= 0;
  }

  /** Auto-destroy (3.2): a stopped or failed instance after 24 h at or below ¥0, the balance at or below -¥35. */
  autoDestroyDue(inst: InstanceRecord, org: OrgRecord, at: number): boolean {
    return (
      (inst.status === "stopped" || inst.status === "error") &&
      org.non_positive_since !== null &&
      at - org.non_positive_since >= AUTO_DESTROY_AFTER_MS &&
      org.balance_micro <= AUTO_DESTROY_BALANCE_MICRO
    );
  }

  /** Whether anything is billed, so that time must stop at each hour's end for the ledger rows. */
  billing(): boolean {
    return Object.values(this.state.instances).some((i) => i.segment !== null);
  }

  /** Next time after `cursor` an organization's balance crosses zero or the auto-destroy threshold. */
  nextBalanceEventAt(cursor: number): number {
    let next = Number.POSITIVE_INFINITY;
    // The open segments of each organization, found once: every request settles the clock, and
    // the searches below read them some forty times per organization.
    const open = new Map<string, BillingSegment[]>();
    for (const inst of Object.values(this.state.instances)) {
      if (!inst.segment) continue;
      const segs = open.get(inst.org_id);
      if (segs) segs.push(inst.segment);
      else open.set(inst.org_id, [inst.segment]);
    }
    for (const org of Object.values(this.state.orgs)) {
      const segs = open.get(org.id) ?? [];
      const rate = burnRate(segs);
      if (org.balance_micro > 0 && rate > 0) next = Math.min(next, crossing(org, segs, 0, cursor, rate));
      if (org.non_positive_since !== null && this.hasDestroyable(org.id)) {
        let at = org.non_positive_since + AUTO_DESTROY_AFTER_MS;
        if (org.balance_micro > AUTO_DESTROY_BALANCE_MICRO) {
          if (rate <= 0) continue;
          at = Math.max(at, crossing(org, segs, AUTO_DESTROY_BALANCE_MICRO, cursor, rate));
        }
        next = Math.min(next, Math.max(at, cursor));
      }
    }
    return next;
  }

  /** Bills every open segment up to `at`; true when anything was charged. */
  accrue(at: number): boolean {
    let billed = false;
    for (const inst of Object.values(this.state.instances)) {
      const seg = inst.segment;
      if (!seg || at <= seg.since) continue;
      const seconds = Math.floor((at - seg.since) / 1000);
      const due = Math.floor((seg.rate_per_hour_micro * seconds) / 3600);
      const amount = due - seg.billed_micro;
      if (amount <= 0) continue;
      const org = this.state.orgs[inst.org_id];
      if (!org) continue;
      seg.billed_micro = due;
      org.balance_micro -= amount;
      inst.spend_micro += amount;
      // A charge ending exactly on an hour boundary belongs to the hour it ends.
      const bucket = Math.floor((at - 1) / HOUR_MS);
      let row: LedgerRow | undefined = seg.row_id ? this.findRow(seg.row_id) : undefined;
      if (!row || row.bucket !== bucket) {
        row = {
          id: randomUUID(),
          org_id: org.id,
          created_at: Math.max(seg.since, bucket * HOUR_MS),
          kind: seg.kind,
          amount_micro: 0,
          instance_id: inst.id,
          description:
            seg.kind === "gpu" ? "GPU time while running" : `Disk ${inst.disk_gb} GB while stopped`,
          balance_after_micro: org.balance_micro,
          bucket,
          seq: this.host.nextSeq(),
        };
        this.state.ledger.push(row);
        seg.row_id = row.id;
      }
      row.amount_micro += amount;
      row.balance_after_micro = org.balance_micro;
      billed = true;
    }
    return billed;
  }

  private hasDestroyable(orgId: string): boolean {
    return Object.values(this.state.instances).some(
      (i) => i.org_id === orgId && (i.status === "stopped" || i.status === "error"),
    );
  }

  private findRow(id: string): LedgerRow | undefined {
    if (this.indexedState !== this.state) {
      this.rowIndex.clear();
      this.indexedState = this.state;
    }
    let row = this.rowIndex.get(id);
    if (row) return row;
    const ledger = this.state.ledger;
    // Stryker disable next-line ArithmeticOperator: starting past the end only reads an undefined slot first.
    for (let i = ledger.length - 1; i >= 0; i--) {
      if (ledger[i]?.id === id) {
        row = ledger[i];
        break;
      }
    }
    if (row) this.rowIndex.set(id, row);
    return row;
  }
}

/** What an organization's open segments burn per hour. */
function burnRate(segs: readonly BillingSegment[]): number {
  let rate = 0;
  for (const seg of segs) rate += seg.rate_per_hour_micro;
  return rate;
}

/** What the open segments will have charged between their last accrual and `at`. */
function projectedDebit(segs: readonly BillingSegment[], at: number): number {
  let debit = 0;
  for (const seg of segs) {
    if (at <= seg.since) continue;
    const seconds = Math.floor((at - seg.since) / 1000);
    debit += Math.floor((seg.rate_per_hour_micro * seconds) / 3600) - seg.billed_micro;
  }
  return debit;
}

/**
 * The first millisecond after `cursor` at which the balance is at or below `threshold`, found by
 * binary search over the (monotone) projected debit of the organization's open segments, so
 * per-second rounding never overshoots.
 */
function crossing(
  org: OrgRecord,
  segs: readonly BillingSegment[],
  threshold: number,
  cursor: number,
  rate: number,
): number {
  const reached = (t: number) => org.balance_micro - projectedDebit(segs, t) <= threshold;
  // Stryker disable next-line ArithmeticOperator: any first guess gives the same answer (the loop below grows it until reached); a close one saves steps.
  let hi = cursor + Math.ceil(((org.balance_micro - threshold) * HOUR_MS) / rate) + 2000;
  // Stryker disable next-line MethodExpression,ArithmeticOperator: any growth gives the same answer, the search below finds the first millisecond reached; doubling saves steps.
  while (!reached(hi)) hi += Math.max(1000, hi - cursor);
  let lo = cursor;
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (reached(mid)) hi = mid;
    else lo = mid;
  }
  return hi;
}
