import type { Instance, Template } from "../schemas";

// Records for tests of code built on the client (the provider's resources, the waiter). Plain
// data, no test framework, so it can live beside the client without dragging Jest into builds.

/** A valid running instance with every field of contract 2.2; override any field. */
export function makeInstance(overrides: Partial<Instance> = {}): Instance {
  return {
    id: "5f0c6f9e-1a2b-4c3d-8e9f-000000000001",
    label: null,
    status: "running",
    disk_gb: 50,
    price_per_hour_micro: 2_500_000,
    storage_price_per_gb_hour_micro: 200,
    ssh_host: "203.0.113.10",
    ssh_port: 40022,
    ssh_user: "root",
    jupyter_url: null,
    open_url: null,
    access_token: "0123456789abcdef0123456789abcdef",
    error_code: null,
    error_message: null,
    allowed_actions: ["stop", "destroy"],
    gpus_released: false,
    gpu_release: null,
    gpu_release_requested_at: null,
    hold_price_per_hour_micro: null,
    stop_hold_price_per_hour_micro: null,
    suspended_hold_price_per_hour_micro: null,
    stop_releases_gpus: false,
    created_at: "2026-11-22T08:00:00.000Z",
    started_at: "2026-11-22T08:00:05.000Z",
    status_changed_at: "2026-11-22T08:00:05.000Z",
    destroyed_at: null,
    spend_micro: 0,
    deployed_by: "admin@example.com",
    deployed_via_api_key: null,
    offer: { id: "5f0c6f9e-1a2b-4c3d-8e9f-0000000000a1", gpu_model: "RTX 4090", num_gpus: 1 },
    template: { id: "5f0c6f9e-1a2b-4c3d-8e9f-0000000000b1", mode: "ssh", readme: null, onstart: null },
    ...overrides,
  };
}

/** A valid active SSH template with no env; override any field. */
export function makeTemplate(overrides: Partial<Template> = {}): Template {
  return {
    id: "template-1",
    mode: "ssh",
    cuda_max: null,
    architecture: "x86_64",
    coming_soon: false,
    active: true,
    readme: null,
    onstart: null,
    env: [],
    ...overrides,
  };
}
