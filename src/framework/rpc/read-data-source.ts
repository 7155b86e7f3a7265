// ReadDataSource: a data source's `read`, its result laid over the configuration.
import { fromDynamicValue } from "../../plugin/cty";
import type * as proto from "../../plugin/tfplugin6";
import { Diagnostics } from "../diagnostics";
import { context, encode, fail, finish, out, type ServerCore } from "./core";
import { asRec, compose, timeoutFor } from "./values";

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
