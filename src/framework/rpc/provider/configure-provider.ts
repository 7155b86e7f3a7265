// ConfigureProvider: validates the provider configuration and keeps what the definition's
// `configure` returns as the provider data of every later handler.
import { fromDynamicValue } from "../../../plugin/cty";
import type * as proto from "../../../plugin/tfplugin6";
import { Diagnostics } from "../../diagnostics";
import { fail, out, type ServerCore } from "../core";
import { asRec, compose, runValidators } from "../values";

/** Configures the provider; what `configure` returns becomes the data every handler gets. */
export async function configureProvider<P>(
  core: ServerCore<P>,
  req: proto.ConfigureProvider.Request,
): Promise<proto.ConfigureProvider.Response> {
  const diags = new Diagnostics();
  core.clientVersion = req.terraform_version;
  try {
    const config =
      asRec(fromDynamicValue(req.config, core.provider.schema.type)) ??
      compose(core.provider.schema, null, null);
    runValidators(core.provider.schema.attributes, config, [], diags, true);
    if (diags.hasErrors()) return { diagnostics: out(diags) };
    // Unknown values reach configure as Unknown; the definition decides (usually: report the
    // attribute, or fall back to the environment). The framework never crashes on them.
    const value = await core.provider.configure(
      { config: config, terraformVersion: req.terraform_version },
      { diags, signal: core.stopper.signal },
    );
    if (!diags.hasErrors()) core.providerData = { value };
  } catch (err) {
    fail(core, diags, "Configuring the provider", err);
  }
  return { diagnostics: out(diags) };
}
