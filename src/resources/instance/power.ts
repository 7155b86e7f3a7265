import { AmbiguousRequestError, ApiError, InstanceErrorStateError } from "../../api/errors";
import { realSleep } from "../../api/retry";
import type { Instance } from "../../api/schemas";
import { waitForInstance } from "../../api/waiter";
import type { Diagnostic } from "../../framework";
import { type Budget, budgetOf, within } from "../../provider/deadline";
import { errorToDiagnostic, instanceErrorDiagnostic } from "../../provider/refusals";
import { type DesiredStatus, type InstanceArgs, instanceToModel, type PriorArgs } from "./model";
import { INSTANCE_ARGUMENTS, type OpContext, type OpResult, waitDiagnostic, waitOptions } from "./op-context";

// The power of gpurental_instance: moving an instance to running or stopped from whatever status
// it is in, and the update, the only change the API makes in place (desired_status).

/** The outcome of moving an instance to a power state. */
interface PowerResult {
  instance: Instance;
  diagnostics: Diagnostic[];
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
    ctx.onInstance?.(inst);
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
              ctx.onInstance?.(i);
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
      const refreshed = await ctx.client.getInstance(inst.id, within(budgetOf(10_000))).catch(() => inst);
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
