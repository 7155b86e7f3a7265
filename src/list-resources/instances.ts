import { INSTANCE_STATUSES, type Instance } from "../api/schemas";
import { attr, defineSchema, type ListResourceDefinition, lengthBetween, oneOf } from "../framework";
import { clientOf, type ProviderData } from "../provider/provider-data";
import { errorToDiagnostic } from "../provider/refusals";
import { listedInstanceState } from "../resources/instance/convert";
import type { instanceSchema } from "../resources/instance/schema";
import { createdAfter, hasPrefix, listOptions, rfc3339 } from "./common";

// The gpurental_instance list resource (Terraform 1.14+): the organization's instances for
// `terraform query`, filtered, each with its identity, from which `-generate-config-out` writes an
// import block and (through GenerateResourceConfig) a resource block to keep. What `gpurental
// strays` finds outside every state, a query finds in the whole organization.

/** The statuses a listing can find: destroyed instances are never listed (nor importable). */
const LISTED_STATUSES = INSTANCE_STATUSES.filter((s) => s !== "destroyed");

const schema = defineSchema({
  description:
    "The organization's instances (not destroyed), newest first, for `terraform query`; unset filters match everything.",
  attributes: {
    status: attr.string({
      optional: true,
      description: "Only instances in this status.",
      validators: [oneOf(...LISTED_STATUSES)],
    }),
    label_prefix: attr.string({
      optional: true,
      description: "Only instances whose label starts with this text.",
      validators: [lengthBetween(0, 64)],
    }),
    gpu_model: attr.string({
      optional: true,
      description: "Only instances renting this GPU model (case-insensitive), e.g. `RTX 4090`.",
    }),
    created_after: attr.string({
      optional: true,
      description: "Only instances created after this RFC 3339 time.",
      validators: [rfc3339("created_after")],
    }),
  },
});

/** Whether an instance passes the filters. */
export function instanceMatches(
  inst: Instance,
  f: {
    status: string | null;
    label_prefix: string | null;
    gpu_model: string | null;
    created_after: string | null;
  },
): boolean {
  if (f.status !== null && inst.status !== f.status) return false;
  if (!hasPrefix(inst.label, f.label_prefix)) return false;
  if (f.gpu_model !== null && (inst.offer.gpu_model ?? "").toLowerCase() !== f.gpu_model.toLowerCase())
    return false;
  return createdAfter(inst.created_at, f.created_after);
}

/** What `terraform query` shows for an instance: its label (or id), GPUs and status. */
export function instanceDisplayName(inst: Instance): string {
  const gpus = inst.offer.gpu_model ? `${inst.offer.gpu_model} x${inst.offer.num_gpus ?? "?"}, ` : "";
  return `${inst.label || inst.id} (${gpus}${inst.status})`;
}

/** The `gpurental_instance` list resource. */
export const instanceList = {
  typeName: "gpurental_instance",
  schema,
  async *list({ config }, ctx) {
    let instances: Instance[];
    try {
      // The API answers the whole organization at once; the framework sends one object at a
      // time as Terraform reads them and stops at the limit.
      instances = await clientOf(ctx.providerData).listInstances({}, listOptions(ctx));
    } catch (err) {
      ctx.diags.add(errorToDiagnostic(err, "read"));
      return;
    }
    for (const inst of instances) {
      if (inst.status === "destroyed" || !instanceMatches(inst, config)) continue;
      yield { state: listedInstanceState(inst), displayName: instanceDisplayName(inst) };
    }
  },
} satisfies ListResourceDefinition<typeof schema, typeof instanceSchema, ProviderData>;
