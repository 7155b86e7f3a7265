import type { DeployInstanceRequest, RequestOptions } from "../../api/client";
import { ApiError, InstanceErrorStateError, RequestAbortedError, WaitTimeoutError } from "../../api/errors";
import { realSleep } from "../../api/retry";
import type { Instance, InstanceStatus, Offer, Template } from "../../api/schemas";
import { waitForInstance } from "../../api/waiter";
import type { Diagnostic } from "../../framework";
import type { JournalEntry } from "../../journal";
import {
  describeFilter,
  explainSelection,
  type OfferFilter,
  perHour,
  RACE_LOSS_CODES,
  selectOffers,
} from "../../market/offer-selection";
import { budgetOf, within } from "../../provider/deadline";
import { type DeploySettings, NO_JOURNAL } from "../../provider/provider-data";
import { errorToDiagnostic, type RefusalFacts } from "../../provider/refusals";
import {
  type Adoption,
  adoptFromJournal,
  type DeployEnv,
  DeployOutcomeUnknownError,
  DeployReconcileError,
  deployJournaled,
  instanceFingerprint,
  willAdoptNote,
} from "./deploy";
import { toEnvOverrides } from "./env";
import { type InstanceApi, type InstanceArgs, instanceToModel, type PriorArgs } from "./model";
import { INSTANCE_ARGUMENTS, type OpContext, type OpResult, waitDiagnostic, waitOptions } from "./op-context";
import { changePower } from "./power";

// The lifecycle of gpurental_instance against the API, independent of the Terraform framework.
// Each step returns the state to record (or null when there is nothing to record) together with
// diagnostics; a step that fails after the instance exists always returns that instance, so that
// Terraform keeps it (and taints it after a failed create) instead of leaking it.

/** Statuses of an instance whose deploy is still under way. */
export const STILL_CREATING: ReadonlySet<InstanceStatus> = new Set(["creating", "starting"]);

/** Default timeouts; the update one must cover a stop the host takes up to 30 minutes to confirm. */
export const INSTANCE_DEFAULT_TIMEOUTS = { create: "20m", update: "40m", delete: "20m" } as const;

/** The request body of a deploy for the planned arguments, on the pinned offer or the one chosen. */
export function deployRequest(args: InstanceArgs, offerId: string): DeployInstanceRequest {
  const body: DeployInstanceRequest = {
    offer_id: offerId,
    template_id: args.template_id,
    disk_gb: args.disk_gb,
  };
  if (args.label !== null) body.label = args.label;
  if (args.ssh_key_id !== null) body.ssh_key_id = args.ssh_key_id;
  const env = toEnvOverrides(args);
  if (env.length > 0) body.env_overrides = env;
  return body;
}

/** Most offers one create tries before it gives up, when the offers before them were taken. */
export const MAX_OFFER_ATTEMPTS = 5;

/** An offer a create deploys on: the pinned one, or a candidate of the market filter. */
export interface DeployTarget {
  offer_id: string;
  /** The market's record, for a chosen offer. */
  offer?: Offer;
}

/** The offers of the market a filter is chosen from: every listed offer of its GPU model. */
export function listMarketOffers(
  client: Pick<InstanceApi, "listOffers">,
  filter: Pick<OfferFilter, "gpu_model">,
  opts?: RequestOptions,
): Promise<Offer[]> {
  // Unavailable ones too, so that an empty choice can say which offers are sold out.
  return client.listOffers({ gpu_model: filter.gpu_model, include_unavailable: true }, opts);
}

/**
 * The offers a create tries, in order: the pinned offer, or the candidates of the filter as the
 * market stands now (offer-selection.ts). No candidate is an error on offer_filter saying why.
 */
