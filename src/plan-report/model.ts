import type { ResourceDiagnostic } from "../provider/refusals";
import type { Hours, Micro } from "../report/money";

// The concepts of a plan report, one named type each: what happens to each instance and its disk,
// what each API key change is, the organization's burn and balance before and after, the contract's
// one-hour balance rule judged for the whole change, and the gates a pipeline sets. Built by
// build.ts from a plan and what the API let us read; rendered by render.ts.

/** What a plan does to an instance, in a reviewer's words. */
export type InstanceAction =
  | "create"
  | "replace"
  | "destroy"
  | "stop"
  | "start"
  | "update"
  | "import"
  | "forget";

/** The price a (new) instance rents at. */
export interface Price {
  /** GPU price per hour. */
  perHour: Micro;
  /** Disk price per GB and hour. */
  storagePerGbHour: Micro;
  /** Whether the offer is not known yet (offer_filter) and the price is the one the selection would choose now. */
  estimate: boolean;
  /** Where the price comes from, in words. */
  basis: string;
}

/** What happens to an instance's disk. */
export type DiskFate =
  | { kind: "new"; gb: number }
  | { kind: "kept"; gb: number }
  | { kind: "destroyed"; gb: number }
  /** Replaced: the old disk is destroyed and the new instance gets an empty one. */
  | { kind: "replaced"; oldGb: number; newGb: number | undefined };

/** One instance of the plan. */
export interface InstanceLine {
  address: string;
  /** The CDKTF construct path, for a CDKTF stack's plan. */
  constructPath?: string;
  action: InstanceAction;
  /** The existing instance's id (not for a create). */
  id?: string;
  /** The label, `(sensitive)` when Terraform marks it so, or null. */
  label: string | null;
  gpu?: { model: string; count?: number };
  /** The offer rented (existing) or to rent (new; the estimate's for a filter). */
  offerId?: string;
  /** The GPU price of what the line ends with: the new instance's for create and replace, the instance's own otherwise. */
  price?: Price;
  /** The old instance's GPU price, for a replacement. */
  oldPrice?: Micro;
  disk: DiskFate;
  /** The line's share of the organization's burn now (what the API lists; 0 for a create). */
  burnBefore: Micro;
  /** Its share after the change; undefined when its price could not be known. */
  burnAfter: Micro | undefined;
  /** What it is charged per hour now (GPU while running, disk while stopped). */
  chargeBefore: Micro;
  /** What it is charged per hour after the change; undefined when its price could not be known. */
  chargeAfter: Micro | undefined;
  /** Why it is replaced, e.g. `disk_gb 50 → 100`. */
  reasons: string[];
  /** For replacements: which goes first. */
  order?: "delete-first" | "create-first";
  /** What the provider's plan-time checks foresee for a create or the create half of a replacement. */
  findings: ResourceDiagnostic[];
  /** Things worth a sentence (a price not readable, an instance the API no longer lists). */
  notes: string[];
}

/** What a plan does to an API key. */
export type KeyAction = "create" | "revoke" | "replace" | "import" | "forget";

/** One API key of the plan. */
export interface KeyLine {
  address: string;
  constructPath?: string;
  action: KeyAction;
  id?: string;
  name: string | null;
  kind: string | null;
}

/**
 * The organization's hourly burn under the balance rule, before and after the change, and what it is
 * actually charged per hour (the rule also counts the disk of running instances, which is not charged).
 */
export interface BurnFigures {
  /** Now: every instance the API lists, GPU and disk while running, starting, creating or stopping, disk while stopped. */
  before: Micro;
  /** After every change landed; undefined when a price could not be known. */
  after: Micro | undefined;
  /** Addresses whose price could not be known. */
  unpriced: string[];
  /** The most the organization burns at one moment of the apply, if every increase lands before any decrease. */
  worstCase: Micro | undefined;
  /** What the organization is charged per hour now: GPU of running instances, disk of stopped ones (contract 1). */
  chargedBefore: Micro;
  /** The same after the change; undefined when a price could not be known. */
  chargedAfter: Micro | undefined;
}

/** The balance, and how long it lasts. */
export type BalanceFigures =
  | { read: true; balance: Micro; hoursBefore: Hours | undefined; hoursAfter: Hours | undefined }
  | { read: false; reason: string };

/** The one-hour balance rule (contract 4.2) judged for the whole change. */
export interface BalanceRuleVerdict {
  /**
   * met: every deploy and start passes in any order; may-fail: passes only if decreases land first;
   * broken: the last deploy or start is refused whatever the order; not-applicable: the change
   * deploys and starts nothing; not-judged: the balance or a price could not be read.
   */
  status: "met" | "may-fail" | "broken" | "not-applicable" | "not-judged";
  /** The burn the last deploy or start must cover at best (the burn after the change). */
  required?: Micro;
  /** What the worst order requires. */
  worstCase?: Micro;
  detail: string;
}

/** The instance limit (contract 8: 25 not destroyed) judged for the whole change. */
export interface LimitVerdict {
  status: "met" | "may-fail" | "broken" | "not-applicable";
  before: number;
  after: number;
  worstCase: number;
  limit: number;
}

/** A gate a pipeline sets, and how the report fared against it. */
export interface GateResult {
  /** As given: `disk-loss`, `max-burn-per-hour=¥10.00`, ... */
  gate: string;
  status: "passed" | "tripped" | "not-judged";
  detail: string;
}

/** The whole report. */
export interface PlanReport {
  source: string;
  /** When the API was read (ms). */
  readAt: number;
  terraformVersion?: string;
  planTimestamp?: string;
  cdktfStack?: string;
  /** Whether Terraform said the plan errored (it is then incomplete). */
  errored: boolean;
  instances: InstanceLine[];
  keys: KeyLine[];
  burn: BurnFigures;
  balance: BalanceFigures;
  rule: BalanceRuleVerdict;
  limit: LimitVerdict;
  /** Readings that could not be made, each with what it left unjudged. */
  unread: string[];
  gates: GateResult[];
}

/** Whether an instance line destroys a disk (replace or destroy). */
export function losesDisk(l: InstanceLine): boolean {
  return l.disk.kind === "destroyed" || l.disk.kind === "replaced";
}
