import { ApiError } from "../api/errors";
import type { Instance, InstanceStatus } from "../api/schemas";
import {
  type ActionDefinition,
  attr,
  type Diagnostic,
  defineSchema,
  durationValidator,
  isUnknown,
  oneOf,
  parseDuration,
} from "../framework";
import { budgetOf, within } from "../provider/deadline";
import { apiId } from "../provider/ids";
import { clientOf, type ProviderData } from "../provider/provider-data";
import { errorToDiagnostic, formatYen, instanceErrorDiagnostic } from "../provider/refusals";
import { INSTANCE_DEFAULT_TIMEOUTS } from "../resources/instance/ops";
import { changePower } from "../resources/instance/power";

// gpurental_instance_power (Terraform 1.14+): starts, stops or restarts an instance on request
// (`terraform apply -invoke=action.gpurental_instance_power.<name>`) or on a resource's lifecycle
// events, without editing any configuration. It streams what a person waiting wants to know: the
// status the instance is in, how long it has been, and what it is charged per hour now.
//
// An action changes no state. When a gpurental_instance resource also manages the instance, its
// configuration still decides the power: its next plan moves the instance back to its
// desired_status and says why (docs/design/actions-and-identity.md). Power changes go through
// the same changePower as the resource's updates: the waits, the lost-answer handling and the
// refusals with their remedies are the resource's own.

/** How often a long wait reports that it is still waiting. */
const HEARTBEAT_MS = 15_000;

const schema = defineSchema({
  description:
    "Starts, stops or restarts an instance and waits, streaming its status, the time elapsed and its price per hour.",
  attributes: {
    instance_id: attr.string({
      required: true,
      description: "ID of the instance.",
      validators: [apiId("instance_id", "an instance")],
    }),
    state: attr.string({
      required: true,
      description: "`running`, `stopped`, or `restarted` (stopped if running, then started).",
      validators: [oneOf("running", "stopped", "restarted")],
    }),
    timeout: attr.string({
      optional: true,
      description: `How long to wait, e.g. \`"20m"\`; default \`"${INSTANCE_DEFAULT_TIMEOUTS.update}"\`.`,
      validators: [durationValidator()],
    }),
  },
});

/** The price per hour an instance is charged in a status: GPU time until it has stopped, disk once stopped. */
export function chargedPerHour(inst: Instance): { micro: number; what: string } {
  switch (inst.status) {
    case "running":
      return { micro: inst.price_per_hour_micro, what: "GPU time" };
    case "stopping":
      return { micro: inst.price_per_hour_micro, what: "GPU time until it has stopped" };
    case "stopped":
    case "starting": {
      const disk = inst.disk_gb * inst.storage_price_per_gb_hour_micro;
      const hold = inst.stop_hold_price_per_hour_micro ?? 0;
      const what = `disk${hold ? " and GPU hold" : ""}${inst.status === "starting" ? " until it runs" : ""}`;
      return { micro: disk + hold, what };
    }
    default:
      return { micro: 0, what: "nothing" };
  }
}

/** "42 s", "3 min 5 s". */
export function formatElapsed(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  return s < 60 ? `${s} s` : `${Math.floor(s / 60)} min ${s % 60} s`;
}

/** One progress line: who, which status, since when, and the price per hour now. */
export function progressLine(inst: Instance, elapsedMs: number): string {
  const charge = chargedPerHour(inst);
  const name = inst.label ? `${inst.id} (${inst.label})` : inst.id;
  return `instance ${name}: ${inst.status}, ${formatElapsed(elapsedMs)} elapsed; now charged ${formatYen(charge.micro)}/h (${charge.what})`;
}

/** Refusals and failures of changePower name the resource's desired_status; here it is `state`. */
function onState(d: Diagnostic): Diagnostic {
  const { path: _resourcePath, ...rest } = d;
  return { ...rest, path: [{ attribute: "state" }] };
}

