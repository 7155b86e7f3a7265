// GetMetadata: what the provider serves, by type name, and its capabilities.
import type * as proto from "../../../plugin/tfplugin6";
import { SERVER_CAPABILITIES, type ServerCore } from "../core";

/** The types this provider serves and its capabilities, without building any schema. */
export async function getMetadata<P>(
  core: ServerCore<P>,
  _req: proto.GetMetadata.Request,
): Promise<proto.GetMetadata.Response> {
  return {
    server_capabilities: SERVER_CAPABILITIES,
    diagnostics: [],
    resources: [...core.resources.keys()].map((type_name) => ({ type_name })),
    data_sources: [...core.dataSources.keys()].map((type_name) => ({ type_name })),
    ephemeral_resources: [...core.ephemerals.keys()].map((type_name) => ({ type_name })),
    list_resources: [...core.listResources.keys()].map((type_name) => ({ type_name })),
    actions: [...core.actions.keys()].map((type_name) => ({ type_name })),
  };
}
