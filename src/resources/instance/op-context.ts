import { InstanceErrorStateError, RequestAbortedError, WaitTimeoutError } from "../../api/errors";
import type { Sleep } from "../../api/retry";
import type { Instance } from "../../api/schemas";
import type { Diagnostic } from "../../framework";
import type { DeploySettings } from "../../provider/provider-data";
import { errorToDiagnostic, instanceErrorDiagnostic } from "../../provider/refusals";
import type { InstanceApi, InstanceModel } from "./model";

// What every lifecycle step of gpurental_instance takes and returns (ops.ts, power.ts), and the
// options and diagnostics of their waits.

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
  /** Journal and reconcile window of creates (the provider's); default no journal. */
  settings?: DeploySettings;
  /**
   * What the create's plan said it adopts: a journal entry, or null for nothing (it deploys).
   * Undefined when the plan could not tell: whatever is adoptable is taken.
   */
  adopt?: string | null;
  /** Sees every instance the API answers while a power change goes on (an action's progress). */
  onInstance?: (instance: Instance) => void;
}

/** The outcome of a lifecycle step. */
export interface OpResult {
  /** The state to record; null when the object does not exist (or nothing may be recorded). */
  state: InstanceModel | null;
  diagnostics: Diagnostic[];
  /** A create's deploy journal entry, to be marked handed once Terraform has the state. */
  entry?: string | null;
  /**
   * A create cut short (Terraform's stop, or the create's timeout) while the instance was still
   * being created: the state is returned with a warning only, so that Terraform keeps the instance
   * without tainting it, and the next apply waits for it in place (see finishingCreate).
   */
  unfinished?: boolean;
}

export function waitOptions(ctx: OpContext, deadline: number) {
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

export function waitDiagnostic(
  err: unknown,
  op: "deploy" | "start" | "stop" | "destroy",
  last: Instance,
): Diagnostic {
  if (err instanceof InstanceErrorStateError) return instanceErrorDiagnostic(err.instance, op);
  const d = errorToDiagnostic(err, op, INSTANCE_ARGUMENTS);
  if (err instanceof WaitTimeoutError || err instanceof RequestAbortedError) {
    d.detail = `${d.detail} Instance ${last.id} exists and is kept in the state (status ${last.status}).`;
  }
  return d;
}
