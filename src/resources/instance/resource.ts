import type { InstanceStatus } from "../../api/schemas";
import {
  type CtyValue,
  type Diagnostic,
  type HandlerContext,
  isUnknown,
  type ResourceDefinition,
  readPrivate,
  toNumber,
  unknown,
  writePrivate,
} from "../../framework";
import { logger } from "../../log";
import { sameFilter, toOfferFilter } from "../../market/offer-filter";
import { budgetOf, READ_TIMEOUT_MS, within } from "../../provider/deadline";
import { bestEffort, lostRunNotice } from "../../provider/journal-notes";
import { clientOf, deployOf, type ProviderData } from "../../provider/provider-data";
import { errorToDiagnostic } from "../../provider/refusals";
import { sweepLostKeysOf } from "../api-key/journal";
import { noStateToGenerateFrom } from "../generate-config";
import { objectIdentity } from "../identity";
import {
  claim,
  claimRead,
  holdInPlan,
  PLANNED_ADOPTION,
  planAdoption,
  plannedAdoption,
  release,
} from "./adoption";
import { ACCESS_SECRETS, known, priorArgs, storesSecrets, toArgs, toState } from "./convert";
import { OVERLAY_KEYS, validateEnv } from "./env";
import {
  type DesiredStatus,
  INSTANCE_COMPUTED_ATTRIBUTES,
  INSTANCE_STABLE_ATTRIBUTES,
  type InstanceModel,
} from "./model";
import type { OpContext } from "./op-context";
import {
  createInstance,
  deleteInstance,
  INSTANCE_DEFAULT_TIMEOUTS,
  readInstance,
  STILL_CREATING,
} from "./ops";
import { judgeFilterChange, planCreateChecks } from "./plan";
import { updateInstance } from "./power";
import {
  CREATE_ONLY,
  type InstancePlan,
  type InstanceState,
  instanceSchema,
  UNREAD_AFTER_IMPORT,
  unreadAfterImport,
} from "./schema";

// gpurental_instance: one rented GPU offer running one template. Every argument except
// desired_status, timeouts and offer_filter forces replacement, because the API can only stop,
// start and destroy an instance; a changed offer_filter replaces it only when the running instance
// no longer satisfies it. The schema lives in schema.ts, the lifecycle in ops.ts and power.ts
// (the only way to deploys: deploy.ts is behind them) and what plans ask the API in plan.ts; this
// file is the Terraform side: plan adjustments, with the deploy journal as plans see it in
// adoption.ts and the conversion between framework values and the plain model in convert.ts.

const opsLog = logger.child("instance");

/**
 * Set on an instance whose create was cut short (Terraform's stop, the create's timeout) while it
 * was still being created, and kept until it runs: the next plan waits for it in place, and
 * replaces it if it ended in error instead (what a tainted create would have done).
 */
const CREATE_UNFINISHED = "create_unfinished";

function createUnfinished(priv: Buffer): boolean {
  return readPrivate(priv)[CREATE_UNFINISHED] === true;
}

function withoutKey(priv: Buffer, key: string): Buffer {
  const { [key]: _dropped, ...rest } = readPrivate(priv);
  return writePrivate(rest);
}

/**
 * Set by a refresh that finds the instance powered otherwise than the state recorded, and not by
 * Terraform: a gpurental_instance_power action, the console, or the automatic stop when the
 * balance ran out. The configuration still decides the power (an action changes no state); the
 * plan that moves the instance back uses this to say why (docs/design/actions-and-identity.md).
 */
const POWER_CHANGED = "power_changed_outside";

interface PowerChange {
  from: DesiredStatus;
  to: DesiredStatus;
  /** The instance's status_changed_at when the refresh found it. */
  at: string;
}

/** The private data after a refresh: the power change it found, or none. */
function notePowerChange(priv: Buffer, prior: State, now: InstanceModel | null): Buffer {
  const from = prior.desired_status;
  const to = now?.desired_status;
  const settled = now?.status === "running" || now?.status === "stopped";
  const changed = now && settled && (from === "running" || from === "stopped") && to !== from;
  const { [POWER_CHANGED]: had, ...rest } = readPrivate(priv);
  if (!changed && had === undefined) return priv;
  if (!changed) return writePrivate(rest);
  const change: PowerChange = { from, to: to as DesiredStatus, at: now.status_changed_at ?? "" };
  return writePrivate({ ...rest, [POWER_CHANGED]: change });
}

