import { ApiFailure } from "./errors";
import { iso } from "./state/store";
import type { Caller, FakeState, OfferRecord, TemplateRecord } from "./types";

// Offers and templates: whether an offer can be rented and a template seen, the offer and template
// objects of docs/api-shapes.md, and a template duplicated into an organization.

/** Whether an offer can still be rented. */
export function rentable(offer: OfferRecord): boolean {
  return offer.availability === "available" && offer.free_units > 0;
}

/** Whether a template is visible to an organization. */
export function templateVisible(t: TemplateRecord, orgId: string): boolean {
  return t.visibility !== "private" || t.owner_org_id === orgId;
}

/** What the catalog needs of the engine: its state, and creating a template (a duplicate is one). */
export interface CatalogHost {
  readonly state: FakeState;
  createTemplate(
    input: Partial<Omit<TemplateRecord, "created_at" | "seq">> & { name: string },
  ): TemplateRecord;
}

/** The offers and templates of one engine's state, as the API shows them. */
export class Catalog {
  /** Reads offers, machines and templates from `host`'s state. */
  constructor(private readonly host: CatalogHost) {}

  /** The offer object of docs/api-shapes.md. */
  renderOffer(offer: OfferRecord): Record<string, unknown> {
    const m = this.host.state.machines[offer.machine_id];
    return {
      id: offer.id,
      gpu_model: offer.gpu_model,
      num_gpus: offer.num_gpus,
      price_per_hour_micro: offer.price_per_hour_micro,
      storage_price_per_gb_hour_micro: offer.storage_price_per_gb_hour_micro,
      hold_price_per_hour_micro: offer.hold_price_per_hour_micro,
      availability: offer.availability,
      free_units: offer.free_units,
      next_maintenance: iso(offer.next_maintenance),
      region: offer.region,
      machine: m
        ? {
            id: m.id,
            disk_gb: m.disk_gb,
            available_disk_gb: m.available_disk_gb,
            cuda_version: m.cuda_version,
            vm_capable: m.vm_capable,
            architecture: m.architecture,
            gpu_release_supported: m.gpu_release_supported,
          }
        : null,
      created_at: iso(offer.created_at),
    };
  }

  /** The template object of docs/api-shapes.md; `embedded` nulls readme and onstart. */
  renderTemplate(t: TemplateRecord, embedded = false): Record<string, unknown> {
    return {
      id: t.id,
      hash_id: t.hash_id,
      name: t.name,
      mode: t.mode,
      image: t.image,
      cuda_max: t.cuda_max,
      architecture: t.architecture,
      coming_soon: t.coming_soon,
      active: t.active,
      recommended: t.recommended,
      visibility: t.visibility,
      owner_org_id: t.owner_org_id,
      uses_private_registry: t.uses_private_registry,
      env: t.env.map((e) => ({ key: e.key, value: e.secret ? null : e.value, secret: e.secret })),
      open_port: t.open_port,
      readme: embedded ? null : t.readme,
      onstart: embedded ? null : t.onstart,
      created_at: iso(t.created_at),
    };
  }

  /** Duplicates a visible template as a private one of the caller's organization. */
  duplicateTemplate(caller: Caller, id: string): TemplateRecord {
    const t = this.host.state.templates[id];
    if (!t || !templateVisible(t, caller.org.id)) {
      throw new ApiFailure(404, "TEMPLATE_NOT_FOUND", `Template ${id} not found`);
    }
    const { id: _id, hash_id: _h, created_at: _c, seq: _s, ...rest } = t;
    return this.host.createTemplate({
      ...rest,
      name: `${t.name} (copy)`,
      visibility: "private",
      owner_org_id: caller.org.id,
      recommended: false,
      env: t.env.map((e) => ({ ...e })),
    });
  }
}
