import type { DeployInstanceRequest, GpurentalClient } from "../api/client";
import {
  AmbiguousRequestError,
  ApiError,
  InstanceErrorStateError,
  RequestAbortedError,
  WaitTimeoutError,
} from "../api/errors";
import { realSleep, type Sleep } from "../api/retry";
import type { Instance, InstanceStatus } from "../api/schemas";
import { isTransient, waitForInstance } from "../api/waiter";
import { toEnvOverrides } from "./env";
import {
  type DesiredStatus,
  type InstanceArgs,
  type InstanceModel,
  instanceToModel,
  type PriorArgs,
} from "./instance-model";
import { errorToDiagnostic, instanceErrorDiagnostic, type ResourceDiagnostic } from "./refusals";

// The lifecycle of gpurental_instance against the API, independent of the Terraform framework.
// Each step returns the state to record (or null when there is nothing to record) together with
// diagnostics; a step that fails after the instance exists always returns that instance, so that
// Terraform keeps it (and taints it after a failed create) instead of leaking it.

/** The client methods the instance lifecycle uses. */
export type InstanceApi = Pick<
  GpurentalClient,
  "deployInstance" | "listInstances" | "getInstance" | "stopInstance" | "startInstance" | "destroyInstance"
>;

/** The attributes of gpurental_instance a refusal can point at. */
export const INSTANCE_ARGUMENTS: readonly string[] = [
  "offer_id",
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

/** The request body of a deploy for the planned arguments. */
export function deployRequest(args: InstanceArgs): DeployInstanceRequest {
  const body: DeployInstanceRequest = {
    offer_id: args.offer_id,
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
    (inst.label ?? null) === (body.label ?? null) &&
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
      const before = new Set((await client.listInstances({}, { signal: ctx.signal })).map((i) => i.id));
      try {
        return await client.deployInstance(body, { signal: ctx.signal });
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
      const items = await client.listInstances({}, { signal: ctx.signal });
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

/** Create: deploy, record, wait until running, then stop when the plan asks for stopped. */
export async function createInstance(
  args: InstanceArgs,
  ctx: OpContext,
  log?: (msg: string) => void,
): Promise<OpResult> {
  const now = ctx.now ?? Date.now;
  const deadline = now() + ctx.timeoutMs;
  const body = deployRequest(args);
  let inst: Instance;
  try {
    inst = await deployReconciled(
      ctx.client,
      body,
      { signal: ctx.signal, deadline, sleep: ctx.sleep ?? realSleep, now },
      log,
    );
  } catch (err) {
    if (err instanceof DeployReconcileError) {
      return {
        state: null,
        diagnostics: [{ severity: "error", summary: "Deploy answer lost", detail: err.message }],
      };
    }
    return { state: null, diagnostics: [errorToDiagnostic(err, "deploy", INSTANCE_ARGUMENTS)] };
  }
  // From here on the instance exists: every return carries it.
  const prior: PriorArgs = args;
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
      diagnostics: [waitDiagnostic(err, "deploy", latest)],
    };
  }
  if (args.desired_status === "stopped") {
    const r = await changePower(latest, "stopped", { ...ctx, timeoutMs: Math.max(0, deadline - now()) });
    const state = instanceToModel(r.instance, prior, r.diagnostics.length ? undefined : args.desired_status);
    return { state, diagnostics: r.diagnostics };
  }
  return { state: instanceToModel(latest, prior, args.desired_status), diagnostics: [] };
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
  ctx: Pick<OpContext, "client" | "signal">,
): Promise<OpResult> {
  try {
    const inst = await ctx.client.getInstance(id, { signal: ctx.signal });
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
  let lost = 0;
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
            inst = await ctx.client.stopInstance(inst.id, {
              signal: ctx.signal,
              deadlineMs: deadline - now(),
            });
          } catch (err) {
            // A lost answer: read where the instance is and carry on from there (a stop sent again
            // to a running instance is harmless; one that landed shows as stopping or stopped).
            if (!(err instanceof AmbiguousRequestError) || ++lost > 3) throw err;
            inst = await ctx.client.getInstance(inst.id, { signal: ctx.signal });
          }
          continue;
        case "stopped":
          sent = "start";
          try {
            inst = await ctx.client.startInstance(inst.id, {
              signal: ctx.signal,
              deadlineMs: deadline - now(),
            });
          } catch (err) {
            if (err instanceof ApiError && RETRIED_START_CODES.has(err.code)) {
              const wait = Math.max(backoff, err.retryAfterMs ?? 0);
              if (now() + wait >= deadline) throw err;
              await sleep(wait, ctx.signal);
              backoff = Math.min(backoff * 2, 30_000);
              inst = await ctx.client.getInstance(inst.id, { signal: ctx.signal });
              continue;
            }
            if (err instanceof AmbiguousRequestError && ++lost <= 3) {
              inst = await ctx.client.getInstance(inst.id, { signal: ctx.signal });
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
        .getInstance(inst.id, { signal: AbortSignal.timeout(10_000) })
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

/** Update: only desired_status changes in place; the other arguments force replacement. */
export async function updateInstance(id: string, planned: InstanceArgs, ctx: OpContext): Promise<OpResult> {
  let inst: Instance;
  try {
    inst = await ctx.client.getInstance(id, { signal: ctx.signal });
  } catch (err) {
    return { state: null, diagnostics: [errorToDiagnostic(err, "read", INSTANCE_ARGUMENTS)] };
  }
  const r = await changePower(inst, planned.desired_status, ctx);
  const ok = r.diagnostics.every((d) => d.severity !== "error");
  // On failure desired_status follows the real status, so the next plan tries again.
  return {
    state: instanceToModel(r.instance, planned, ok ? planned.desired_status : undefined),
    diagnostics: r.diagnostics,
  };
}

/** Delete: destroy and wait for destroyed; an instance already gone or destroying is fine. */
export async function deleteInstance(id: string, ctx: OpContext): Promise<OpResult> {
  const statusNow = async (): Promise<InstanceStatus | "gone"> => {
    try {
      return (await ctx.client.getInstance(id, { signal: ctx.signal })).status;
    } catch (err) {
      if (err instanceof ApiError && err.code === "INSTANCE_NOT_FOUND") return "gone";
      throw err;
    }
  };
  try {
    try {
      await ctx.client.destroyInstance(id, { signal: ctx.signal });
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
    const now = ctx.now ?? Date.now;
    await waitForInstance(ctx.client, id, {
      ...waitOptions(ctx, now() + ctx.timeoutMs),
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
