import semverCompare from "semver/functions/compare";
import type { ApiErrorCode } from "../api/errors";
import type { Instance, Offer, SshKey, Template } from "../api/schemas";
import type { Diagnostic } from "../framework";
import { type OfferChoice, type RefusalFacts, refusalDiagnostic } from "../provider/refusals";
import { instanceHourlyBurn } from "../report/money";

// The deploy refusals of contract 7.2 that can be foreseen from what the API lets us read, checked
// when a plan creates an instance. The function is pure: the caller fetches what the credential may
// read and passes `undefined` for anything it could not, and a check without its data is skipped,
// never guessed. The apply-time refusal still covers every skipped check. The offer-dependent
// checks (offerFindings) are also what offer selection (offer-selection.ts) judges each market
// offer by, so a plan with an offer_filter and a plan with a pinned offer_id agree.
//
// A plan that replaces an instance cannot be told apart from a plain create here (Terraform plans
// the create half of a replacement with a null prior state), and the instance being replaced still
// holds its offer unit, its machine disk, its place under the limit and its share of the burn. So
// checks about capacity are errors only when they fail whatever the organization's other instances
// do, and warnings when destroying one of them could make room.

/** The deploy arguments a plan-time check looks at; all known. */
export interface DeployCheckInput {
  offer_id: string;
  template_id: string;
  disk_gb: number;
  ssh_key_id: string | null;
}

/** What the API returned for the checks; `undefined` means "could not be read, skip". */
export interface DeployCheckData {
  /** GET /v1/offers/{id}; null when it answered 404. */
  offer: Offer | null | undefined;
  /** GET /v1/templates/{id}; null when it answered 404 (missing or not visible). */
  template: Template | null | undefined;
  /** GET /v1/ssh-keys (session credentials only): the signed-in user's keys. */
  sshKeys?: readonly SshKey[] | undefined;
  /** Whether the credential attaches only its own user's keys (session or personal key). */
  sshKeysAreExhaustive?: boolean;
  /** GET /v1/instances: the organization's instances that are not destroyed. */
  instances?: readonly Instance[] | undefined;
  /** GET /v1/me (session only): the organization's balance. */
  balanceMicro?: number | undefined;
  /** The caller's organization, when known; for TEMPLATE_REQUIRES_OWNER. */
  orgId?: string | undefined;
  /** The current time in ms. */
  now: number;
}

/** How long before a maintenance a machine stops taking deploys (docs/api-shapes.md). */
export const MAINTENANCE_WINDOW_MS = 24 * 60 * 60 * 1000;

/** The per-organization instance limit (contract 8). */
export const INSTANCE_LIMIT = 25;

/**
 * Compares dotted version numbers ("12.4" < "12.10") with semver: the first three parts, a missing
 * or non-numeric part counting as 0 ("12" is "12.0.0", "12.x" is "12.0.0").
 */
export function compareVersions(a: string, b: string): number {
  return semverCompare(dottedVersion(a), dottedVersion(b));
}

/** A CUDA-style dotted version as the `major.minor.patch` semver compares. */
function dottedVersion(v: string): string {
  const [major = 0, minor = 0, patch = 0] = v.split(".").map((p) => Number.parseInt(p, 10) || 0);
  return `${major}.${minor}.${patch}`;
}

/** What a foreseen refusal is about: the offer (or its machine), or what the deploy sends besides it. */
export type FindingSubject = "offer" | "template" | "ssh_key" | "organization";

/** One refusal a deploy would meet, foreseen from what the API lets us read. */
export interface DeployFinding {
  /** The code the deploy would answer. */
  code: ApiErrorCode;
  /** error: the deploy would be refused; warning: it may be, depending on other changes or on the service. */
  severity: "error" | "warning";
  /** The carried fields, as an API error would carry them. */
  facts: RefusalFacts;
  /** Words added after the code's own explanation. */
  note?: string;
  /** Replaces the standard first sentence of the detail. */
  prefix?: string;
  subject: FindingSubject;
}

const CERTAIN = "The API would refuse this deploy.";
const UNLESS_DESTROYED =
  "The API may refuse this deploy unless other instances of the organization are destroyed first in the same apply (as when this plan replaces one).";
const MAINTENANCE_MAY_REFUSE =
  "The API may refuse this deploy: the contract leaves open how close to a maintenance a machine stops taking deploys (the fake backend refuses within 24 hours). The plan goes on and the deploy's own answer decides.";