async function deployTargets(
  args: InstanceArgs,
  env: DeployEnv,
): Promise<{ targets: DeployTarget[]; diagnostics: Diagnostic[] }> {
  const filter = args.offer_filter;
  if (!filter) return { targets: [{ offer_id: args.offer_id ?? "" }], diagnostics: [] };
  let offers: Offer[];
  let template: Template | null | undefined;
  try {
    [offers, template] = await Promise.all([
      listMarketOffers(env.client, filter, within(env)),
      env.client.getTemplate(args.template_id, within(env)).catch((err: unknown) => {
        if (err instanceof ApiError && err.code === "TEMPLATE_NOT_FOUND") return null;
        // Without the template the checks that need it are left to the deploy.
        return undefined;
      }),
    ]);
  } catch (err) {
    return { targets: [], diagnostics: [errorToDiagnostic(err, "deploy", INSTANCE_ARGUMENTS)] };
  }
  const selection = selectOffers({ offers, filter, template, diskGb: args.disk_gb, now: env.now() });
  if (selection.candidates.length === 0) {
    return {
      targets: [],
      diagnostics: [
        {
          severity: "error",
          summary: "No offer matches offer_filter",
          detail: `${explainSelection(selection, filter)}\nNothing was deployed. Loosen offer_filter (another region, a higher max_price_per_hour_micro), change disk_gb or template_id, or apply again later.`,
          path: [{ attribute: "offer_filter" }],
        },
      ],
    };
  }
  return {
    targets: selection.candidates.map((c) => ({ offer_id: c.offer.id, offer: c.offer })),
    diagnostics: [],
  };
}

/** An offer a create tried and lost to another deploy. */
interface LostOffer {
  target: DeployTarget;
  error: ApiError;
}

function describeTarget(t: DeployTarget): string {
  return t.offer ? `offer ${t.offer_id} (${perHour(t.offer.price_per_hour_micro)})` : `offer ${t.offer_id}`;
}

/**
 * Deploys on the first target that takes it. A refusal meaning another deploy was first (a race
 * loss: the offer sold out, its machine filled up or went into maintenance) moves on to the next
 * target, up to {@link MAX_OFFER_ATTEMPTS}, for a filter only: a pinned offer is the user's choice.
 * Any other answer ends it; a lost answer in particular is reconciled (deploy.ts) and
 * never followed by a deploy elsewhere, since the first may have landed.
 */
async function deployOnFirstAvailable(
  args: InstanceArgs,
  targets: readonly DeployTarget[],
  env: DeployEnv,
): Promise<
  | { instance: Instance; entry: string | null; target: DeployTarget; lost: LostOffer[] }
  | { error: unknown; lost: LostOffer[] }
> {
  const log = env.log;
  const lost: LostOffer[] = [];
  const tried = targets.slice(0, args.offer_filter ? MAX_OFFER_ATTEMPTS : 1);
  for (const [n, target] of tried.entries()) {
    try {
      // The one place a deploy is sent (and, after a lost answer, reconciled).
      const { instance, entry } = await deployJournaled(deployRequest(args, target.offer_id), env);
      return { instance, entry, target, lost };
    } catch (err) {
      const raceLost = err instanceof ApiError && RACE_LOSS_CODES.has(err.code);
      const more = n + 1 < tried.length && env.now() < env.deadline && !env.signal?.aborted;
      if (!args.offer_filter || !raceLost) return { error: err, lost };
      lost.push({ target, error: err });
      if (!more) return { error: err, lost };
      log?.(`${describeTarget(target)} was taken (${err.code}); trying the next candidate`);
    }
  }
  return { error: new Error("no offer to deploy on"), lost };
}

/** What the refusals that move a create on to the next candidate (RACE_LOSS_CODES) have in common. */
const MARKET_MOVED =
  "for reasons that arise when the market moves (another deploy took the offer or its machine's disk, or the machine goes into maintenance too soon)";

