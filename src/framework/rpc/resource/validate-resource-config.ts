// ValidateResourceConfig: a resource's validators, and the refusal of write-only values a client
// before Terraform 1.11 would keep in plan and state.
import { fromDynamicValue } from "../../../plugin/cty";
import type * as proto from "../../../plugin/tfplugin6";
import { Diagnostics, formatPath } from "../../diagnostics";
import { writeOnlyValuePaths } from "../../write-only";
import { fail, out, resourceFor, type ServerCore, validate } from "../core";
import { asRec } from "../values";

/** Validates a resource's configuration, and refuses write-only values from a client that would store them. */
export async function validateResourceConfig<P>(
  core: ServerCore<P>,
  req: proto.ValidateResourceConfig.Request,
): Promise<proto.ValidateResourceConfig.Response> {
  const diags = new Diagnostics();
  try {
    const r = resourceFor(core, req.type_name, diags);
    await validate(r, req.config, diags);
    // Write-only values need a client that knows not to store them (Terraform >= 1.11); an
    // older one does not even send the capability, and would keep the value in plan and state.
    if (r && !req.client_capabilities?.write_only_attributes_allowed) {
      const config = asRec(fromDynamicValue(req.config, r.schema.type));
      for (const at of config ? writeOnlyValuePaths(r.schema.attributes, config) : []) {
        diags.addAttributeError(
          at,
          "Write-only attribute not supported",
          `${formatPath(at)} is a write-only argument, which needs Terraform 1.11 or later: this Terraform cannot send a value without storing it in the plan and state. Upgrade Terraform to 1.11 or later, or leave ${formatPath(at)} unset (see the resource's documentation for an argument that works with older versions).`,
        );
      }
    }
  } catch (err) {
    fail(core, diags, `Validating ${req.type_name}`, err);
  }
  return { diagnostics: out(diags) };
}
