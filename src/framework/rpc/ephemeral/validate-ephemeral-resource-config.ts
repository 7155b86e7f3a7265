// ValidateEphemeralResourceConfig: an ephemeral resource's validators and its own check.
import type * as proto from "../../../plugin/tfplugin6";
import { Diagnostics } from "../../diagnostics";
import { ephemeralFor, fail, out, type ServerCore, validate } from "../core";

/** Validates an ephemeral resource's configuration. */
export async function validateEphemeralResourceConfig<P>(
  core: ServerCore<P>,
  req: proto.ValidateEphemeralResourceConfig.Request,
): Promise<proto.ValidateEphemeralResourceConfig.Response> {
  const diags = new Diagnostics();
  try {
    await validate(ephemeralFor(core, req.type_name, diags), req.config, diags);
  } catch (err) {
    fail(core, diags, `Validating ${req.type_name}`, err);
  }
  return { diagnostics: out(diags) };
}
