import { type CtyValue, decodeMsgpack, encodeMsgpack, t, typeFromBytes, unknown } from "../plugin/cty";
import type * as proto from "../plugin/tfplugin6";
import { defineIdentity, identityAttr } from "./identity";
import {
  type ActionDefinition,
  attr,
  createProviderService,
  defineSchema,
  type ListResourceDefinition,
  oneOf,
  type ProviderDefinition,
  type ResourceDefinition,
  useStateForUnknown,
} from "./index";

// Identity, list resources, GenerateResourceConfig and actions (protocol 6.9 and 6.10) through the
// service, on a test-only resource over an in-memory store.

interface Box {
  id: string;
  name: string;
  zone: string;
}
interface Store {
  boxes: Box[];
  zone: string;
  /** How many boxes the list handed out so far. */
  pulled: number;
  listSignal?: AbortSignal;
  invokeSignal?: AbortSignal;
  poked: string[];
}

const boxSchema = defineSchema({
  description: "A box.",
  attributes: {
    id: attr.string({ computed: true, planModifiers: [useStateForUnknown()] }),
    name: attr.string({ required: true }),
    note: attr.string({ optional: true, computed: true }),
    pin: attr.string({ optional: true, writeOnly: true }),
    created: attr.string({ computed: true, planModifiers: [useStateForUnknown()] }),
  },
});

const boxIdentity = defineIdentity({
  version: 1,
  attributes: {
    id: identityAttr.required("The box's id."),
    zone: identityAttr.optional("The zone the box lives in; the provider's own when omitted."),
  },
});

const box = {
  typeName: "gpurental_box",
  schema: boxSchema,
  async create({ plan }, ctx) {
    const b = {
      id: `b${ctx.providerData.boxes.length + 1}`,
      name: String(plan.name),
      zone: ctx.providerData.zone,
    };
    ctx.providerData.boxes.push(b);
    return { id: b.id, note: "new", created: "2026-01-01" };
  },
  async read({ state }, ctx) {
    const b = ctx.providerData.boxes.find((x) => x.id === state.id);
    return b ? { name: b.name, note: state.note ?? "read", created: state.created ?? "2026-01-01" } : null;
  },
  async update({ plan }) {
    if (plan.name === "throws") throw new Error("the API went away");
    return {};
  },
  async delete({ state }, ctx) {
    if (state.name === "stuck") {
      ctx.diags.addError("Stuck", "The box cannot be deleted now.");
      return;
    }
    ctx.providerData.boxes = ctx.providerData.boxes.filter((x) => x.id !== state.id);
  },
  identity: {
    schema: boxIdentity,
    of: (state, ctx) => ({ id: state.id, zone: ctx.prior?.zone ?? ctx.providerData?.zone ?? null }),
    importId(identity, ctx) {
      if (identity.zone !== null && identity.zone !== ctx.providerData.zone) {
        ctx.diags.addError("Wrong zone", `The box is in zone ${String(identity.zone)}.`);
        return undefined;
      }
      return identity.id as string;
    },
    upgrade: { 0: (prior) => ({ id: prior.box_id ?? null }) },
  },
  generateConfig: ({ state }, ctx) => {
    if (!state) {
      ctx.diags.addWarning("No state", "Nothing to generate from.");
      return null;
    }
    return { name: state.name, note: state.note, created: "never written", pin: "never written" };
  },
} satisfies ResourceDefinition<typeof boxSchema, Store>;

const listSchema = defineSchema({
  attributes: {
    name_prefix: attr.string({ optional: true }),
    zone: attr.string({ optional: true, validators: [oneOf("a", "b")] }),
  },
});

const boxList = {
  typeName: "gpurental_box",
  schema: listSchema,
  async *list({ config, includeResource }, ctx) {
    ctx.providerData.listSignal = ctx.signal;
    for (const b of ctx.providerData.boxes) {
      if (config.name_prefix && !b.name.startsWith(config.name_prefix)) continue;
      if (b.name === "warn") ctx.diags.addWarning("Odd box", `Box ${b.id} is odd.`);
      if (b.name === "boom") throw new Error("the listing broke");
      ctx.providerData.pulled += 1;
      yield {
        displayName: `${b.name} (${b.id})`,
        state: includeResource
          ? { id: b.id, name: b.name, note: "listed", created: "2026-01-01" }
          : { id: b.id },
      };
    }
  },
} satisfies ListResourceDefinition<typeof listSchema, typeof boxSchema, Store>;