/** Whether an offer's machine goes into maintenance within {@link MAINTENANCE_WINDOW_MS} of `now`. */
export function maintenanceSoon(offer: Pick<Offer, "next_maintenance">, now: number): boolean {
  // None booked, or a time that cannot be read: nothing to warn about.
  // Stryker disable next-line StringLiteral: any text that is not a date parses to NaN, as "" does.
  const at = Date.parse(offer.next_maintenance ?? "");
  return !Number.isNaN(at) && at - now < MAINTENANCE_WINDOW_MS;
}

/** The deploy facts that depend on the offer, for one offer. */
export interface OfferCheckInput {
  offer_id: string;
  disk_gb: number;
}

/** What the offer-dependent checks read besides the offer. */
export interface OfferCheckContext {
  /** The template, when known; the checks that need it (VM, CUDA) are skipped without it. */
  template?: Template | null | undefined;
  /** The organization's instances that are not destroyed, when known. */
  instances?: readonly Instance[] | undefined;
  now: number;
}

/**
 * The refusals of contract 7.2 that depend on the offer and its machine (rows 1, 2, 3, 4, 7 and 8),
 * in the API's check order. `offer` null means the offer does not exist; undefined skips them all.
 * Maintenance is always a warning: only the deploy can say whether a window is too close.
 */
export function offerFindings(
  offer: Offer | null | undefined,
  input: OfferCheckInput,
  ctx: OfferCheckContext,
): DeployFinding[] {
  const out: DeployFinding[] = [];
  const add = (f: Omit<DeployFinding, "subject">) => out.push({ ...f, subject: "offer" });
  if (offer === undefined) return out;
  if (offer === null) {
    add({
      code: "OFFER_UNAVAILABLE",
      severity: "error",
      facts: {},
      note: "The offer does not exist.",
    });
    return out;
  }
  const others = ctx.instances ?? [];
  const sameOffer = others.filter((i) => i.offer.id === input.offer_id);
  const machine = offer.machine;
  if (offer.availability === "withdrawn") {
    add({ code: "OFFER_UNAVAILABLE", severity: "error", facts: {}, note: "The offer has been withdrawn." });
  } else if (offer.availability === "sold_out" || (offer.free_units !== undefined && offer.free_units <= 0)) {
    // An instance of ours on this offer would free a unit if it were replaced.
    add({
      code: "OFFER_UNAVAILABLE",
      severity: sameOffer.length > 0 ? "warning" : "error",
      facts: {},
      note: "The offer is sold out.",
    });
  }
  if (maintenanceSoon(offer, ctx.now)) {
    add({
      code: "MACHINE_IN_MAINTENANCE",
      severity: "warning",
      facts: { next_maintenance: offer.next_maintenance },
      prefix: MAINTENANCE_MAY_REFUSE,
    });
  }
  if (input.disk_gb > machine.disk_gb) {
    add({
      code: "DISK_TOO_LARGE",
      severity: "error",
      facts: { max_disk_gb: machine.disk_gb, requested_disk_gb: input.disk_gb },
    });
  } else if (machine.available_disk_gb !== undefined && input.disk_gb > machine.available_disk_gb) {
    const machineId = machine.id;
    const freeable = others
      .filter((i) => i.offer.id === input.offer_id || (machineId && i.offer.machine?.id === machineId))
      .reduce((n, i) => n + i.disk_gb, 0);
    add({
      code: "MACHINE_DISK_EXHAUSTED",
      severity: machine.available_disk_gb + freeable >= input.disk_gb ? "warning" : "error",
      facts: { available_disk_gb: machine.available_disk_gb, requested_disk_gb: input.disk_gb },
    });
  }
  const template = ctx.template;
  if (template?.active) {
    if (template.mode === "vm" && machine.vm_capable === false) {
      add({ code: "OFFER_NOT_VM_CAPABLE", severity: "error", facts: {} });
    }
    if (
      machine.cuda_version &&
      template.cuda_max &&
      compareVersions(machine.cuda_version, template.cuda_max) > 0
    ) {
      add({
        code: "TEMPLATE_CUDA_TOO_NEW",
        severity: "error",
        facts: {
          message: `The template supports CUDA up to ${template.cuda_max}; the machine has ${machine.cuda_version}`,
        },
      });
    }
  }
  return out;
}

