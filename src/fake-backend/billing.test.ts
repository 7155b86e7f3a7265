import {
  AUTO_DESTROY_AFTER_MS,
  AUTO_DESTROY_BALANCE_MICRO,
  Billing,
  type BillingHost,
  HOUR_MS,
  MICRO_PER_YUAN,
  segmentFor,
} from "./billing";
import { emptyState } from "./state/store";
import type { FakeState, InstanceRecord, InstanceStatus, OrgRecord } from "./types";

// The fake's money on its own: each rule of billing.ts against a state built by hand, with the
// engine's time and sequence numbers stood in for. The engine's use of it (statuses moving, clock
// jumps) is tested through the HTTP API in test/contract/billing.test.ts.

const ALL_STATUSES: InstanceStatus[] = [
  "creating",
  "starting",
  "running",
  "stopping",
  "stopped",
  "destroying",
  "destroyed",
  "error",
];

function fixture() {
  let now = 0;
  let seq = 0;
  const host: BillingHost & { state: FakeState } = {
    state: emptyState(),
    now: () => now,
    nextSeq: () => ++seq,
  };
  const billing = new Billing(host);
  const org = (id: string, balance: number, nonPositiveSince: number | null = null): OrgRecord => {
    const rec: OrgRecord = {
      id,
      name: id,
      balance_micro: balance,
      non_positive_since: nonPositiveSince,
      created_at: 0,
    };
    host.state.orgs[id] = rec;
    return rec;
  };
  /** An instance in `status` since `since`, with the segment the status opens. */
  const instance = (
    id: string,
    orgId: string,
    status: InstanceStatus,
    opts: { price?: number; diskGb?: number; gbPrice?: number; since?: number } = {},
  ): InstanceRecord => {
    const rec = {
      id,
      org_id: orgId,
      status,
      disk_gb: opts.diskGb ?? 10,
      price_per_hour_micro: opts.price ?? 3_600_000,
      storage_price_per_gb_hour_micro: opts.gbPrice ?? 360,
      gpu_release: null,
      gpu_release_requested_at: null,
      gpu_release_due_at: null,
      spend_micro: 0,
      segment: null,
    } as unknown as InstanceRecord;
    rec.segment = segmentFor(rec, status, opts.since ?? 0);
    host.state.instances[id] = rec;
    return rec;
  };
  const rows = () => host.state.ledger;
  return { host, billing, org, instance, rows, setNow: (t: number) => (now = t) };
}

describe("segmentFor", () => {
  test("GPU time while running, the disk while stopped, nothing billed in any other status", () => {
    const { instance } = fixture();
    const inst = instance("i", "o", "running", { price: 2_500_000, diskGb: 50, gbPrice: 200 });
    expect(segmentFor(inst, "running", 7)).toEqual({
      kind: "gpu",
      since: 7,
      rate_per_hour_micro: 2_500_000,
      billed_micro: 0,
      row_id: null,
    });
    expect(segmentFor(inst, "stopped", 9)).toEqual({
      kind: "storage",
      since: 9,
      rate_per_hour_micro: 50 * 200,
      billed_micro: 0,
      row_id: null,
    });
    for (const status of ALL_STATUSES.filter((s) => s !== "running" && s !== "stopped"))
      expect([status, segmentFor(inst, status, 0)]).toEqual([status, null]);
  });
});

describe("orgHourlyBurn (balance rule)", () => {
  test("GPU and disk while holding GPUs, the disk while stopped, nothing otherwise; only the organization's, less `except`", () => {
    const { billing, instance } = fixture();
    // Disk: 10 GB at 360 micro = 3600 micro an hour; GPU 3.6M an hour.
    for (const s of ALL_STATUSES) instance(s, "o", s);
    instance("elsewhere", "other", "running");
    const gpuAndDisk = 3_600_000 + 3_600;
    expect(billing.orgHourlyBurn("o")).toBe(4 * gpuAndDisk + 3_600);
    expect(billing.orgHourlyBurn("o", "running")).toBe(3 * gpuAndDisk + 3_600);
    expect(billing.orgHourlyBurn("o", "stopped")).toBe(4 * gpuAndDisk);
    expect(billing.orgHourlyBurn("other")).toBe(gpuAndDisk);
    expect(billing.orgHourlyBurn("nobody")).toBe(0);
  });
});