const pokeSchema = defineSchema({
  attributes: {
    box_id: attr.string({ required: true }),
    times: attr.number({ optional: true }),
  },
});

const poke = {
  typeName: "gpurental_box_poke",
  schema: pokeSchema,
  validateConfig({ config }, ctx) {
    if (config.box_id === "")
      ctx.diags.addAttributeError([{ attribute: "box_id" }], "Empty box_id", "Name a box.");
  },
  async plan({ config }, ctx) {
    if (typeof config.box_id === "string" && !ctx.providerData.boxes.some((b) => b.id === config.box_id))
      ctx.diags.addAttributeError([{ attribute: "box_id" }], "NOT_FOUND: no such box", "Create it first.");
  },
  async invoke({ config }, ctx) {
    ctx.providerData.invokeSignal = ctx.signal;
    if (config.box_id === "slow") {
      await new Promise<void>((resolve) => ctx.signal.addEventListener("abort", () => resolve()));
      ctx.diags.addError("Stopped", "The poke was stopped.");
      return;
    }
    await ctx.progress(`poking ${config.box_id}`);
    ctx.providerData.poked.push(String(config.box_id));
    await ctx.progress("done");
    if (config.box_id === "b2") ctx.diags.addWarning("Sore", "Box b2 did not like it.");
  },
} satisfies ActionDefinition<typeof pokeSchema, Store>;

function setup(boxes: Box[] = [], terraformVersion = "1.14.0") {
  const store: Store = { boxes: [...boxes], zone: "a", pulled: 0, poked: [] };
  const provider: ProviderDefinition<ReturnType<typeof defineSchema>, Store> = {
    typeName: "gpurental",
    schema: defineSchema({ attributes: {} }),
    configure: async () => store,
    resources: [box],
    dataSources: [],
    listResources: [boxList],
    actions: [poke],
  };
  const service = createProviderService(provider);
  const configured = service.ConfigureProvider({
    terraform_version: terraformVersion,
    config: { msgpack: encodeMsgpack({}, t.object({})), json: Buffer.alloc(0) },
    client_capabilities: null,
  });
  return { store, service, configured };
}

const EMPTY = Buffer.alloc(0);
const dv = (value: CtyValue, type: Parameters<typeof encodeMsgpack>[1]): proto.DynamicValue => ({
  msgpack: encodeMsgpack(value, type),
  json: EMPTY,
});
const full = (v: Record<string, CtyValue>) => ({
  id: null,
  name: null,
  note: null,
  pin: null,
  created: null,
  ...v,
});
const idData = (v: Record<string, CtyValue>): proto.ResourceIdentityData => ({
  identity_data: dv({ id: null, zone: null, ...v }, boxIdentity.type),
});
const identityValue = (out: proto.ResourceIdentityDataOut | null | undefined) =>
  out?.identity_data?.msgpack ? decodeMsgpack(out.identity_data.msgpack, boxIdentity.type) : null;
const stateValue = (out: proto.DynamicValueOut | null | undefined) =>
  out?.msgpack ? decodeMsgpack(out.msgpack, boxSchema.type) : null;

/** Collects the events of a streaming RPC; `cancelAfter` aborts the stream's signal after that many. */
function collector<E>(cancelAfter?: number) {
  const controller = new AbortController();
  const events: E[] = [];
  return {
    events,
    controller,
    stream: {
      signal: controller.signal,
      send: async (e: E) => {
        if (controller.signal.aborted) return;
        events.push(e);
        if (cancelAfter !== undefined && events.length >= cancelAfter) controller.abort();
      },
    },
  };
}

