import type { Instance } from "../api/schemas";
import { INSTANCE_LIMIT } from "../market/plan-checks";
import {
  formatMicro,
  hoursCovered,
  instanceHourlyBurn,
  type Micro,
  maxMicro,
  toMicro,
} from "../report/money";
import { instanceSchema } from "../resources/instance/schema";
import type { ResourceChange } from "../tfstate/plan";
import type { LoadedPlan } from "../tfstate/sources";
import {
  API_KEY_TYPE,
  INSTANCE_TYPE,
  num,
  plannedDeploy,
  priceMicro,
  ranged,
  replaceReasons,
  shownText,
  str,
} from "./inputs";
import type {
  BalanceFigures,
  BalanceRuleVerdict,
  BurnFigures,
  InstanceAction,
  InstanceLine,
  KeyLine,
  LimitVerdict,
  PlanReport,
} from "./model";
import type { PlanReadings } from "./readings";

// A plan report from a plan and what the API let us read. Pure. The organization's burn is the
// balance rule's (contract 4.2, plan-checks.ts instanceHourlyBurn): GPU and disk of every instance
// running, starting, creating or stopping, disk only of stopped ones. Each change moves that burn
// by the difference between its instance's share after and now, so instances the plan does not
// touch (other stacks, strays) stay in both figures.
//
// The rule is checked at each deploy and start. Terraform destroys the old half of a replacement
// first (unless create_before_destroy), but orders unrelated changes as it likes, so the change is
// judged twice: at best (every destroy and stop first: the last deploy faces the burn after the
// change) and at worst (every deploy and start before any destroy or stop).

const ORDER: readonly InstanceAction[] = [
  "replace",
  "destroy",
  "forget",
  "create",
  "stop",
  "start",
  "update",
  "import",
];

/** What the burn and the charges of an instance depend on. */
type Rated = Parameters<typeof instanceHourlyBurn>[0];

/** A burn as a bigint, through the balance rule's own function. */
function burnOf(i: Rated): Micro {
  return BigInt(instanceHourlyBurn(i));
}

/**
 * What an instance is charged per hour once its status settles (contract 1: GPU time while it runs,
 * disk while it is stopped); a creating or starting instance is counted as running, a stopping one
 * as stopped, one in error or being destroyed as nothing.
 */
export function chargeOf(i: Rated): Micro {
  switch (i.status) {
    case "running":
    case "creating":
    case "starting":
      return BigInt(i.price_per_hour_micro);
    case "stopped":
    case "stopping":
      return BigInt(i.disk_gb) * BigInt(i.storage_price_per_gb_hour_micro);
    default:
      return 0n;
  }
}

/** Sets a line's burn and charge after the change from what the instance will be (null: gone; undefined: not known). */
function settle(line: InstanceLine, after: Rated | null | undefined): InstanceLine {
  line.burnAfter = after === undefined ? undefined : after === null ? 0n : burnOf(after);
  line.chargeAfter = after === undefined ? undefined : after === null ? 0n : chargeOf(after);
  return line;
}

function instanceAction(c: ResourceChange): InstanceAction | undefined {
  switch (c.action) {
    case "create":
      return "create";
    case "replace":
      return "replace";
    case "delete":
      return "destroy";
    case "forget":
      return "forget";
    case "update": {
      const before = str(c.before?.desired_status);
      const after = str(c.after?.desired_status);
      if (before !== after && after === "stopped") return "stop";
      if (before !== after && after === "running") return "start";
      return c.importingId ? "import" : "update";
    }
    case "no-op":
      return c.importingId ? "import" : undefined;
    default:
      return undefined;
  }
}

interface Judged {
  line: InstanceLine;
  /** What its deploy or start asks the balance to cover at that moment (creates: GPU and disk, whatever comes after). */
  deployBurn?: Micro;
  /** Values of its deploy the provider's schema refuses (see PlannedDeploy.problems). */
  problems?: string[];
}

/** The schema of disk_gb, whose validators say its range. */
const DISK_GB = instanceSchema.attributes.disk_gb;

/**
 * Whether a deploy's burn (GPU price plus disk times the price per GB-hour) adds up exactly in the
 * balance rule's own function, which works in numbers: at most 2^53 - 1 micro units.
 */
function exactBurn(diskGb: number, perHour: Micro, storagePerGbHour: Micro): boolean {
  return BigInt(diskGb) * storagePerGbHour + perHour <= BigInt(Number.MAX_SAFE_INTEGER);
}

