// ImportResourceState: the state of an existing object from its id, through `importState`.
import { isWhollyKnown } from "../../plugin/cty";
import type * as proto from "../../plugin/tfplugin6";
import { Diagnostics } from "../diagnostics";
import { nullWriteOnly } from "../write-only";
import { context, encode, fail, out, resourceFor, type ServerCore } from "./core";
import { compose } from "./values";

/** Imports an object by id, through `importState` or, without one, as `{ id }`. */
export async function importResourceState<P>(
  core: ServerCore<P>,
  req: proto.ImportResourceState.Request,
): Promise<proto.ImportResourceState.Response> {
  const diags = new Diagnostics();
  const r = resourceFor(core, req.type_name, diags);
  if (!r) return { diagnostics: out(diags) };
  try {
    let partial: unknown;
    const request = { id: req.id, private: Buffer.alloc(0) };
    if (r.importState) partial = await r.importState(request, context(core, diags, undefined));
    else if (Object.hasOwn(r.schema.attributes, "id")) partial = { id: req.id };
    else {
      diags.addError("Import not supported", `${req.type_name} cannot be imported.`);
      return { diagnostics: out(diags) };
    }
    if (diags.hasErrors()) return { diagnostics: out(diags) };
    const state = nullWriteOnly(r.schema.attributes, compose(r.schema, null, partial));
    if (!isWhollyKnown(state)) throw new Error("an imported state cannot hold unknown values");
    return {
      imported_resources: [
        {
          type_name: req.type_name,
          state: encode(core, r.schema, state, diags, "Importing"),
          private: request.private,
        },
      ],
      diagnostics: out(diags),
    };
  } catch (err) {
    fail(core, diags, `Importing ${req.type_name}`, err);
    return { diagnostics: out(diags) };
  }
}