describe("resource identity", () => {
  it("serves the identity schemas of the resources that have one", async () => {
    const { service } = setup();
    const res = await service.GetResourceIdentitySchemas({});
    expect(Object.keys(res.identity_schemas ?? {})).toEqual(["gpurental_box"]);
    const s = res.identity_schemas!.gpurental_box!;
    expect(s.version).toBe(1);
    expect(
      s.identity_attributes.map((a) => [
        a.name,
        typeFromBytes(a.type).kind,
        a.required_for_import,
        a.optional_for_import,
      ]),
    ).toEqual([
      ["id", "string", true, false],
      ["zone", "string", false, true],
    ]);
  });

  it("goes with the object through plan, apply, read and destroy", async () => {
    const { service, configured } = setup();
    await configured;
    const config = full({ name: "x" });
    const created = await service.PlanResourceChange({
      type_name: "gpurental_box",
      prior_state: dv(null, boxSchema.type),
      proposed_new_state: dv(config, boxSchema.type),
      config: dv(config, boxSchema.type),
      prior_private: EMPTY,
      provider_meta: null,
      client_capabilities: null,
    });
    // A create has no identity until it is applied.
    expect(created.planned_identity).toBeNull();
    const applied = await service.ApplyResourceChange({
      type_name: "gpurental_box",
      prior_state: dv(null, boxSchema.type),
      planned_state: created.planned_state as proto.DynamicValue,
      config: dv(config, boxSchema.type),
      planned_private: EMPTY,
      provider_meta: null,
      planned_identity: null,
    });
    expect(identityValue(applied.new_identity)).toEqual({ id: "b1", zone: "a" });
    const state = stateValue(applied.new_state) as Record<string, CtyValue>;

    // Stored identities win over what the provider would say now (the zone moved).
    const read = await service.ReadResource({
      type_name: "gpurental_box",
      current_state: dv(state, boxSchema.type),
      private: EMPTY,
      provider_meta: null,
      client_capabilities: null,
      current_identity: idData({ id: "b1", zone: "old" }),
    });
    expect(identityValue(read.new_identity)).toEqual({ id: "b1", zone: "old" });
    // Terraform before 1.12 sends none: the provider makes one.
    const readOld = await service.ReadResource({
      type_name: "gpurental_box",
      current_state: dv(state, boxSchema.type),
      private: EMPTY,
      provider_meta: null,
      client_capabilities: null,
    });
    expect(identityValue(readOld.new_identity)).toEqual({ id: "b1", zone: "a" });

    const update = await service.PlanResourceChange({
      type_name: "gpurental_box",
      prior_state: dv(state, boxSchema.type),
      proposed_new_state: dv(state, boxSchema.type),
      config: dv(config, boxSchema.type),
      prior_private: EMPTY,
      provider_meta: null,
      client_capabilities: null,
      prior_identity: idData({ id: "b1", zone: "a" }),
    });
    expect(identityValue(update.planned_identity)).toEqual({ id: "b1", zone: "a" });

    const destroyed = await service.ApplyResourceChange({
      type_name: "gpurental_box",
      prior_state: dv(state, boxSchema.type),
      planned_state: dv(null, boxSchema.type),
      config: dv(null, boxSchema.type),
      planned_private: EMPTY,
      provider_meta: null,
    });
    expect(destroyed.new_identity ?? null).toBeNull();

    // Gone: no object, no identity.
    const gone = await service.ReadResource({
      type_name: "gpurental_box",
      current_state: dv(state, boxSchema.type),
      private: EMPTY,
      provider_meta: null,
      client_capabilities: null,
    });
    expect(stateValue(gone.new_state)).toBeNull();
    expect(gone.new_identity ?? null).toBeNull();
  });

  it("keeps the identity with the object a failed update or delete leaves in state", async () => {
    // Terraform 1.13 and later store the answer's identity with it, and none when it has none.
    const { service, configured } = setup();
    await configured;
    const apply = (prior: Record<string, CtyValue>, planned: Record<string, CtyValue> | null) =>
      service.ApplyResourceChange({
        type_name: "gpurental_box",
        prior_state: dv(prior, boxSchema.type),
        planned_state: dv(planned, boxSchema.type),
        config: dv(planned, boxSchema.type),
        planned_private: EMPTY,
        provider_meta: null,
        // An update's, as its plan kept the stored one (the provider's zone is "a" now); a delete
        // is planned by Terraform itself and carries none.
        planned_identity: planned ? idData({ id: "b1", zone: "old" }) : null,
      });
    const made = await service.ApplyResourceChange({
      type_name: "gpurental_box",
      prior_state: dv(null, boxSchema.type),
      planned_state: dv({ ...full({ name: "x" }), id: null, note: null, created: null }, boxSchema.type),
      config: dv(full({ name: "x" }), boxSchema.type),
      planned_private: EMPTY,
      provider_meta: null,
      planned_identity: null,
    });
    const state = stateValue(made.new_state) as Record<string, CtyValue>;

    const failedUpdate = await apply(state, { ...state, name: "throws" });
    expect(failedUpdate.diagnostics?.map((d) => d.summary)).toEqual([
      expect.stringContaining("Applying gpurental_box"),
    ]);
    expect(stateValue(failedUpdate.new_state)).toEqual(state);
    expect(identityValue(failedUpdate.new_identity)).toEqual({ id: "b1", zone: "old" });

    const stuck = { ...state, name: "stuck" };
    const failedDelete = await apply(stuck, null);
    expect(failedDelete.diagnostics?.map((d) => d.summary)).toEqual(["Stuck"]);
    expect(stateValue(failedDelete.new_state)).toEqual(stuck);
    // As a refresh without a stored identity would make it.
    expect(identityValue(failedDelete.new_identity)).toEqual({ id: "b1", zone: "a" });
  });

  it("imports by identity as by the id it names, and refuses what importId refuses", async () => {
    const { service, configured } = setup([{ id: "b7", name: "seven", zone: "a" }]);
    await configured;
    const ok = await service.ImportResourceState({
      type_name: "gpurental_box",
      id: "",
      client_capabilities: null,
      identity: idData({ id: "b7" }),
    });
    expect(ok.diagnostics).toEqual([]);
    expect(stateValue(ok.imported_resources?.[0]?.state)).toMatchObject({ id: "b7" });
    expect(identityValue(ok.imported_resources?.[0]?.identity)).toEqual({ id: "b7", zone: "a" });

    const byId = await service.ImportResourceState({
      type_name: "gpurental_box",
      id: "b7",
      client_capabilities: null,
    });
    expect(identityValue(byId.imported_resources?.[0]?.identity)).toEqual({ id: "b7", zone: "a" });

    const wrong = await service.ImportResourceState({
      type_name: "gpurental_box",
      id: "",
      client_capabilities: null,
      identity: idData({ id: "b7", zone: "z" }),
    });
    expect(wrong.imported_resources).toBeUndefined();
    expect(wrong.diagnostics).toEqual([expect.objectContaining({ severity: 1, summary: "Wrong zone" })]);
  });

  it("upgrades a stored identity from an older version and refuses a newer one", async () => {
    const { service } = setup();
    const upgrade = (version: number, json: string) =>
      service.UpgradeResourceIdentity({
        type_name: "gpurental_box",
        version,
        raw_identity: { json: Buffer.from(json), flatmap: {} },
      });
    const same = await upgrade(1, '{"id":"b1","zone":"a"}');
    expect(identityValue(same.upgraded_identity)).toEqual({ id: "b1", zone: "a" });
    const old = await upgrade(0, '{"box_id":"b9"}');
    expect(old.diagnostics).toEqual([]);
    expect(identityValue(old.upgraded_identity)).toEqual({ id: "b9", zone: null });
    // An object stored without an identity (by Terraform before 1.12, or before the resource had
    // one) has none to upgrade: the answer holds none, and the next read gives it one.
    for (const none of ["", "null"]) {
      const empty = await upgrade(0, none);
      expect(empty).toEqual({ diagnostics: [] });
    }
    const newer = await upgrade(2, '{"id":"b1"}');
    expect(newer.diagnostics?.[0]).toMatchObject({ severity: 1, summary: "Identity from a newer provider" });
    expect(newer.upgraded_identity).toBeUndefined();
  });

  it("refuses definitions Terraform would reject", () => {
    expect(() => defineIdentity({ attributes: { id: identityAttr.optional("x") } })).toThrow(
      /required for import/,
    );
    expect(() =>
      defineIdentity({
        attributes: { id: { type: t.map(t.string), requiredForImport: true, description: "" } },
      }),
    ).toThrow(/string, number, bool/);
  });
});

