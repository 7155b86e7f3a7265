import { type CtyValue, encodeMsgpack } from "../../plugin/cty";
import { useFakeBackend } from "../../testing/fake-backend";
import { instanceFingerprint } from "./deploy";
import { ACCESS_TOKEN_REFERENCE } from "./env";
import type { InstanceArgs } from "./model";
import { instanceResource } from "./resource";

// secret_env_wo and secret_env_wo_version of gpurental_instance, driven in memory the way Terraform
// drives them against the in-process fake backend: the values reach the deployed instance and never
// a planned, applied, read or imported state; only the version number replaces the instance.

type Rec = Record<string, CtyValue>;

// Terraform's working directory of the provider, where its deploy journal goes, is one for the file
// (never the directory the tests run in).
const fake = useFakeBackend({ workDir: "file" });

const configured = () => fake.configured();

const SECRET = "wo-secret-7d41c0e9";
const ROTATED = "wo-rotated-2b8f5a61";

const instanceConfig = (over: Rec = {}): Rec => ({
  offer_id: fake.creds.offer_id,
  template_id: fake.creds.template_id,
  disk_gb: 50,
  secret_env_wo: { API_TOKEN: SECRET },
  secret_env_wo_version: 1,
  ...over,
});

/** The env the fake backend's instance runs with. */
const envOf = (id: unknown) => fake.backend.instance(String(id))?.env ?? [];

function expectNoSecret(...values: unknown[]): void {
  const text = JSON.stringify(values);
  expect(text).not.toContain(SECRET);
  expect(text).not.toContain(ROTATED);
}

