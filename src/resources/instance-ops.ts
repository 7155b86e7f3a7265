import type { DeployInstanceRequest, GpurentalClient, RequestOptions } from "../api/client";
import {
  AmbiguousRequestError,
  ApiError,
  InstanceErrorStateError,
  RequestAbortedError,
  WaitTimeoutError,
} from "../api/errors";
import { realSleep, type Sleep } from "../api/retry";
import type { Instance, InstanceStatus, Offer, Template } from "../api/schemas";
import { isTransient, waitForInstance } from "../api/waiter";
import { type Budget, budgetOf, within } from "./deadline";
import { toEnvOverrides } from "./env";
import {
  type DesiredStatus,
  type InstanceArgs,
  type InstanceModel,
  instanceToModel,
  type PriorArgs,
} from "./instance-model";
import {
  describeFilter,
  explainSelection,
  type OfferFilter,
  perHour,
  RACE_LOSS_CODES,
  selectOffers,
} from "./offer-selection";
import {
  errorToDiagnostic,
  instanceErrorDiagnostic,
  type RefusalFacts,
  type ResourceDiagnostic,
} from "./refusals";

// The lifecycle of gpurental_instance against the API, independent of the Terraform framework.
// Each step returns the state to record (or null when there is nothing to record) together with
// diagnostics; a step that fails after the instance exists always returns that instance, so that
// Terraform keeps it (and taints it after a failed create) instead of leaking it.

/** The client methods the instance lifecycle uses. */
export type InstanceApi = Pick<
  GpurentalClient,
  | "deployInstance"
  | "listInstances"
  | "getInstance"
  | "stopInstance"
  | "startInstance"
  | "destroyInstance"
  | "listOffers"
  | "getTemplate"
>;

/** The attributes of gpurental_instance a refusal can point at. */
export const INSTANCE_ARGUMENTS: readonly string[] = [
  "offer_id",
  "offer_filter",
  "template_id",
  "disk_gb",
  "label",
  "ssh_key_id",
  "env",
  "secret_env",
  "unset_env",
  "desired_status",
];

/** What every lifecycle step needs besides its inputs. */
export interface OpContext {
  client: InstanceApi;
  /** Cancelled when Terraform stops the provider. */
  signal?: AbortSignal | undefined;
  /** The time limit of the whole step (the resource's timeouts entry). */
  timeoutMs: number;
  /** Test seams. */
  sleep?: Sleep;
  now?: () => number;
  /** Poll interval cap of the waits; lower in tests. */
  maxPollMs?: number;
  /** First poll interval of the waits. */
  initialPollMs?: number;
}

/** The outcome of a lifecycle step. */
export interface OpResult {
  /** The state to record; null when the object does not exist (or nothing may be recorded). */
  state: InstanceModel | null;
  diagnostics: ResourceDiagnostic[];
}

/** Default timeouts; the update one must cover a stop the host takes up to 30 minutes to confirm. */
export const INSTANCE_DEFAULT_TIMEOUTS = { create: "20m", update: "40m", delete: "20m" } as const;

// Deploys of one provider process are serialized: with the listing taken inside the same critical
// section, an instance that appears after a lost deploy response can only be that deploy's.
let deployQueue: Promise<unknown> = Promise.resolve();
function serialized<T>(fn: () => Promise<T>): Promise<T> {
  const run = deployQueue.then(fn, fn);
  deployQueue = run.catch(() => undefined);
  return run;
}

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

/** Whether a listed instance is what `body` would have created. */
function matchesDeploy(inst: Instance, body: DeployInstanceRequest): boolean {
  return (
    inst.offer.id === body.offer_id &&
    inst.template.id === body.template_id &&
    inst.disk_gb === body.disk_gb &&
    // "" and null both mean no label; a server may store one as the other.
    (inst.label ?? "") === (body.label ?? "") &&
    inst.status !== "destroyed"
  );
}

/** A lost deploy answer that could not be resolved; carries what was found. */
export class DeployReconcileError extends Error {
  constructor(
    message: string,
    readonly candidates: readonly Instance[],
  ) {
    super(message);
    this.name = "DeployReconcileError";
  }
}

/**
 * Deploys, and when the answer is lost (the request may have reached the server), finds out what
 * happened instead of guessing: the organization's instances are listed before the deploy, and
 * after the lost answer the listing is repeated until a new instance matching the request shows
 * up, which is adopted, or several listings show none, in which case nothing was created and the
 * deploy is sent again. Never sends a second deploy while the first may have landed.
 */
