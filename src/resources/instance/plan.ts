import type { GpurentalClient } from "../../api/client";
import { ApiError, NetworkError } from "../../api/errors";
import type { Instance, Offer, SshKey, Template } from "../../api/schemas";
import type { Diagnostic } from "../../framework";
import {
  describeFilter,
  explainSelection,
  judgeRentedOffer,
  type OfferFilter,
  selectOffers,
} from "../../market/offer-selection";
import { type DeployCheckData, deployFindings, findingDiagnostic } from "../../market/plan-checks";
import { type Budget, budgetOf, within } from "../../provider/deadline";
import type { ConfiguredProvider } from "../../provider/provider-data";
import { errorToDiagnostic } from "../../provider/refusals";
import type { OfferSnapshot } from "./model";
import { listMarketOffers } from "./ops";

// What a plan of gpurental_instance asks the API before it is shown: the deploy checks of a create
// (plan-checks.ts) for a pinned offer_id, or for an offer_filter the choice of the market
// (offer-selection.ts), where an offer-dependent refusal is an error only when no candidate passes;
// and for an update, whether the running instance still satisfies a changed offer_filter, judged
// from its state alone. The resource (resource.ts) decides what to do with the answers.

/** The known deploy arguments a create plan checks. */
export interface PlanCheckInput {
  /** The pinned offer, or null with a filter. */
  offer_id: string | null;
  offer_filter: OfferFilter | null;
  /** Null while unknown: the template checks are skipped. */
  template_id: string | null;
  disk_gb: number;
  ssh_key_id: string | null;
}

/** What the plan-time checks read; each read failing for a reason other than 404 leaves its data out. */
interface Gathered {
  data: DeployCheckData;
  /** The market's offers of the filter's GPU model; undefined when not asked or unreadable. */
  offers: Offer[] | undefined;
  skipped: string[];
  credentialError: ApiError | undefined;
  /** The API was never reached (wrong address, proxy or certificate): the plan fails, as the apply would. */
  unreachable: NetworkError | undefined;
}

/** What the plan-time checks read with: the client, its credential's kind (session-only reads), the reads in flight. */
export type PlanCheckProvider = Pick<ConfiguredProvider, "client" | "credential" | "reads">;

async function gatherCheckData(
  provider: PlanCheckProvider,
  input: PlanCheckInput,
  budget: Budget,
): Promise<Gathered> {
  const { client, credential: cred, reads } = provider;
  const skipped: string[] = [];
  let credentialError: ApiError | undefined;
  let unreachable: NetworkError | undefined;
  // Only the API's own codes say the record is missing; a 404 of an unknown route says nothing.
  const notFound = (err: unknown, code: string) =>
    err instanceof ApiError && err.status === 404 && err.code === code;
  const settle = async <T>(
    what: string,
    p: Promise<T>,
    missingCode?: string,
  ): Promise<T | null | undefined> => {
    try {
      return await p;
    } catch (err) {
      if (missingCode && notFound(err, missingCode)) return null;
      if (err instanceof ApiError && (err.code === "TOKEN_INVALID" || err.code === "ORG_MISMATCH")) {
        credentialError ??= err;
        return undefined;
      }
      if (err instanceof NetworkError && !err.apiReached) {
        unreachable ??= err;
        return undefined;
      }
      skipped.push(`${what} (${err instanceof Error ? err.message : String(err)})`);
      return undefined;
    }
  };
  const session = cred.kind === "session";
  // The plans of several instances of one process make the same reads at the same time: they share them.
  const shared = <T>(key: string, read: () => Promise<T>) => reads.read(key, budget.signal, read);
  const [offer, offers, template, sshKeys, instances, me] = await Promise.all([
    input.offer_id
      ? settle<Offer>(
          "offer",
          shared(`offer ${input.offer_id}`, () => client.getOffer(input.offer_id!, within(budget))),
          "OFFER_NOT_FOUND",
        )
      : undefined,
    input.offer_filter
      ? settle<Offer[]>(
          "offers",
          shared(`offers ${JSON.stringify(input.offer_filter.gpu_model)}`, () =>
            listMarketOffers(client, input.offer_filter!, within(budget)),
          ),
        )
      : undefined,
    input.template_id
      ? settle<Template>(
          "template",
          shared(`template ${input.template_id}`, () =>
            client.getTemplate(input.template_id!, within(budget)),
          ),
          "TEMPLATE_NOT_FOUND",
        )
      : undefined,
    session && input.ssh_key_id
      ? settle<SshKey[]>(
          "SSH keys",
          shared("ssh keys", () => client.listSshKeys(within(budget))),
        )
      : undefined,
    settle<Instance[]>(
      "instances",
      shared("instances", () => client.listInstances({}, within(budget))),
    ),
    session
      ? settle(
          "balance",
          shared("me", () => client.getMe(within(budget))),
        )
      : undefined,
  ]);
  const data: DeployCheckData = {
    offer,
    template,
    sshKeys: sshKeys ?? undefined,
    sshKeysAreExhaustive: session,
    instances: instances ?? undefined,
    balanceMicro: me ? me.organization.balance_micro : undefined,
    orgId: me ? me.organization.id : cred.orgId,
    now: Date.now(),
  };
  return { data, offers: offers ?? undefined, skipped, credentialError, unreachable };
}

