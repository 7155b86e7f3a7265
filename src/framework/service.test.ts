import {
  CtyNumber,
  type CtyValue,
  decodeMsgpack,
  encodeMsgpack,
  isUnknown,
  t,
  typeFromBytes,
  unknown,
} from "../plugin/cty";
import {
  attr,
  defineSchema,
  type ProviderDefinition,
  type ResourceDefinition,
  requiresReplace,
  timeoutsAttribute,
  unknownOnUpdate,
  useStateForUnknown,
} from "./index";
import { createHarness } from "./testing";

// A small test-only resource over an in-memory store, exercising the service end to end.

interface Store {
  things: Map<
    string,
    { name: string; region: string | null; size: number; quota: string | null; ports: number[] }
  >;
  nextId: number;
  calls: string[];
  failCreate?: "partial" | "throw";
  lastSignal?: AbortSignal;
  lastTimeoutMs?: number | undefined;
}

const thingSchema = defineSchema({
  version: 1,
  description: "A test thing.",
  attributes: {
    id: attr.string({ computed: true, planModifiers: [useStateForUnknown()], description: "Identifier." }),
    name: attr.string({ required: true }),
    region: attr.string({ optional: true, planModifiers: [requiresReplace()] }),
    size: attr.number({ optional: true, computed: true }),
    quota: attr.number({ optional: true }),
    secret: attr.string({ optional: true, sensitive: true }),
    password: attr.string({ optional: true, writeOnly: true }),
    status: attr.string({ computed: true, planModifiers: [unknownOnUpdate()] }),
    tags: attr.map(t.string, { optional: true }),
    ports: attr.listNested(
      { port: attr.number({ required: true }), protocol: attr.string({ optional: true, computed: true }) },
      { optional: true },
    ),
    timeouts: timeoutsAttribute({ create: "20m", delete: "10m" }),
  },
});

const thing = {
  typeName: "gpurental_thing",
  schema: thingSchema,
  async create({ plan }, ctx) {
    const store = ctx.providerData;
    store.calls.push("create");
    store.lastSignal = ctx.signal;
    store.lastTimeoutMs = ctx.timeoutMs;
    const id = `t-${store.nextId++}`;
    if (store.failCreate === "throw") throw new Error("backend exploded");
    if (store.failCreate === "partial") {
      ctx.diags.addError("Create failed half way", "The thing exists but did not start.");
      return { id, status: "failed", size: 0 };
    }
    const size = typeof plan.size === "number" ? plan.size : 10;
    const ports = Array.isArray(plan.ports)
      ? (plan.ports as { port: unknown }[]).map((p) => Number(p.port))
      : [];
    store.things.set(id, {
      name: String(plan.name),
      region: typeof plan.region === "string" ? plan.region : null,
      size,
      quota: plan.quota instanceof CtyNumber || typeof plan.quota === "number" ? String(plan.quota) : null,
      ports,
    });
    return {
      id,
      size,
      status: "running",
      ports: Array.isArray(plan.ports) ? ports.map((port) => ({ port, protocol: "tcp" })) : null,
    };
  },
  async read({ state }, ctx) {
    ctx.providerData.calls.push("read");
    const found = state.id ? ctx.providerData.things.get(state.id) : undefined;
    if (!found) return null;
    return {
      name: found.name,
      region: found.region,
      size: found.size,
      quota: found.quota === null ? null : new CtyNumber(found.quota),
      status: state.status ?? "running",
    };
  },
  async update({ plan, state }, ctx) {
    ctx.providerData.calls.push("update");
    const found = ctx.providerData.things.get(state.id ?? "");
    if (!found) {
      ctx.diags.addError("Gone", "The thing vanished.");
      return null;
    }
    found.name = String(plan.name);
    return { status: "updated" };
  },
  async delete({ state }, ctx) {
    ctx.providerData.calls.push("delete");
    ctx.providerData.lastTimeoutMs = ctx.timeoutMs;
    ctx.providerData.things.delete(state.id ?? "");
  },
  validateConfig({ config }, ctx) {
    if (config.name === "forbidden")
      ctx.diags.addAttributeError([{ attribute: "name" }], "Name not allowed", "Pick another.");
  },
} satisfies ResourceDefinition<typeof thingSchema, Store>;

const providerSchema = defineSchema({
  attributes: {
    endpoint: attr.string({ optional: true }),
    token: attr.string({ optional: true, sensitive: true }),
  },
});