function powerChangeOf(priv: Buffer): PowerChange | undefined {
  const v = readPrivate(priv)[POWER_CHANGED] as Partial<PowerChange> | undefined;
  const ok = (x: unknown): x is DesiredStatus => x === "running" || x === "stopped";
  return v && ok(v.from) && ok(v.to) && typeof v.at === "string"
    ? { from: v.from, to: v.to, at: v.at }
    : undefined;
}

/**
 * The warning of a plan that moves an instance back to its desired_status after a refresh found
 * it powered otherwise: never silent, and with the two ways to keep the change.
 */
function warnPowerRestored(
  req: { plan: Plan; config: Plan; private: Buffer },
  state: State,
  ctx: HandlerContext<ProviderData>,
): void {
  const change = powerChangeOf(req.private);
  const planned = req.plan.desired_status;
  if (!change || !known(planned) || planned !== change.from || state.desired_status !== change.to) return;
  const set = req.config.desired_status === null ? `"${planned}" (the default when unset)` : `"${planned}"`;
  const verb = planned === "running" ? "starts" : "stops";
  const since = change.at ? ` since ${change.at}` : "";
  ctx.diags.addAttributeWarning(
    [{ attribute: "desired_status" }],
    `Instance ${state.id} was ${change.to} outside this configuration: this plan ${verb} it again`,
    `Instance ${state.id} has been ${change.to}${since}, by a gpurental_instance_power action, the console${change.to === "stopped" ? " or the automatic stop when the balance ran out" : ""}. Its desired_status is ${set}, so applying this plan ${verb} it${planned === "running" ? " and its GPU billing resumes" : ""}. To leave its power to actions, add lifecycle { ignore_changes = [desired_status] } to this resource; to keep it ${change.to}, set desired_status = "${change.to}".`,
  );
}

type Plan = InstancePlan;
type State = InstanceState;

/** Time left for an operation, with a margin so the waits end before the framework's own deadline. */
function opContext(ctx: HandlerContext<ProviderData>, fallback: string): OpContext {
  const total = ctx.timeoutMs ?? parseMinutes(fallback);
  const margin = Math.min(5000, Math.floor(total * 0.05));
  return {
    client: clientOf(ctx.providerData),
    signal: ctx.signal,
    timeoutMs: Math.max(1000, total - margin),
  };
}

function parseMinutes(d: string): number {
  return Number.parseInt(d, 10) * 60_000;
}

/** The deploy checks of a plan that creates the instance, on whatever of the plan is known. */
async function planTimeChecks(plan: Plan, config: Plan, ctx: HandlerContext<ProviderData>): Promise<void> {
  const data = ctx.providerData;
  if (!data.configured) return;
  const { offer_id, template_id, disk_gb, ssh_key_id } = plan;
  const filter = toOfferFilter(plan.offer_filter as CtyValue);
  // A disk known only after apply: the deploy will tell.
  if (!known(disk_gb) || disk_gb === null) return;
  // A filter, pinned offer, template or SSH key known only after apply skips just the checks
  // that need it.
  const pinned = !filter && known(offer_id) && typeof offer_id === "string" ? offer_id : null;
  const { diagnostics, template } = await planCreateChecks(
    data,
    {
      offer_id: pinned,
      offer_filter: filter ?? null,
      template_id: known(template_id) ? template_id : null,
      disk_gb: toNumber(disk_gb),
      ssh_key_id: known(ssh_key_id) ? ssh_key_id : null,
    },
    ctx.signal,
  );
  ctx.diags.add(...diagnostics);
  // Template variables that carry the access token cannot be overridden either.
  if (template) {
    const env = known(plan.env) && plan.env !== null ? plan.env : null;
    const secret = known(plan.secret_env) && plan.secret_env !== null ? plan.secret_env : null;
    // Write-only: only the configuration has them.
    const secretWo =
      known(config.secret_env_wo) && config.secret_env_wo !== null ? config.secret_env_wo : null;
    const unset = known(plan.unset_env) && plan.unset_env !== null ? plan.unset_env : null;
    const knownMap = (m: Record<string, CtyValue> | null) =>
      m && Object.values(m).every(known) ? (m as Record<string, string | null>) : null;
    const args = {
      env: knownMap(env),
      secret_env: knownMap(secret),
      secret_env_wo: knownMap(secretWo),
      unset_env: unset?.every(known) ? (unset as (string | null)[]) : null,
    };
    const extra = validateEnv(args, template.env).filter(
      (d) => d.severity === "warning" && !OVERLAY_KEYS.some((k) => d.summary.startsWith(`${k} `)),
    );
    ctx.diags.add(...extra);
  }
}

