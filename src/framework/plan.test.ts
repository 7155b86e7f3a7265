import { type CtyValue, isUnknown, newRecord, t, unknown } from "../plugin/cty";
import { Diagnostics } from "./diagnostics";
import { requiresReplace, requiresReplaceIf, unknownOnUpdate, useStateForUnknown } from "./modifiers";
import { checkPlan, nullUnknowns, planChange } from "./plan";
import { attr, defineSchema } from "./schema";

const schema = defineSchema({
  attributes: {
    id: attr.string({ computed: true, planModifiers: [useStateForUnknown()] }),
    name: attr.string({ required: true }),
    zone: attr.string({ optional: true, planModifiers: [requiresReplace()] }),
    disk: attr.number({
      optional: true,
      planModifiers: [requiresReplaceIf((r) => Number(r.plan) < Number(r.state), "Shrinking replaces.")],
    }),
    kind: attr.string({ optional: true, computed: true, default: "std" }),
    ip: attr.string({ computed: true }),
    updated_at: attr.string({ computed: true, planModifiers: [unknownOnUpdate()] }),
    secret: attr.string({ optional: true, writeOnly: true }),
    net: attr.single(
      { cidr: attr.string({ required: true }), gateway: attr.string({ computed: true }) },
      { optional: true },
    ),
    vols: attr.setNested(
      { size: attr.number({ required: true }), vid: attr.string({ computed: true }) },
      { optional: true },
    ),
  },
});

type Rec = Record<string, CtyValue>;
const obj = (v: Rec): Rec => {
  const out = newRecord<CtyValue>();
  for (const k of Object.keys(schema.attributes)) out[k] = v[k] ?? null;
  return out;
};
// Terraform's proposal: configuration, with computed attributes unset in configuration taken from prior.
const propose = (prior: Rec | null, config: Rec): Rec => {
  const out = obj(config);
  for (const [k, a] of Object.entries(schema.attributes))
    if (a.computed && config[k] == null) out[k] = prior?.[k] ?? null;
  return out;
};

const prior = obj({
  id: "i-1",
  name: "a",
  zone: "z1",
  disk: 10,
  kind: "std",
  ip: "10.0.0.1",
  updated_at: "t1",
  net: { cidr: "10.0.0.0/24", gateway: "10.0.0.254" },
  vols: [
    { size: 1, vid: "v1" },
    { size: 2, vid: "v2" },
  ],
});
const baseConfig: Rec = {
  name: "a",
  zone: "z1",
  disk: 10,
  net: { cidr: "10.0.0.0/24", gateway: null },
  vols: [
    { size: 2, vid: null },
    { size: 1, vid: null },
  ],
};

function plan(p: Rec | null, config: Rec | null) {
  const c = config ? obj(config) : null;
  return planChange(schema, p, c ? propose(p, c) : null, c);
}

describe("planChange", () => {
  it("create: computed unset attributes become unknown, defaults and config kept, write-only null", () => {
    const { planned, requiresReplace: rr } = plan(null, { ...baseConfig, secret: "s" });
    expect(isUnknown(planned!.id)).toBe(true);
    expect(isUnknown(planned!.ip)).toBe(true);
    expect(planned!.kind).toBe("std");
    expect(planned!.secret).toBeNull();
    expect(planned!.name).toBe("a");
    expect(isUnknown((planned!.net as Rec).gateway)).toBe(true);
    expect((planned!.vols as Rec[]).every((v) => isUnknown(v.vid))).toBe(true);
    expect(rr).toEqual([]);
  });

  it("no change: the plan equals the prior state, set elements matched by content", () => {
    const { planned, requiresReplace: rr } = plan(prior, baseConfig);
    expect(planned).toEqual({
      ...prior,
      vols: [
        { size: 2, vid: "v2" },
        { size: 1, vid: "v1" },
      ],
    });
    expect(rr).toEqual([]);
  });

  it("update: prior computed values kept, unknownOnUpdate marks unknown, useStateForUnknown keeps id", () => {
    const { planned, requiresReplace: rr } = plan(prior, { ...baseConfig, name: "b" });
    expect(planned!.name).toBe("b");
    expect(planned!.id).toBe("i-1");
    expect(planned!.ip).toBe("10.0.0.1");
    expect(isUnknown(planned!.updated_at)).toBe(true);
    expect((planned!.net as Rec).gateway).toBe("10.0.0.254");
    expect(rr).toEqual([]);
  });

  it("update: a computed value that was null becomes unknown when the object changes", () => {
    const { planned } = plan({ ...prior, ip: null }, { ...baseConfig, name: "b" });
    expect(isUnknown(planned!.ip)).toBe(true);
    const same = plan({ ...prior, ip: null }, baseConfig);
    expect(same.planned!.ip).toBeNull();
  });

  it.each([
    ["zone changes", { zone: "z2" }, [[{ attribute: "zone" }]]],
    ["zone becomes unknown", { zone: unknown }, [[{ attribute: "zone" }]]],
    ["disk grows", { disk: 20 }, []],
    ["disk shrinks", { disk: 5 }, [[{ attribute: "disk" }]]],
  ])("requires replace when %s", (_name, change, expected) => {
    expect(plan(prior, { ...baseConfig, ...change }).requiresReplace).toEqual(expected);
  });

  it("replace: the second plan has no prior state and is a create", () => {
    const { planned, requiresReplace: rr } = plan(null, { ...baseConfig, zone: "z2" });
    expect(isUnknown(planned!.id)).toBe(true);
    expect(rr).toEqual([]);
  });

  it("destroy: a null proposal plans null", () => {
    expect(plan(prior, null)).toEqual({ planned: null, requiresReplace: [] });
  });

  it("unknown configuration values stay unknown, whole nested values too", () => {
    const { planned } = plan(prior, { ...baseConfig, name: unknown, net: unknown, vols: unknown });
    expect(isUnknown(planned!.name)).toBe(true);
    expect(isUnknown(planned!.net)).toBe(true);
    expect(isUnknown(planned!.vols)).toBe(true);
  });
});