function makeProvider(store: Store) {
  return {
    typeName: "gpurental",
    schema: providerSchema,
    async configure({ config }, ctx) {
      if (isUnknown(config.endpoint)) {
        ctx.diags.addAttributeError(
          [{ attribute: "endpoint" }],
          "Endpoint not known yet",
          "Set it to a known value.",
        );
      }
      return store;
    },
    resources: [thing],
    dataSources: [],
  } satisfies ProviderDefinition<typeof providerSchema, Store>;
}

const config = { name: "alpha", region: "eu", tags: { a: "b" }, ports: [{ port: 22 }], password: "hunter2" };

async function setup() {
  const store: Store = { things: new Map(), nextId: 1, calls: [] };
  const h = createHarness(makeProvider(store));
  expect(await h.configure({ endpoint: "mem://" })).toEqual([]);
  return { store, h };
}

describe("provider service in memory", () => {
  it("serves the schema with capabilities and type JSON", async () => {
    const { h } = await setup();
    const res = await h.service.GetProviderSchema({});
    expect(res.server_capabilities).toEqual({
      plan_destroy: false,
      get_provider_schema_optional: true,
      generate_resource_config: true,
    });
    const s = res.resource_schemas.gpurental_thing!;
    expect(s.version).toBe(1);
    const byName = Object.fromEntries(s.block.attributes.map((a) => [a.name, a]));
    expect(byName.id).toMatchObject({ computed: true, description: "Identifier.", description_kind: 1 });
    expect(byName.secret).toMatchObject({ optional: true, sensitive: true });
    expect(byName.password).toMatchObject({ write_only: true });
    expect(typeFromBytes(byName.tags!.type!)).toEqual(t.map(t.string));
    expect(byName.ports!.nested_type!.nesting).toBe(2);
    expect(byName.timeouts!.nested_type!.attributes.map((a) => a.name)).toEqual(["create", "delete"]);
    expect(res.provider.block.attributes.map((a) => a.name)).toEqual(["endpoint", "token"]);
    expect(await h.service.GetResourceIdentitySchemas({})).toEqual({ identity_schemas: {}, diagnostics: [] });
  });

  it("create -> plan shows no change -> update -> import -> read gone -> destroy", async () => {
    const { store, h } = await setup();

    // Create: computed values unknown, write-only null, configured values as configured.
    const p1 = await h.plan("gpurental_thing", null, config);
    expect(p1.diags).toEqual([]);
    const planned = p1.planned!;
    expect(isUnknown(planned.id)).toBe(true);
    expect(isUnknown(planned.size)).toBe(true);
    expect(isUnknown(planned.status)).toBe(true);
    expect(planned.password).toBeNull();
    expect(planned.name).toBe("alpha");
    expect(planned.timeouts).toBeNull();
    expect(isUnknown((planned.ports as Record<string, CtyValue>[])[0]!.protocol)).toBe(true);
    expect(p1.requiresReplace).toEqual([]);

    const a1 = await h.apply("gpurental_thing", null, planned, config);
    expect(a1.diags).toEqual([]);
    const state = a1.value!;
    expect(state).toMatchObject({ id: "t-1", name: "alpha", size: 10, status: "running", password: null });
    expect(state.ports).toEqual([{ port: 22, protocol: "tcp" }]);
    expect(store.lastTimeoutMs).toBe(20 * 60_000);

    // Plan again with the same configuration: nothing changes.
    const p2 = await h.plan("gpurental_thing", state, config);
    expect(p2.diags).toEqual([]);
    expect(p2.planned).toEqual(state);
    expect(p2.requiresReplace).toEqual([]);

    // In-place update: the id stays known, status is recomputed.
    const changed = { ...config, name: "beta" };
    const p3 = await h.plan("gpurental_thing", state, changed);
    expect(p3.planned!.id).toBe("t-1");
    expect(isUnknown(p3.planned!.status)).toBe(true);
    expect(p3.planned!.size).toBe(10);
    const a3 = await h.apply("gpurental_thing", state, p3.planned, changed);
    expect(a3.diags).toEqual([]);
    expect(a3.value).toMatchObject({ id: "t-1", name: "beta", status: "updated", size: 10 });

    // Changing region asks for replacement; the replacement plan (prior null) is a create.
    const moved = { ...changed, region: "us" };
    const p4 = await h.plan("gpurental_thing", a3.value, moved);
    expect(p4.requiresReplace).toEqual([["region"]]);
    const p5 = await h.plan("gpurental_thing", null, moved);
    expect(isUnknown(p5.planned!.id)).toBe(true);

    // Import: a stub with only the id, completed by read.
    const imported = await h.import("gpurental_thing", "t-1");
    expect(imported.diags).toEqual([]);
    expect(imported.value).toMatchObject({ id: "t-1", name: null, size: null });
    const refreshed = await h.read("gpurental_thing", imported.value!);
    expect(refreshed.value).toMatchObject({
      id: "t-1",
      name: "beta",
      region: "eu",
      size: 10,
      status: "running",
    });

    // Gone remotely: read returns null.
    store.things.clear();
    const gone = await h.read("gpurental_thing", a3.value!);
    expect(gone.value).toBeNull();
    expect(gone.diags).toEqual([]);

    // Destroy: planned null, new state null.
    const destroyPlan = await h.plan("gpurental_thing", a3.value, null);
    expect(destroyPlan.planned).toBeNull();
    const destroyed = await h.apply("gpurental_thing", a3.value, null, null);
    expect(destroyed.value).toBeNull();
    expect(destroyed.diags).toEqual([]);
    expect(store.lastTimeoutMs).toBe(10 * 60_000);
    expect(store.calls).toEqual(["create", "update", "read", "read", "delete"]);
  });

  it("keeps a partially created object with its error so Terraform taints it", async () => {
    const { store, h } = await setup();
    store.failCreate = "partial";
    const p = await h.plan("gpurental_thing", null, config);
    const a = await h.apply("gpurental_thing", null, p.planned, config);
    expect(a.diags).toEqual([
      expect.objectContaining({ severity: "error", summary: "Create failed half way" }),
    ]);
    expect(a.value).toMatchObject({ id: "t-1", status: "failed", name: "alpha" });
    // Unknowns the handler did not resolve are saved as null, not sent as unknown.
    expect((a.value!.ports as Record<string, CtyValue>[])[0]!.protocol).toBeNull();
  });

  it("turns a thrown error into a diagnostic", async () => {
    const { store, h } = await setup();
    store.failCreate = "throw";
    const p = await h.plan("gpurental_thing", null, config);
    const a = await h.apply("gpurental_thing", null, p.planned, config);
    expect(a.value).toBeNull();
    expect(a.diags).toEqual([expect.objectContaining({ severity: "error", detail: "backend exploded" })]);
  });

  it("plans and validates unknown configuration values without crashing", async () => {
    const { h } = await setup();
    const withUnknowns = { ...config, name: unknown, region: unknown, ports: unknown, timeouts: unknown };
    expect(await h.validate("gpurental_thing", withUnknowns)).toEqual([]);
    const p = await h.plan("gpurental_thing", null, withUnknowns);
    expect(p.diags).toEqual([]);
    expect(isUnknown(p.planned!.name)).toBe(true);
    expect(isUnknown(p.planned!.ports)).toBe(true);
  });

  it("reports validation errors at the attribute, naming bad durations", async () => {
    const { h } = await setup();
    const diags = await h.validate("gpurental_thing", {
      ...config,
      name: "forbidden",
      timeouts: { create: "20 minutes" },
    });
    expect(diags).toEqual([
      expect.objectContaining({
        summary: "Invalid duration",
        path: [{ attribute: "timeouts" }],
        detail: expect.stringContaining('timeouts.create = "20 minutes"'),
      }),
      expect.objectContaining({ summary: "Name not allowed", path: [{ attribute: "name" }] }),
    ]);
    const res = await h.service.ValidateResourceConfig({
      type_name: "gpurental_thing",
      config: null,
      client_capabilities: null,
    });
    expect(res.diagnostics).toEqual([]);
    // A client without write-only support must not be given a write-only value.
    const old = await h.service.ValidateResourceConfig({
      type_name: "gpurental_thing",
      config: {
        msgpack: encodeMsgpack({ name: "n", password: "p" }, thingSchema.type),
        json: Buffer.alloc(0),
      },
      client_capabilities: { deferral_allowed: false, write_only_attributes_allowed: false },
    });
    expect(old.diagnostics).toEqual([
      expect.objectContaining({
        summary: "Write-only attribute not supported",
        attribute: { steps: [{ selector: "attribute_name", attribute_name: "password" }] },
      }),
    ]);
  });

  it("uses the configured timeout and aborts handlers on StopProvider", async () => {
    const { store, h } = await setup();
    const withTimeout = { ...config, timeouts: { create: "1h30m" } };
    const p = await h.plan("gpurental_thing", null, withTimeout);
    await h.apply("gpurental_thing", null, p.planned, withTimeout);
    expect(store.lastTimeoutMs).toBe(90 * 60_000);
    expect(store.lastSignal!.aborted).toBe(false);
    expect(await h.service.StopProvider({})).toEqual({ Error: "" });
    expect(store.lastSignal!.aborted).toBe(true);
  });

  it("handles unknown provider configuration with a diagnostic, not a crash", async () => {
    const store: Store = { things: new Map(), nextId: 1, calls: [] };
    const h = createHarness(makeProvider(store));
    const diags = await h.configure({ endpoint: unknown });
    expect(diags).toEqual([
      expect.objectContaining({ summary: "Endpoint not known yet", path: [{ attribute: "endpoint" }] }),
    ]);
    // Not configured: handlers needing provider data report an error instead of crashing.
    const p = await h.plan("gpurental_thing", null, config);
    const a = await h.apply("gpurental_thing", null, p.planned, config);
    expect(a.diags[0]!.detail).toMatch(/not configured/);
  });

  it("keeps big numbers exact through plan, apply, read and state upgrade", async () => {
    const { h } = await setup();
    const big = { ...config, quota: new CtyNumber("12345678901234567890") };
    const p = await h.plan("gpurental_thing", null, big);
    // The wire value is the exact integer (uint64), not a rounded double.
    const wire = decodeMsgpack(p.raw.planned_state!.msgpack!, thingSchema.type) as Record<string, CtyValue>;
    expect(String(wire.quota)).toBe("12345678901234567890");
    const a = await h.apply("gpurental_thing", null, p.planned, big);
    const r = await h.read("gpurental_thing", a.value!);
    expect(String(r.value!.quota)).toBe("12345678901234567890");
    const again = await h.plan("gpurental_thing", r.value, big);
    expect(again.planned).toEqual(r.value);

    const up = await h.upgrade(
      "gpurental_thing",
      1,
      `{"id":"t-9","name":"n","quota":12345678901234567890,"size":0.1,"dropped_attribute":1}`,
    );
    expect(up.diags).toEqual([]);
    expect(String(up.value!.quota)).toBe("12345678901234567890");
    expect(up.value!.size).toBe(0.1);
    expect(up.value!.status).toBeNull();
  });

  it("rejects an unknown type and a newer state version with diagnostics", async () => {
    const { h } = await setup();
    const res = await h.service.ReadResource({
      type_name: "gpurental_nope",
      current_state: null,
      private: Buffer.alloc(0),
      provider_meta: null,
      client_capabilities: null,
    });
    expect(res.diagnostics![0]!.severity).toBe(1);
    const up = await h.upgrade("gpurental_thing", 7, "{}");
    expect(up.diags[0]!.summary).toBe("State from a newer provider");
  });
});

