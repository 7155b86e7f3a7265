// UpgradeResourceState: a stored state (JSON) decoded with the schema of its version and brought to
// the current one by the definition's upgraders; flatmap state and newer versions are refused.
import { decodeJson, decodeJsonUntyped, newRecord } from "../../../plugin/cty";
import type * as proto from "../../../plugin/tfplugin6";
import { Diagnostics } from "../../diagnostics";
import { encode, fail, finish, out, resourceFor, type ServerCore } from "../core";
import { asRec, compose, type Rec } from "../values";

/** Brings a stored state to the current schema version, through the definition's upgraders. */
export async function upgradeResourceState<P>(
  core: ServerCore<P>,
  req: proto.UpgradeResourceState.Request,
): Promise<proto.UpgradeResourceState.Response> {
  const diags = new Diagnostics();
  const r = resourceFor(core, req.type_name, diags);
  if (!r) return { diagnostics: out(diags) };
  try {
    const raw = req.raw_state?.json ?? Buffer.alloc(0);
    if (raw.length === 0) {
      if (Object.keys(req.raw_state?.flatmap ?? {}).length > 0) {
        diags.addError(
          "Unsupported state format",
          "State in the pre-0.12 flatmap format cannot be upgraded.",
        );
        return { diagnostics: out(diags) };
      }
      return {
        upgraded_state: encode(core, r.schema, null, diags, "Upgrading state"),
        diagnostics: out(diags),
      };
    }
    const current = r.schema.version;
    let value: Rec;
    if (req.version === current) {
      value = compose(
        r.schema,
        asRec(decodeJson(raw, r.schema.type, { ignoreUndefinedAttributes: true })),
        null,
      );
    } else if (req.version > current) {
      diags.addError(
        "State from a newer provider",
        `The state of ${req.type_name} has schema version ${req.version}, but this provider only knows up to ${current}. Use a newer provider version.`,
      );
      return { diagnostics: out(diags) };
    } else {
      const upgrader = r.upgradeState?.[req.version];
      if (!upgrader) {
        diags.addError(
          "Cannot upgrade state",
          `The state of ${req.type_name} has schema version ${req.version}, and this provider cannot upgrade it to version ${current}.`,
        );
        return { diagnostics: out(diags) };
      }
      const prior = upgrader.priorSchema
        ? decodeJson(raw, upgrader.priorSchema.type, { ignoreUndefinedAttributes: true })
        : decodeJsonUntyped(raw);
      const upgraded = await upgrader.upgrade(asRec(prior) ?? newRecord(), { diags });
      value = compose(r.schema, null, upgraded);
    }
    const done = finish(r.schema, null, value, diags, "upgrading state");
    return {
      upgraded_state: encode(core, r.schema, done, diags, "Upgrading state"),
      diagnostics: out(diags),
    };
  } catch (err) {
    fail(core, diags, `Upgrading the state of ${req.type_name}`, err);
    return { diagnostics: out(diags) };
  }
}
