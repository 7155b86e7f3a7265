import {
  type HandlerContext,
  isWhollyKnown,
  type NumberValue,
  readPrivate,
  toNumber,
  writePrivate,
} from "../../framework";
import { JournalError, type LandedShape, landedCandidates } from "../../journal";
import { logger } from "../../log";
import { bestEffort } from "../../provider/journal-notes";
import { deployOf, type ProviderData } from "../../provider/provider-data";
import { known, toArgs } from "./convert";
import { plannedAdoptionOf } from "./ops";
import type { InstancePlan } from "./schema";

// The deploy journal as the plans of gpurental_instance see it: which create adopts which entry,
// and which instances a state or an import block of the plan holds.

const opsLog = logger.child("instance");

type Plan = InstancePlan;

/**
 * What the plans of one provider process (or resident session: one journal each) have said about
 * the deploy journal: the entries their creates will adopt (entry id to instance id, null while
 * unknown), and the instance ids a state or an import block of the plan holds. Within one plan an
 * instance is never both adopted by a create and held elsewhere.
 */
interface PlanTrack {
  promised: Map<string, string | null>;
  claimed: Set<string>;
}
const planTracks = new WeakMap<object, PlanTrack>();

function planTrack(journal: object): PlanTrack {
  let t = planTracks.get(journal);
  if (!t) {
    t = { promised: new Map(), claimed: new Set() };
    planTracks.set(journal, t);
  }
  return t;
}

/**
 * Records that a state (or an import block) of this plan holds instance `id`; when a create of
 * the same plan already said it adopts it, the plan fails instead of doing both.
 */
export function holdInPlan(ctx: HandlerContext<ProviderData>, id: string, how: string): void {
  const journal = deployOf(ctx.providerData).journal;
  if (!journal) return;
  const t = planTrack(journal);
  t.claimed.add(id);
  // An import says where the instance belongs: its journal entry (if any) is closed now, so that
  // no later plan promises it to a create.
  if (how === "imported") bestEffort("an imported instance", () => journal.closeId(id, "claimed"));
  if (![...t.promised.values()].includes(id)) return;
  ctx.diags.addError(
    `Instance ${id} is both ${how} and adopted by a create of this plan`,
    `A create of gpurental_instance in this plan said it adopts instance ${id} from the deploy journal, and ${how === "imported" ? "an import block imports it into" : "the state holds it at"} another address. An instance is never given to two addresses: plan again (the next plan leaves it to this address), or remove the import block.`,
  );
}

/** Closes the journal's entries of an instance a state holds. */
export function claim(ctx: HandlerContext<ProviderData>, id: string | null): void {
  const journal = deployOf(ctx.providerData).journal;
  if (journal && id) journal.closeIdSoon(id, "claimed");
}

/**
 * A read of an instance a state holds: a deploy entry whose answer was never recorded, and whose
 * request this instance answers, is this instance's, and is closed (DeployJournal.claimLanded).
 */
export function claimRead(
  ctx: HandlerContext<ProviderData>,
  inst: {
    readonly id: string | null;
    readonly offer_id: string | null;
    readonly template_id: string | null;
    readonly disk_gb: number | NumberValue | null;
    readonly label: string | null;
    readonly status: string | null;
    readonly created_at: string | null;
  },
): void {
  const journal = deployOf(ctx.providerData).journal;
  const id = inst.id;
  if (!journal || !id || inst.disk_gb === null) return;
  const shape: LandedShape = {
    id,
    offer: { id: inst.offer_id ?? "" },
    template: { id: inst.template_id ?? "" },
    disk_gb: typeof inst.disk_gb === "number" ? inst.disk_gb : toNumber(inst.disk_gb),
    label: inst.label,
    status: (inst.status ?? "creating") as LandedShape["status"],
    created_at: inst.created_at,
  };
  bestEffort("the deploy of an instance a state holds", () =>
    journal.claimLanded(
      "instance",
      id,
      (e, referenced) =>
        landedCandidates([shape], e.request, { before: e.before, sentAt: Date.parse(e.sent_at) }, referenced)
          .length === 1,
    ),
  );
}

/** Closes the journal's entries of an instance that is gone. */
export function release(ctx: HandlerContext<ProviderData>, id: string | null): void {
  const journal = deployOf(ctx.providerData).journal;
  if (journal && id) bestEffort("a destroyed instance", () => journal.closeId(id, "destroyed"));
}

/**
 * The private data key in which a create's plan records what its apply adopts: an entry of the
 * deploy journal, or null for none (it deploys). Absent when the plan could not tell (values
 * known only after apply): the apply then takes whatever is adoptable, as the plan's note said.
 */
export const PLANNED_ADOPTION = "adopt";

/** What a create's plan recorded about adopting: an entry id, null for none, undefined unknown. */
export function plannedAdoption(priv: Buffer): string | null | undefined {
  const v = readPrivate(priv)[PLANNED_ADOPTION];
  return typeof v === "string" || v === null ? v : undefined;
}

/**
 * Decides, at plan time, which journal entry (if any) a create adopts, warns saying so, and
 * records it in the planned private data so that the apply does exactly that. Each entry is
 * promised to one create of the plan (count = N with fewer entries: only as many say so), and
 * never one whose instance a state or an import block of the plan holds.
 */
export function planAdoption(plan: Plan, req: { private: Buffer }, ctx: HandlerContext<ProviderData>): void {
  const settings = deployOf(ctx.providerData);
  const journal = settings.journal;
  if (!journal || !ctx.providerData.configured) return;
  const record = (entry: string | null) => {
    req.private = writePrivate({ ...readPrivate(req.private), [PLANNED_ADOPTION]: entry });
  };
  try {
    if (!isWhollyKnown(plan.offer_filter) || !isWhollyKnown(plan.env) || !isWhollyKnown(plan.secret_env))
      return;
    if (!isWhollyKnown(plan.unset_env) || !isWhollyKnown(plan.ssh_key_id) || !isWhollyKnown(plan.label))
      return;
    if (!known(plan.template_id) || !known(plan.disk_gb)) return;
    if (plan.offer_filter === null && !known(plan.offer_id)) return;
    // Entries a failed state write may have left in no state, which the state could not be read to
    // settle: the apply, which settles them first, decides.
    if (journal.pendingUnsettled) return;
    if (journal.live("instance").length === 0) {
      record(null);
      return;
    }
    const t = planTrack(journal);
    const next = plannedAdoptionOf(
      toArgs(plan),
      settings,
      (e) => t.promised.has(e.entry) || Boolean(e.id && t.claimed.has(e.id)),
    );
    if (!next) {
      record(null);
      return;
    }
    t.promised.set(next.entry.entry, next.entry.id);
    record(next.entry.entry);
    ctx.diags.add(next.note);
  } catch (err) {
    // A journal that cannot be read (a database out of reach) must not pass for one with nothing
    // to adopt: the plan fails, as the create would.
    if (err instanceof JournalError) {
      ctx.diags.addError(
        "The deploy journal cannot be read",
        `${err.message} A create is planned only once the journal says whether it adopts an instance an interrupted run left, so that nothing is deployed twice. Nothing was deployed.`,
      );
      return;
    }
    opsLog.warn("deploy journal: could not check for adoptions", {
      error: err instanceof Error ? err.message : String(err),
    });
  }
}
