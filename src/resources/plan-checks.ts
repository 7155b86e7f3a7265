import type { Instance, Offer, SshKey, Template } from "../api/schemas";
import { type RefusalFacts, type ResourceDiagnostic, refusalDiagnostic } from "./refusals";

// The deploy refusals of contract 7.2 that can be foreseen from what the API lets us read, checked
// when a plan creates an instance. The function is pure: the caller fetches what the credential may
// read and passes `undefined` for anything it could not, and a check without its data is skipped,
// never guessed. The apply-time refusal still covers every skipped check.
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

/** Compares dotted version numbers ("12.4" < "12.10"); missing parts count as 0. */
export function compareVersions(a: string, b: string): number {
  const pa = a.split(".").map((p) => Number.parseInt(p, 10) || 0);
  const pb = b.split(".").map((p) => Number.parseInt(p, 10) || 0);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/** Statuses whose instances are billed GPU and disk by the balance rule; stopped ones disk only. */
const GPU_BURNING = new Set(["running", "starting", "creating", "stopping"]);

/** The hourly burn of an instance under the balance rule of contract 4.2. */
export function instanceHourlyBurn(inst: Instance): number {
  const disk = inst.disk_gb * inst.storage_price_per_gb_hour_micro;
  if (GPU_BURNING.has(inst.status)) return disk + inst.price_per_hour_micro;
  return inst.status === "stopped" ? disk : 0;
}

/**
 * Returns the plan-time findings for a deploy: errors for refusals that are certain, warnings
 * where the outcome depends on other changes in the same apply. Each summary starts with the code
 * the deploy would return and each finding points at the attribute concerned.
 */
export function checkDeploy(input: DeployCheckInput, data: DeployCheckData): ResourceDiagnostic[] {
  const out: ResourceDiagnostic[] = [];
  const add = (code: string, facts: RefusalFacts, severity: "error" | "warning" = "error", note?: string) => {
    const d = refusalDiagnostic(code, facts, "plan_check", {
      severity,
      prefix:
        severity === "error"
          ? "The API would refuse this deploy."
          : "The API may refuse this deploy unless other instances of the organization are destroyed first in the same apply (as when this plan replaces one).",
    });
    if (note) d.detail = `${d.detail} ${note}`;
    out.push(d);
  };
  const others = data.instances ?? [];
  const sameOffer = others.filter((i) => i.offer.id === input.offer_id);

  const offer = data.offer;
  const machine = offer?.machine;
  if (offer === null) {
    add(
      "OFFER_UNAVAILABLE",
      { message: `Offer ${input.offer_id} does not exist` },
      "error",
      "The offer does not exist.",
    );
  } else if (offer) {
    if (offer.availability === "withdrawn") {
      add("OFFER_UNAVAILABLE", {}, "error", "The offer has been withdrawn.");
    } else if (
      offer.availability === "sold_out" ||
      (offer.free_units !== undefined && offer.free_units <= 0)
    ) {
      // An instance of ours on this offer would free a unit if it were replaced.
      add("OFFER_UNAVAILABLE", {}, sameOffer.length > 0 ? "warning" : "error", "The offer is sold out.");
    }
    if (offer.next_maintenance !== null) {
      const at = Date.parse(offer.next_maintenance);
      if (!Number.isNaN(at) && at - data.now < MAINTENANCE_WINDOW_MS) {
        add("MACHINE_IN_MAINTENANCE", { next_maintenance: offer.next_maintenance });
      }
    }
    if (machine && input.disk_gb > machine.disk_gb) {
      add("DISK_TOO_LARGE", { max_disk_gb: machine.disk_gb, requested_disk_gb: input.disk_gb });
    } else if (machine?.available_disk_gb !== undefined && input.disk_gb > machine.available_disk_gb) {
      const machineId = machine.id;
      const freeable = others
        .filter((i) => i.offer.id === input.offer_id || (machineId && i.offer.machine?.id === machineId))
        .reduce((n, i) => n + i.disk_gb, 0);
      add(
        "MACHINE_DISK_EXHAUSTED",
        { available_disk_gb: machine.available_disk_gb, requested_disk_gb: input.disk_gb },
        machine.available_disk_gb + freeable >= input.disk_gb ? "warning" : "error",
      );
    }
  }

  const template = data.template;
  if (template === null) {
    add("TEMPLATE_NOT_FOUND", {});
  } else if (template) {
    if (!template.active) {
      add("TEMPLATE_NOT_FOUND", {}, "error", "The template is inactive.");
    } else {
      if (template.coming_soon) add("TEMPLATE_COMING_SOON", {});
      if (machine && template.mode === "vm" && machine.vm_capable === false) add("OFFER_NOT_VM_CAPABLE", {});
      if (
        machine?.cuda_version &&
        template.cuda_max &&
        compareVersions(machine.cuda_version, template.cuda_max) > 0
      ) {
        add("TEMPLATE_CUDA_TOO_NEW", {
          message: `The template supports CUDA up to ${template.cuda_max}; the machine has ${machine.cuda_version}`,
        });
      }
      if (template.architecture !== "x86_64") {
        add("TEMPLATE_ARCH_UNSUPPORTED", {
          message: `The template declares architecture ${template.architecture}`,
        });
      }
      if (
        data.orgId &&
        template.uses_private_registry === true &&
        template.owner_org_id &&
        template.owner_org_id !== data.orgId
      ) {
        add("TEMPLATE_REQUIRES_OWNER", {});
      }
    }
  }

  if (input.ssh_key_id && data.sshKeys && data.sshKeysAreExhaustive) {
    if (!data.sshKeys.some((k) => k.id === input.ssh_key_id)) add("SSH_KEY_NOT_FOUND", {});
  }

  if (
    data.balanceMicro !== undefined &&
    offer?.price_per_hour_micro !== undefined &&
    offer.storage_price_per_gb_hour_micro !== undefined &&
    data.instances !== undefined
  ) {
    const own = offer.price_per_hour_micro + input.disk_gb * offer.storage_price_per_gb_hour_micro;
    const required = own + others.reduce((n, i) => n + instanceHourlyBurn(i), 0);
    if (data.balanceMicro < required) {
      add(
        "INSUFFICIENT_BALANCE",
        { balance_micro: data.balanceMicro, required_micro: required },
        data.balanceMicro < own ? "error" : "warning",
      );
    }
  }

  if (data.instances !== undefined && data.instances.length >= INSTANCE_LIMIT) {
    add("INSTANCE_LIMIT_REACHED", { limit: INSTANCE_LIMIT }, "warning");
  }
  return out;
}
