// ValidateListResourceConfig (Terraform 1.14+): the `config` block of a list block, checked by its
// attribute validators and the definition's `validateConfig`, before the provider is configured.
import { fromDynamicValue, isUnknown, type NumberValue, toNumber } from "../../../plugin/cty";
import type * as proto from "../../../plugin/tfplugin6";
import { Diagnostics, inBlock } from "../../diagnostics";
import { fail, listResourceFor, out, type ServerCore, validate } from "../core";

/** Checks a list block's filters and its limit. */
export async function validateListResourceConfig<P>(
  core: ServerCore<P>,
  req: proto.ValidateListResourceConfig.Request,
): Promise<proto.ValidateListResourceConfig.Response> {
  const diags = new Diagnostics();
  const l = listResourceFor(core, req.type_name, diags);
  if (!l) return { diagnostics: out(diags) };
  try {
    await validate(l, req.config, diags);
    const limit = fromDynamicValue(req.limit, { kind: "number" });
    if (limit !== null && !isUnknown(limit) && !(toNumber(limit as NumberValue) >= 0))
      diags.addError("Invalid limit", `The list block's limit must be 0 or more; got ${String(limit)}.`);
  } catch (err) {
    fail(core, diags, `Validating the list of ${req.type_name}`, err);
  }
  // Terraform places these paths in the list block's body, where the filters are the `config` block's.
  return { diagnostics: out(diags).map((d) => inBlock("config", d)) };
}