/** The diagnostics of a create whose first candidates were refused for a market reason. */
function lostOffersDiagnostic(
  lost: readonly LostOffer[],
  filter: OfferFilter,
  landed: DeployTarget | undefined,
  untried: number,
): Diagnostic {
  const lines = lost.map(
    (l) =>
      `  - ${describeTarget(l.target)}: ${l.error.code}${l.error.apiMessage ? ` (${l.error.apiMessage})` : ""}`,
  );
  if (landed) {
    return {
      severity: "warning",
      summary: `Deployed on ${describeTarget(landed)} instead of ${describeTarget(lost[0]!.target)}`,
      detail: `The deploy was refused on the cheaper candidate${lost.length === 1 ? "" : "s"} of offer_filter (${describeFilter(filter)}), ${MARKET_MOVED}:\n${lines.join("\n")}\nThe instance rents ${describeTarget(landed)}; its offer_id and price are in the state.`,
      path: [{ attribute: "offer_filter" }],
    };
  }
  const rest =
    untried > 0
      ? `\n${untried} more candidate${untried === 1 ? " was" : "s were"} not tried: a create tries at most ${MAX_OFFER_ATTEMPTS} offers, within its timeout.`
      : "";
  return {
    severity: "error",
    summary: `No offer matching offer_filter could be deployed on (${lost.length} tried)`,
    detail: `The deploy was refused on each offer tried (offer_filter: ${describeFilter(filter)}), ${MARKET_MOVED}:\n${lines.join("\n")}${rest}\nNothing was deployed and nothing is charged. Apply again to choose from the market as it is then.`,
    path: [{ attribute: "offer_filter" }],
  };
}

/** An instance a create deployed or adopted, with the prior arguments its state is built from. */
interface Landed {
  instance: Instance;
  prior: PriorArgs;
  /** Its deploy journal entry, null without a journal. */
  entry: string | null;
  /** What the create says besides (offers lost to other deploys). */
  notes: Diagnostic[];
}

function adopted(args: InstanceArgs, a: Extract<Adoption, { kind: "adopted" }>): Landed {
  // The embedded offer gives the snapshot (model, count, region) of what the instance rents.
  return {
    instance: a.instance,
    prior: { ...args, offer_id: null, offer: null },
    entry: a.entry.entry,
    notes: [],
  };
}

/** Chooses the offer and deploys on it; a failure is returned as diagnostics. */
async function deployNew(
  args: InstanceArgs,
  env: DeployEnv,
): Promise<Landed | { failed: true; diagnostics: Diagnostic[] }> {
  const chosen = await deployTargets(args, env);
  if (chosen.targets.length === 0) return { failed: true, diagnostics: chosen.diagnostics };
  const deployed = await deployOnFirstAvailable(args, chosen.targets, env);
  const filter = args.offer_filter;
  if ("error" in deployed) {
    const err = deployed.error;
    if (filter && deployed.lost.length > 0 && deployed.lost.at(-1)?.error === err) {
      const untried = Math.max(0, chosen.targets.length - deployed.lost.length);
      return { failed: true, diagnostics: [lostOffersDiagnostic(deployed.lost, filter, undefined, untried)] };
    }
    if (err instanceof DeployReconcileError) {
      return {
        failed: true,
        diagnostics: [{ severity: "error", summary: "Deploy answer lost", detail: err.message }],
      };
    }
    if (err instanceof DeployOutcomeUnknownError) {
      return {
        failed: true,
        diagnostics: [{ severity: "error", summary: "Deploy outcome unknown", detail: err.message }],
      };
    }
    // With a filter, a refusal about the offer is placed on offer_filter and advises on the filter.
    const d = errorToDiagnostic(
      err,
      "deploy",
      INSTANCE_ARGUMENTS,
      filter ? "filter" : "pinned",
      await refusalCounts(err, env),
    );
    if (deployed.lost.length > 0) {
      d.detail = `${d.detail}\nOffers tried before, taken by other deploys: ${deployed.lost.map((l) => `${describeTarget(l.target)} (${l.error.code})`).join(", ")}.`;
    }
    return { failed: true, diagnostics: [d] };
  }
  const { instance, target, entry } = deployed;
  const o = target.offer;
  return {
    instance,
    entry,
    prior: {
      ...args,
      offer_id: target.offer_id,
      offer: o
        ? { gpu_model: o.gpu_model ?? null, num_gpus: o.num_gpus ?? null, region: o.region ?? null }
        : null,
    },
    notes: filter && deployed.lost.length > 0 ? [lostOffersDiagnostic(deployed.lost, filter, target, 0)] : [],
  };
}