/** Exactly one of offer_id and offer_filter; an unknown value counts as set. */
function checkOfferChoice(config: Plan): Diagnostic[] {
  const pinned = config.offer_id !== null;
  const filtered = config.offer_filter !== null;
  if (pinned && filtered) {
    return [
      {
        severity: "error",
        summary: "Both offer_id and offer_filter are set",
        detail:
          "Set exactly one of them: offer_filter to let the provider choose the cheapest matching offer when the instance is created (the usual choice), or offer_id to pin one offer.",
        path: [{ attribute: "offer_filter" }],
      },
    ];
  }
  if (!pinned && !filtered) {
    return [
      {
        severity: "error",
        summary: "Missing offer_filter or offer_id",
        detail:
          'Set exactly one of them: offer_filter = { gpu_model = "RTX 4090", num_gpus = 1, max_price_per_hour_micro = 3000000 } lets the provider choose the cheapest matching offer when the instance is created; offer_id pins one offer (see the gpurental_offers data source).',
        path: [{ attribute: "offer_filter" }],
      },
    ];
  }
  return [];
}

/**
 * secret_env_wo needs its version number: without it a change of the values could never reach the
 * instance, since Terraform does not see write-only values change. An unknown value counts as set.
 */
function checkSecretEnvWoVersion(config: Plan): Diagnostic[] {
  if (config.secret_env_wo === null || config.secret_env_wo_version !== null) return [];
  return [
    {
      severity: "error",
      summary: "Missing secret_env_wo_version",
      detail:
        "secret_env_wo is write-only: Terraform never stores it, so it cannot see its values change. Set secret_env_wo_version = 1 next to it, and change that number whenever the values change; that redeploys the instance (a replacement) with the new values.",
      path: [{ attribute: "secret_env_wo_version" }],
    },
  ];
}

/**
 * A changed offer_filter replaces the instance only when the instance no longer satisfies it; the
 * market is never asked. A filter known only after apply cannot be judged, so it replaces, as a
 * changed argument known only after apply does.
 */
function judgeOfferFilter(
  req: { plan: Plan; requiresReplace(at: { attribute: string }[]): void },
  state: State,
  ctx: HandlerContext<ProviderData>,
): void {
  if (req.plan.offer_filter === null) return;
  const wanted = toOfferFilter(req.plan.offer_filter as CtyValue);
  if (wanted === null) return;
  if (wanted === undefined) {
    req.requiresReplace([{ attribute: "offer_filter" }]);
    ctx.diags.addAttributeWarning(
      [{ attribute: "offer_filter" }],
      "offer_filter is known only after apply",
      `Whether instance ${state.id} satisfies the new offer_filter cannot be judged before it is known, so the plan replaces it. Give offer_filter values known at plan time to have the change judged instead.`,
    );
    return;
  }
  if (sameFilter(wanted, toOfferFilter(state.offer_filter) ?? null)) return;
  const verdict = judgeFilterChange(priorArgsForJudging(state), wanted);
  ctx.diags.add(...verdict.diagnostics);
  if (verdict.replace) req.requiresReplace([{ attribute: "offer_filter" }]);
}

function priorArgsForJudging(s: State) {
  const prior = priorArgs(s);
  return {
    id: s.id ?? "",
    offer: prior.offer ?? null,
    price_per_hour_micro: s.price_per_hour_micro === null ? null : toNumber(s.price_per_hour_micro),
  };
}