/**
 * Time limit of the plan-time reads: a slow or unreachable API must not hold up a plan for long.
 * Their failures are retried within it; what is still failing then is skipped with a warning.
 */
const PLAN_CHECK_TIMEOUT_MS = 10_000;

/**
 * The findings of a plan that creates an instance (or the create half of a replacement): the deploy
 * checks for the pinned offer, or for a filter the choice among the market's offers.
 */
export async function planCreateChecks(
  provider: PlanCheckProvider,
  input: PlanCheckInput,
  parentSignal: AbortSignal,
): Promise<{ diagnostics: Diagnostic[]; template: Template | null | undefined }> {
  const budget = budgetOf(PLAN_CHECK_TIMEOUT_MS, parentSignal);
  let gathered: Gathered;
  try {
    gathered = await gatherCheckData(provider, input, budget);
  } catch (err) {
    const detail = `The API could not be asked: ${String(err)}`;
    return {
      diagnostics: [{ severity: "warning", summary: "Plan-time checks skipped", detail }],
      template: undefined,
    };
  }
  const { data, offers, skipped, credentialError, unreachable } = gathered;
  // Not one answer from the API: its address, proxy or certificates are wrong, and the apply would
  // fail the same way; a warning that checks were skipped would let the plan pass.
  if (unreachable)
    return { diagnostics: [errorToDiagnostic(unreachable, "plan_check")], template: undefined };
  // The credential itself is refused: the apply would fail the same way, so say it now.
  if (credentialError)
    return { diagnostics: [errorToDiagnostic(credentialError, "plan_check")], template: undefined };
  const out: Diagnostic[] = [];
  const done = () => ({ diagnostics: out, template: data.template });
  if (skipped.length > 0) {
    out.push({
      severity: "warning",
      summary: "Some plan-time checks were skipped",
      detail: `These could not be read, so the deploy checks that need them were skipped (the apply still reports any refusal): ${skipped.join("; ")}.`,
    });
  }
  const filter = input.offer_filter;
  if (!filter) {
    const checkInput = { ...input, offer_id: input.offer_id ?? "", template_id: input.template_id ?? "" };
    out.push(...deployFindings(checkInput, data).map((f) => findingDiagnostic(f)));
    return done();
  }
  // Without the market's offers, only the checks that do not depend on the offer are made.
  const templateChecks = { ...data, offer: undefined };
  const base = {
    offer_id: "",
    template_id: input.template_id ?? "",
    disk_gb: input.disk_gb,
    ssh_key_id: input.ssh_key_id,
  };
  if (offers === undefined) {
    out.push(...deployFindings(base, templateChecks).map((f) => findingDiagnostic(f)));
    return done();
  }
  const selection = selectOffers({
    offers,
    filter,
    template: data.template,
    diskGb: input.disk_gb,
    instances: data.instances,
    now: data.now,
  });
  const best = selection.candidates[0];
  if (!best) {
    let detail = explainSelection(selection, filter);
    if (offers.length === 0) detail += await modelsOnOffer(provider.client, budget);
    out.push({
      severity: "error",
      summary: "No offer matches offer_filter",
      detail: `${detail}\nLoosen offer_filter (another region, a higher max_price_per_hour_micro), change disk_gb or template_id, or plan again later; the gpurental_offers data source lists the market.`,
      path: [{ attribute: "offer_filter" }],
    });
    // What does not depend on the offer is still worth saying.
    out.push(...deployFindings(base, templateChecks).map((f) => findingDiagnostic(f)));
    return done();
  }
  // The refusals that depend on the offer were judged per candidate; the rest are checked against
  // the cheapest one (its price is what the balance must cover).
  const findings = deployFindings({ ...base, offer_id: best.offer.id }, { ...data, offer: best.offer });
  for (const f of findings) {
    if (f.subject !== "offer") {
      out.push(findingDiagnostic(f));
    } else if (f.severity === "warning") {
      // Only when every candidate has the same doubt (the rest rank before doubtful ones). With a
      // filter, what is said about the offer is placed on offer_filter and advises on the filter.
      const d = findingDiagnostic(f, "filter");
      d.detail = `${d.detail} Every offer matching offer_filter (${describeFilter(filter)}) has this doubt.`;
      out.push(d);
    }
  }
  return done();
}

