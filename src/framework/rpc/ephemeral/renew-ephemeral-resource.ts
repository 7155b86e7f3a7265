// RenewEphemeralResource: renews an opened ephemeral resource before its `renewAt`.
import type * as proto from "../../../plugin/tfplugin6";
import { Diagnostics } from "../../diagnostics";
import { context, ephemeralFor, fail, openedKey, out, type ServerCore } from "../core";
import { toTimestamp } from "../values";

/** Renews an opened ephemeral resource, following its private data if it changes. */
export async function renewEphemeralResource<P>(
  core: ServerCore<P>,
  req: proto.RenewEphemeralResource.Request,
): Promise<proto.RenewEphemeralResource.Response> {
  const diags = new Diagnostics();
  const e = ephemeralFor(core, req.type_name, diags);
  if (!e) return { diagnostics: out(diags) };
  try {
    if (!e.renew) return { diagnostics: [], private: req.private ?? Buffer.alloc(0) };
    const before = req.private ?? Buffer.alloc(0);
    const renewed = await e.renew({ private: before }, context(core, diags, undefined));
    if (renewed.private && core.opened.delete(openedKey(req.type_name, before))) {
      core.opened.set(openedKey(req.type_name, renewed.private), {
        typeName: req.type_name,
        private: renewed.private,
      });
    }
    return {
      private: renewed.private ?? req.private ?? Buffer.alloc(0),
      renew_at: renewed.renewAt ? toTimestamp(renewed.renewAt) : null,
      diagnostics: out(diags),
    };
  } catch (err) {
    fail(core, diags, `Renewing ${req.type_name}`, err);
    return { diagnostics: out(diags) };
  }
}