/**
 * Create: adopt what an interrupted or late deploy of the same configuration created (deploy
 * journal), or choose the offer (the pinned one, or the cheapest candidate of the filter) and
 * deploy; record, wait until running, then stop when the plan asks for stopped.
 */
export async function createInstance(
  args: InstanceArgs,
  ctx: OpContext,
  log?: (msg: string) => void,
): Promise<OpResult> {
  const now = ctx.now ?? Date.now;
  const deadline = now() + ctx.timeoutMs;
  const settings = ctx.settings ?? NO_JOURNAL;
  const env: DeployEnv = {
    client: ctx.client,
    signal: ctx.signal,
    deadline,
    sleep: ctx.sleep ?? realSleep,
    now,
    settings,
    fingerprint: settings.journal ? instanceFingerprint(args, settings.account) : null,
    log,
  };
  // What an interrupted or late deploy of this configuration created is adopted before anything
  // is deployed.
  const adoption = await adoptFromJournal(env, ctx.adopt);
  if (adoption.kind === "error")
    return { state: null, diagnostics: [...adoption.diagnostics, adoption.diagnostic] };
  const landed = adoption.kind === "adopted" ? adopted(args, adoption) : await deployNew(args, env);
  if (!("instance" in landed)) {
    return { state: null, diagnostics: [...adoption.diagnostics, ...landed.diagnostics] };
  }
  // From here on the instance exists: every return carries it.
  const { instance: inst, prior, entry } = landed;
  const notes =
    adoption.kind === "adopted" ? adoption.diagnostics : [...adoption.diagnostics, ...landed.notes];
  let latest = inst;
  try {
    latest = await waitForInstance(ctx.client, inst.id, {
      ...waitOptions(ctx, deadline),
      target: "running",
      failOn: ["error", "destroyed", "destroying"],
      onPoll: (i) => {
        latest = i;
      },
    });
  } catch (err) {
    const state = instanceToModel(latest, prior, args.desired_status);
    // Cut short while the deploy is still under way: a warning, not an error. A create that
    // returns its state with an error has Terraform taint the object and the next apply replace
    // it, throwing away a deploy that is running and paid for; the instance is instead kept as it
    // is, and the next apply waits for it in place (an update), replacing it only if it ends in
    // error or is gone.
    // Cut short as it came to run: the create is done, whatever ended the wait.
    if (latest.status === "running" && args.desired_status === "running")
      return { state, diagnostics: notes, entry };
    if (!(err instanceof InstanceErrorStateError) && STILL_CREATING.has(latest.status)) {
      return {
        state,
        diagnostics: [...notes, unfinishedCreateNote(err, latest, ctx.signal?.aborted === true)],
        entry,
        unfinished: true,
      };
    }
    return { state, diagnostics: [...notes, waitDiagnostic(err, "deploy", latest)], entry };
  }
  if (args.desired_status === "stopped") {
    const r = await changePower(latest, "stopped", { ...ctx, timeoutMs: Math.max(0, deadline - now()) });
    const state = instanceToModel(r.instance, prior, r.diagnostics.length ? undefined : args.desired_status);
    return { state, diagnostics: [...notes, ...r.diagnostics], entry };
  }
  return { state: instanceToModel(latest, prior, args.desired_status), diagnostics: notes, entry };
}

/**
 * What a create of these arguments would adopt from the deploy journal, for its plan to say so:
 * the first adoptable entry that `taken` leaves (one already promised to another create, or whose
 * instance a state holds), with the note that says it; undefined when it would deploy.
 */
export function plannedAdoptionOf(
  args: InstanceArgs,
  settings: DeploySettings,
  taken: (e: JournalEntry) => boolean,
): { entry: JournalEntry; note: Diagnostic } | undefined {
  const journal = settings.journal;
  if (!journal) return undefined;
  const fingerprint = instanceFingerprint(args, settings.account);
  const next = journal.adoptable("instance", fingerprint, settings.partial).find((e) => !taken(e));
  return next ? { entry: next, note: willAdoptNote(next) } : undefined;
}