describe("afterBalanceChange and trackNonPositive (the count towards auto-destroy)", () => {
  test("a positive balance ends the count and clears the GPU release of the organization's instances only", () => {
    const { billing, org, instance } = fixture();
    const o = org("o", 1, 500);
    const own = instance("own", "o", "stopped");
    const other = instance("other", "p", "stopped");
    for (const i of [own, other]) {
      i.gpu_release = "pending";
      i.gpu_release_requested_at = 10;
      i.gpu_release_due_at = 20;
    }
    billing.afterBalanceChange(o);
    expect(o.non_positive_since).toBeNull();
    expect([own.gpu_release, own.gpu_release_requested_at, own.gpu_release_due_at]).toEqual([
      null,
      null,
      null,
    ]);
    expect([other.gpu_release, other.gpu_release_requested_at, other.gpu_release_due_at]).toEqual([
      "pending",
      10,
      20,
    ]);
  });

  test("a balance of exactly zero starts the count now; a later change keeps when it started", () => {
    const { billing, org, instance, setNow } = fixture();
    const o = org("o", 0);
    const inst = instance("i", "o", "stopped");
    inst.gpu_release = "pending";
    setNow(1_000);
    billing.afterBalanceChange(o);
    expect(o.non_positive_since).toBe(1_000);
    expect(inst.gpu_release).toBe("pending");
    o.balance_micro = -5;
    setNow(2_000);
    billing.afterBalanceChange(o);
    expect(o.non_positive_since).toBe(1_000);
  });

  test("trackNonPositive starts the count at zero, ends it when positive, and says whether anything moved", () => {
    const { billing, org } = fixture();
    const zero = org("zero", 0);
    const positive = org("positive", 5, 100);
    const counting = org("counting", -1, 50);
    const fine = org("fine", 5);
    expect(billing.trackNonPositive(300)).toBe(true);
    expect(zero.non_positive_since).toBe(300);
    expect(positive.non_positive_since).toBeNull();
    expect(counting.non_positive_since).toBe(50);
    expect(fine.non_positive_since).toBeNull();
    expect(billing.trackNonPositive(400)).toBe(false);
    expect(zero.non_positive_since).toBe(300);

    zero.balance_micro = 1;
    expect(billing.trackNonPositive(500)).toBe(true);
    expect(zero.non_positive_since).toBeNull();
    positive.balance_micro = -1;
    expect(billing.trackNonPositive(600)).toBe(true);
    expect(positive.non_positive_since).toBe(600);
  });
});

describe("billing()", () => {
  test("true while any instance has an open segment, whichever", () => {
    const { billing, instance } = fixture();
    expect(billing.billing()).toBe(false);
    instance("creating", "o", "creating");
    expect(billing.billing()).toBe(false);
    instance("stopped", "o", "stopped");
    expect(billing.billing()).toBe(true);
  });
});

describe("nextBalanceEventAt", () => {
  // A GPU at 3.6M micro an hour costs 1000 micro a second (the disk is free here).
  const gpu = { price: 3_600_000, gbPrice: 0 };

  test("the zero crossing to the millisecond, whatever other organizations spend", () => {
    const { billing, org, instance } = fixture();
    org("o", 2_500);
    instance("i", "o", "running", gpu);
    org("rich", 1_000_000_000);
    instance("j", "rich", "running", { ...gpu, price: 36_000_000 });
    // 2500 micro are spent after 3 whole seconds (billed per second).
    expect(billing.nextBalanceEventAt(0)).toBe(3_000);
  });

  test("slow burns that the first estimate overshoots are still found exactly", () => {
    const { billing, org, instance } = fixture();
    org("o", 1);
    // Two disks of 1 micro an hour each: neither charges a whole micro before the hour.
    instance("a", "o", "stopped", { diskGb: 1, gbPrice: 1 });
    instance("b", "o", "stopped", { diskGb: 1, gbPrice: 1 });
    expect(billing.nextBalanceEventAt(0)).toBe(HOUR_MS);
  });

  test("a balance already at zero has no zero crossing ahead", () => {
    const { billing, org, instance } = fixture();
    org("o", 0);
    instance("i", "o", "running", gpu);
    expect(billing.nextBalanceEventAt(0)).toBe(Number.POSITIVE_INFINITY);
  });

  test("auto-destroy 24 hours after the count started, when the balance is already at or below -¥35", () => {
    for (const balance of [AUTO_DESTROY_BALANCE_MICRO, AUTO_DESTROY_BALANCE_MICRO - 1]) {
      const { billing, org, instance } = fixture();
      org("o", balance, 1_000);
      // An instance in error holds no segment: nothing is burning.
      instance("i", "o", "error");
      expect(billing.nextBalanceEventAt(0)).toBe(1_000 + AUTO_DESTROY_AFTER_MS);
      // Overdue: at once.
      expect(billing.nextBalanceEventAt(1_000 + 2 * AUTO_DESTROY_AFTER_MS)).toBe(
        1_000 + 2 * AUTO_DESTROY_AFTER_MS,
      );
    }
  });

  test("auto-destroy is due when any one instance of the organization is stopped or failed, whatever else there is", () => {
    const { billing, org, instance } = fixture();
    org("o", AUTO_DESTROY_BALANCE_MICRO, 1_000);
    instance("gone", "o", "destroyed");
    instance("i", "o", "stopped", { gbPrice: 0 });
    org("other", 5 * MICRO_PER_YUAN);
    instance("j", "other", "running", { gbPrice: 0, price: 0 });
    expect(billing.nextBalanceEventAt(0)).toBe(1_000 + AUTO_DESTROY_AFTER_MS);
  });

  test("above -¥35 with nothing burning, no auto-destroy ever", () => {
    const { billing, org, instance } = fixture();
    org("o", -10 * MICRO_PER_YUAN, 0);
    instance("i", "o", "error");
    expect(billing.nextBalanceEventAt(0)).toBe(Number.POSITIVE_INFINITY);
  });

  test("above -¥35 with a disk burning, the later of 24 hours and the -¥35 crossing", () => {
    const { billing, org, instance } = fixture();
    org("o", -10 * MICRO_PER_YUAN, 0);
    // 100 GB at 3600 micro a GB-hour: 100 micro a second, so ¥25 more take 250,000 s.
    instance("i", "o", "stopped", { diskGb: 100, gbPrice: 3_600 });
    expect(billing.nextBalanceEventAt(0)).toBe(250_000_000);
    expect(250_000_000).toBeGreaterThan(AUTO_DESTROY_AFTER_MS);
  });

  test("only stopped or failed instances are destroyed: an organization with neither has no such event", () => {
    const { billing, org, instance } = fixture();
    org("o", -40 * MICRO_PER_YUAN, 0);
    instance("i", "o", "running", gpu);
    org("p", 5 * MICRO_PER_YUAN);
    instance("j", "p", "stopped", { gbPrice: 0 });
    expect(billing.nextBalanceEventAt(0)).toBe(Number.POSITIVE_INFINITY);
  });
});

