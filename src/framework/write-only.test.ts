import { type CtyValue, encodeMsgpack, isUnknown, t, unknown } from "../plugin/cty";
import {
  attr,
  createProviderService,
  defineSchema,
  hasWriteOnly,
  nullWriteOnly,
  type ProviderDefinition,
  type ResourceDefinition,
  requiresReplace,
  SchemaError,
  useStateForUnknown,
  writeOnlyValuePaths,
} from "./index";
import { createHarness } from "./testing";

// Write-only attributes through the whole service: the values reach the handlers in the
// configuration and never leave the provider in a planned, applied, read, imported or upgraded
// state, at any depth; an old client is refused; definitions that Terraform would reject fail early.

interface Vault {
  /** What create, update and modifyPlan saw in the configuration. */
  seen: Array<{ step: string; password: CtyValue; pin: CtyValue }>;
  /** What the remote side holds, by id. */
  secrets: Map<string, string>;
}

const vaultSchema = defineSchema({
  attributes: {
    id: attr.string({ computed: true, planModifiers: [useStateForUnknown()] }),
    name: attr.string({ required: true }),
    password_wo: attr.string({ optional: true, sensitive: true, writeOnly: true }),
    password_wo_version: attr.number({ optional: true, planModifiers: [requiresReplace()] }),
    login: attr.single(
      { user: attr.string({ optional: true }), pin: attr.string({ optional: true, writeOnly: true }) },
      { optional: true },
    ),
    keys: attr.map(t.string, { optional: true, writeOnly: true }),
  },
});

const pinOf = (login: CtyValue): CtyValue =>
  login !== null && typeof login === "object" && "pin" in login
    ? ((login as { pin: CtyValue }).pin ?? null)
    : null;

const vault = {
  typeName: "gpurental_vault",
  schema: vaultSchema,
  modifyPlan({ config }, ctx) {
    ctx.providerData.seen.push({ step: "plan", password: config.password_wo, pin: pinOf(config.login) });
  },
  async create({ config }, ctx) {
    ctx.providerData.seen.push({ step: "create", password: config.password_wo, pin: pinOf(config.login) });
    ctx.providerData.secrets.set("v-1", String(config.password_wo));
    // A careless handler that hands the secrets back: the framework must drop them.
    return {
      id: "v-1",
      password_wo: config.password_wo as string,
      login: config.login as { user: string | null; pin: string | null },
      keys: config.keys as Record<string, string>,
    };
  },
  async read({ state }, ctx) {
    return { ...state, password_wo: ctx.providerData.secrets.get(state.id ?? "") ?? null };
  },
  async update({ config }, ctx) {
    ctx.providerData.seen.push({ step: "update", password: config.password_wo, pin: pinOf(config.login) });
    return { password_wo: config.password_wo as string };
  },
  async delete() {},
  async importState({ id }) {
    return { id, password_wo: "imported-secret" };
  },
} satisfies ResourceDefinition<typeof vaultSchema, Vault>;

const providerSchema = defineSchema({ attributes: {} });

function setup() {
  const store: Vault = { seen: [], secrets: new Map() };
  const h = createHarness({
    typeName: "gpurental",
    schema: providerSchema,
    configure: async () => store,
    resources: [vault],
    dataSources: [],
  } satisfies ProviderDefinition<typeof providerSchema, Vault>);
  return { store, h };
}

const SECRET = "s3cret-value";
const config = {
  name: "v",
  password_wo: SECRET,
  password_wo_version: 1,
  login: { user: "root", pin: "1234" },
  keys: { a: "key-a" },
};

/** Every string anywhere in a value, to check that no secret is left in it. */
function strings(v: unknown): string[] {
  if (typeof v === "string") return [v];
  if (Array.isArray(v)) return v.flatMap(strings);
  if (v !== null && typeof v === "object") return Object.values(v).flatMap(strings);
  return [];
}
const SECRETS = [SECRET, "1234", "key-a", "imported-secret"];

