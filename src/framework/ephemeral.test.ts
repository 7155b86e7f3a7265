import { typeFromBytes } from "../plugin/cty";
import { attr, defineSchema, type EphemeralResourceDefinition, type ProviderDefinition } from "./index";
import { olderThan } from "./server";
import { createHarness } from "./testing";

// The service's side of ephemeral resources with a test-only lease over an in-memory store:
// schemas and metadata, Open and its private data, Renew, Close, what is left open when the
// process ends, and the checks around them.

interface Leases {
  open: Set<string>;
  next: number;
  closeSignals: AbortSignal[];
}

const leaseSchema = defineSchema({
  description: "A test lease.",
  attributes: {
    name: attr.string({ required: true, description: "Name." }),
    id: attr.string({ computed: true, description: "Identifier." }),
    token: attr.string({ computed: true, sensitive: true, description: "Token." }),
  },
});

function provider(leases: Leases): ProviderDefinition<ReturnType<typeof defineSchema>, Leases> {
  const lease = {
    typeName: "gpurental_lease",
    schema: leaseSchema,
    async open({ config }, ctx) {
      if (config.name === "refuse") {
        ctx.diags.addError("Refused", "no lease for you");
        return { result: { id: "x" } };
      }
      const id = `lease-${ctx.providerData.next++}`;
      ctx.providerData.open.add(id);
      return {
        result: { id, token: `tok-${id}` },
        private: Buffer.from(id),
        renewAt: new Date(Date.UTC(2030, 0, 1, 0, 0, 0, 250)),
      };
    },
    async renew(req) {
      return { private: Buffer.from(`${req.private.toString()}+`) };
    },
    async close(req, ctx) {
      ctx.providerData.closeSignals.push(ctx.signal);
      ctx.providerData.open.delete(req.private.toString().replace(/\+$/, ""));
    },
  } satisfies EphemeralResourceDefinition<typeof leaseSchema, Leases>;
  return {
    typeName: "gpurental",
    schema: defineSchema({ attributes: {} }),
    configure: async () => leases,
    resources: [],
    dataSources: [],
    ephemeralResources: [lease],
  };
}

async function started() {
  const leases: Leases = { open: new Set(), next: 1, closeSignals: [] };
  const h = createHarness(provider(leases));
  expect(await h.configure({})).toEqual([]);
  return { h, leases };
}

test("the schema and the metadata list the ephemeral resource", async () => {
  const { h } = await started();
  const schema = await h.service.GetProviderSchema({});
  const block = schema.ephemeral_resource_schemas?.gpurental_lease?.block;
  expect(block?.description).toBe("A test lease.");
  expect(block?.attributes.map((a) => [a.name, typeFromBytes(a.type!), a.sensitive ?? false])).toEqual([
    ["id", { kind: "string" }, false],
    ["name", { kind: "string" }, false],
    ["token", { kind: "string" }, true],
  ]);
  expect((await h.service.GetMetadata({})).ephemeral_resources).toEqual([{ type_name: "gpurental_lease" }]);
});

test("Open returns the result over the configuration, its private data and renew_at; Close ends it", async () => {
  const { h, leases } = await started();
  const opened = await h.open("gpurental_lease", { name: "a" });
  expect(opened.diags).toEqual([]);
  expect(opened.value).toEqual({ name: "a", id: "lease-1", token: "tok-lease-1" });
  expect(opened.private.toString()).toBe("lease-1");
  expect(opened.renewAt).toEqual({ seconds: Date.UTC(2030, 0, 1) / 1000, nanos: 250_000_000 });
  expect(await h.close("gpurental_lease", opened.private)).toEqual([]);
  expect(leases.open.size).toBe(0);
  // Closed once: nothing is left for the shutdown to close.
  await h.service.closeOpenEphemeralResources();
  expect(leases.closeSignals).toHaveLength(1);
});

test("the shutdown closes what was opened and never closed, renewed ones by their new private data", async () => {
  const { h, leases } = await started();
  const a = await h.open("gpurental_lease", { name: "a" });
  await h.open("gpurental_lease", { name: "b" });
  const renewed = await h.service.RenewEphemeralResource({
    type_name: "gpurental_lease",
    private: a.private,
  });
  expect(renewed.private?.toString()).toBe("lease-1+");
  h.service.stop(); // Terraform's StopProvider: a close still runs, on a signal of its own
  await h.service.closeOpenEphemeralResources();
  expect(leases.open.size).toBe(0);
  expect(leases.closeSignals.map((s) => s.aborted)).toEqual([false, false]);
});

test("an Open with errors hands nothing on and leaves nothing to close", async () => {
  const { h, leases } = await started();
  const refused = await h.open("gpurental_lease", { name: "refuse" });
  expect(refused.diags.map((d) => d.summary)).toEqual(["Refused"]);
  expect(refused.value).toBeNull();
  await h.service.closeOpenEphemeralResources();
  expect(leases.closeSignals).toHaveLength(0);
});

test("an unknown type is an error naming it", async () => {
  const { h } = await started();
  const res = await h.service.OpenEphemeralResource({
    type_name: "gpurental_nope",
    config: null,
    client_capabilities: null,
  });
  expect(res.diagnostics?.map((d) => d.detail)).toEqual([
    'This provider has no ephemeral resource type "gpurental_nope".',
  ]);
});

test.each([
  ["1.9.8", true],
  ["1.10.0-beta1", false],
  ["1.10.0", false],
  ["1.11.4", false],
  ["0.15.5", true],
  ["2.0.0", false],
  ["", false],
  ["dev", false],
])("olderThan(%s, 1.10.0) is %s", (v, older) => {
  expect(olderThan(v, "1.10.0")).toBe(older);
});
