// ReadDataSource: a data source's `read`, its result laid over the configuration.
import { fromDynamicValue, isWhollyKnown } from "../../../plugin/cty";
import type * as proto from "../../../plugin/tfplugin6";
import { Diagnostics } from "../../diagnostics";
import { context, encode, fail, finish, out, type ServerCore } from "../core";
import { asRec, checkAsValidated, compose, timeoutFor } from "../values";

/** Reads a data source from its configuration. */
export async function readDataSource<P>(
  core: ServerCore<P>,
  req: proto.ReadDataSource.Request,
): Promise<proto.ReadDataSource.Response> {
  const diags = new Diagnostics();
  const d = core.dataSources.get(req.type_name);
  if (!d) {
    diags.addError("Unknown data source", `This provider has no data source "${req.type_name}".`);
    return { diagnostics: out(diags) };
  }
  try {
    const config = asRec(fromDynamicValue(req.config, d.schema.type)) ?? compose(d.schema, null, null);
    // Terraform reads a data source once its configuration is known and valid; anything else is
    // answered here, never handed to `read`.
    if (!isWhollyKnown(config)) {
      diags.addError(
        "Data source configuration not known",
        `${req.type_name} was read with values known only after apply; Terraform reads it once they are known.`,
      );
      return { diagnostics: out(diags) };
    }
    if (!checkAsValidated(d.schema, config, "The configuration", diags)) return { diagnostics: out(diags) };
    const result = await d.read(
      { config: config },
      context(core, diags, timeoutFor(d.schema, config, "read", diags)),
    );
    if (diags.hasErrors()) return { diagnostics: out(diags) };
    const next = finish(d.schema, config, result, diags, "read");
    return { state: encode(core, d.schema, next, diags, "Reading"), diagnostics: out(diags) };
  } catch (err) {
    fail(core, diags, `Reading ${req.type_name}`, err);
    return { diagnostics: out(diags) };
  }
}