function instanceLine(
  c: ResourceChange,
  action: InstanceAction,
  r: PlanReadings,
  paths?: Map<string, string>,
): Judged {
  const id = str(c.before?.id) ?? c.importingId;
  const record: Instance | undefined = id ? r.instances.find((i) => i.id === id) : undefined;
  const notes: string[] = [];
  if (id && !record && action !== "create") {
    notes.push(
      `instance ${id} is not listed by the API (destroyed outside Terraform, or another organization's): it counts for nothing now`,
    );
  }
  const burnBefore = record ? burnOf(record) : 0n;
  const beforeOffer = c.before?.offer;
  const stateGpu =
    beforeOffer && typeof beforeOffer === "object" && !Array.isArray(beforeOffer) ? beforeOffer : undefined;
  const existingGpu = record?.offer.gpu_model
    ? {
        model: record.offer.gpu_model,
        ...(record.offer.num_gpus !== undefined ? { count: record.offer.num_gpus } : {}),
      }
    : str(stateGpu?.gpu_model)
      ? {
          model: str(stateGpu?.gpu_model)!,
          ...(num(stateGpu?.num_gpus) !== undefined ? { count: num(stateGpu?.num_gpus)! } : {}),
        }
      : undefined;
  // The state's own figures, when the API does not list the instance, held to what the provider
  // could have written there: a disk in the schema's range, prices of 0 or more.
  const oldDisk = record?.disk_gb ?? ranged(DISK_GB, "disk_gb", c.before?.disk_gb).value ?? 0;
  const oldPrice = record ? toMicro(record.price_per_hour_micro) : priceMicro(c.before?.price_per_hour_micro);
  const oldStorage = record
    ? toMicro(record.storage_price_per_gb_hour_micro)
    : priceMicro(c.before?.storage_price_per_gb_hour_micro);
  const base: InstanceLine = {
    address: c.address,
    ...(paths?.get(c.address) ? { constructPath: paths.get(c.address)! } : {}),
    action,
    ...(id && action !== "create" ? { id } : {}),
    label: shownText(c, "label"),
    disk: { kind: "kept", gb: oldDisk },
    burnBefore,
    burnAfter: burnBefore,
    chargeBefore: record ? chargeOf(record) : 0n,
    chargeAfter: record ? chargeOf(record) : 0n,
    reasons: [],
    findings: [],
    notes,
  };
  if (action === "create" || action === "replace") {
    const d = plannedDeploy(c);
    const reading = r.deploys.get(c.address);
    for (const p of d.problems) {
      notes.push(
        `${p} The provider refuses this value, so the plan cannot be applied as it is; its cost is not known.`,
      );
    }
    if (reading?.unpriced) notes.push(`price not known: ${reading.unpriced}`);
    const line: InstanceLine = {
      ...base,
      ...(reading?.gpu
        ? { gpu: reading.gpu }
        : existingGpu && action === "replace"
          ? { gpu: existingGpu }
          : {}),
      ...(reading?.offerId ? { offerId: reading.offerId } : d.offer_id ? { offerId: d.offer_id } : {}),
      ...(reading?.price ? { price: reading.price } : {}),
      disk:
        action === "create"
          ? { kind: "new", gb: d.disk_gb ?? 0 }
          : { kind: "replaced", oldGb: oldDisk, newGb: d.disk_gb },
      findings: reading?.findings ?? [],
    };
    if (action === "replace") {
      line.reasons = replaceReasons(c);
      line.order = c.replaceOrder ?? "delete-first";
      if (oldPrice !== undefined) line.oldPrice = oldPrice;
    }
    let deployBurn: Micro | undefined;
    const price = reading?.price;
    if (
      price &&
      d.disk_gb !== undefined &&
      d.problems.length === 0 &&
      exactBurn(d.disk_gb, price.perHour, price.storagePerGbHour)
    ) {
      const priced = {
        disk_gb: d.disk_gb,
        price_per_hour_micro: Number(price.perHour),
        storage_price_per_gb_hour_micro: Number(price.storagePerGbHour),
      };
      deployBurn = burnOf({ ...priced, status: "creating" });
      settle(line, { ...priced, status: d.desired_status === "stopped" ? "stopped" : "running" });
    } else {
      if (price && d.disk_gb !== undefined && d.problems.length === 0) {
        notes.push(
          `its burn (${price.perHour} + ${d.disk_gb} GB × ${price.storagePerGbHour} micro units per hour) is too large to add up exactly, so it is not known`,
        );
      }
      settle(line, undefined);
    }
    return {
      line,
      ...(deployBurn !== undefined ? { deployBurn } : {}),
      ...(d.problems.length > 0 ? { problems: d.problems } : {}),
    };
  }
  const shared = {
    ...base,
    ...(existingGpu ? { gpu: existingGpu } : {}),
    ...(record?.offer.id
      ? { offerId: record.offer.id }
      : str(c.before?.offer_id)
        ? { offerId: str(c.before?.offer_id)! }
        : {}),
    ...(oldPrice !== undefined && oldStorage !== undefined
      ? {
          price: {
            perHour: oldPrice,
            storagePerGbHour: oldStorage,
            estimate: false,
            basis: "the instance's rate, fixed when it was rented",
          },
        }
      : {}),
  };
  switch (action) {
    case "destroy":
      return { line: settle({ ...shared, disk: { kind: "destroyed", gb: oldDisk } }, null) };
    case "stop":
      return { line: settle(shared, record ? { ...record, status: "stopped" } : null) };
    case "start": {
      const line = settle(shared, record ? { ...record, status: "running" } : null);
      return { line, deployBurn: line.burnAfter! };
    }
    case "forget":
      notes.push("it leaves the state but keeps running and billing: a stray (`gpurental strays` finds it)");
      return { line: shared };
    default:
      return { line: shared };
  }
}

