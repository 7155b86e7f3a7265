// OpenEphemeralResource: opens an ephemeral resource (Terraform 1.10 or later) and records it among
// the opened ones until Close, so that what Terraform never closes is closed at shutdown.
import { fromDynamicValue, isWhollyKnown } from "../../../plugin/cty";
import type * as proto from "../../../plugin/tfplugin6";
import { Diagnostics } from "../../diagnostics";
import { context, encode, ephemeralFor, fail, finish, openedKey, out, type ServerCore } from "../core";
import { asRec, checkAsValidated, compose, olderThan, timeoutFor, toTimestamp } from "../values";

/** The first Terraform release with ephemeral resources (protocol 6.7). */
export const EPHEMERAL_MIN_TERRAFORM = "1.10.0";

/** Opens an ephemeral resource and remembers it until it is closed. */
export async function openEphemeralResource<P>(
  core: ServerCore<P>,
  req: proto.OpenEphemeralResource.Request,
): Promise<proto.OpenEphemeralResource.Response> {
  const diags = new Diagnostics();
  const e = ephemeralFor(core, req.type_name, diags);
  if (!e) return { diagnostics: out(diags) };
  // Only a client that knows ephemeral values keeps this one out of plans and states; one that
  // calls Open anyway while saying it is older is refused, naming both versions.
  if (core.clientVersion && olderThan(core.clientVersion, EPHEMERAL_MIN_TERRAFORM)) {
    diags.addError(
      "Ephemeral resources need Terraform 1.10 or later",
      `${req.type_name} is an ephemeral resource, which needs Terraform ${EPHEMERAL_MIN_TERRAFORM} or later (OpenTofu 1.11 or later); this is Terraform ${core.clientVersion}. Upgrade Terraform, or use the matching resource or data source instead (its values are kept in the state).`,
    );
    return { diagnostics: out(diags) };
  }
  try {
    const config = asRec(fromDynamicValue(req.config, e.schema.type)) ?? compose(e.schema, null, null);
    if (!isWhollyKnown(config)) {
      diags.addError(
        "Ephemeral resource configuration not known",
        `${req.type_name} was opened with values known only after apply; Terraform opens it once they are known.`,
      );
      return { diagnostics: out(diags) };
    }
    if (!checkAsValidated(e.schema, config, "The configuration", diags)) return { diagnostics: out(diags) };
    const result = await e.open(
      { config },
      context(core, diags, timeoutFor(e.schema, config, "read", diags)),
    );
    // Nothing opened with errors is handed on: Terraform would not close it.
    if (diags.hasErrors()) return { diagnostics: out(diags) };
    const priv = result.private ?? Buffer.alloc(0);
    if (e.close) core.opened.set(openedKey(req.type_name, priv), { typeName: req.type_name, private: priv });
    const value = finish(e.schema, config, result.result, diags, "open");
    return {
      result: encode(core, e.schema, value, diags, "Opening"),
      private: priv,
      renew_at: result.renewAt ? toTimestamp(result.renewAt) : null,
      diagnostics: out(diags),
    };
  } catch (err) {
    fail(core, diags, `Opening ${req.type_name}`, err);
    return { diagnostics: out(diags) };
  }
}