describe("checkPlan", () => {
  it("accepts the framework's own plans", () => {
    const diags = new Diagnostics();
    const config = obj(baseConfig);
    checkPlan(schema, plan(prior, baseConfig).planned!, config, diags);
    checkPlan(schema, plan(null, baseConfig).planned!, config, diags);
    expect(diags.items).toEqual([]);
  });

  it("names attributes planned against the rules", () => {
    const diags = new Diagnostics();
    const config = obj({ ...baseConfig, secret: "s", zone: unknown });
    const bad: Rec = { ...plan(prior, baseConfig).planned!, name: "changed", secret: "s", zone: "z1" };
    bad.net = { cidr: "other", gateway: "g" };
    checkPlan(schema, bad, config, diags);
    expect(diags.items.map((d) => d.path)).toEqual([
      [{ attribute: "name" }],
      [{ attribute: "zone" }],
      [{ attribute: "secret" }],
      [{ attribute: "net" }, { attribute: "cidr" }],
    ]);
  });
});

describe("nullUnknowns", () => {
  it("nulls every unknown left and names where, down to list indexes and map keys", () => {
    const type = t.object({
      a: t.string,
      b: t.list(t.object({ c: t.string, d: t.number })),
      m: t.map(t.string),
      s: t.set(t.string),
      tu: t.tuple([t.string, t.bool]),
    });
    const rec = (v: Rec): Rec => Object.assign(newRecord<CtyValue>(), v);
    const value = rec({
      a: unknown,
      b: [rec({ c: "x", d: 1 }), rec({ c: unknown, d: 2 })],
      m: rec({ k: "v", u: unknown }),
      s: ["p", unknown],
      tu: ["q", unknown],
    });
    const { value: known, paths } = nullUnknowns(value, type, [{ attribute: "top" }]);
    expect(known).toEqual({
      a: null,
      b: [
        { c: "x", d: 1 },
        { c: null, d: 2 },
      ],
      m: { k: "v", u: null },
      s: ["p", null],
      tu: ["q", null],
    });
    expect(paths).toEqual([
      [{ attribute: "top" }, { attribute: "a" }],
      [{ attribute: "top" }, { attribute: "b" }, { index: 1 }, { attribute: "c" }],
      [{ attribute: "top" }, { attribute: "m" }, { key: "u" }],
      [{ attribute: "top" }, { attribute: "s" }],
      [{ attribute: "top" }, { attribute: "tu" }, { index: 1 }],
    ]);
    expect(nullUnknowns(unknown, t.string).paths).toEqual([[]]);
  });
});

describe("modifiers on their own", () => {
  const base = { path: [], type: t.string, resourceChanges: true, private: Buffer.alloc(0) };
  it("useStateForUnknown only fills an unknown from a known prior on update", () => {
    const m = useStateForUnknown();
    expect(m.modify({ ...base, config: null, state: "x", plan: unknown, isCreate: false })).toEqual({
      plan: "x",
    });
    expect(m.modify({ ...base, config: null, state: null, plan: unknown, isCreate: true })).toBeUndefined();
    expect(m.modify({ ...base, config: "y", state: "x", plan: "y", isCreate: false })).toBeUndefined();
  });
  it("requiresReplace ignores creates and equal values", () => {
    const m = requiresReplace();
    expect(m.modify({ ...base, config: "a", state: null, plan: "a", isCreate: true })).toBeUndefined();
    expect(m.modify({ ...base, config: "a", state: "a", plan: "a", isCreate: false })).toBeUndefined();
    expect(m.modify({ ...base, config: "b", state: "a", plan: "b", isCreate: false })).toEqual({
      requiresReplace: true,
    });
  });
});