describe("write-only attributes", () => {
  it("are flagged in the schema, nested ones included", async () => {
    const { h } = setup();
    const res = await h.service.GetProviderSchema({});
    const attrs = Object.fromEntries(
      res.resource_schemas.gpurental_vault!.block.attributes.map((a) => [a.name, a]),
    );
    expect(attrs.password_wo).toMatchObject({ write_only: true, sensitive: true, optional: true });
    expect(attrs.password_wo_version).toMatchObject({ write_only: false });
    const login = Object.fromEntries(attrs.login!.nested_type!.attributes.map((a) => [a.name, a]));
    expect(login.pin).toMatchObject({ write_only: true });
    expect(login.user).toMatchObject({ write_only: false });
  });

  it("reach the handlers in the configuration and never come back in a plan or state", async () => {
    const { store, h } = setup();
    expect(await h.configure({})).toEqual([]);
    const planned = await h.plan("gpurental_vault", null, config);
    expect(planned.diags).toEqual([]);
    expect(planned.planned).toMatchObject({
      password_wo: null,
      password_wo_version: 1,
      login: { user: "root", pin: null },
      keys: null,
    });
    expect(isUnknown(planned.planned!.id)).toBe(true);
    const applied = await h.apply("gpurental_vault", null, planned.planned, config);
    expect(applied.diags).toEqual([]);
    expect(applied.value).toMatchObject({ id: "v-1", password_wo: null, login: { user: "root", pin: null } });
    expect(store.seen).toEqual([
      { step: "plan", password: SECRET, pin: "1234" },
      { step: "create", password: SECRET, pin: "1234" },
    ]);
    expect(store.secrets.get("v-1")).toBe(SECRET);

    const read = await h.read("gpurental_vault", applied.value!);
    const imported = await h.import("gpurental_vault", "v-1");
    const upgraded = await h.upgrade(
      "gpurental_vault",
      0,
      JSON.stringify({ ...applied.value, password_wo: SECRET, login: { user: "root", pin: "1234" } }),
    );
    for (const value of [planned.planned, applied.value, read.value, imported.value, upgraded.value]) {
      for (const secret of SECRETS) expect(strings(value)).not.toContain(secret);
    }
    expect(read.value!.password_wo).toBeNull();
    expect(imported.value).toMatchObject({ id: "v-1", password_wo: null });
    expect(upgraded.value).toMatchObject({ password_wo: null, login: { user: "root", pin: null } });
  });

  it("plan no change when only their values change; the stored version number replaces", async () => {
    const { h } = setup();
    await h.configure({});
    const p = await h.plan("gpurental_vault", null, config);
    const state = (await h.apply("gpurental_vault", null, p.planned, config)).value!;

    const rotatedOnly = { ...config, password_wo: "another", login: { user: "root", pin: "9999" } };
    const same = await h.plan("gpurental_vault", state, rotatedOnly);
    expect(same.diags).toEqual([]);
    expect(same.planned).toEqual(state);
    expect(same.requiresReplace).toEqual([]);

    const bumped = await h.plan("gpurental_vault", state, { ...rotatedOnly, password_wo_version: 2 });
    expect(bumped.requiresReplace).toEqual([["password_wo_version"]]);
    expect(bumped.planned!.password_wo).toBeNull();
  });

  it("are refused, by path, when the client cannot keep them out of plan and state", async () => {
    const { h } = setup();
    const validate = (c: Record<string, CtyValue>, caps: { write_only_attributes_allowed: boolean } | null) =>
      h.service.ValidateResourceConfig({
        type_name: "gpurental_vault",
        config: {
          msgpack: encodeMsgpack(
            {
              id: null,
              name: "v",
              password_wo: null,
              password_wo_version: null,
              login: null,
              keys: null,
              ...c,
            },
            vaultSchema.type,
          ),
          json: Buffer.alloc(0),
        },
        client_capabilities: caps ? { deferral_allowed: false, ...caps } : null,
      });
    // Terraform before 1.11 sends no capabilities at all.
    const { diagnostics: oldDiags = [] } = await validate(
      { password_wo: SECRET, login: { user: "u", pin: "1" } },
      null,
    );
    expect(oldDiags.map((d) => [d.summary, d.attribute?.steps.map((s) => Object.values(s)[1])])).toEqual([
      ["Write-only attribute not supported", ["password_wo"]],
      // Terraform places a diagnostic at the nested attribute's expression; the detail names the rest.
      ["Write-only attribute not supported", ["login"]],
    ]);
    expect(oldDiags[1]!.detail).toContain("login.pin is a write-only argument");
    expect(oldDiags[0]!.detail).toContain("needs Terraform 1.11 or later");
    for (const d of oldDiags) expect(`${d.summary} ${d.detail}`).not.toContain(SECRET);
    // Unset write-only attributes are fine with any client; so are values with a capable one.
    expect((await validate({ login: { user: "u", pin: null } }, null)).diagnostics).toEqual([]);
    expect(
      (await validate({ password_wo: SECRET }, { write_only_attributes_allowed: true })).diagnostics,
    ).toEqual([]);
  });

  it("are rejected where Terraform would reject them", () => {
    const bad = (attributes: Parameters<typeof defineSchema>[0]["attributes"]) => () =>
      defineSchema({ attributes });
    expect(
      bad({ a: attr.string({ optional: true, writeOnly: true, planModifiers: [requiresReplace()] }) }),
    ).toThrow(/cannot have plan modifiers.*version number/);
    expect(
      bad({
        a: attr.single({ x: attr.string({ optional: true }) }, { optional: true, writeOnly: true }),
      }),
    ).toThrow(/inside a write-only attribute, so it must be write-only too/);
    expect(bad({ a: attr.string({ optional: true, computed: true, writeOnly: true }) })).toThrow(SchemaError);

    const withWriteOnly = defineSchema({
      attributes: { a: attr.string({ optional: true, writeOnly: true }) },
    });
    const provider = (over: Partial<ProviderDefinition<typeof providerSchema, Vault>>) => () =>
      createProviderService({
        typeName: "gpurental",
        schema: providerSchema,
        configure: async () => ({ seen: [], secrets: new Map() }),
        resources: [],
        dataSources: [],
        ...over,
      } as ProviderDefinition<typeof providerSchema, Vault>);
    expect(
      provider({
        dataSources: [{ typeName: "gpurental_x", schema: withWriteOnly, read: async () => ({}) }],
      }),
    ).toThrow(/data source gpurental_x has a write-only attribute "a"/);
    expect(provider({ schema: withWriteOnly as unknown as typeof providerSchema })).toThrow(
      /the provider schema has a write-only attribute/,
    );
  });
});

