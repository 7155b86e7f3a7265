// UpgradeResourceIdentity: an identity Terraform stored under an older identity version, brought
// to the current one by the resource's identity upgraders (Terraform 1.12+ calls it when the
// version it stored differs from the schema's).
import type * as proto from "../../../plugin/tfplugin6";
import { Diagnostics } from "../../diagnostics";
import { decodeStoredIdentity, encodeIdentity, identityOf } from "../../identity";
import { fail, out, resourceFor, type ServerCore } from "../core";

/** Brings a stored identity to the current identity version. */
export async function upgradeResourceIdentity<P>(
  core: ServerCore<P>,
  req: proto.UpgradeResourceIdentity.Request,
): Promise<proto.UpgradeResourceIdentity.Response> {
  const diags = new Diagnostics();
  const r = resourceFor(core, req.type_name, diags);
  if (!r) return { diagnostics: out(diags) };
  const identity = r.identity;
  if (!identity) {
    diags.addError("No identity", `${req.type_name} has no identity to upgrade.`);
    return { diagnostics: out(diags) };
  }
  try {
    const raw = req.raw_identity?.json ?? Buffer.alloc(0);
    const current = identity.schema.version;
    if (req.version > current) {
      diags.addError(
        "Identity from a newer provider",
        `The identity of ${req.type_name} has version ${req.version}, but this provider only knows up to ${current}. Use a newer provider version.`,
      );
      return { diagnostics: out(diags) };
    }
    let value: Record<string, unknown> | null;
    if (req.version === current) {
      value = decodeStoredIdentity(raw, identity.schema);
    } else {
      // Terraform asks for every object whose stored version differs, those stored without an
      // identity too (version 0, nothing stored): there is none to upgrade, and an upgrader given
      // nothing would make one with its required attributes null. None is answered; the next read
      // gives the object its identity.
      const text = Buffer.from(raw).toString("utf8").trim();
      if (text === "" || text === "null") return { diagnostics: out(diags) };
      const stored = decodeStoredIdentity(raw);
      const upgrader = identity.upgrade?.[req.version];
      if (!upgrader) {
        diags.addError(
          "Cannot upgrade identity",
          `The identity of ${req.type_name} has version ${req.version}, and this provider cannot upgrade it to version ${current}.`,
        );
        return { diagnostics: out(diags) };
      }
      value = stored && upgrader(stored);
    }
    if (!value) {
      diags.addError("Invalid identity", `The stored identity of ${req.type_name} is not an object.`);
      return { diagnostics: out(diags) };
    }
    return {
      upgraded_identity: encodeIdentity(identity.schema, identityOf(identity.schema, value as never)),
      diagnostics: out(diags),
    };
  } catch (err) {
    fail(core, diags, `Upgrading the identity of ${req.type_name}`, err);
    return { diagnostics: out(diags) };
  }
}