/** The refusals that depend on the template alone (rows 5, 6, 9 and 10). */
export function templateFindings(
  template: Template | null | undefined,
  orgId: string | undefined,
): DeployFinding[] {
  const out: DeployFinding[] = [];
  const add = (f: Omit<DeployFinding, "subject" | "severity">) =>
    out.push({ ...f, severity: "error", subject: "template" });
  if (template === null) {
    add({ code: "TEMPLATE_NOT_FOUND", facts: {} });
  } else if (template) {
    if (!template.active) {
      add({ code: "TEMPLATE_NOT_FOUND", facts: {}, note: "The template is inactive." });
    } else {
      if (template.coming_soon) add({ code: "TEMPLATE_COMING_SOON", facts: {} });
      if (template.architecture !== "x86_64") {
        add({
          code: "TEMPLATE_ARCH_UNSUPPORTED",
          facts: { message: `The template declares architecture ${template.architecture}` },
        });
      }
      if (
        orgId &&
        template.uses_private_registry === true &&
        template.owner_org_id &&
        template.owner_org_id !== orgId
      ) {
        add({ code: "TEMPLATE_REQUIRES_OWNER", facts: {} });
      }
    }
  }
  return out;
}

/**
 * Every plan-time finding for a deploy: errors for refusals that are certain, warnings where the
 * outcome depends on other changes in the same apply or on the service's own judgement.
 */
export function deployFindings(input: DeployCheckInput, data: DeployCheckData): DeployFinding[] {
  const others = data.instances ?? [];
  const ctx = { template: data.template, instances: data.instances, now: data.now };
  const out: DeployFinding[] = [
    ...offerFindings(data.offer, input, ctx),
    ...templateFindings(data.template, data.orgId),
  ];
  if (input.ssh_key_id && data.sshKeys && data.sshKeysAreExhaustive) {
    if (!data.sshKeys.some((k) => k.id === input.ssh_key_id)) {
      out.push({ code: "SSH_KEY_NOT_FOUND", severity: "error", facts: {}, subject: "ssh_key" });
    }
  }

  const offer = data.offer;
  if (
    data.balanceMicro !== undefined &&
    offer?.price_per_hour_micro !== undefined &&
    offer.storage_price_per_gb_hour_micro !== undefined &&
    data.instances !== undefined
  ) {
    const own = offer.price_per_hour_micro + input.disk_gb * offer.storage_price_per_gb_hour_micro;
    const required = own + others.reduce((n, i) => n + instanceHourlyBurn(i), 0);
    if (data.balanceMicro < required) {
      out.push({
        code: "INSUFFICIENT_BALANCE",
        severity: data.balanceMicro < own ? "error" : "warning",
        facts: { balance_micro: data.balanceMicro, required_micro: required },
        subject: "organization",
      });
    }
  }

  if (data.instances !== undefined && data.instances.length >= INSTANCE_LIMIT) {
    out.push({
      code: "INSTANCE_LIMIT_REACHED",
      severity: "warning",
      facts: { limit: INSTANCE_LIMIT, count: data.instances.length },
      subject: "organization",
    });
  }
  // Reported in the API's own check order (7.2), as its first refusal would be.
  return out.sort((a, b) => CHECK_ORDER.indexOf(a.code) - CHECK_ORDER.indexOf(b.code));
}

/** The deploy refusals of contract 7.2 that plan-time checks foresee, in the API's check order. */
const CHECK_ORDER: readonly ApiErrorCode[] = [
  // Stryker disable next-line StringLiteral: the first code sorts first whatever rank it is given.
  "OFFER_UNAVAILABLE",
  "MACHINE_IN_MAINTENANCE",
  "DISK_TOO_LARGE",
  "MACHINE_DISK_EXHAUSTED",
  "TEMPLATE_NOT_FOUND",
  "TEMPLATE_COMING_SOON",
  "OFFER_NOT_VM_CAPABLE",
  "TEMPLATE_CUDA_TOO_NEW",
  "TEMPLATE_ARCH_UNSUPPORTED",
  "TEMPLATE_REQUIRES_OWNER",
  "SSH_KEY_NOT_FOUND",
  "INSUFFICIENT_BALANCE",
  "INSTANCE_LIMIT_REACHED",
];

/** The diagnostic of a finding, worded and placed like the apply-time refusal. */
export function findingDiagnostic(f: DeployFinding, offerChoice: OfferChoice = "pinned"): Diagnostic {
  const d = refusalDiagnostic(f.code, f.facts, "plan_check", {
    severity: f.severity,
    prefix: f.prefix ?? (f.severity === "error" ? CERTAIN : UNLESS_DESTROYED),
    offerChoice,
  });
  if (f.note) d.detail = `${d.detail} ${f.note}`;
  return d;
}

/**
 * Returns the plan-time findings for a deploy as diagnostics: each summary starts with the code the
 * deploy would return and each finding points at the attribute concerned.
 */
export function checkDeploy(input: DeployCheckInput, data: DeployCheckData): Diagnostic[] {
  return deployFindings(input, data).map((f) => findingDiagnostic(f));
}