function keyLine(c: ResourceChange, paths?: Map<string, string>): KeyLine | undefined {
  const action =
    c.action === "create"
      ? "create"
      : c.action === "delete"
        ? "revoke"
        : c.action === "replace"
          ? "replace"
          : c.action === "forget"
            ? "forget"
            : c.importingId
              ? "import"
              : undefined;
  if (!action) return undefined;
  const id = str(c.before?.id) ?? c.importingId;
  return {
    address: c.address,
    ...(paths?.get(c.address) ? { constructPath: paths.get(c.address)! } : {}),
    action,
    ...(id && action !== "create" ? { id } : {}),
    name: shownText(c, "name"),
    kind: shownText(c, "kind"),
  };
}

function judgeRule(
  judged: readonly Judged[],
  burn: BurnFigures,
  balance: BalanceFigures,
): BalanceRuleVerdict {
  const deploying = judged.filter(
    (j) => j.line.action === "create" || j.line.action === "replace" || j.line.action === "start",
  );
  if (deploying.length === 0) {
    return {
      status: "not-applicable",
      detail: "The change deploys and starts nothing; the rule is checked only at deploy and start.",
    };
  }
  const unpriced = deploying.filter((j) => j.deployBurn === undefined || j.line.burnAfter === undefined);
  if (unpriced.length > 0 || burn.after === undefined || burn.worstCase === undefined) {
    return {
      status: "not-judged",
      detail: `Not judged: the price of ${unpriced.map((j) => j.line.address).join(", ") || "a new instance"} is not known.`,
    };
  }
  // At best the last deploy faces the burn after the change, plus whatever its deploy costs more
  // than the instance will (a create that is stopped right after).
  const extra = deploying.reduce((m, j) => maxMicro(m, j.deployBurn! - j.line.burnAfter!), 0n);
  const required = burn.after + extra;
  const worstCase = maxMicro(burn.worstCase, required);
  if (!balance.read) {
    return { status: "not-judged", required, worstCase, detail: `Not judged: ${balance.reason}.` };
  }
  const b = balance.balance;
  if (b < required) {
    return {
      status: "broken",
      required,
      worstCase,
      detail: `The balance ${formatMicro(b)} does not cover one hour of the burn after the change, ${formatMicro(required)}: the last deploy or start is refused with INSUFFICIENT_BALANCE whatever the order. Top up at least ${formatMicro(required - b)}, or stop or destroy other instances.`,
    };
  }
  if (b < worstCase) {
    return {
      status: "may-fail",
      required,
      worstCase,
      detail: `The balance ${formatMicro(b)} covers the burn after the change (${formatMicro(required)}) but not the ${formatMicro(worstCase)} reached if every deploy and start lands before the destroys and stops: a deploy may be refused with INSUFFICIENT_BALANCE depending on the order Terraform takes. Top up ${formatMicro(worstCase - b)} to be safe.`,
    };
  }
  return {
    status: "met",
    required,
    worstCase,
    detail: `The balance ${formatMicro(b)} covers one hour of the burn at every step, in any order (at most ${formatMicro(worstCase)}).`,
  };
}

