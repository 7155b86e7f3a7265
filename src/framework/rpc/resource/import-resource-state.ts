// ImportResourceState: the state of an existing object from its id (`terraform import`, an import
// block's `id`), or from its identity (an import block's `identity`, Terraform 1.12+), through
// `importState`. An identity becomes an id by the definition's identity, and the import goes on as
// one by id; the imported object's identity goes with it.
import { isWhollyKnown } from "../../../plugin/cty";
import type * as proto from "../../../plugin/tfplugin6";
import { Diagnostics } from "../../diagnostics";
import { decodeIdentity, type IdentityValue } from "../../identity";
import { nullWriteOnly } from "../../write-only";
import { context, encode, fail, identityOut, out, resourceFor, type ServerCore } from "../core";
import { compose } from "../values";

/** Imports an object by id or identity, through `importState` or, without one, as `{ id }`. */
export async function importResourceState<P>(
  core: ServerCore<P>,
  req: proto.ImportResourceState.Request,
): Promise<proto.ImportResourceState.Response> {
  const diags = new Diagnostics();
  const r = resourceFor(core, req.type_name, diags);
  if (!r) return { diagnostics: out(diags) };
  try {
    let id = req.id;
    let given: IdentityValue | null = null;
    if (req.identity?.identity_data) {
      if (!r.identity) {
        diags.addError(
          "Import by identity not supported",
          `${req.type_name} has no identity; import it by id (import { id = "..." }).`,
        );
        return { diagnostics: out(diags) };
      }
      given = decodeIdentity(r.identity.schema, req.identity);
      if (!given) {
        diags.addError("Missing identity", `The import of ${req.type_name} carried an empty identity.`);
        return { diagnostics: out(diags) };
      }
      const fromIdentity = r.identity.importId(given, context(core, diags, undefined));
      if (diags.hasErrors() || fromIdentity === undefined) return { diagnostics: out(diags) };
      id = fromIdentity;
    }
    let partial: unknown;
    const request = { id, private: Buffer.alloc(0) };
    if (r.importState) partial = await r.importState(request, context(core, diags, undefined));
    else if (Object.hasOwn(r.schema.attributes, "id")) partial = { id };
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
          identity: identityOut(core, r, state, given, diags) ?? null,
        },
      ],
      diagnostics: out(diags),
    };
  } catch (err) {
    fail(core, diags, `Importing ${req.type_name}`, err);
    return { diagnostics: out(diags) };
  }
}
