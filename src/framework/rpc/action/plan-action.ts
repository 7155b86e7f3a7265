// PlanAction (Terraform 1.14+): called when a plan includes an action (`-invoke`, or a lifecycle
// trigger), with the provider configured; what the definition's `plan` finds stops the plan before
// anything runs, as a resource's plan-time checks do.
import { fromDynamicValue } from "../../../plugin/cty";
import type * as proto from "../../../plugin/tfplugin6";
import { Diagnostics } from "../../diagnostics";
import { actionFor, context, fail, out, type ServerCore } from "../core";
import { asRec, checkAsValidated } from "../values";

/** Checks an action before it is invoked. */
export async function planAction<P>(
  core: ServerCore<P>,
  req: proto.PlanAction.Request,
): Promise<proto.PlanAction.Response> {
  const diags = new Diagnostics();
  const a = actionFor(core, req.action_type, diags);
  if (!a) return { diagnostics: out(diags) };
  try {
    const config = asRec(fromDynamicValue(req.config, a.schema.type));
    // Every required argument set (unknown is fine here), the validators passed, then the checks.
    if (config && checkAsValidated(a.schema, config, "The action's configuration", diags))
      await a.validateConfig?.({ config }, { diags });
    if (!diags.hasErrors() && config && a.plan) await a.plan({ config }, context(core, diags, undefined));
  } catch (err) {
    fail(core, diags, `Planning action ${req.action_type}`, err);
  }
  return { diagnostics: out(diags) };
}
