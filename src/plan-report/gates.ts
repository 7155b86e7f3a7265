import { formatHours, formatMicro, formatPerHour, type Micro } from "../report/money";
import { plural } from "../report/table";
import { type GateResult, losesDisk, type PlanReport } from "./model";

// Gates a pipeline puts on a plan: conditions (`--fail-on`) and limits (`--max-burn-per-hour`,
// `--max-burn-increase-per-hour`, `--min-balance-hours`). A gate whose figure could not be read
// (the balance with an API key, a price not known) is "not judged": it does not trip, unless the
// pipeline asks for that too with `--fail-on unjudged`.

/** The conditions `--fail-on` takes. */
export const FAIL_ON_CONDITIONS = {
  "disk-loss": "an instance is replaced or destroyed, so its disk is destroyed",
  replace: "an instance is replaced",
  destroy: "an instance is destroyed (replacements aside)",
  "key-revoke": "an API key is revoked or replaced",
  refusal: "the plan-time checks foresee a certain refusal, or the instance limit is certainly exceeded",
  "balance-rule": "the one-hour balance rule is broken, or may be depending on the order of the apply",
  forget: "an instance leaves the state but keeps running (a stray)",
  unjudged: "another gate, or the balance rule, could not be judged",
} as const;

/** A `--fail-on` condition. */
export type FailOn = keyof typeof FAIL_ON_CONDITIONS;

/** The gates of one run. */
export interface GateSpec {
  failOn: FailOn[];
  maxBurnPerHour?: Micro;
  maxBurnIncreasePerHour?: Micro;
  /** In tenths of an hour. */
  minBalanceTenths?: bigint;
}

/** Parses one `--fail-on` value (comma-separated conditions); throws naming the unknown one and the known ones, or for none. */
export function parseFailOn(value: string): FailOn[] {
  const out: FailOn[] = [];
  for (const part of value
    .split(",")
    .map((p) => p.trim())
    .filter((p) => p !== "")) {
    if (!(part in FAIL_ON_CONDITIONS)) {
      throw new Error(
        `--fail-on takes ${Object.keys(FAIL_ON_CONDITIONS).join(", ")} (comma-separated), got '${part}'`,
      );
    }
    out.push(part as FailOn);
  }
  if (out.length === 0) {
    throw new Error(
      `--fail-on needs at least one of ${Object.keys(FAIL_ON_CONDITIONS).join(", ")} (comma-separated), got '${value}'`,
    );
  }
  return out;
}

/** Parses `--min-balance-hours`: hours with at most one decimal. */
export function parseHours(value: string): bigint {
  const m = /^(\d+)(?:\.(\d))?$/.exec(value.trim());
  if (!m)
    throw new Error(
      `--min-balance-hours must be a number of hours with at most one decimal, e.g. 24 or 1.5, got '${value}'`,
    );
  return BigInt(m[1]!) * 10n + BigInt(m[2] ?? "0");
}

function tripIf(gate: string, hit: boolean, detail: string, clear: string): GateResult {
  return { gate, status: hit ? "tripped" : "passed", detail: hit ? detail : clear };
}