describe("state upgrade hooks", () => {
  const v2 = defineSchema({
    version: 2,
    attributes: { id: attr.string({ computed: true }), size_gb: attr.number({ optional: true }) },
  });
  const v1 = defineSchema({
    version: 1,
    attributes: { id: attr.string({ computed: true }), size_mb: attr.number({ optional: true }) },
  });
  const res = {
    typeName: "gpurental_disk",
    schema: v2,
    async create() {
      return {};
    },
    async read() {
      return {};
    },
    async update() {
      return {};
    },
    async delete() {},
    upgradeState: {
      1: {
        priorSchema: v1,
        upgrade: (prior) => ({ id: prior.id as string, size_gb: Number(prior.size_mb) / 1024 }),
      },
      0: { upgrade: (prior) => ({ id: String(prior.legacy_id) }) },
    },
  } satisfies ResourceDefinition<typeof v2, null>;
  const provider = {
    typeName: "gpurental",
    schema: defineSchema({ attributes: {} }),
    configure: async () => null,
    resources: [res],
    dataSources: [],
  };

  it("upgrades from each older version straight to the current one", async () => {
    const h = createHarness(provider);
    expect((await h.upgrade("gpurental_disk", 1, '{"id":"d","size_mb":2048}')).value).toEqual({
      id: "d",
      size_gb: 2,
    });
    expect((await h.upgrade("gpurental_disk", 0, '{"legacy_id":"x"}')).value).toEqual({
      id: "x",
      size_gb: null,
    });
    expect((await h.upgrade("gpurental_disk", 2, "")).value).toBeNull();
  });
});