function judgeLimit(judged: readonly Judged[], listed: number): LimitVerdict {
  const creates = judged.filter((j) => j.line.action === "create").length;
  const createFirst = judged.filter(
    (j) => j.line.action === "replace" && j.line.order === "create-first",
  ).length;
  const destroys = judged.filter((j) => j.line.action === "destroy").length;
  const after = listed + creates - destroys;
  const worstCase = listed + creates + createFirst;
  const base = { before: listed, after, worstCase, limit: INSTANCE_LIMIT };
  if (creates + judged.filter((j) => j.line.action === "replace").length === 0)
    return { status: "not-applicable", ...base };
  if (after > INSTANCE_LIMIT) return { status: "broken", ...base };
  if (worstCase > INSTANCE_LIMIT) return { status: "may-fail", ...base };
  return { status: "met", ...base };
}

/** Builds the report (without gates) from a plan and the readings. */
export function buildPlanReport(loaded: LoadedPlan, r: PlanReadings): PlanReport {
  const { plan } = loaded;
  const paths = loaded.cdktf?.constructPaths;
  const judged: Judged[] = [];
  const keys: KeyLine[] = [];
  for (const c of plan.changes) {
    if (c.mode !== "managed") continue;
    if (c.type === INSTANCE_TYPE) {
      const action = instanceAction(c);
      if (action) judged.push(instanceLine(c, action, r, paths));
    } else if (c.type === API_KEY_TYPE) {
      const k = keyLine(c, paths);
      if (k) keys.push(k);
    }
  }
  judged.sort((a, b) => ORDER.indexOf(a.line.action) - ORDER.indexOf(b.line.action));

  const before = r.instances.reduce((n, i) => n + burnOf(i), 0n);
  const chargedBefore = r.instances.reduce((n, i) => n + chargeOf(i), 0n);
  const unpriced = judged.filter((j) => j.line.burnAfter === undefined).map((j) => j.line.address);
  let after: Micro | undefined;
  let chargedAfter: Micro | undefined;
  let worstCase: Micro | undefined;
  if (unpriced.length === 0) {
    after = judged.reduce((n, j) => n + j.line.burnAfter! - j.line.burnBefore, before);
    chargedAfter = judged.reduce((n, j) => n + j.line.chargeAfter! - j.line.chargeBefore, chargedBefore);
    const increases = judged
      .filter((j) => j.deployBurn !== undefined)
      .map((j) => ({
        j,
        inc: j.line.action === "start" ? j.deployBurn! - j.line.burnBefore : j.deployBurn!,
      }));
    const total = increases.reduce((n, x) => n + x.inc, 0n);
    worstCase = increases.reduce((m, x) => {
      const own =
        x.j.line.action === "replace" && x.j.line.order !== "create-first" ? x.j.line.burnBefore : 0n;
      const v = before + total - own;
      return v > m ? v : m;
    }, after);
  }
  const burn: BurnFigures = { before, after, unpriced, worstCase, chargedBefore, chargedAfter };
  const balance: BalanceFigures =
    "micro" in r.balance
      ? {
          read: true,
          balance: r.balance.micro,
          hoursBefore: hoursCovered(r.balance.micro, before),
          hoursAfter: after === undefined ? undefined : hoursCovered(r.balance.micro, after),
        }
      : { read: false, reason: r.balance.unread };
  const unread: string[] = [];
  if (!balance.read)
    unread.push(`Balance: ${balance.reason}; the hours it covers and the balance rule are not judged.`);
  for (const j of judged) {
    for (const p of j.problems ?? []) {
      unread.push(
        `Cost of ${j.line.address}: ${p} The provider refuses it, so the gates that depend on its cost are not judged.`,
      );
    }
    const reading = r.deploys.get(j.line.address);
    if (reading?.unpriced) unread.push(`Price of ${j.line.address}: ${reading.unpriced}.`);
  }
  return {
    source: plan.source,
    readAt: r.now,
    ...(plan.terraformVersion ? { terraformVersion: plan.terraformVersion } : {}),
    ...(plan.timestamp ? { planTimestamp: plan.timestamp } : {}),
    ...(loaded.cdktf ? { cdktfStack: loaded.cdktf.stack } : {}),
    errored: plan.errored,
    instances: judged.map((j) => j.line),
    keys,
    burn,
    balance,
    rule: judgeRule(judged, burn, balance),
    limit: judgeLimit(judged, r.instances.length),
    unread,
    gates: [],
  };
}
