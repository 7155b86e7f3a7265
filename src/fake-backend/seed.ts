import type { Engine } from "./engine";
import { ACCESS_TOKEN_REF } from "./env";
import type { DemoCredentials } from "./types";

/** Deterministic UUIDs of the demo seed, so docs and tests read well. Secrets stay random. */
export const DEMO_IDS = {
  org: "00000000-0000-4000-8000-000000000001",
  otherOrg: "00000000-0000-4000-8000-000000000002",
  admin: "00000000-0000-4000-8000-000000000011",
  member: "00000000-0000-4000-8000-000000000012",
  otherAdmin: "00000000-0000-4000-8000-000000000013",
  adminSshKey: "00000000-0000-4000-8000-000000000021",
  memberSshKey: "00000000-0000-4000-8000-000000000022",
  machineLarge: "00000000-0000-4000-8000-000000000031",
  machineSmall: "00000000-0000-4000-8000-000000000032",
  machineVm: "00000000-0000-4000-8000-000000000033",
  machineMaintenance: "00000000-0000-4000-8000-000000000034",
  machineNewCuda: "00000000-0000-4000-8000-000000000035",
  offer: "00000000-0000-4000-8000-000000000041",
  offerSmall: "00000000-0000-4000-8000-000000000042",
  offerVm: "00000000-0000-4000-8000-000000000043",
  offerMaintenance: "00000000-0000-4000-8000-000000000044",
  offerSoldOut: "00000000-0000-4000-8000-000000000045",
  offerNewCuda: "00000000-0000-4000-8000-000000000046",
  templateSsh: "00000000-0000-4000-8000-000000000051",
  templateJupyter: "00000000-0000-4000-8000-000000000052",
  templateVm: "00000000-0000-4000-8000-000000000053",
  templateComingSoon: "00000000-0000-4000-8000-000000000054",
  templateInactive: "00000000-0000-4000-8000-000000000055",
} as const;

/** Resets the engine and creates the demo organization, people, offers and templates. */
export function seedDemo(engine: Engine, baseUrl: string, controlToken: string): DemoCredentials {
  engine.reset();
  const id = DEMO_IDS;
  const now = engine.now();
  engine.createOrg({ id: id.org, name: "Demo Lab", balance_micro: 5_000 * 1_000_000 });
  engine.createOrg({ id: id.otherOrg, name: "Other Lab", balance_micro: 1_000 * 1_000_000 });
  const adminEmail = "admin@demo.example";
  const memberPhone = "+8613800138000";
  engine.createUser({ id: id.admin, email: adminEmail });
  engine.createUser({ id: id.member, phone: memberPhone });
  engine.createUser({ id: id.otherAdmin, email: "admin@other.example" });
  engine.addMember(id.org, id.admin, "admin");
  engine.addMember(id.org, id.member, "member");
  engine.addMember(id.otherOrg, id.otherAdmin, "admin");
  engine.createSshKey({ id: id.adminSshKey, user_id: id.admin, name: "admin laptop" });
  engine.createSshKey({ id: id.memberSshKey, user_id: id.member, name: "member workstation" });

  engine.createMachine({
    id: id.machineLarge,
    disk_gb: 2000,
    public_ip: "203.0.113.10",
    cuda_version: "12.4",
  });
  engine.createMachine({
    id: id.machineSmall,
    disk_gb: 500,
    public_ip: "203.0.113.11",
    cuda_version: "12.2",
  });
  engine.createMachine({
    id: id.machineVm,
    disk_gb: 4000,
    public_ip: "203.0.113.12",
    vm_capable: true,
    gpu_release_supported: false,
  });
  engine.createMachine({ id: id.machineMaintenance, disk_gb: 1000, public_ip: "203.0.113.13" });
  engine.createMachine({
    id: id.machineNewCuda,
    disk_gb: 2000,
    public_ip: "203.0.113.14",
    cuda_version: "12.8",
  });

  engine.createOffer({
    id: id.offer,
    machine_id: id.machineLarge,
    gpu_model: "RTX 4090",
    price_per_hour_micro: 2_500_000,
  });
  engine.createOffer({
    id: id.offerSmall,
    machine_id: id.machineSmall,
    gpu_model: "RTX 3090",
    price_per_hour_micro: 1_200_000,
    storage_price_per_gb_hour_micro: 150,
  });
  engine.createOffer({
    id: id.offerVm,
    machine_id: id.machineVm,
    gpu_model: "A100 80GB",
    num_gpus: 2,
    price_per_hour_micro: 16_000_000,
    storage_price_per_gb_hour_micro: 300,
  });
  engine.createOffer({
    id: id.offerMaintenance,
    machine_id: id.machineMaintenance,
    gpu_model: "RTX 4090",
    price_per_hour_micro: 2_300_000,
    next_maintenance: now + 6 * 3_600_000,
  });
  engine.createOffer({
    id: id.offerSoldOut,
    machine_id: id.machineLarge,
    gpu_model: "RTX 4090",
    num_gpus: 4,
    price_per_hour_micro: 9_600_000,
    availability: "sold_out",
    free_units: 0,
  });
  engine.createOffer({
    id: id.offerNewCuda,
    machine_id: id.machineNewCuda,
    gpu_model: "RTX 5090",
    price_per_hour_micro: 3_800_000,
  });

  engine.createTemplate({
    id: id.templateSsh,
    name: "PyTorch 2.5 (SSH)",
    mode: "ssh",
    cuda_max: "12.4",
    recommended: true,
    env: [{ key: "TZ", value: "UTC", secret: false }],
    readme: "# PyTorch 2.5\nConnect with SSH.",
    onstart: "nvidia-smi",
  });
  engine.createTemplate({
    id: id.templateJupyter,
    name: "JupyterLab (PyTorch 2.5)",
    mode: "jupyter",
    image: "gpurental/jupyter-pytorch:2.5",
    recommended: true,
    env: [
      { key: "TZ", value: "UTC", secret: false },
      { key: "APP_PASSWORD", value: ACCESS_TOKEN_REF, secret: true },
    ],
  });
  engine.createTemplate({
    id: id.templateVm,
    name: "Ubuntu 22.04 VM",
    mode: "vm",
    image: "ubuntu-22.04-cuda",
  });
  engine.createTemplate({
    id: id.templateComingSoon,
    name: "Stable Diffusion WebUI",
    mode: "ssh",
    coming_soon: true,
  });
  engine.createTemplate({
    id: id.templateInactive,
    name: "TensorFlow 1.15 (retired)",
    mode: "ssh",
    active: false,
  });

  return demoCredentials(engine, baseUrl, controlToken);
}