describe("apply consistency and data sources", () => {
  const s = defineSchema({
    attributes: {
      id: attr.string({ computed: true }),
      name: attr.string({ required: true }),
      upper: attr.string({ computed: true }),
    },
  });
  const res = {
    typeName: "gpurental_echo",
    schema: s,
    async create({ plan }) {
      // Normalizing a configured value is a provider bug Terraform rejects; the framework names it.
      return { id: "e", name: String(plan.name).toUpperCase(), upper: String(plan.name).toUpperCase() };
    },
    async read() {
      return {};
    },
    async update() {
      return {};
    },
    async delete() {},
  } satisfies ResourceDefinition<typeof s, null>;
  const ds = defineSchema({
    attributes: { name: attr.string({ required: true }), greeting: attr.string({ computed: true }) },
  });
  const provider = {
    typeName: "gpurental",
    schema: defineSchema({ attributes: {} }),
    configure: async () => null,
    resources: [res],
    dataSources: [
      {
        typeName: "gpurental_greeting",
        schema: ds,
        async read({ config }) {
          return { greeting: `hello ${config.name}` };
        },
      } satisfies import("./index").DataSourceDefinition<typeof ds, null>,
    ],
  };

  it("names an attribute whose applied value differs from the plan", async () => {
    const h = createHarness(provider);
    await h.configure({});
    const p = await h.plan("gpurental_echo", null, { name: "abc" });
    const a = await h.apply("gpurental_echo", null, p.planned, { name: "abc" });
    expect(a.diags).toEqual([expect.objectContaining({ path: [{ attribute: "name" }] })]);
  });

  it("reads a data source, keeping configured values", async () => {
    const h = createHarness(provider);
    await h.configure({});
    const r = await h.readData("gpurental_greeting", { name: "x" });
    expect(r).toEqual({ value: { name: "x", greeting: "hello x" }, diags: [] });
  });

  it("accepts a DynamicValue sent as JSON", async () => {
    const h = createHarness(provider);
    const res = await h.service.ValidateDataResourceConfig({
      type_name: "gpurental_greeting",
      config: { msgpack: Buffer.alloc(0), json: Buffer.from('{"name":"x","greeting":null}') },
    });
    expect(res.diagnostics).toEqual([]);
  });
});

