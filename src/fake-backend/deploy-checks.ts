import semverCompare from "semver/functions/compare";
import { type Billing, checkBalance } from "./billing";
import { rentable, templateVisible } from "./catalog";
import { ApiFailure } from "./errors";
import type {
  Caller,
  DeployInput,
  FakeState,
  MachineRecord,
  OfferRecord,
  Role,
  SshKeyRecord,
  TemplateRecord,
} from "./types";

// The deploy checks of contract 7.2, in the contract's order (rows 1 to 14), and row 15, the
// reservation race. A refusal changes nothing; a deploy that passes them is made in
// instances.ts.

/** Instances per organization that are not destroyed (contract 8). */
export const INSTANCE_LIMIT = 25;
/** Maintenance closer than this makes a machine refuse new deploys. */
export const MAINTENANCE_WINDOW_MS = 24 * 60 * 60 * 1000;

/** What the checks read besides the request: the state, memberships and the balance rule. */
export interface DeployCheckHost {
  readonly state: FakeState;
  readonly billing: Billing;
  membership(orgId: string, userId: string): { role: Role } | undefined;
}

/** What a deploy that passed the checks is made of. */
export interface DeployPlace {
  offer: OfferRecord;
  machine: MachineRecord;
  template: TemplateRecord;
  sshKey: SshKeyRecord | undefined;
}

/**
 * Compares dotted versions ("12.10" after "12.9") with semver: the first three parts, a missing or
 * non-numeric part counting as 0.
 */
export function compareVersions(a: string, b: string): number {
  return semverCompare(dottedVersion(a), dottedVersion(b));
}

/** A dotted version as the `major.minor.patch` semver compares. */
function dottedVersion(v: string): string {
  const [major = 0, minor = 0, patch = 0] = v.split(".").map((p) => Number.parseInt(p, 10) || 0);
  return `${major}.${minor}.${patch}`;
}

function sshKeyAttachable(host: DeployCheckHost, caller: Caller, key: SshKeyRecord): boolean {
  if (caller.via === "session" || caller.key?.kind === "personal") return key.user_id === caller.user.id;
  // A team key may attach the key of anyone currently a member, never a former member's.
  return host.membership(caller.org.id, key.user_id) !== undefined;
}

/** Runs checks 1 to 14 of 7.2 in order, throwing the first refusal; returns what the deploy uses. */
export function checkDeploy(
  host: DeployCheckHost,
  caller: Caller,
  input: DeployInput,
  now: number,
): DeployPlace {
  const { state } = host;
  const offer = state.offers[input.offer_id];
  const machine = offer ? state.machines[offer.machine_id] : undefined;
  // 1
  if (!offer || !machine || !rentable(offer)) {
    throw new ApiFailure(
      409,
      "OFFER_UNAVAILABLE",
      `Offer ${input.offer_id} is missing, withdrawn or sold out`,
    );
  }
  // 2
  if (offer.next_maintenance !== null && offer.next_maintenance - now < MAINTENANCE_WINDOW_MS) {
    throw new ApiFailure(
      409,
      "MACHINE_IN_MAINTENANCE",
      "The machine is booked offline too soon to start on",
      {
        next_maintenance: new Date(offer.next_maintenance).toISOString(),
      },
    );
  }
  // 3
  if (input.disk_gb > machine.disk_gb) {
    throw new ApiFailure(
      422,
      "DISK_TOO_LARGE",
      `disk_gb ${input.disk_gb} exceeds the machine's ${machine.disk_gb} GB`,
      { max_disk_gb: machine.disk_gb },
    );
  }
  // 4
  if (input.disk_gb > machine.available_disk_gb) {
    throw new ApiFailure(
      409,
      "MACHINE_DISK_EXHAUSTED",
      `Only ${machine.available_disk_gb} GB of disk are left on the machine`,
      { available_disk_gb: machine.available_disk_gb, requested_disk_gb: input.disk_gb },
    );
  }
  // 5
  const template = state.templates[input.template_id];
  if (!template?.active || !templateVisible(template, caller.org.id)) {
    throw new ApiFailure(404, "TEMPLATE_NOT_FOUND", `Template ${input.template_id} not found`);
  }
  // 6
  if (template.coming_soon) {
    throw new ApiFailure(422, "TEMPLATE_COMING_SOON", `Template ${template.name} is marked coming soon`);
  }
  // 7
  if (template.mode === "vm" && !machine.vm_capable) {
    throw new ApiFailure(422, "OFFER_NOT_VM_CAPABLE", "A vm template needs a machine that can run VMs");
  }
  // 8
  if (template.cuda_max !== null && compareVersions(machine.cuda_version, template.cuda_max) > 0) {
    throw new ApiFailure(
      422,
      "TEMPLATE_CUDA_TOO_NEW",
      `The template supports CUDA up to ${template.cuda_max}; the machine has ${machine.cuda_version}`,
    );
  }
  // 9
  if (template.architecture !== "x86_64") {
    throw new ApiFailure(
      422,
      "TEMPLATE_ARCH_UNSUPPORTED",
      `The template declares architecture ${template.architecture}; only x86_64 is supported`,
    );
  }
  // 10
  if (
    template.uses_private_registry &&
    template.owner_org_id !== null &&
    template.owner_org_id !== caller.org.id
  ) {
    throw new ApiFailure(
      422,
      "TEMPLATE_REQUIRES_OWNER",
      "The template pulls from a private registry with its owner's credentials",
    );
  }
  // 11
  if (!machine.registered) {
    throw new ApiFailure(409, "OFFER_NOT_PINNABLE", "The offer's machine is not registered with the fleet");
  }
  // 12
  let sshKey: SshKeyRecord | undefined;
  if (input.ssh_key_id) {
    sshKey = state.ssh_keys[input.ssh_key_id];
    if (!sshKey || !sshKeyAttachable(host, caller, sshKey)) {
      throw new ApiFailure(404, "SSH_KEY_NOT_FOUND", `SSH key ${input.ssh_key_id} is not attachable`);
    }
  }
  // 13: one hour of the new instance plus the organization's burn.
  const own = offer.price_per_hour_micro + input.disk_gb * offer.storage_price_per_gb_hour_micro;
  checkBalance(caller.org, own + host.billing.orgHourlyBurn(caller.org.id));
  // 14
  const live = Object.values(state.instances).filter(
    (i) => i.org_id === caller.org.id && i.status !== "destroyed",
  ).length;
  if (live >= INSTANCE_LIMIT) {
    throw new ApiFailure(
      409,
      "INSTANCE_LIMIT_REACHED",
      `The organization already has ${INSTANCE_LIMIT} instances`,
      {
        limit: INSTANCE_LIMIT,
      },
    );
  }
  return { offer, machine, template, sshKey };
}

/**
 * Row 15, the reservation itself: whether a concurrent deploy took the last free unit of the offer
 * first (a race the control API arranges, `loseNextRace`); each loss is used once.
 */
export function loseReservationRace(state: FakeState, offerId: string): boolean {
  const losses = state.race_losses[offerId] ?? 0;
  if (losses <= 0) return false;
  if (losses === 1) delete state.race_losses[offerId];
  else state.race_losses[offerId] = losses - 1;
  return true;
}