/** Judges every gate of the spec against the report, in the order given. */
export function evaluateGates(r: PlanReport, spec: GateSpec): GateResult[] {
  const out: GateResult[] = [];
  const lines = (pred: (a: string) => boolean) => r.instances.filter((l) => pred(l.action));
  for (const cond of spec.failOn) {
    if (cond === "unjudged") continue;
    switch (cond) {
      case "disk-loss": {
        const lost = r.instances.filter(losesDisk);
        out.push(
          tripIf(
            cond,
            lost.length > 0,
            `${plural(lost.length, "disk")} destroyed: ${lost.map((l) => l.address).join(", ")}`,
            "no disk is destroyed",
          ),
        );
        break;
      }
      case "replace": {
        const l = lines((a) => a === "replace");
        out.push(
          tripIf(
            cond,
            l.length > 0,
            `${plural(l.length, "instance")} replaced: ${l.map((x) => x.address).join(", ")}`,
            "no instance is replaced",
          ),
        );
        break;
      }
      case "destroy": {
        const l = lines((a) => a === "destroy");
        out.push(
          tripIf(
            cond,
            l.length > 0,
            `${plural(l.length, "instance")} destroyed: ${l.map((x) => x.address).join(", ")}`,
            "no instance is destroyed",
          ),
        );
        break;
      }
      case "forget": {
        const l = lines((a) => a === "forget");
        out.push(
          tripIf(
            cond,
            l.length > 0,
            `${plural(l.length, "instance")} left running outside the state: ${l.map((x) => x.address).join(", ")}`,
            "no instance leaves the state",
          ),
        );
        break;
      }
      case "key-revoke": {
        const k = r.keys.filter((x) => x.action === "revoke" || x.action === "replace");
        out.push(
          tripIf(
            cond,
            k.length > 0,
            `${plural(k.length, "API key")} revoked: ${k.map((x) => x.address).join(", ")}`,
            "no API key is revoked",
          ),
        );
        break;
      }
      case "refusal": {
        const errors = r.instances.flatMap((l) =>
          l.findings.filter((f) => f.severity === "error").map((f) => `${l.address}: ${f.summary}`),
        );
        if (r.limit.status === "broken")
          errors.push(
            `the instance limit: ${r.limit.after} instances after the change, at most ${r.limit.limit}`,
          );
        out.push(tripIf(cond, errors.length > 0, errors.join("; "), "no certain refusal is foreseen"));
        break;
      }
      case "balance-rule":
        if (r.rule.status === "not-judged")
          out.push({ gate: cond, status: "not-judged", detail: r.rule.detail });
        else
          out.push(
            tripIf(
              cond,
              r.rule.status === "broken" || r.rule.status === "may-fail",
              r.rule.detail,
              r.rule.status === "met" ? "met" : "the change deploys and starts nothing",
            ),
          );
        break;
    }
  }
  const after = r.burn.after;
  if (spec.maxBurnPerHour !== undefined) {
    const gate = `max-burn-per-hour=${formatMicro(spec.maxBurnPerHour)}`;
    if (after === undefined)
      out.push({
        gate,
        status: "not-judged",
        detail: `the burn after the change is not known (${r.burn.unpriced.join(", ")})`,
      });
    else
      out.push(
        tripIf(
          gate,
          after > spec.maxBurnPerHour,
          `the burn after the change, ${formatPerHour(after)}, is above ${formatPerHour(spec.maxBurnPerHour)}`,
          `${formatPerHour(after)} after the change`,
        ),
      );
  }
  if (spec.maxBurnIncreasePerHour !== undefined) {
    const gate = `max-burn-increase-per-hour=${formatMicro(spec.maxBurnIncreasePerHour)}`;
    if (after === undefined)
      out.push({
        gate,
        status: "not-judged",
        detail: `the burn after the change is not known (${r.burn.unpriced.join(", ")})`,
      });
    else {
      const inc = after - r.burn.before;
      out.push(
        tripIf(
          gate,
          inc > spec.maxBurnIncreasePerHour,
          `the burn rises by ${formatPerHour(inc)}, above ${formatPerHour(spec.maxBurnIncreasePerHour)}`,
          `the burn changes by ${formatPerHour(inc)}`,
        ),
      );
    }
  }
  if (spec.minBalanceTenths !== undefined) {
    const min = spec.minBalanceTenths;
    const gate = `min-balance-hours=${min / 10n}.${min % 10n}`;
    if (!r.balance.read) out.push({ gate, status: "not-judged", detail: r.balance.reason });
    else if (after === undefined)
      out.push({ gate, status: "not-judged", detail: "the burn after the change is not known" });
    else {
      const h = r.balance.hoursAfter;
      // No burn at all: the balance lasts for ever.
      const covered = h === undefined ? undefined : h.tenths;
      out.push(
        tripIf(
          gate,
          covered !== undefined && covered < min,
          `the balance covers ${h ? formatHours(h) : "∞"} after the change, fewer than ${min / 10n}.${min % 10n} h`,
          `the balance covers ${h ? formatHours(h) : "every hour: nothing burns"} after the change`,
        ),
      );
    }
  }
  if (spec.failOn.includes("unjudged")) {
    const unjudged = out.filter((g) => g.status === "not-judged").map((g) => g.gate);
    if (r.rule.status === "not-judged" && !unjudged.includes("balance-rule")) unjudged.push("balance-rule");
    out.push(
      tripIf("unjudged", unjudged.length > 0, `not judged: ${unjudged.join(", ")}`, "every gate was judged"),
    );
  }
  return out;
}

/** Whether any gate tripped. */
export function tripped(gates: readonly GateResult[]): boolean {
  return gates.some((g) => g.status === "tripped");
}