export async function deployReconciled(
  client: InstanceApi,
  body: DeployInstanceRequest,
  ctx: { signal?: AbortSignal | undefined; deadline: number; sleep: Sleep; now: () => number },
  log?: (msg: string) => void,
): Promise<Instance> {
  return serialized(async () => {
    const maxDeploys = 3;
    for (let attempt = 1; ; attempt++) {
      const before = new Set((await client.listInstances({}, within(ctx))).map((i) => i.id));
      try {
        return await client.deployInstance(body, within(ctx));
      } catch (err) {
        // An interrupted deploy (Ctrl-C) may have landed as well; it is looked for but never resent.
        const interrupted = err instanceof RequestAbortedError;
        if (!(err instanceof AmbiguousRequestError) && !interrupted) throw err;
        log?.(
          `deploy answer lost (${interrupted ? "interrupted" : err.reason}); reconciling by listing instances`,
        );
        // The search gets a short budget of its own when the operation's signal is what ended the
        // deploy, so that a landed instance still reaches the state (tainted) instead of leaking.
        const search = ctx.signal?.aborted
          ? { ...ctx, signal: AbortSignal.timeout(15_000), deadline: ctx.now() + 15_000 }
          : ctx;
        const found = await findNewInstance(client, before, body, search);
        if (found.length === 1) return found[0]!;
        if (found.length > 1) {
          throw new DeployReconcileError(
            `The deploy's answer was lost and ${found.length} matching new instances appeared (${found.map((i) => i.id).join(", ")}); another client deployed the same configuration at the same time. Import the one that belongs here with terraform import and destroy the other.`,
            found,
          );
        }
        if (interrupted || attempt >= maxDeploys || ctx.now() >= ctx.deadline) throw err;
        log?.("no instance was created by the lost deploy; sending it again");
      }
    }
  });
}

async function findNewInstance(
  client: InstanceApi,
  before: ReadonlySet<string>,
  body: DeployInstanceRequest,
  ctx: { signal?: AbortSignal | undefined; deadline: number; sleep: Sleep; now: () => number },
): Promise<Instance[]> {
  // An empty listing is trusted only after reads spread over several seconds, in case a slow
  // server (the answer may have timed out) commits the deploy a moment later; a listing that fails
  // is retried until the deadline, because giving up there could leave an untracked instance.
  let emptyReads = 0;
  let waited = 0;
  let delay = 250;
  for (;;) {
    try {
      const items = await client.listInstances({}, within(ctx));
      const fresh = items.filter((i) => !before.has(i.id) && matchesDeploy(i, body));
      if (fresh.length > 0) return fresh;
      emptyReads++;
      if (emptyReads >= 3 && waited >= EMPTY_LISTING_WINDOW_MS) return [];
    } catch (err) {
      if (ctx.signal?.aborted) throw new RequestAbortedError("GET /v1/instances", { cause: err });
      if (!isTransient(err)) throw err;
    }
    if (ctx.now() + delay > ctx.deadline) {
      throw new DeployReconcileError(
        "The deploy's answer was lost and the instances could not be listed before the create timeout; an instance may have been created. List the organization's instances (data source gpurental_instances) and import it with terraform import.",
        [],
      );
    }
    await ctx.sleep(delay, ctx.signal);
    waited += delay;
    delay = Math.min(delay * 2, 2000);
  }
}

/** How long listings must keep showing no new instance before a lost deploy counts as not landed. */
const EMPTY_LISTING_WINDOW_MS = 5000;