/** The warning of a create cut short while its instance is still being created. */
function unfinishedCreateNote(err: unknown, last: Instance, stopped: boolean): Diagnostic {
  const why =
    err instanceof WaitTimeoutError
      ? "The create's timeout ended"
      : stopped || err instanceof RequestAbortedError
        ? "Terraform was stopped"
        : `Waiting failed (${err instanceof Error ? err.message : String(err)})`;
  return {
    severity: "warning",
    summary: `Instance ${last.id} is still ${last.status}: kept, not replaced`,
    detail: `${why} while instance ${last.id} was ${last.status}. The deploy goes on and is kept in the state as it is, not tainted: the next terraform apply waits for it in place (within timeouts.update) and replaces it only if it ends in error or is gone. Nothing is deployed again for it.`,
  };
}

/**
 * What a refusal's message should count that its body does not carry: the instances that hold the
 * places under INSTANCE_LIMIT_REACHED (the refusal only carries the limit). Nothing when they
 * cannot be read.
 */
async function refusalCounts(err: unknown, env: DeployEnv): Promise<RefusalFacts> {
  if (!(err instanceof ApiError) || err.code !== "INSTANCE_LIMIT_REACHED") return {};
  try {
    const listed = await env.client.listInstances({}, within(env));
    return { count: listed.filter((i) => i.status !== "destroyed").length };
  } catch {
    return {};
  }
}

/** Read: the refreshed state, or null when the instance is gone (404 or destroyed). */
export async function readInstance(
  id: string,
  prior: PriorArgs,
  ctx: Pick<OpContext, "client" | "signal" | "timeoutMs" | "now">,
): Promise<OpResult> {
  try {
    const inst = await ctx.client.getInstance(id, within(budgetOf(ctx.timeoutMs, ctx.signal, ctx.now)));
    if (inst.status === "destroyed") return { state: null, diagnostics: [] };
    return { state: instanceToModel(inst, prior), diagnostics: [] };
  } catch (err) {
    // Only the API's own "no such instance" means gone: a 404 of a wrong base_url must not empty the state.
    if (err instanceof ApiError && err.code === "INSTANCE_NOT_FOUND") return { state: null, diagnostics: [] };
    return { state: null, diagnostics: [errorToDiagnostic(err, "read", INSTANCE_ARGUMENTS)] };
  }
}

/** Delete: destroy and wait for destroyed; an instance already gone or destroying is fine. */
export async function deleteInstance(id: string, ctx: OpContext): Promise<OpResult> {
  const now = ctx.now ?? Date.now;
  const budget = budgetOf(ctx.timeoutMs, ctx.signal, now);
  const statusNow = async (): Promise<InstanceStatus | "gone"> => {
    try {
      return (await ctx.client.getInstance(id, within(budget))).status;
    } catch (err) {
      if (err instanceof ApiError && err.code === "INSTANCE_NOT_FOUND") return "gone";
      throw err;
    }
  };
  try {
    try {
      // A DELETE is resent after a lost answer (retry-policy.ts); one that finds the instance
      // already destroyed comes back as 409 INVALID_STATE or 404, which is done.
      await ctx.client.destroyInstance(id, within(budget));
    } catch (err) {
      if (err instanceof ApiError && err.code === "INSTANCE_NOT_FOUND")
        return { state: null, diagnostics: [] };
      if (err instanceof ApiError && err.code === "INVALID_STATE") {
        const s = await statusNow();
        if (s === "gone" || s === "destroyed") return { state: null, diagnostics: [] };
        if (s !== "destroying") throw err;
      } else {
        throw err;
      }
    }
    await waitForInstance(ctx.client, id, {
      ...waitOptions(ctx, budget.deadline),
      target: "destroyed",
      failOn: [],
      notFound: "done",
    });
    return { state: null, diagnostics: [] };
  } catch (err) {
    return { state: null, diagnostics: [errorToDiagnostic(err, "destroy", INSTANCE_ARGUMENTS)] };
  }
}

/** The set of statuses in which a plan-time start or stop makes sense to the API. */
export const SETTLED: ReadonlySet<InstanceStatus> = new Set(["running", "stopped"]);
