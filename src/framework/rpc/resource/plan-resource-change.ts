// PlanResourceChange: the framework's plan (plan.ts), the definition's `modifyPlan`, then the
// checks Terraform would otherwise fail with its own, vaguer message.
import { fromDynamicValue } from "../../../plugin/cty";
import type * as proto from "../../../plugin/tfplugin6";
import { Diagnostics, type Path, toProtoPath } from "../../diagnostics";
import { decodeIdentity } from "../../identity";
import { checkPlan, planChange } from "../../plan";
import { nullWriteOnly } from "../../write-only";
import { context, encode, fail, identityOut, out, resourceFor, type ServerCore } from "../core";
import { asRec, checkAsValidated, checkStored, compose } from "../values";

/** Plans a create, update or replacement, then runs `modifyPlan` and checks the plan. */
export async function planResourceChange<P>(
  core: ServerCore<P>,
  req: proto.PlanResourceChange.Request,
): Promise<proto.PlanResourceChange.Response> {
  const diags = new Diagnostics();
  const r = resourceFor(core, req.type_name, diags);
  if (!r) return { diagnostics: out(diags) };
  try {
    const type = r.schema.type;
    const prior = asRec(fromDynamicValue(req.prior_state, type));
    if (!checkStored(prior, "The prior state", diags)) return { diagnostics: out(diags) };
    const proposed = fromDynamicValue(req.proposed_new_state, type);
    const config = asRec(fromDynamicValue(req.config, type));
    // What ValidateResourceConfig would have refused never reaches the handlers.
    if (config && !checkAsValidated(r.schema, config, "The configuration", diags))
      return { diagnostics: out(diags) };
    const priorPrivate = prior ? (req.prior_private ?? Buffer.alloc(0)) : Buffer.alloc(0);
    const change = planChange(r.schema, prior, proposed, config, priorPrivate);
    let plannedPrivate = priorPrivate;
    if (change.planned && r.modifyPlan) {
      const plan = change.planned;
      const request = {
        plan,
        config: config ?? compose(r.schema, null, null),
        state: prior,
        private: priorPrivate,
        requiresReplace(at: Path) {
          if (prior) change.requiresReplace.push(at);
        },
      };
      await r.modifyPlan(request, context(core, diags, undefined));
      change.planned = compose(r.schema, plan, request.plan);
      plannedPrivate = request.private;
    }
    if (change.planned) {
      change.planned = nullWriteOnly(r.schema.attributes, change.planned);
      checkPlan(r.schema, change.planned, config, diags);
    }
    if (diags.hasErrors()) return { diagnostics: out(diags) };
    // An update keeps the object, so its identity: the prior one as the definition sees it. A
    // create (or the create half of a replacement) has none until it is applied.
    const planned_identity =
      prior && change.planned
        ? identityOut(
            core,
            r,
            prior,
            r.identity ? decodeIdentity(r.identity.schema, req.prior_identity) : null,
            diags,
          )
        : undefined;
    return {
      planned_state: encode(core, r.schema, change.planned, diags, "Planning"),
      requires_replace: change.requiresReplace.map(toProtoPath),
      planned_private: plannedPrivate,
      diagnostics: out(diags),
      planned_identity: planned_identity ?? null,
    };
  } catch (err) {
    fail(core, diags, `Planning ${req.type_name}`, err);
    return { diagnostics: out(diags) };
  }
}