describe("accrue", () => {
  const gpu = { price: 3_600_000, gbPrice: 0 };

  test("nothing within an instance's first second: no charge, no row, false", () => {
    const { billing, org, instance, rows } = fixture();
    const o = org("o", 10_000);
    const i = instance("i", "o", "running", { ...gpu, since: 1_000 });
    expect(billing.accrue(1_999)).toBe(false);
    expect(billing.accrue(500)).toBe(false);
    expect([o.balance_micro, i.spend_micro, rows().length]).toEqual([10_000, 0, 0]);
  });

  test("whole seconds are charged once, into one row per instance and hour", () => {
    const { billing, org, instance, rows } = fixture();
    const o = org("o", 100_000);
    const a = instance("a", "o", "running", gpu);
    const b = instance("b", "o", "running", { ...gpu, price: 7_200_000 });
    // Each row's balance is the one after its own charge.
    expect(billing.accrue(2_500)).toBe(true);
    expect(billing.accrue(2_900)).toBe(false);
    expect(billing.accrue(5_000)).toBe(true);
    expect([a.spend_micro, b.spend_micro, o.balance_micro]).toEqual([5_000, 10_000, 85_000]);
    expect(rows().map((r) => [r.instance_id, r.kind, r.amount_micro, r.balance_after_micro])).toEqual([
      ["a", "gpu", 5_000, 91_000],
      ["b", "gpu", 10_000, 85_000],
    ]);
  });

  test("a charge ending on the hour belongs to that hour; the next hour opens a row at the hour", () => {
    const { billing, org, instance, rows } = fixture();
    org("o", 10 * MICRO_PER_YUAN);
    instance("a", "o", "stopped", { diskGb: 1, gbPrice: 3_600, since: 1_000 });
    billing.accrue(HOUR_MS);
    billing.accrue(HOUR_MS + 2_000);
    expect(rows().map((r) => [r.kind, r.created_at, r.amount_micro])).toEqual([
      ["storage", 1_000, 3_599],
      ["storage", HOUR_MS, 2],
    ]);
  });

  test("a replaced state (a reset, a restore, a tracked copy) is charged in its own rows", () => {
    const { host, billing, org, instance, rows } = fixture();
    org("o", 100_000);
    instance("a", "o", "running", gpu);
    billing.accrue(1_000);
    billing.accrue(2_000);
    host.state = structuredClone(host.state);
    billing.accrue(3_000);
    expect(rows().map((r) => r.amount_micro)).toEqual([3_000]);
    expect(host.state.orgs.o?.balance_micro).toBe(97_000);
  });
});