/**
 * Plans store_access_secrets and the attributes it governs on an update. A state from before the
 * argument, or just imported (null), keeps null while the configuration leaves it unset, so
 * upgrading the provider or importing plans nothing; `false` plans the secrets null, and secrets
 * the state does not hold (turned back on) are planned unknown, for the update to read.
 */
function planAccessSecrets(req: { plan: Plan; config: Plan }, state: State): void {
  const p = req.plan as Record<string, CtyValue>;
  if (req.config.store_access_secrets === null && state.store_access_secrets === null) {
    p.store_access_secrets = null;
  }
  const wanted = p.store_access_secrets ?? null;
  if (wanted === false) {
    for (const a of ACCESS_SECRETS) p[a] = null;
  } else if (!known(wanted) || !storesSecrets(state)) {
    for (const a of ACCESS_SECRETS) p[a] = unknown;
  }
}

/** The `gpurental_instance` resource. */
export const instanceResource = {
  typeName: "gpurental_instance",
  schema: instanceSchema,

  validateConfig({ config }, ctx) {
    // Only what is known is checked; unknown maps and sets are left to the plan after them.
    const env = known(config.env) && config.env !== null ? config.env : null;
    const secret = known(config.secret_env) && config.secret_env !== null ? config.secret_env : null;
    const secretWo =
      known(config.secret_env_wo) && config.secret_env_wo !== null ? config.secret_env_wo : null;
    const unset = known(config.unset_env) && config.unset_env !== null ? config.unset_env : null;
    // An unknown value still counts as an entry; a null one is not set (env.ts, EnvMap).
    const onlyKnown = (m: Record<string, CtyValue> | null): Record<string, string | null> | null =>
      m === null
        ? null
        : Object.fromEntries(
            Object.entries(m).map(([k, v]) => [
              k,
              v === null ? null : known(v) && typeof v === "string" ? v : "",
            ]),
          );
    ctx.diags.add(...checkOfferChoice(config));
    ctx.diags.add(...checkSecretEnvWoVersion(config));
    ctx.diags.add(
      ...validateEnv({
        env: onlyKnown(env as Record<string, CtyValue> | null),
        secret_env: onlyKnown(secret as Record<string, CtyValue> | null),
        secret_env_wo: onlyKnown(secretWo as Record<string, CtyValue> | null),
        unset_env: unset ? unset.filter((v): v is string => known(v) && typeof v === "string") : null,
      }),
    );
  },

  async modifyPlan(req, ctx) {
    const { plan, state } = req;
    if (state === null) {
      const p = plan as Record<string, CtyValue>;
      if (plan.store_access_secrets === false) for (const a of ACCESS_SECRETS) p[a] = null;
      await planTimeChecks(plan, req.config, ctx);
      planAdoption(plan, req, ctx);
      const settings = deployOf(ctx.providerData);
      const notice = settings.announceLostRuns && settings.journal ? lostRunNotice(settings.journal) : null;
      if (notice) ctx.diags.addWarning(notice.summary, notice.detail);
      return;
    }
    // Every plan shows the provider the instances its state holds: the journal's proof of a claim
    // (with -refresh=false, the only one).
    claim(ctx, state.id);
    claimRead(ctx, state);
    if (state.id) holdInPlan(ctx, state.id, "held");
    if (unreadAfterImport(req.private)) {
      const adopted = CREATE_ONLY.filter((a) => state[a] === null && plan[a] !== null);
      if (adopted.length > 0) {
        const names = adopted.map((a) => `\`${a}\``).join(", ");
        ctx.diags.addWarning(
          `Arguments of imported instance ${state.id} recorded as configured`,
          `The service does not return ${names}, so the import could not read them. This apply records the configured values in state without changing the instance; later changes to them replace it. If the instance runs with other values, replace it with terraform apply -replace=<address>.`,
        );
      }
    }
    const unfinished = createUnfinished(req.private);
    if (unfinished && state.status === "error") {
      // The deploy a cut-short create kept ended in error: replaced, as a tainted create would be.
      (plan as Record<string, CtyValue>).status = unknown;
      req.requiresReplace([{ attribute: "status" }]);
      ctx.diags.addWarning(
        `Instance ${state.id} ended in error after its create was cut short: replaced`,
        `An earlier apply stopped waiting for instance ${state.id} while it was being created and kept it; it has since ended in error (${state.error_code ?? "no error_code"}${state.error_message ? `: ${state.error_message}` : ""}), so this apply replaces it.`,
      );
      return;
    }
    const settling = STILL_CREATING.has(state.status as InstanceStatus);
    if (settling) {
      ctx.diags.addWarning(
        `Instance ${state.id} is still ${state.status}: this apply waits for it`,
        `Instance ${state.id} was kept while it was being created. Applying waits for it in place (within timeouts.update) and ${known(plan.desired_status) && plan.desired_status === "stopped" ? "then stops it" : "records it once it runs"}; nothing is deployed again. If it ends in error, the apply fails and the next one replaces it.`,
      );
    }
    if (state.status === "error") {
      // Nothing in place can bring an instance back from error; say so instead of a silent no-op.
      ctx.diags.addWarning(
        `${state.error_code ?? "error"}: instance ${state.id} is in error`,
        `${state.error_message ? `The platform said: ${state.error_message}. ` : ""}An instance in error cannot be started or stopped. Replace it with terraform apply -replace=<address>, or remove it from the configuration to destroy it.`,
      );
    }
    judgeOfferFilter(req, state, ctx);
    warnPowerRestored(req, state, ctx);
    // A power change (or one not known yet) moves every value that follows the status; anything
    // else (only timeouts) changes nothing at the API, so every computed value keeps its prior
    // value, null ones included.
    const powerChange =
      settling || !known(plan.desired_status) || plan.desired_status !== state.desired_status;
    const p = plan as Record<string, CtyValue>;
    const prior = state as Record<string, CtyValue>;
    for (const a of INSTANCE_COMPUTED_ATTRIBUTES) {
      p[a] = powerChange && !INSTANCE_STABLE_ATTRIBUTES.includes(a) ? unknown : (prior[a] ?? null);
    }
    p.jupyter_address = powerChange ? unknown : (prior.jupyter_address ?? null);
    planAccessSecrets(req, state);
  },

  async create(req, ctx) {
    const { plan, config } = req;
    const args = toArgs(plan, config);
    const settings = deployOf(ctx.providerData);
    await sweepLostKeysOf(ctx.providerData, ctx.signal);
    const adopt = plannedAdoption(req.private);
    req.private = withoutKey(req.private, PLANNED_ADOPTION);
    const r = await createInstance(
      args,
      {
        ...opContext(ctx, INSTANCE_DEFAULT_TIMEOUTS.create),
        settings,
        ...(adopt === undefined ? {} : { adopt }),
      },
      (msg) => opsLog.info(msg, { resource: "gpurental_instance" }),
    );
    ctx.diags.add(...r.diagnostics);
    const entry = r.entry;
    if (r.state && entry) bestEffort("a handed instance", () => settings.journal?.handed(entry));
    if (r.unfinished) req.private = writePrivate({ ...readPrivate(req.private), [CREATE_UNFINISHED]: true });
    return r.state ? toState(r.state, plan.store_access_secrets as boolean | null) : null;
  },

  async read(req, ctx) {
    const { state } = req;
    // With a provider configuration known only after apply, the state stays as it was.
    const data = ctx.providerData;
    if (!data.configured) return state;
    const r = await readInstance(state.id!, priorArgs(state), {
      client: data.client,
      signal: ctx.signal,
      timeoutMs: ctx.timeoutMs ?? READ_TIMEOUT_MS,
    });
    ctx.diags.add(...r.diagnostics);
    if (r.diagnostics.some((d) => d.severity === "error")) return state;
    // A kept deploy that has come to run (or stopped) needs no more finishing.
    if (
      r.state &&
      createUnfinished(req.private) &&
      !STILL_CREATING.has(r.state.status) &&
      r.state.status !== "error"
    )
      req.private = withoutKey(req.private, CREATE_UNFINISHED);
    if (r.state) {
      claim(ctx, state.id);
      claimRead(ctx, r.state);
    } else release(ctx, state.id);
    req.private = notePowerChange(req.private, state, r.state);
    return r.state ? toState(r.state, state.store_access_secrets, storesSecrets(state)) : null;
  },

  async update(req, ctx) {
    const { plan, state } = req;
    const planned = toArgs(plan);
    const settling = STILL_CREATING.has(state.status as InstanceStatus);
    // Only timeouts changed, or arguments adopted after an import: nothing to do at the API, and
    // the plan holds the values to keep. Either way the import marker has done its job.
    if (!settling && planned.desired_status === state.desired_status) {
      req.private = writePrivate({});
      // Secrets the state did not hold (store_access_secrets turned on, or after an import).
      if (ACCESS_SECRETS.some((a) => isUnknown(plan[a]))) {
        const r = await readInstance(state.id!, priorArgs(state), {
          client: clientOf(ctx.providerData),
          signal: ctx.signal,
          timeoutMs: ctx.timeoutMs ?? READ_TIMEOUT_MS,
        });
        ctx.diags.add(...r.diagnostics);
        if (!r.state) return state;
        const { access_token, jupyter_url, open_url } = r.state;
        return { access_token, jupyter_url, open_url };
      }
      return {};
    }
    // A still-creating instance (a create cut short kept it) is waited for, then moved to the
    // desired status.
    const r = await updateInstance(
      state.id!,
      planned,
      opContext(ctx, INSTANCE_DEFAULT_TIMEOUTS.update),
      priorArgs(state),
    );
    if (settling && r.state?.status === "error") {
      r.diagnostics = r.diagnostics.map((d) =>
        d.severity === "error"
          ? {
              ...d,
              detail: `${d.detail} Instance ${state.id} ended in error while it was being created, after an earlier create was cut short; the next terraform apply replaces it.`,
            }
          : d,
      );
    }
    ctx.diags.add(...r.diagnostics);
    if (!r.state) return state;
    // The import marker has done its job; the unfinished-create marker stays until the instance
    // has run (set here too when it ended in error, so that the next plan replaces it).
    const stillUnfinished =
      (createUnfinished(req.private) && STILL_CREATING.has(r.state.status)) ||
      (settling && r.state.status === "error");
    req.private = writePrivate(stillUnfinished ? { [CREATE_UNFINISHED]: true } : {});
    return toState(r.state, plan.store_access_secrets as boolean | null);
  },

  async delete({ state }, ctx) {
    await sweepLostKeysOf(ctx.providerData, ctx.signal);
    const r = await deleteInstance(state.id!, opContext(ctx, INSTANCE_DEFAULT_TIMEOUTS.delete));
    ctx.diags.add(...r.diagnostics);
    if (!r.diagnostics.some((d) => d.severity === "error")) release(ctx, state.id);
  },

  async importState(req, ctx) {
    const { id } = req;
    try {
      const inst = await clientOf(ctx.providerData).getInstance(
        id,
        within(budgetOf(ctx.timeoutMs ?? READ_TIMEOUT_MS, ctx.signal)),
      );
      if (inst.status === "destroyed") {
        ctx.diags.addError(
          `Instance ${id} is destroyed`,
          "A destroyed instance cannot be managed; deploy a new one instead.",
        );
        return {};
      }
      req.private = writePrivate({ [UNREAD_AFTER_IMPORT]: true });
      holdInPlan(ctx, id, "imported");
      return { id };
    } catch (err) {
      ctx.diags.add(errorToDiagnostic(err, "import"));
      return {};
    }
  },

  identity: objectIdentity("instance"),

  /**
   * What `terraform query -generate-config-out` and `plan -generate-config-out` write (Terraform
   * 1.14+): the arguments the API returns, pinned to the offer the instance runs on, so that the
   * plan after the import changes nothing. The arguments the API never returns (ssh_key_id, env,
   * offer_filter, ...) are left out, as an import leaves them null; desired_status only when
   * stopped (running is the default).
   */
  generateConfig({ state }, ctx) {
    if (!state) {
      const { summary, detail } = noStateToGenerateFrom("gpurental_instance");
      ctx.diags.addWarning(summary, detail);
      return null;
    }
    return {
      offer_id: state.offer_id,
      template_id: state.template_id,
      disk_gb: state.disk_gb,
      label: state.label === "" ? null : state.label,
      desired_status: state.desired_status === "stopped" ? "stopped" : null,
    };
  },
} satisfies ResourceDefinition<typeof instanceSchema, ProviderData>;
