import { type CtyValue, unknown } from "../../plugin/cty";
import { useFakeBackend } from "../../testing/fake-backend";

// A null in a map value or a set element of gpurental_instance is ordinary Terraform (an optional
// value: `env = { OPTIONAL = var.maybe }`), and means "not set": the entry is left out of the deploy,
// as if the key were not there, and the state keeps the map as configured. An unknown value plans
// without an error and is checked once known. Driven through the service with msgpack values, as
// Terraform drives it, against the in-process fake backend.

type Rec = Record<string, CtyValue>;

const fake = useFakeBackend({ workDir: "file" });

const configured = () => fake.configured();

const base = (over: Rec): Rec => ({
  offer_id: fake.creds.offer_id,
  template_id: fake.creds.template_id,
  disk_gb: 50,
  ...over,
});

const envOf = (id: unknown) => fake.backend.instance(String(id))?.env ?? [];

describe("a null in a map value or set element means not set", () => {
  test.each<[string, Rec, string]>([
    ["env", { env: { KEPT: "1", OPTIONAL: null } }, "OPTIONAL"],
    ["secret_env", { secret_env: { KEPT: "1", OPTIONAL: null } }, "OPTIONAL"],
    ["secret_env_wo", { secret_env_wo: { KEPT: "1", PEER: null }, secret_env_wo_version: 1 }, "PEER"],
    ["unset_env", { env: { KEPT: "1" }, unset_env: ["TZ", null] }, "null"],
  ])("in %s: validates, plans and deploys without the entry", async (_attr, over, left) => {
    const h = await configured();
    const cfg = base(over);
    expect(await h.validate("gpurental_instance", cfg)).toEqual([]);
    const p = await h.plan("gpurental_instance", null, cfg);
    expect(p.diags).toEqual([]);
    const created = await h.apply("gpurental_instance", null, p.planned, cfg, p.private);
    expect(created.diags).toEqual([]);
    const env = envOf(created.value!.id);
    expect(env).toEqual(expect.arrayContaining([expect.objectContaining({ key: "KEPT", value: "1" })]));
    expect(env.map((e) => e.key)).not.toContain(left);
    // Nothing was sent as an unset either (a null value is an unset in env_overrides).
    expect(env.filter((e) => e.value === null)).toEqual([]);
  });

  test("the state keeps the map as configured, so the next plan is empty", async () => {
    const h = await configured();
    const cfg = base({ env: { KEPT: "1", OPTIONAL: null } });
    const p = await h.plan("gpurental_instance", null, cfg);
    const created = await h.apply("gpurental_instance", null, p.planned, cfg, p.private);
    expect(created.value?.env).toEqual({ KEPT: "1", OPTIONAL: null });
    const again = await h.plan("gpurental_instance", created.value, cfg, created.private);
    expect(again.diags).toEqual([]);
    expect(again.requiresReplace).toEqual([]);
    expect(again.planned).toEqual(created.value);
  });

  test("an unknown map value is planned as configured, with a null beside it", async () => {
    const h = await configured();
    const cfg = base({ env: { LATER: unknown, OPTIONAL: null }, secret_env: { S: null } });
    expect(await h.validate("gpurental_instance", cfg)).toEqual([]);
    const p = await h.plan("gpurental_instance", null, cfg);
    expect(p.diags).toEqual([]);
    expect(p.planned?.env).toEqual({ LATER: unknown, OPTIONAL: null });
  });

  test("a key set in env and null in secret_env is not set twice", async () => {
    const h = await configured();
    const cfg = base({ env: { A: "1" }, secret_env: { A: null } });
    expect(await h.validate("gpurental_instance", cfg)).toEqual([]);
    const p = await h.plan("gpurental_instance", null, cfg);
    expect(p.diags).toEqual([]);
  });
});