describe("finding write-only attributes at every depth and nesting", () => {
  const inner = {
    user: attr.string({ optional: true }),
    pin: attr.string({ optional: true, writeOnly: true }),
  };
  const attributes = defineSchema({
    attributes: {
      name: attr.string({ optional: true }),
      one: attr.single(inner, { optional: true }),
      list: attr.listNested(inner, { optional: true }),
      set: attr.setNested({ user: attr.string({ optional: true }) }, { optional: true }),
      map: attr.mapNested(inner, { optional: true }),
      deep: attr.single({ login: attr.single(inner, { optional: true }) }, { optional: true }),
    },
  }).attributes;
  const login = (user: string, pin: CtyValue) => ({ user, pin });
  const value: Record<string, CtyValue> = {
    name: "n",
    one: login("a", "1"),
    list: [login("b", "2"), null, login("c", unknown)],
    set: [{ user: "d" }],
    map: { x: login("e", "3"), y: "not an object" },
    deep: { login: login("f", "4") },
  };

  it("hasWriteOnly looks into nested attributes, at any depth, and finds none where there is none", () => {
    expect(hasWriteOnly({ name: attributes.name })).toBe(false);
    expect(hasWriteOnly({ set: attributes.set })).toBe(false);
    expect(hasWriteOnly({ one: attributes.one })).toBe(true);
    expect(hasWriteOnly({ deep: attributes.deep })).toBe(true);
  });

  it("nullWriteOnly nulls them in single, list, map and nested-in-nested values, and keeps the rest", () => {
    expect(nullWriteOnly(attributes, value)).toEqual({
      name: "n",
      one: login("a", null),
      list: [login("b", null), null, login("c", null)],
      set: [{ user: "d" }],
      map: { x: login("e", null), y: "not an object" },
      deep: { login: login("f", null) },
    });
    // The input is left as it was.
    expect((value.one as Record<string, CtyValue>).pin).toBe("1");
  });

  it("nullWriteOnly keeps null and unknown nested values as they are", () => {
    const out = nullWriteOnly(attributes, { one: unknown, list: unknown, map: null, deep: null });
    expect(out).toMatchObject({ one: unknown, list: unknown, map: null, deep: null, name: null });
  });

  it("writeOnlyValuePaths names each one that holds a value, known or not, by its full path", () => {
    expect(writeOnlyValuePaths(attributes, value)).toEqual([
      [{ attribute: "one" }, { attribute: "pin" }],
      [{ attribute: "list" }, { index: 0 }, { attribute: "pin" }],
      [{ attribute: "list" }, { index: 2 }, { attribute: "pin" }],
      [{ attribute: "map" }, { key: "x" }, { attribute: "pin" }],
      [{ attribute: "deep" }, { attribute: "login" }, { attribute: "pin" }],
    ]);
    expect(writeOnlyValuePaths(attributes, { one: login("a", null), list: unknown, map: unknown })).toEqual(
      [],
    );
  });
});
