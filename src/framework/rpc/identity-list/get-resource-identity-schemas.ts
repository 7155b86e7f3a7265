// GetResourceIdentitySchemas: the identity schema of every resource that has one. Terraform 1.12+
// calls it inside every schema load, right after GetProviderSchema; older versions never do.
import type * as proto from "../../../plugin/tfplugin6";
import { Diagnostics } from "../../diagnostics";
import { toProtoIdentitySchema } from "../../identity";
import { fail, out, type ServerCore } from "../core";

/** The identity schemas by resource type; resources without an identity are left out. */
export async function getResourceIdentitySchemas<P>(
  core: ServerCore<P>,
  _req: proto.GetResourceIdentitySchemas.Request,
): Promise<proto.GetResourceIdentitySchemas.Response> {
  const diags = new Diagnostics();
  const identity_schemas: Record<string, proto.ResourceIdentitySchema> = {};
  try {
    for (const [name, r] of core.resources)
      if (r.identity) identity_schemas[name] = toProtoIdentitySchema(r.identity.schema);
  } catch (err) {
    fail(core, diags, "Building the identity schemas", err);
  }
  return { identity_schemas, diagnostics: out(diags) };
}
