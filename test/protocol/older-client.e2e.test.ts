import { decode, ExtData } from "@msgpack/msgpack";
import { resetSuite, type Suite, stopSuite } from "../e2e/resources/helpers";
import type { Decoded, ResourceBlock } from "./driver";
import { driverFor, PROTOCOL_TEST_MS, rpcs, startProtocolSuite } from "./fixture";

// Terraform 1.11's call sequence (protocol 6.8, the client built from tfplugin6.8.proto) against
// the provider that now serves identity, list resources and actions: it calls none of the new
// RPCs, and every answer it reads is exactly what the provider answered before them.
//
// "Before" is a transcript recorded from the provider built from main at c1ca543, the commit this
// work started from, with the same driver: PROTOCOL_PROVIDER_EXECUTABLE=<that build's
// bin/terraform-provider-gpurental> npx jest test/protocol/older-client -u. What varies from run
// to run (ids, times, secrets) is replaced by placeholders. A later change that means to change
// what Terraform 1.11 reads records it again the same way, with the diff reviewed.
// GetProviderSchema is left out of the transcript (descriptions change with every feature) and
// checked here instead: what 1.11 decodes names no list resource, action or new capability.

let s: Suite;
beforeAll(async () => {
  s = await startProtocolSuite();
});
afterAll(async () => {
  await stopSuite(s);
});
beforeEach(() => resetSuite(s));
afterEach(() => s.backend.clock.unfreeze());

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
const TIME = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)/g;
const SECRET = /gp[rs]_[0-9a-f]{8,}/g;

/** A transcript with what varies between runs replaced, UUIDs numbered by first appearance. */
function normalizer() {
  const ids = new Map<string, string>();
  const text = (t: string) =>
    t
      .replace(UUID, (u) => {
        if (!ids.has(u)) ids.set(u, `<uuid-${ids.size + 1}>`);
        return ids.get(u)!;
      })
      .replace(TIME, "<time>")
      .replace(SECRET, "<secret>");
  const walk = (v: unknown, key?: string): unknown => {
    // A DynamicValue's msgpack, decoded without a type: objects, lists and scalars as they are,
    // an unknown value as "(unknown)".
    if (key === "msgpack" && Buffer.isBuffer(v) && v.length > 0)
      return walk(decode(v, { useBigInt64: true }));
    if (v instanceof ExtData) return "(unknown)";
    if (typeof v === "bigint") return `${v}n`;
    if (v instanceof Uint8Array && !Buffer.isBuffer(v))
      return `bytes:${text(Buffer.from(v).toString("latin1"))}`;
    if (Buffer.isBuffer(v)) return v.length === 0 ? "" : `bytes:${text(v.toString("latin1"))}`;
    if (typeof v === "string") return text(v);
    if (Array.isArray(v)) return v.map((x) => walk(x));
    if (v !== null && typeof v === "object")
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x, k)]));
    return v;
  };
  return walk;
}

const NEW_RPCS = [
  "GetResourceIdentitySchemas",
  "UpgradeResourceIdentity",
  "GenerateResourceConfig",
  "ListResource",
  "ValidateListResourceConfig",
  "PlanAction",
  "InvokeAction",
  "ValidateActionConfig",
];

test(
  "Terraform 1.11 calls none of the new RPCs and reads exactly the answers of the provider before them",
  async () => {
    s.backend.clock.freeze();
    const normalize = normalizer();
    const transcript: { rpc: string; response: unknown }[] = [];
    let schema: Decoded | undefined;
    const onResponse = (rpc: string, response: Decoded) => {
      if (rpc === "GetProviderSchema") schema = response;
      else transcript.push({ rpc, response: normalize(response) });
    };
    const instance = (over: Record<string, string>): ResourceBlock => ({
      type: "gpurental_instance",
      name: "train",
      config: {
        offer_id: s.creds.offer_id,
        template_id: s.creds.template_id,
        disk_gb: 50,
        label: "train",
        ...over,
      },
    });
    const key: ResourceBlock = { type: "gpurental_api_key", name: "ci", config: { name: "ci" } };

    const d = driverFor(s, "1.11", { onResponse });
    await d.apply({ resources: [instance({}), key] });
    await d.plan({ resources: [instance({}), key] });
    await d.apply({ resources: [instance({ desired_status: "stopped" }), key] });
    const id = d.state.get("gpurental_instance.train")!.value.id as string;
    const other = driverFor(s, "1.11", { onResponse });
    await other.plan({
      resources: [instance({ desired_status: "stopped" })],
      imports: [{ to: "gpurental_instance.train", id }],
    });
    await d.apply({ resources: [] });

    expect([...rpcs(d), ...rpcs(other)].filter((r) => NEW_RPCS.includes(r))).toEqual([]);
    expect(d.state.size).toBe(0);

    // What 1.11 reads of the schema: nothing of protocol 6.9 or later.
    expect(Object.keys(schema ?? {}).sort()).toEqual(
      [
        "data_source_schemas",
        "diagnostics",
        "ephemeral_resource_schemas",
        "functions",
        "provider",
        "provider_meta",
        "resource_schemas",
        "server_capabilities",
      ].sort(),
    );
    expect(schema?.server_capabilities).toEqual({
      plan_destroy: false,
      get_provider_schema_optional: true,
      move_resource_state: false,
    });
    expect(Object.keys(schema?.resource_schemas as object).sort()).toEqual([
      "gpurental_api_key",
      "gpurental_instance",
    ]);

    expect(transcript).toMatchSnapshot();
    // The recording ran with a frozen clock; make sure values that move with it did not slip in.
    expect(JSON.stringify(transcript)).not.toMatch(TIME);
  },
  PROTOCOL_TEST_MS,
);
