// ValidateActionConfig (Terraform 1.14+): an action block's configuration, checked by its attribute
// validators and the definition's `validateConfig`, before the provider is configured.
import type * as proto from "../../../plugin/tfplugin6";
import { Diagnostics } from "../../diagnostics";
import { actionFor, fail, out, type ServerCore, validate } from "../core";

/** Checks an action's configuration; unknown values are left to PlanAction and InvokeAction. */
export async function validateActionConfig<P>(
  core: ServerCore<P>,
  req: proto.ValidateActionConfig.Request,
): Promise<proto.ValidateActionConfig.Response> {
  const diags = new Diagnostics();
  const a = actionFor(core, req.type_name, diags);
  if (!a) return { diagnostics: out(diags) };
  try {
    await validate(a, req.config, diags);
  } catch (err) {
    fail(core, diags, `Validating action ${req.type_name}`, err);
  }
  return { diagnostics: out(diags) };
}
