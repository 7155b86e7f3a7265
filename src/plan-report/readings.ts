import type { GpurentalClient } from "../api/client";
import { ApiError } from "../api/errors";
import { ReadGroup } from "../api/read-group";
import type { Instance, Offer, Template } from "../api/schemas";
import type { Diagnostic } from "../framework";
import { describeFilter, type OfferFilter, selectOffers } from "../market/offer-selection";
import type { CredentialKind } from "../provider/provider-data";
import { SharedReads } from "../provider/shared-reads";
import { type Micro, toMicro } from "../report/money";
import { listMarketOffers } from "../resources/instance/ops";
import { planCreateChecks } from "../resources/instance/plan";
import type { PlanDocument } from "../tfstate/plan";
import { UserFacingError } from "../user-facing";
import { deploys, type PlannedDeploy, plannedDeploy, priceMicro } from "./inputs";
import type { Price } from "./model";

// What a plan report reads from the API, all of it read-only and allowed with an API key except
// the balance: the organization's instances (the burn now), the offer each new instance will rent
// (its price: a pinned offer's own, or for an offer_filter the offer the selection would choose
// now, an estimate), and the provider's own plan-time checks for each deploy. The balance is only
// in GET /v1/me, which needs a signed-in session (contract 4.3, 5); with an API key it is reported
// as not read, never guessed.

/** The price and checks of one deploy the plan makes. */
export interface DeployReading {
  price?: Price;
  gpu?: { model: string; count?: number };
  offerId?: string;
  /** Why there is no price. */
  unpriced?: string;
  /** What the provider's plan-time checks say about this deploy now. */
  findings: Diagnostic[];
}

/** Everything the report read. */
export interface PlanReadings {
  /** When (ms). */
  now: number;
  /** GET /v1/instances: the organization's instances that are not destroyed. */
  instances: readonly Instance[];
  balance: { micro: Micro } | { unread: string };
  /** By address, for each create and replacement. */
  deploys: Map<string, DeployReading>;
}

/** An offer's prices, when both are whole amounts from 0 to 2^53 - 1 (a negative one would lower the burn). */
function priceOf(offer: Offer, estimate: boolean, basis: string): Price | undefined {
  const perHour = priceMicro(offer.price_per_hour_micro);
  const storage = priceMicro(offer.storage_price_per_gb_hour_micro);
  if (perHour === undefined || storage === undefined) return undefined;
  return { perHour, storagePerGbHour: storage, estimate, basis };
}

/** Why an offer has no price the report can use: none listed, or one out of range. */
function noPrice(offer: Offer): string {
  const listed =
    offer.price_per_hour_micro !== undefined && offer.storage_price_per_gb_hour_micro !== undefined;
  return listed
    ? `offer ${offer.id} lists a price out of range (${offer.price_per_hour_micro} per hour, ${offer.storage_price_per_gb_hour_micro} per GB-hour; a price is a whole number of micro units from 0)`
    : `offer ${offer.id} lists no price`;
}

/**
 * Refuses a listed instance whose disk or prices are out of range: the burn now is the sum over
 * every instance, so a negative price would lower it and let a money gate pass that should trip,
 * and a burn past 2^53 - 1 micro units would not add up exactly. The server's answer is at fault,
 * not the plan; the report says which instance, which field, the limit and the value.
 */
function checkListed(instances: readonly Instance[]): void {
  for (const i of instances) {
    const fields = [
      ["disk_gb", i.disk_gb],
      ["price_per_hour_micro", i.price_per_hour_micro],
      ["storage_price_per_gb_hour_micro", i.storage_price_per_gb_hour_micro],
    ] as const;
    for (const [name, value] of fields) {
      if (value < 0) {
        throw new UserFacingError(
          `GET /v1/instances lists instance ${i.id} with ${name} ${value}, out of range (a whole number from 0): the hourly burn cannot be added up.`,
        );
      }
    }
    const burn =
      BigInt(i.disk_gb) * BigInt(i.storage_price_per_gb_hour_micro) + BigInt(i.price_per_hour_micro);
    if (burn > BigInt(Number.MAX_SAFE_INTEGER)) {
      throw new UserFacingError(
        `GET /v1/instances lists instance ${i.id} with a burn of ${burn} micro units per hour (${i.price_per_hour_micro} + ${i.disk_gb} GB × ${i.storage_price_per_gb_hour_micro}), over the most that adds up exactly, ${Number.MAX_SAFE_INTEGER}.`,
      );
    }
  }
}

/**
 * Reads what the report needs for a plan; throws only when the organization's instances cannot be
 * listed, or are listed with a disk or a price out of range.
 */