function waitOptions(ctx: OpContext, deadline: number) {
  const now = ctx.now ?? Date.now;
  const opts: {
    timeoutMs: number;
    signal?: AbortSignal | undefined;
    sleep?: Sleep;
    now?: () => number;
    maxPollMs?: number;
    initialPollMs?: number;
  } = { timeoutMs: Math.max(0, deadline - now()), signal: ctx.signal };
  if (ctx.sleep) opts.sleep = ctx.sleep;
  if (ctx.now) opts.now = ctx.now;
  if (ctx.maxPollMs !== undefined) opts.maxPollMs = ctx.maxPollMs;
  if (ctx.initialPollMs !== undefined) opts.initialPollMs = ctx.initialPollMs;
  return opts;
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
  ctx: OpContext,
  budget: Budget,
): Promise<{ targets: DeployTarget[]; diagnostics: ResourceDiagnostic[] }> {
  const filter = args.offer_filter;
  if (!filter) return { targets: [{ offer_id: args.offer_id ?? "" }], diagnostics: [] };
  let offers: Offer[];
  let template: Template | null | undefined;
  try {
    [offers, template] = await Promise.all([
      listMarketOffers(ctx.client, filter, within(budget)),
      ctx.client.getTemplate(args.template_id, within(budget)).catch((err: unknown) => {
        if (err instanceof ApiError && err.code === "TEMPLATE_NOT_FOUND") return null;
        // Without the template the checks that need it are left to the deploy.
        return undefined;
      }),
    ]);
  } catch (err) {
    return { targets: [], diagnostics: [errorToDiagnostic(err, "deploy", INSTANCE_ARGUMENTS)] };
  }
  const now = ctx.now ?? Date.now;
  const selection = selectOffers({ offers, filter, template, diskGb: args.disk_gb, now: now() });
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
 * Any other answer ends it; a lost answer in particular goes through deployReconciled's
 * reconciliation and is never followed by a deploy elsewhere, since the first may have landed.
 */
async function deployOnFirstAvailable(
  args: InstanceArgs,
  targets: readonly DeployTarget[],
  ctx: {
    signal?: AbortSignal | undefined;
    deadline: number;
    sleep: Sleep;
    now: () => number;
    client: InstanceApi;
  },
  log?: (msg: string) => void,
): Promise<
  { instance: Instance; target: DeployTarget; lost: LostOffer[] } | { error: unknown; lost: LostOffer[] }
> {
  const lost: LostOffer[] = [];
  const tried = targets.slice(0, args.offer_filter ? MAX_OFFER_ATTEMPTS : 1);
  for (const [n, target] of tried.entries()) {
    try {
      // The one place a deploy is sent (and, after a lost answer, reconciled).
      const instance = await deployReconciled(ctx.client, deployRequest(args, target.offer_id), ctx, log);
      return { instance, target, lost };
    } catch (err) {
      const raceLost = err instanceof ApiError && RACE_LOSS_CODES.has(err.code);
      const more = n + 1 < tried.length && ctx.now() < ctx.deadline && !ctx.signal?.aborted;
      if (!args.offer_filter || !raceLost) return { error: err, lost };
      lost.push({ target, error: err });
      if (!more) return { error: err, lost };
      log?.(`${describeTarget(target)} was taken (${err.code}); trying the next candidate`);
    }
  }
  return { error: new Error("no offer to deploy on"), lost };
}

/** The diagnostics of a create that tried offers taken by other deploys. */
function lostOffersDiagnostic(
  lost: readonly LostOffer[],
  filter: OfferFilter,
  landed: DeployTarget | undefined,
  untried: number,
): ResourceDiagnostic {
  const lines = lost.map(
    (l) =>
      `  - ${describeTarget(l.target)}: ${l.error.code}${l.error.apiMessage ? ` (${l.error.apiMessage})` : ""}`,
  );
  if (landed) {
    return {
      severity: "warning",
      summary: `Deployed on ${describeTarget(landed)} instead of ${describeTarget(lost[0]!.target)}`,
      detail: `Another deploy was first on the cheaper candidate${lost.length === 1 ? "" : "s"} of offer_filter (${describeFilter(filter)}):\n${lines.join("\n")}\nThe instance rents ${describeTarget(landed)}; its offer_id and price are in the state.`,
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
    detail: `Each offer tried was taken by another deploy first (offer_filter: ${describeFilter(filter)}):\n${lines.join("\n")}${rest}\nNothing was deployed and nothing is charged. Apply again to choose from the market as it is then.`,
    path: [{ attribute: "offer_filter" }],
  };
}

/**
 * Create: choose the offer (the pinned one, or the cheapest candidate of the filter), deploy,
 * record, wait until running, then stop when the plan asks for stopped.
 */
export async function createInstance(
  args: InstanceArgs,
  ctx: OpContext,
  log?: (msg: string) => void,
): Promise<OpResult> {
  const now = ctx.now ?? Date.now;
  const deadline = now() + ctx.timeoutMs;
  const chosen = await deployTargets(args, ctx, { signal: ctx.signal, deadline, now });
  if (chosen.targets.length === 0) return { state: null, diagnostics: chosen.diagnostics };
  const deployed = await deployOnFirstAvailable(
    args,
    chosen.targets,
    { client: ctx.client, signal: ctx.signal, deadline, sleep: ctx.sleep ?? realSleep, now },
    log,
  );
  const filter = args.offer_filter;
  if ("error" in deployed) {
    const err = deployed.error;
    if (filter && deployed.lost.length > 0 && deployed.lost.at(-1)?.error === err) {
      const untried = Math.max(0, chosen.targets.length - deployed.lost.length);
      return { state: null, diagnostics: [lostOffersDiagnostic(deployed.lost, filter, undefined, untried)] };
    }
    if (err instanceof DeployReconcileError) {
      return {
        state: null,
        diagnostics: [{ severity: "error", summary: "Deploy answer lost", detail: err.message }],
      };
    }
    const d = errorToDiagnostic(err, "deploy", INSTANCE_ARGUMENTS, await refusalCounts(err, ctx, deadline));
    // With a filter, offer_id is not configured: a refusal about the offer belongs to the filter.
    const step = d.path?.[0];
    if (filter && step && "attribute" in step && step.attribute === "offer_id")
      d.path = [{ attribute: "offer_filter" }];
    if (deployed.lost.length > 0) {
      d.detail = `${d.detail}\nOffers tried before, taken by other deploys: ${deployed.lost.map((l) => `${describeTarget(l.target)} (${l.error.code})`).join(", ")}.`;
    }
    return { state: null, diagnostics: [d] };
  }
  // From here on the instance exists: every return carries it.
  const { instance: inst, target } = deployed;
  const notes: ResourceDiagnostic[] =
    filter && deployed.lost.length > 0 ? [lostOffersDiagnostic(deployed.lost, filter, target, 0)] : [];
  const o = target.offer;
  const prior: PriorArgs = {
    ...args,
    offer_id: target.offer_id,
    offer: o
      ? { gpu_model: o.gpu_model ?? null, num_gpus: o.num_gpus ?? null, region: o.region ?? null }
      : null,
  };
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
    return {
      state: instanceToModel(latest, prior, args.desired_status),
      diagnostics: [...notes, waitDiagnostic(err, "deploy", latest)],
    };
  }
  if (args.desired_status === "stopped") {
    const r = await changePower(latest, "stopped", { ...ctx, timeoutMs: Math.max(0, deadline - now()) });
    const state = instanceToModel(r.instance, prior, r.diagnostics.length ? undefined : args.desired_status);
    return { state, diagnostics: [...notes, ...r.diagnostics] };
  }
  return { state: instanceToModel(latest, prior, args.desired_status), diagnostics: notes };
}

/**
 * What a refusal's message should count that its body does not carry: the instances that hold the
 * places under INSTANCE_LIMIT_REACHED (the refusal only carries the limit). Nothing when they
 * cannot be read.
 */
async function refusalCounts(err: unknown, ctx: OpContext, deadline: number): Promise<RefusalFacts> {
  if (!(err instanceof ApiError) || err.code !== "INSTANCE_LIMIT_REACHED") return {};
  try {
    const listed = await ctx.client.listInstances({}, within({ signal: ctx.signal, deadline, now: ctx.now }));
    return { count: listed.filter((i) => i.status !== "destroyed").length };
  } catch {
    return {};
  }
}

function waitDiagnostic(
  err: unknown,
  op: "deploy" | "start" | "stop" | "destroy",
  last: Instance,
): ResourceDiagnostic {
  if (err instanceof InstanceErrorStateError) return instanceErrorDiagnostic(err.instance, op);
  const d = errorToDiagnostic(err, op, INSTANCE_ARGUMENTS);
  if (err instanceof WaitTimeoutError || err instanceof RequestAbortedError) {
    d.detail = `${d.detail} Instance ${last.id} exists and is kept in the state (status ${last.status}).`;
  }
  return d;
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

/** The outcome of moving an instance to a power state. */
interface PowerResult {
  instance: Instance;
  diagnostics: ResourceDiagnostic[];
}

/** Start failures that are worth retrying until the update timeout. */
const RETRIED_START_CODES = new Set(["START_UNAVAILABLE"]);

/**
 * Moves an instance to `target` (running or stopped) and waits, from whatever status it is in:
 * a transition in flight is waited on first. Returns the instance as last read, so the state
 * always records the real status.
 */
export async function changePower(
  start: Instance,
  target: DesiredStatus,
  ctx: OpContext,
): Promise<PowerResult> {
  const now = ctx.now ?? Date.now;
  const sleep = ctx.sleep ?? realSleep;
  const deadline = now() + ctx.timeoutMs;
  const op = target === "running" ? "start" : "stop";
  let inst = start;
  let backoff = 1000;
  // Which request this call sent, so that a wait ending in the other power state is its failure.
  let sent: "start" | "stop" | null = null;
  const budget: Budget = { signal: ctx.signal, deadline, now };
  for (let round = 0; round < 100; round++) {
    if (inst.status === target) return { instance: inst, diagnostics: [] };
    try {
      switch (inst.status) {
        case "creating":
        case "starting":
        case "stopping":
          inst = await waitForInstance(ctx.client, inst.id, {
            ...waitOptions(ctx, deadline),
            target: ["running", "stopped"],
            failOn: ["error", "destroyed", "destroying"],
            onPoll: (i) => {
              inst = i;
            },
          });
          // A stop the host did not confirm within 30 minutes comes back as running
          // (stop_timed_out); a start that failed on the host falls back to stopped.
          if (
            (sent === "stop" && inst.status === "running") ||
            (sent === "start" && inst.status === "stopped")
          ) {
            return { instance: inst, diagnostics: [instanceErrorDiagnostic(inst, sent)] };
          }
          continue;
        case "running":
          sent = "stop";
          try {
            inst = await ctx.client.stopInstance(inst.id, within(budget));
          } catch (err) {
            // A lost answer (the client never resends a stop, see retry-policy.ts): read where the
            // instance is and carry on from there, until the deadline. One that landed shows as
            // stopping or stopped; a stop sent again to a running instance stops it once.
            if (!(err instanceof AmbiguousRequestError)) throw err;
            inst = await ctx.client.getInstance(inst.id, within(budget));
          }
          continue;
        case "stopped":
          sent = "start";
          try {
            inst = await ctx.client.startInstance(inst.id, within(budget));
          } catch (err) {
            if (err instanceof ApiError && RETRIED_START_CODES.has(err.code)) {
              const wait = Math.max(backoff, err.retryAfterMs ?? 0);
              if (now() + wait >= deadline) throw err;
              await sleep(wait, ctx.signal);
              backoff = Math.min(backoff * 2, 30_000);
              inst = await ctx.client.getInstance(inst.id, within(budget));
              continue;
            }
            // A lost answer: as for a stop, read where the instance is and carry on from there.
            if (err instanceof AmbiguousRequestError) {
              inst = await ctx.client.getInstance(inst.id, within(budget));
              continue;
            }
            throw err;
          }
          continue;
        default:
          return {
            instance: inst,
            diagnostics: [
              inst.status === "error"
                ? instanceErrorDiagnostic(inst, op)
                : {
                    severity: "error",
                    summary: `Instance ${inst.id} is ${inst.status}`,
                    detail: `It cannot be ${target === "running" ? "started" : "stopped"} from status ${inst.status}.`,
                    path: [{ attribute: "desired_status" }],
                  },
            ],
          };
      }
    } catch (err) {
      if (err instanceof InstanceErrorStateError) {
        return { instance: err.instance, diagnostics: [instanceErrorDiagnostic(err.instance, op)] };
      }
      // The operation's signal may be what ended it; the last read gets a short budget of its own
      // so the state still records the real status.
      const refreshed = await ctx.client
        .getInstance(inst.id, within(budgetOf(10_000, AbortSignal.timeout(10_000))))
        .catch(() => inst);
      return { instance: refreshed, diagnostics: [waitDiagnostic(err, op, refreshed)] };
    }
  }
  return {
    instance: inst,
    diagnostics: [
      { severity: "error", summary: "The instance did not settle", detail: `Last status ${inst.status}.` },
    ],
  };
}

/**
 * Update: only desired_status changes at the API; the other arguments force replacement, or (a
 * changed offer_filter the instance still satisfies) only change the state. `prior` is what the
 * state recorded, for the offer snapshot.
 */
export async function updateInstance(
  id: string,
  planned: InstanceArgs,
  ctx: OpContext,
  prior: PriorArgs = {},
): Promise<OpResult> {
  const now = ctx.now ?? Date.now;
  const budget = budgetOf(ctx.timeoutMs, ctx.signal, now);
  let inst: Instance;
  try {
    inst = await ctx.client.getInstance(id, within(budget));
  } catch (err) {
    return { state: null, diagnostics: [errorToDiagnostic(err, "read", INSTANCE_ARGUMENTS)] };
  }
  const r = await changePower(inst, planned.desired_status, {
    ...ctx,
    timeoutMs: Math.max(0, budget.deadline - now()),
  });
  const ok = r.diagnostics.every((d) => d.severity !== "error");
  // On failure desired_status follows the real status, so the next plan tries again.
  return {
    state: instanceToModel(
      r.instance,
      { ...planned, offer_id: prior.offer_id, offer: prior.offer },
      ok ? planned.desired_status : undefined,
    ),
    diagnostics: r.diagnostics,
  };
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
