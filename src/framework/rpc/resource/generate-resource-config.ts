// GenerateResourceConfig (Terraform 1.14+, with the generate_resource_config capability): the
// configuration Terraform writes for an object it imports or a query found, from the object's
// state. Terraform renders the value as HCL itself: every argument that is not null, computed-only
// attributes left out, sensitive ones written as null with a comment.
import { type CtyValue, fromDynamicValue, newRecord } from "../../../plugin/cty";
import type * as proto from "../../../plugin/tfplugin6";
import { Diagnostics } from "../../diagnostics";
import type { Schema } from "../../schema";
import { nullWriteOnly } from "../../write-only";
import { encode, fail, out, resourceFor, type ServerCore } from "../core";
import { asRec, compose, type Rec } from "../values";

/** The configuration of an object of a resource type, from its state. */
export async function generateResourceConfig<P>(
  core: ServerCore<P>,
  req: proto.GenerateResourceConfig.Request,
): Promise<proto.GenerateResourceConfig.Response> {
  const diags = new Diagnostics();
  const r = resourceFor(core, req.type_name, diags);
  if (!r) return { diagnostics: out(diags) };
  try {
    const state = asRec(fromDynamicValue(req.state, r.schema.type));
    const generated = r.generateConfig
      ? r.generateConfig({ state }, { diags })
      : state && arguments_(r.schema, state);
    const config =
      generated === null || generated === undefined
        ? null
        : onlyArguments(
            r.schema,
            nullWriteOnly(r.schema.attributes, compose(r.schema, null, generated, diags)),
          );
    return {
      config: encode(core, r.schema, config, diags, "Generating configuration"),
      diagnostics: out(diags),
    };
  } catch (err) {
    fail(core, diags, `Generating the configuration of ${req.type_name}`, err);
    return { diagnostics: out(diags) };
  }
}

/** The state's values of every argument (required or optional attribute). */
function arguments_(schema: Schema, state: Rec): Rec {
  const out = newRecord<CtyValue>();
  for (const [name, a] of Object.entries(schema.attributes))
    out[name] = a.required || a.optional ? (state[name] ?? null) : null;
  return out;
}

/** Configuration never sets a computed-only attribute: null there, whatever the definition gave. */
function onlyArguments(schema: Schema, value: Rec): Rec {
  const out = newRecord<CtyValue>();
  for (const [name, a] of Object.entries(schema.attributes))
    out[name] = a.required || a.optional ? (value[name] ?? null) : null;
  return out;
}