/** ", GPU models on offer now: A, B" when the market can say; empty otherwise. */
async function modelsOnOffer(client: GpurentalClient, budget: Budget): Promise<string> {
  try {
    const all = await client.listOffers({}, within(budget));
    const models = [...new Set(all.map((o) => o.gpu_model).filter((m): m is string => !!m))].sort();
    return models.length > 0 ? ` GPU models on offer now: ${models.join(", ")}.` : "";
  } catch {
    return "";
  }
}

/** What a plan should do about a changed offer_filter of an existing instance. */
export interface FilterChangeVerdict {
  /** Replace the instance: it no longer satisfies the filter. */
  replace: boolean;
  /** Why, or what could not be judged; none when the change is simply recorded. */
  diagnostics: Diagnostic[];
}

/**
 * Judges a changed offer_filter against the running instance, from its state alone (the offer it
 * rents and the price it was rented at), so the market never takes part: satisfied, the change is
 * recorded in place; not satisfied, the instance is replaced, with a warning saying why (a
 * replacement destroys its disk). What the state cannot tell never replaces anything.
 */
export function judgeFilterChange(
  state: { id: string; offer: OfferSnapshot | null; price_per_hour_micro: number | null },
  filter: OfferFilter,
): FilterChangeVerdict {
  const rented = {
    gpu_model: state.offer?.gpu_model ?? null,
    num_gpus: state.offer?.num_gpus ?? null,
    region: state.offer?.region ?? null,
    price_per_hour_micro: state.price_per_hour_micro,
  };
  const verdict = judgeRentedOffer(rented, filter);
  if (verdict.unmet.length > 0) {
    return {
      replace: true,
      diagnostics: [
        {
          severity: "warning",
          summary: `Instance ${state.id} no longer satisfies offer_filter and will be replaced`,
          detail: `The changed offer_filter (${describeFilter(filter)}) does not match what the instance rents: ${verdict.unmet.join("; ")}. Replacing it destroys its disk. To keep it, change offer_filter back so that it still matches.`,
          path: [{ attribute: "offer_filter" }],
        },
      ],
    };
  }
  const diagnostics: Diagnostic[] =
    verdict.unknown.length > 0
      ? [
          {
            severity: "warning",
            summary: `Cannot tell whether instance ${state.id} satisfies offer_filter`,
            detail: `The state does not record the ${verdict.unknown.join(", ")} of the offer the instance rents, so the changed offer_filter is recorded without replacing it. If the instance does not match the filter, replace it with terraform apply -replace=<address>.`,
            path: [{ attribute: "offer_filter" }],
          },
        ]
      : [];
  return { replace: false, diagnostics };
}