/** The statuses from which no start or stop can lead anywhere. */
const HOPELESS: ReadonlySet<InstanceStatus> = new Set(["error", "destroying", "destroyed"]);

/** The `gpurental_instance_power` action. */
export const instancePowerAction = {
  typeName: "gpurental_instance_power",
  schema,

  /** At plan time: the instance exists and can be moved (unknown ids are left to the invocation). */
  async plan({ config }, ctx) {
    const id = config.instance_id;
    if (isUnknown(id) || id === null || !ctx.providerData.configured) return;
    try {
      const inst = await ctx.providerData.client.getInstance(id, within(budgetOf(10_000, ctx.signal)));
      if (HOPELESS.has(inst.status)) ctx.diags.add(onState(instanceErrorDiagnostic(inst, "read")));
    } catch (err) {
      const d = errorToDiagnostic(err, "read");
      // A plan that cannot reach the API says so; the invocation will try again.
      if (err instanceof ApiError && err.code === "INSTANCE_NOT_FOUND")
        ctx.diags.addAttributeError([{ attribute: "instance_id" }], d.summary, d.detail);
      else ctx.diags.addWarning(d.summary, d.detail);
    }
  },

  async invoke({ config }, ctx) {
    const client = clientOf(ctx.providerData);
    const timeoutMs = parseDuration(config.timeout ?? INSTANCE_DEFAULT_TIMEOUTS.update) ?? 0;
    const started = Date.now();
    let latest: Instance | undefined;
    let lastSaid = "";
    // Progress goes out in order, one message at a time; a failed send (Terraform gone) ends nothing.
    let said: Promise<void> = Promise.resolve();
    const say = (inst: Instance, always = false) => {
      latest = inst;
      const key = `${inst.status}`;
      if (!always && key === lastSaid) return;
      lastSaid = key;
      const line = progressLine(inst, Date.now() - started);
      said = said.then(() => ctx.progress(line)).catch(() => {});
    };
    const heartbeat = setInterval(() => latest && say(latest, true), HEARTBEAT_MS);
    heartbeat.unref();
    try {
      let inst: Instance;
      try {
        inst = await client.getInstance(
          config.instance_id as string,
          within(budgetOf(timeoutMs, ctx.signal)),
        );
      } catch (err) {
        const d = errorToDiagnostic(err, "read");
        ctx.diags.addAttributeError([{ attribute: "instance_id" }], d.summary, d.detail);
        return;
      }
      say(inst, true);
      if (HOPELESS.has(inst.status)) {
        ctx.diags.add(onState(instanceErrorDiagnostic(inst, "read")));
        return;
      }
      const op = {
        client,
        signal: ctx.signal,
        timeoutMs: Math.max(0, timeoutMs - (Date.now() - started)),
        onInstance: (i: Instance) => say(i),
      };
      const steps: ("running" | "stopped")[] =
        config.state === "restarted"
          ? inst.status === "stopped"
            ? ["running"]
            : ["stopped", "running"]
          : [config.state as "running" | "stopped"];
      const before = inst.status;
      for (const target of steps) {
        const r = await changePower(inst, target, {
          ...op,
          timeoutMs: Math.max(0, timeoutMs - (Date.now() - started)),
        });
        inst = r.instance;
        say(inst);
        if (r.diagnostics.length > 0) ctx.diags.add(...r.diagnostics.map(onState));
        if (ctx.diags.hasErrors()) return;
      }
      if (inst.status !== before) {
        const back = inst.status === "stopped" ? "start it again" : "stop it again";
        said = said
          .then(() =>
            ctx.progress(
              `instance ${inst.id} is ${inst.status}. A gpurental_instance resource managing it keeps its desired_status: unless that is "${inst.status}" or the resource ignores changes to desired_status, its next apply will ${back}.`,
            ),
          )
          .catch(() => {});
      }
    } finally {
      clearInterval(heartbeat);
      await said;
    }
  },
} satisfies ActionDefinition<typeof schema, ProviderData>;