/** Signs the demo people in afresh (tokens are only kept hashed) and lists the demo ids; undefined when the demo seed is absent. */
export function reissueDemoCredentials(
  engine: Engine,
  baseUrl: string,
  controlToken: string,
): DemoCredentials | undefined {
  const id = DEMO_IDS;
  if (!engine.membership(id.org, id.admin) || !engine.membership(id.org, id.member)) return undefined;
  if (!engine.membership(id.otherOrg, id.otherAdmin)) return undefined;
  return demoCredentials(engine, baseUrl, controlToken);
}

function demoCredentials(engine: Engine, baseUrl: string, controlToken: string): DemoCredentials {
  const id = DEMO_IDS;
  const adminEmail = engine.state.users[id.admin]?.email ?? "";
  const memberPhone = engine.state.users[id.member]?.phone ?? "";
  return {
    base_url: baseUrl,
    control_token: controlToken,
    org_id: id.org,
    admin_user_id: id.admin,
    member_user_id: id.member,
    admin_email: adminEmail,
    member_phone: memberPhone,
    admin_session_token: engine.createSession(id.admin, id.org),
    member_session_token: engine.createSession(id.member, id.org),
    offer_id: id.offer,
    template_id: id.templateSsh,
    ssh_key_id: id.adminSshKey,
    member_ssh_key_id: id.memberSshKey,
    jupyter_template_id: id.templateJupyter,
    vm_template_id: id.templateVm,
    coming_soon_template_id: id.templateComingSoon,
    inactive_template_id: id.templateInactive,
    small_disk_offer_id: id.offerSmall,
    vm_offer_id: id.offerVm,
    maintenance_offer_id: id.offerMaintenance,
    sold_out_offer_id: id.offerSoldOut,
    new_cuda_offer_id: id.offerNewCuda,
    other_org_id: id.otherOrg,
    other_admin_session_token: engine.createSession(id.otherAdmin, id.otherOrg),
  };
}