describe("bad handler results", () => {
  const s = defineSchema({
    attributes: { id: attr.string({ computed: true }), count: attr.number({ computed: true }) },
  });
  const res = {
    typeName: "gpurental_bad",
    schema: s,
    async create() {
      return { id: "b-1", count: "many" as unknown as number };
    },
    async read() {
      return {};
    },
    async update() {
      return {};
    },
    async delete() {},
  } satisfies ResourceDefinition<typeof s, null>;
  const provider = {
    typeName: "gpurental",
    schema: defineSchema({ attributes: {} }),
    configure: async () => null,
    resources: [res],
    dataSources: [],
  };

  it("saves what fits (the id) and names the attribute that does not", async () => {
    const h = createHarness(provider);
    await h.configure({});
    const p = await h.plan("gpurental_bad", null, {});
    const a = await h.apply("gpurental_bad", null, p.planned, {});
    expect(a.value).toEqual({ id: "b-1", count: null });
    expect(a.diags).toEqual([
      expect.objectContaining({ summary: "Invalid value", path: [{ attribute: "count" }] }),
    ]);
  });
});

describe("what Terraform never sends is answered before any handler", () => {
  const fresh = async () => {
    const store: Store = { things: new Map(), nextId: 1, calls: [] };
    const h = createHarness(makeProvider(store));
    await h.configure({ endpoint: "e" });
    return { h, store };
  };

  test("a plan of a configuration without a required argument, at any depth", async () => {
    const { h, store } = await fresh();
    const p = await h.plan("gpurental_thing", null, { name: null, ports: [{ port: null }] });
    expect(p.diags.map((d) => [d.summary, d.detail])).toEqual([
      ["Missing required argument", "The configuration has no value for name, which is required."],
      ["Missing required argument", "The configuration has no value for ports[0].port, which is required."],
    ]);
    expect(store.calls).toEqual([]);
  });

  test("an apply of a planned state without a required argument", async () => {
    const { h, store } = await fresh();
    const a = await h.apply("gpurental_thing", null, { name: null } as never, null);
    expect(a.diags.map((d) => d.summary)).toEqual(["Missing required argument"]);
    expect(store.calls).toEqual([]);
  });

  test("a state holding an unknown value, read or planned", async () => {
    const { h, store } = await fresh();
    const state = { id: "t1", name: "a", status: unknown } as never;
    expect((await h.read("gpurental_thing", state)).diags.map((d) => d.summary)).toEqual(["Invalid state"]);
    expect((await h.plan("gpurental_thing", state, { name: "a" })).diags.map((d) => d.summary)).toEqual([
      "Invalid state",
    ]);
    expect(store.calls).toEqual([]);
  });
});
