// GetResourceIdentitySchemas: answered empty, since no resource declares an identity.
import type * as proto from "../../plugin/tfplugin6";
import type { ServerCore } from "./core";

/** No resource of this provider has an identity schema. */
export async function getResourceIdentitySchemas<P>(
  _core: ServerCore<P>,
  _req: proto.GetResourceIdentitySchemas.Request,
): Promise<proto.GetResourceIdentitySchemas.Response> {
  return { identity_schemas: {}, diagnostics: [] };
}