describe("secret_env_wo", () => {
  test("reaches the instance as secret env and is null in every plan and state", async () => {
    const h = await configured();
    const cfg = instanceConfig({ env: { A: "1" } });
    expect(await h.validate("gpurental_instance", cfg)).toEqual([]);
    const p = await h.plan("gpurental_instance", null, cfg);
    expect(p.diags).toEqual([]);
    expect(p.planned).toMatchObject({ secret_env_wo: null, secret_env_wo_version: 1 });
    const created = await h.apply("gpurental_instance", null, p.planned, cfg);
    expect(created.diags).toEqual([]);
    expect(created.value).toMatchObject({ secret_env_wo: null, secret_env_wo_version: 1 });
    expect(envOf(created.value!.id)).toEqual(
      expect.arrayContaining([
        { key: "API_TOKEN", value: SECRET, secret: true },
        { key: "A", value: "1", secret: false },
      ]),
    );

    const refreshed = await h.read("gpurental_instance", created.value!);
    const imported = await h.import("gpurental_instance", String(created.value!.id));
    const again = await h.plan("gpurental_instance", refreshed.value, cfg);
    expect(again.planned).toEqual(refreshed.value);
    expect(again.requiresReplace).toEqual([]);
    expectNoSecret(p.planned, created.value, refreshed.value, imported.value, again.planned);
    expectNoSecret(p.diags, created.diags, refreshed.diags, again.diags);
  });

  test("new values alone plan nothing; a new version replaces the instance and deploys them", async () => {
    const h = await configured();
    const cfg = instanceConfig();
    const p = await h.plan("gpurental_instance", null, cfg);
    const state = (await h.apply("gpurental_instance", null, p.planned, cfg)).value!;

    const rotated = instanceConfig({ secret_env_wo: { API_TOKEN: ROTATED } });
    const quiet = await h.plan("gpurental_instance", state, rotated);
    expect(quiet.diags).toEqual([]);
    expect(quiet.planned).toEqual(state);
    expect(quiet.requiresReplace).toEqual([]);

    const bumped = instanceConfig({ secret_env_wo: { API_TOKEN: ROTATED }, secret_env_wo_version: 2 });
    const replace = await h.plan("gpurental_instance", state, bumped);
    expect(replace.requiresReplace).toEqual([["secret_env_wo_version"]]);
    // Terraform then plans and applies the create half of the replacement.
    const p2 = await h.plan("gpurental_instance", null, bumped);
    const replacement = (await h.apply("gpurental_instance", null, p2.planned, bumped)).value!;
    expect(replacement.id).not.toBe(state.id);
    expect(replacement.secret_env_wo_version).toBe(2);
    expect(envOf(replacement.id)).toContainEqual({ key: "API_TOKEN", value: ROTATED, secret: true });
    expectNoSecret(quiet.planned, replace.planned, p2.planned, replacement);
  });

  test("needs its version number, shares the env rules, and never echoes a value", async () => {
    const h = await configured();
    const missing = await h.validate("gpurental_instance", instanceConfig({ secret_env_wo_version: null }));
    expect(missing.map((d) => [d.severity, d.summary, d.path])).toEqual([
      ["error", "Missing secret_env_wo_version", [{ attribute: "secret_env_wo_version" }]],
    ]);
    const clash = await h.validate(
      "gpurental_instance",
      instanceConfig({ secret_env: { API_TOKEN: "x" }, secret_env_wo_version: 1.5 }),
    );
    expect(clash.map((d) => [d.summary, d.path])).toEqual([
      ["Invalid attribute value", [{ attribute: "secret_env_wo_version" }]],
      ["Environment variable set twice", [{ attribute: "secret_env_wo" }, { key: "API_TOKEN" }]],
    ]);
    expectNoSecret(missing, clash);
    // A version alone (the values fed only once) is fine.
    expect(await h.validate("gpurental_instance", instanceConfig({ secret_env_wo: null }))).toEqual([]);
  });

  test("is refused by a Terraform that cannot keep it out of plan and state, naming the version needed", async () => {
    const h = await configured();
    const full: Rec = {};
    for (const name of Object.keys(instanceResource.schema.attributes)) full[name] = null;
    const res = await h.service.ValidateResourceConfig({
      type_name: "gpurental_instance",
      config: {
        msgpack: encodeMsgpack({ ...full, ...instanceConfig() }, instanceResource.schema.type),
        json: Buffer.alloc(0),
      },
      client_capabilities: null,
    });
    expect(res.diagnostics).toEqual([
      expect.objectContaining({
        severity: 1,
        summary: "Write-only attribute not supported",
        detail: expect.stringContaining("needs Terraform 1.11 or later"),
      }),
    ]);
    expectNoSecret(res.diagnostics);
  });

  test("after an import, the version is recorded in place like the other create-only arguments", async () => {
    const h = await configured();
    const cfg = instanceConfig();
    const p = await h.plan("gpurental_instance", null, cfg);
    const created = (await h.apply("gpurental_instance", null, p.planned, cfg)).value!;
    const deploys = fake.backend.listInstances(fake.creds.org_id).length;
    const imported = await h.import("gpurental_instance", String(created.id));
    const refreshed = await h.read("gpurental_instance", imported.value!, imported.private);
    expect(refreshed.value).toMatchObject({ secret_env_wo: null, secret_env_wo_version: null });

    const plan = await h.plan("gpurental_instance", refreshed.value, cfg, refreshed.private);
    expect(plan.requiresReplace).toEqual([]);
    expect(plan.diags.map((d) => d.summary)).toEqual([
      `Arguments of imported instance ${created.id} recorded as configured`,
    ]);
    expect(plan.diags[0]?.detail).toContain("`secret_env_wo_version`");
    const applied = await h.apply("gpurental_instance", refreshed.value, plan.planned, cfg, plan.private);
    expect(applied.value).toMatchObject({ secret_env_wo: null, secret_env_wo_version: 1 });
    expect(fake.backend.listInstances(fake.creds.org_id)).toHaveLength(deploys);
    expectNoSecret(plan, applied.value);
  });

  test("a template variable carrying the access token gets the overlay warning at plan time", async () => {
    const h = await configured();
    const tpl = fake.backend.createTemplate({
      name: "App with a token variable",
      mode: "ssh",
      env: [{ key: "APP_PASSWORD", value: ACCESS_TOKEN_REFERENCE, secret: false }],
    });
    const p = await h.plan(
      "gpurental_instance",
      null,
      instanceConfig({ template_id: tpl.id, secret_env_wo: { APP_PASSWORD: SECRET } }),
    );
    expect(p.diags).toMatchObject([
      { severity: "warning", path: [{ attribute: "secret_env_wo" }, { key: "APP_PASSWORD" }] },
    ]);
    expectNoSecret(p.diags);
  });

  test("the deploy journal tells configurations apart by the version, never by the values", () => {
    const account = { base_url: "http://x", org_id: null };
    const args: InstanceArgs = {
      offer_id: "o",
      offer_filter: null,
      template_id: "t",
      disk_gb: 50,
      label: null,
      ssh_key_id: null,
      env: null,
      secret_env: null,
      unset_env: null,
      desired_status: "running",
    };
    const fp = (over: Partial<InstanceArgs>) => instanceFingerprint({ ...args, ...over }, account);
    // Entries written before secret_env_wo existed keep matching.
    expect(fp({ secret_env_wo_version: null })).toBe(fp({}));
    expect(fp({ secret_env_wo_version: 1 })).not.toBe(fp({}));
    expect(fp({ secret_env_wo_version: 1 })).not.toBe(fp({ secret_env_wo_version: 2 }));
    expect(fp({ secret_env_wo_version: 1, secret_env_wo: { A: SECRET } })).toBe(
      fp({ secret_env_wo_version: 1 }),
    );
  });
});
