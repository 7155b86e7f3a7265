// ValidateProviderConfig: attribute validators and the provider's own check of its configuration.
import type * as proto from "../../../plugin/tfplugin6";
import { Diagnostics } from "../../diagnostics";
import { fail, out, type ServerCore, validate } from "../core";

/** Runs the provider schema's validators and its `validateConfig` on the configuration. */
export async function validateProviderConfig<P>(
  core: ServerCore<P>,
  req: proto.ValidateProviderConfig.Request,
): Promise<proto.ValidateProviderConfig.Response> {
  const diags = new Diagnostics();
  try {
    await validate(core.provider, req.config, diags);
  } catch (err) {
    fail(core, diags, "Validating the provider configuration", err);
  }
  return { diagnostics: out(diags) };
}
