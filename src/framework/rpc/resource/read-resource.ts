// ReadResource: refreshes one object through the definition's `read`; a failure keeps the current
// state so a failed refresh never loses track of the object. The refreshed object's identity goes
// with it (Terraform 1.12+ stores it; older versions skip the field).
import { fromDynamicValue } from "../../../plugin/cty";
import type * as proto from "../../../plugin/tfplugin6";
import { Diagnostics } from "../../diagnostics";
import { decodeIdentity } from "../../identity";
import { context, encode, fail, finish, identityOut, out, resourceFor, type ServerCore } from "../core";
import { asRec, checkStored, timeoutFor } from "../values";

/** Refreshes a resource; null from `read` means the object is gone. */
export async function readResource<P>(
  core: ServerCore<P>,
  req: proto.ReadResource.Request,
): Promise<proto.ReadResource.Response> {
  const diags = new Diagnostics();
  const r = resourceFor(core, req.type_name, diags);
  if (!r) return { diagnostics: out(diags) };
  const priorIdentity = r.identity
    ? safeIdentity(() => decodeIdentity(r.identity!.schema, req.current_identity))
    : null;
  try {
    const state = asRec(fromDynamicValue(req.current_state, r.schema.type));
    if (!state) return { new_state: encode(core, r.schema, null, diags, "Reading"), diagnostics: out(diags) };
    if (!checkStored(state, "The current state", diags)) {
      return { new_state: req.current_state, diagnostics: out(diags), private: req.private };
    }
    const ctx = context(core, diags, timeoutFor(r.schema, state, "read", diags));
    const request = { state: state, private: req.private ?? Buffer.alloc(0) };
    const result = await r.read(request, ctx);
    if (result === null) {
      return {
        new_state: encode(core, r.schema, null, diags, "Reading"),
        diagnostics: out(diags),
        private: req.private,
      };
    }
    const next = finish(r.schema, state, result, diags, "read");
    return {
      new_state: encode(core, r.schema, next, diags, "Reading"),
      diagnostics: out(diags),
      private: request.private,
      new_identity: identityOut(core, r, next, priorIdentity, diags) ?? null,
    };
  } catch (err) {
    fail(core, diags, `Reading ${req.type_name}`, err);
    // Keeping the current state means a failed refresh never loses track of the object.
    return {
      new_state: req.current_state,
      diagnostics: out(diags),
      private: req.private,
      new_identity: req.current_identity ?? null,
    };
  }
}

/** A stored identity that cannot be decoded is no reason to fail a refresh: it is made anew. */
function safeIdentity<T>(decode: () => T | null): T | null {
  try {
    return decode();
  } catch {
    return null;
  }
}