export async function readForPlan(
  client: GpurentalClient,
  credential: CredentialKind,
  plan: PlanDocument,
  now: () => number,
): Promise<PlanReadings> {
  // The provider's checks read the credential kind beside the client (session-only reads).
  const provider = {
    client,
    credential: { kind: credential, orgId: client.orgId },
    reads: new SharedReads(),
  };
  const instances = await client.listInstances();
  checkListed(instances);

  let balance: PlanReadings["balance"];
  if (credential === "api_key") {
    balance = {
      unread: "the balance is only in GET /v1/me, which needs a signed-in session; an API key cannot read it",
    };
  } else {
    try {
      balance = { micro: toMicro((await client.getMe()).organization.balance_micro) ?? 0n };
    } catch (err) {
      if (!(err instanceof ApiError) || (err.status !== 401 && err.status !== 403)) throw err;
      balance = { unread: `GET /v1/me was refused (${err.code}): the balance needs a signed-in session` };
    }
  }

  // The deploys' reads run together and share one cancellation: the first that fails cancels the
  // rest, all of them are awaited, and that first failure is the one thrown, so no request is left
  // running after the report has answered.
  const group = new ReadGroup();
  const opts = { signal: group.signal };

  // Each offer, market and template is read once however many deploys share it.
  const memo = new Map<string, Promise<unknown>>();
  const once = <T>(key: string, read: () => Promise<T>): Promise<T> => {
    if (!memo.has(key)) memo.set(key, read());
    return memo.get(key) as Promise<T>;
  };
  const orNull = async <T>(p: Promise<T>, code: string): Promise<T | null> => {
    try {
      return await p;
    } catch (err) {
      if (err instanceof ApiError && err.status === 404 && err.code === code) return null;
      throw err;
    }
  };
  const offer = (id: string) =>
    once(`offer:${id}`, () => orNull(client.getOffer(id, opts), "OFFER_NOT_FOUND"));
  const template = (id: string) =>
    once(`template:${id}`, () => orNull<Template>(client.getTemplate(id, opts), "TEMPLATE_NOT_FOUND"));
  const market = (f: OfferFilter) =>
    once(`market:${f.gpu_model.toLowerCase()}`, () => listMarketOffers(client, f, opts));

  const priced = async (d: PlannedDeploy): Promise<Omit<DeployReading, "findings">> => {
    // A value the schema refuses: no price is looked up for a deploy that cannot happen as planned.
    if (d.problems.length > 0) return {};
    if (d.offer_id) {
      const o = await offer(d.offer_id);
      if (!o) return { offerId: d.offer_id, unpriced: `offer ${d.offer_id} does not exist` };
      const price = priceOf(o, false, `offer ${o.id} as listed now`);
      return {
        offerId: o.id,
        ...(o.gpu_model
          ? { gpu: { model: o.gpu_model, ...(o.num_gpus !== undefined ? { count: o.num_gpus } : {}) } }
          : {}),
        ...(price ? { price } : { unpriced: noPrice(o) }),
      };
    }
    if (d.offer_filter) {
      const f = d.offer_filter;
      const [offers, tpl] = await Promise.all([
        market(f),
        d.template_id ? template(d.template_id) : undefined,
      ]);
      const selection = selectOffers({
        offers,
        filter: f,
        template: tpl,
        diskGb: d.disk_gb,
        instances,
        now: now(),
      });
      const best = selection.candidates[0];
      if (!best) return { unpriced: `no offer matches ${describeFilter(f)} now` };
      const price = priceOf(
        best.offer,
        true,
        `offer ${best.offer.id}, which offer_filter (${describeFilter(f)}) would choose now`,
      );
      return {
        offerId: best.offer.id,
        gpu: { model: best.offer.gpu_model ?? f.gpu_model, count: best.offer.num_gpus ?? f.num_gpus },
        ...(price ? { price } : { unpriced: noPrice(best.offer) }),
      };
    }
    return { unpriced: "the offer is not known until apply" };
  };

  const readings = new Map<string, DeployReading>();
  for (const c of plan.changes.filter(deploys)) {
    const d = plannedDeploy(c);
    const p = group.add(priced(d));
    const checks =
      d.disk_gb === undefined || d.problems.length > 0
        ? Promise.resolve({ diagnostics: [] as Diagnostic[] })
        : group.add(
            planCreateChecks(
              provider,
              {
                offer_id: d.offer_id,
                offer_filter: d.offer_filter,
                template_id: d.template_id,
                disk_gb: d.disk_gb,
                ssh_key_id: d.ssh_key_id,
              },
              group.signal,
            ),
          );
    group.add(
      Promise.all([p, checks]).then(([price, check]) => {
        readings.set(c.address, {
          ...price,
          ...(d.disk_gb === undefined && !price.unpriced && d.problems.length === 0
            ? { unpriced: "disk_gb is not known until apply" }
            : {}),
          findings: check.diagnostics,
        });
      }),
    );
  }
  await group.settle();
  return { now: now(), instances, balance, deploys: readings };
}
