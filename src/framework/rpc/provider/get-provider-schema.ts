// GetProviderSchema: every schema in tfplugin6 form; a schema that cannot be built is a diagnostic.
import type * as proto from "../../../plugin/tfplugin6";
import { Diagnostics } from "../../diagnostics";
import { toProtoSchema } from "../../schema";
import { fail, out, SERVER_CAPABILITIES, type ServerCore } from "../core";

/** The schemas of the provider, its resources, data sources, ephemeral and list resources and actions. */
export async function getProviderSchema<P>(
  core: ServerCore<P>,
  _req: proto.GetProviderSchema.Request,
): Promise<proto.GetProviderSchema.Response> {
  const diags = new Diagnostics();
  const resource_schemas: Record<string, proto.Schema> = {};
  const data_source_schemas: Record<string, proto.Schema> = {};
  const ephemeral_resource_schemas: Record<string, proto.Schema> = {};
  const list_resource_schemas: Record<string, proto.Schema> = {};
  const action_schemas: Record<string, proto.ActionSchema> = {};
  try {
    for (const [name, r] of core.resources) {
      const s = toProtoSchema(r.schema);
      if (r.description) s.block.description = r.description;
      resource_schemas[name] = s;
    }
    for (const [name, d] of core.dataSources) {
      const s = toProtoSchema(d.schema);
      if (d.description) s.block.description = d.description;
      data_source_schemas[name] = s;
    }
    for (const [name, e] of core.ephemerals) {
      const s = toProtoSchema(e.schema);
      if (e.description) s.block.description = e.description;
      ephemeral_resource_schemas[name] = s;
    }
    for (const [name, l] of core.listResources) {
      const s = toProtoSchema(l.schema);
      if (l.description) s.block.description = l.description;
      list_resource_schemas[name] = s;
    }
    for (const [name, a] of core.actions) {
      const s = toProtoSchema(a.schema);
      if (a.description) s.block.description = a.description;
      action_schemas[name] = { schema: s };
    }
  } catch (err) {
    fail(core, diags, "Building the schema", err);
  }
  return {
    provider: toProtoSchema(core.provider.schema),
    resource_schemas,
    data_source_schemas,
    ephemeral_resource_schemas,
    list_resource_schemas,
    action_schemas,
    diagnostics: out(diags),
    server_capabilities: SERVER_CAPABILITIES,
  };
}