describe("list resources", () => {
  const boxes = [
    { id: "b1", name: "alpha", zone: "a" },
    { id: "b2", name: "beta", zone: "a" },
    { id: "b3", name: "alpine", zone: "a" },
  ];
  const listConfig = (v: Record<string, CtyValue>) =>
    dv({ name_prefix: null, zone: null, ...v }, listSchema.type);

  it("streams each object found with its identity and display name, and the object only on request", async () => {
    const { service, configured } = setup(boxes);
    await configured;
    const bare = collector<proto.ListResource.Event>();
    await service.ListResource(
      {
        type_name: "gpurental_box",
        config: listConfig({ name_prefix: "al" }),
        include_resource_object: false,
        limit: 10,
      },
      bare.stream,
    );
    expect(bare.events.map((e) => [e.display_name, identityValue(e.identity)])).toEqual([
      ["alpha (b1)", { id: "b1", zone: "a" }],
      ["alpine (b3)", { id: "b3", zone: "a" }],
    ]);
    expect(bare.events.every((e) => e.resource_object === undefined)).toBe(true);

    const whole = collector<proto.ListResource.Event>();
    await service.ListResource(
      { type_name: "gpurental_box", config: listConfig({}), include_resource_object: true, limit: 10 },
      whole.stream,
    );
    expect(whole.events.map((e) => stateValue(e.resource_object))).toEqual([
      full({ id: "b1", name: "alpha", note: "listed", created: "2026-01-01" }),
      full({ id: "b2", name: "beta", note: "listed", created: "2026-01-01" }),
      full({ id: "b3", name: "alpine", note: "listed", created: "2026-01-01" }),
    ]);
  });

  it("stops pulling at the limit, and when Terraform cancels", async () => {
    const limited = setup(boxes);
    await limited.configured;
    const two = collector<proto.ListResource.Event>();
    await limited.service.ListResource(
      { type_name: "gpurental_box", config: listConfig({}), include_resource_object: false, limit: 2 },
      two.stream,
    );
    expect(two.events).toHaveLength(2);
    expect(limited.store.pulled).toBe(2);

    const cancelled = setup(boxes);
    await cancelled.configured;
    const one = collector<proto.ListResource.Event>(1);
    await cancelled.service.ListResource(
      { type_name: "gpurental_box", config: listConfig({}), include_resource_object: false, limit: 100 },
      one.stream,
    );
    expect(one.events).toHaveLength(1);
    expect(cancelled.store.listSignal?.aborted).toBe(true);
    expect(cancelled.store.pulled).toBe(1);
  });

  it("refuses a configuration with an unknown value, and lists nothing", async () => {
    const { service, configured, store } = setup(boxes);
    await configured;
    const got = collector<proto.ListResource.Event>();
    await service.ListResource(
      {
        type_name: "gpurental_box",
        config: listConfig({ name_prefix: unknown }),
        include_resource_object: false,
        limit: 10,
      },
      got.stream,
    );
    expect(got.events).toEqual([
      { diagnostic: [expect.objectContaining({ severity: 1, summary: "List configuration not known" })] },
    ]);
    expect(store.pulled).toBe(0);
  });

  it("sends filter errors, warnings and a failed listing as diagnostics", async () => {
    const { service, configured } = setup([
      ...boxes,
      { id: "b4", name: "warn", zone: "a" },
      { id: "b5", name: "boom", zone: "a" },
    ]);
    await configured;
    const bad = collector<proto.ListResource.Event>();
    await service.ListResource(
      {
        type_name: "gpurental_box",
        config: listConfig({ zone: "q" }),
        include_resource_object: false,
        limit: 10,
      },
      bad.stream,
    );
    // Terraform before 1.16 places the path in the list block's body: the filter is in its `config` block.
    expect(bad.events).toEqual([
      {
        diagnostic: [
          expect.objectContaining({
            severity: 1,
            attribute: {
              steps: [
                expect.objectContaining({ attribute_name: "config" }),
                expect.objectContaining({ attribute_name: "zone" }),
              ],
            },
          }),
        ],
      },
    ]);
    // 1.16 adds the `config` step itself.
    const newer = setup(boxes, "1.16.0");
    await newer.configured;
    const placed = collector<proto.ListResource.Event>();
    await newer.service.ListResource(
      {
        type_name: "gpurental_box",
        config: listConfig({ zone: "q" }),
        include_resource_object: false,
        limit: 10,
      },
      placed.stream,
    );
    expect(placed.events[0]?.diagnostic?.[0]?.attribute).toEqual({
      steps: [expect.objectContaining({ attribute_name: "zone" })],
    });

    const broken = collector<proto.ListResource.Event>();
    await service.ListResource(
      { type_name: "gpurental_box", config: listConfig({}), include_resource_object: false, limit: 10 },
      broken.stream,
    );
    expect(broken.events.map((e) => e.display_name ?? null)).toEqual([
      "alpha (b1)",
      "beta (b2)",
      "alpine (b3)",
      "warn (b4)",
      null,
    ]);
    expect(broken.events[3]?.diagnostic).toEqual([
      expect.objectContaining({ severity: 2, summary: "Odd box" }),
    ]);
    expect(broken.events[4]?.diagnostic).toEqual([
      expect.objectContaining({ severity: 1, detail: "the listing broke" }),
    ]);
  });

  it("validates the filters and the limit without the provider configured", async () => {
    const { service } = setup();
    const res = await service.ValidateListResourceConfig({
      type_name: "gpurental_box",
      config: listConfig({ zone: "q" }),
      include_resource_object: null,
      limit: dv(-1, t.number),
    });
    expect(res.diagnostics?.map((d) => d.summary)).toEqual(["Invalid attribute value", "Invalid limit"]);
    // Every version places these paths in the list block's body, where the filters are `config`'s.
    expect(res.diagnostics?.[0]?.attribute?.steps).toEqual([
      expect.objectContaining({ attribute_name: "config" }),
      expect.objectContaining({ attribute_name: "zone" }),
    ]);
    expect(res.diagnostics?.[1]?.attribute).toBeUndefined();
  });

  it("needs a managed resource of its name with an identity", () => {
    const { identity: _none, ...plain } = box;
    expect(() =>
      createProviderService({
        typeName: "gpurental",
        schema: defineSchema({ attributes: {} }),
        configure: async () => ({}),
        resources: [plain],
        dataSources: [],
        listResources: [boxList],
      } as never),
    ).toThrow(/needs a managed resource of that type with an identity/);
  });
});

