// ValidateDataResourceConfig: a data source's validators and its own check of its configuration.
import type * as proto from "../../../plugin/tfplugin6";
import { Diagnostics } from "../../diagnostics";
import { fail, out, type ServerCore, validate } from "../core";

/** Validates a data source's configuration. */
export async function validateDataResourceConfig<P>(
  core: ServerCore<P>,
  req: proto.ValidateDataResourceConfig.Request,
): Promise<proto.ValidateDataResourceConfig.Response> {
  const diags = new Diagnostics();
  try {
    const d = core.dataSources.get(req.type_name);
    if (!d) diags.addError("Unknown data source", `This provider has no data source "${req.type_name}".`);
    await validate(d, req.config, diags);
  } catch (err) {
    fail(core, diags, `Validating ${req.type_name}`, err);
  }
  return { diagnostics: out(diags) };
}