describe("GenerateResourceConfig", () => {
  it("writes the definition's configuration, never a computed-only or write-only value", async () => {
    const { service } = setup();
    const res = await service.GenerateResourceConfig({
      type_name: "gpurental_box",
      state: dv(full({ id: "b1", name: "alpha", note: "n", created: "2026-01-01" }), boxSchema.type),
    });
    expect(stateValue(res.config)).toEqual(full({ name: "alpha", note: "n" }));
    const none = await service.GenerateResourceConfig({ type_name: "gpurental_box", state: null });
    expect(stateValue(none.config)).toBeNull();
    expect(none.diagnostics?.map((d) => d.severity)).toEqual([2]);
  });
});

describe("actions", () => {
  const pokeConfig = (v: Record<string, CtyValue>) =>
    dv({ box_id: null, times: null, ...v }, pokeSchema.type);

  it("validates before the provider is configured, and plans with it", async () => {
    const { service, configured } = setup([{ id: "b1", name: "x", zone: "a" }]);
    const invalid = await service.ValidateActionConfig({
      type_name: "gpurental_box_poke",
      config: pokeConfig({ box_id: "" }),
    });
    expect(invalid.diagnostics?.map((d) => d.summary)).toEqual(["Empty box_id"]);
    await configured;
    const missing = await service.PlanAction({
      action_type: "gpurental_box_poke",
      config: pokeConfig({ box_id: "b9" }),
      client_capabilities: null,
    });
    expect(missing.diagnostics).toEqual([
      expect.objectContaining({
        severity: 1,
        summary: "NOT_FOUND: no such box",
        attribute: { steps: [expect.objectContaining({ attribute_name: "box_id" })] },
      }),
    ]);
    const fine = await service.PlanAction({
      action_type: "gpurental_box_poke",
      config: pokeConfig({ box_id: "b1" }),
      client_capabilities: null,
    });
    expect(fine.diagnostics).toEqual([]);
  });

  it("streams progress, then one completion with the diagnostics", async () => {
    const { service, configured, store } = setup();
    await configured;
    const c = collector<proto.InvokeAction.Event>();
    await service.InvokeAction(
      { action_type: "gpurental_box_poke", config: pokeConfig({ box_id: "b2" }), client_capabilities: null },
      c.stream,
    );
    expect(c.events).toEqual([
      { progress: { message: "poking b2" } },
      { progress: { message: "done" } },
      { completed: { diagnostics: [expect.objectContaining({ severity: 2, summary: "Sore" })] } },
    ]);
    expect(store.poked).toEqual(["b2"]);

    const unknownType = collector<proto.InvokeAction.Event>();
    await service.InvokeAction(
      { action_type: "gpurental_nope", config: null, client_capabilities: null },
      unknownType.stream,
    );
    expect(unknownType.events).toEqual([
      {
        completed: {
          diagnostics: [expect.objectContaining({ severity: 1, summary: "Unknown action type" })],
        },
      },
    ]);
  });

  it("never runs on a configuration that skipped Terraform's own checks: a required argument null", async () => {
    const { service, configured, store } = setup([{ id: "b1", name: "x", zone: "a" }]);
    await configured;
    const missing = [
      expect.objectContaining({
        severity: 1,
        summary: "Missing required argument",
        detail: "The action's configuration has no value for box_id, which is required.",
        attribute: { steps: [expect.objectContaining({ attribute_name: "box_id" })] },
      }),
    ];
    const planned = await service.PlanAction({
      action_type: "gpurental_box_poke",
      config: pokeConfig({ times: 2 }),
      client_capabilities: null,
    });
    expect(planned.diagnostics).toEqual(missing);
    const c = collector<proto.InvokeAction.Event>();
    await service.InvokeAction(
      { action_type: "gpurental_box_poke", config: pokeConfig({ times: 2 }), client_capabilities: null },
      c.stream,
    );
    expect(c.events).toEqual([{ completed: { diagnostics: missing } }]);
    expect(store.poked).toEqual([]);
  });

  it("aborts a running action on StopProvider and still completes", async () => {
    const { service, configured, store } = setup();
    await configured;
    const c = collector<proto.InvokeAction.Event>();
    const running = service.InvokeAction(
      {
        action_type: "gpurental_box_poke",
        config: pokeConfig({ box_id: "slow" }),
        client_capabilities: null,
      },
      c.stream,
    );
    await new Promise((r) => setImmediate(r));
    expect(store.invokeSignal?.aborted).toBe(false);
    await service.StopProvider({});
    await running;
    expect(store.invokeSignal?.aborted).toBe(true);
    expect(c.events).toEqual([
      { completed: { diagnostics: [expect.objectContaining({ severity: 1, summary: "Stopped" })] } },
    ]);
  });
});

describe("the schema and metadata", () => {
  it("serve list resource and action schemas and name them", async () => {
    const { service } = setup();
    const schema = await service.GetProviderSchema({});
    expect(Object.keys(schema.list_resource_schemas ?? {})).toEqual(["gpurental_box"]);
    expect(schema.list_resource_schemas?.gpurental_box?.block.attributes.map((a) => a.name)).toEqual([
      "name_prefix",
      "zone",
    ]);
    expect(schema.action_schemas?.gpurental_box_poke?.schema.block.attributes.map((a) => a.name)).toEqual([
      "box_id",
      "times",
    ]);
    const meta = await service.GetMetadata({});
    expect(meta.list_resources).toEqual([{ type_name: "gpurental_box" }]);
    expect(meta.actions).toEqual([{ type_name: "gpurental_box_poke" }]);
  });
});
