import { DEMO_IDS } from "../fake-backend";
import { isUnknown, unknown } from "../framework";
import type { CtyValue } from "../plugin/cty";
import { ACCESS_TOKEN_REFERENCE } from "../resources/instance/env";
import { useFakeBackend } from "../testing/fake-backend";

// The provider definition driven in memory the way Terraform drives it (msgpack values, plan then
// apply), against the in-process fake backend: fast feedback on configuration, planning rules and
// the lifecycle, before the end-to-end suites run the real terraform.

type Rec = Record<string, CtyValue>;

// Terraform's working directory of the provider, where its deploy journal goes, is one for the file.
const fake = useFakeBackend({ workDir: "file" });

const harness = (env: NodeJS.ProcessEnv = {}) => fake.provider({ env });

async function configured(token?: string, extra: Rec = {}) {
  const h = harness();
  const diags = await h.configure({
    base_url: fake.url,
    token: token ?? fake.creds.admin_session_token,
    ...extra,
  });
  expect(diags).toEqual([]);
  return h;
}

const instanceConfig = (over: Rec = {}): Rec => ({
  offer_id: fake.creds.offer_id,
  template_id: fake.creds.template_id,
  disk_gb: 50,
  label: "svc",
  ssh_key_id: fake.creds.ssh_key_id,
  ...over,
});

describe("provider configuration", () => {
  test("missing values are errors on their attribute", async () => {
    const diags = await harness({}).configure({});
    expect(diags.map((d) => [d.summary, d.path])).toEqual([
      ["Missing API address", [{ attribute: "base_url" }]],
      ["Missing credential", [{ attribute: "token" }]],
    ]);
  });

  test("an explicit empty string is an error on its attribute, not a fallback to the environment", async () => {
    const env = {
      GPURENTAL_BASE_URL: fake.url,
      GPURENTAL_TOKEN: fake.creds.admin_session_token,
      GPURENTAL_ORG_ID: fake.creds.org_id,
    };
    const diags = await harness(env).configure({ base_url: "", token: "", org_id: "" });
    expect(diags.map((d) => [d.summary, d.path])).toEqual([
      ["Empty base_url", [{ attribute: "base_url" }]],
      ["Empty token", [{ attribute: "token" }]],
      ["Empty org_id", [{ attribute: "org_id" }]],
    ]);
    expect(diags[1]?.detail).toContain("GPURENTAL_TOKEN");
    expect(JSON.stringify(diags)).not.toContain(fake.creds.admin_session_token);
    // Left unset, the same environment configures the provider.
    expect(await harness(env).configure({})).toEqual([]);
  });

  test("malformed values are errors on their attribute and never echo the token", async () => {
    const diags = await harness({}).configure({
      base_url: "ftp://x",
      token: "gps_bad token",
      org_id: "nope",
    });
    expect(diags.map((d) => d.path)).toEqual([
      [{ attribute: "base_url" }],
      [{ attribute: "token" }],
      [{ attribute: "org_id" }],
    ]);
    expect(JSON.stringify(diags)).not.toContain("bad token");
  });

  test("a base_url with the /v1 path is refused with the fix", async () => {
    const diags = await harness({}).configure({ base_url: `${fake.url}/v1/`, token: "gps_x" });
    expect(diags).toMatchObject([{ summary: "API address includes /v1", path: [{ attribute: "base_url" }] }]);
    expect(diags[0]?.detail).toContain(JSON.stringify(fake.url));
  });

  test("the environment fills in unset arguments", async () => {
    const h = harness({
      GPURENTAL_BASE_URL: fake.url,
      GPURENTAL_TOKEN: fake.creds.admin_session_token,
      GPURENTAL_ORG_ID: fake.creds.org_id,
    });
    expect(await h.configure({})).toEqual([]);
    const p = await h.plan("gpurental_instance", null, instanceConfig());
    expect(p.diags).toEqual([]);
  });

  test("environment values are checked too, naming the variable", async () => {
    const diags = await harness({ GPURENTAL_BASE_URL: "not a url", GPURENTAL_TOKEN: "t" }).configure({});
    expect(diags[0]?.detail).toContain("GPURENTAL_BASE_URL");
  });

  test("with unknown values, a refresh keeps the state as it is", async () => {
    const h = await configured();
    const cfg = instanceConfig();
    const p = await h.plan("gpurental_instance", null, cfg);
    const state = (await h.apply("gpurental_instance", null, p.planned, cfg)).value!;
    const later = harness({});
    expect(await later.configure({ base_url: fake.url, token: unknown })).toEqual([]);
    expect(await later.read("gpurental_instance", state)).toMatchObject({ value: state, diags: [] });
  });

  test("unknown values are accepted and planning skips the API", async () => {
    const h = harness({});
    expect(await h.configure({ base_url: fake.url, token: unknown })).toEqual([]);
    // Valid, but larger than any machine's disk: only the API could refuse it.
    const p = await h.plan("gpurental_instance", null, instanceConfig({ disk_gb: 20000 }));
    expect(p.diags.filter((d) => d.severity === "error").map((d) => d.summary)).toEqual([]);
  });
});

describe("gpurental_instance planning", () => {
  test("create plans every computed value unknown and desired_status running", async () => {
    const h = await configured();
    const p = await h.plan("gpurental_instance", null, instanceConfig());
    expect(p.diags).toEqual([]);
    expect(p.planned?.desired_status).toBe("running");
    expect(isUnknown(p.planned?.id)).toBe(true);
    expect(isUnknown(p.planned?.spend_micro)).toBe(true);
  });

  test.each([
    [{ offer_id: DEMO_IDS.offerSoldOut }, "OFFER_UNAVAILABLE", "offer_id"],
    [{ offer_id: "00000000-0000-4000-8000-0000000000ff" }, "OFFER_UNAVAILABLE", "offer_id"],
    [{ template_id: "00000000-0000-4000-8000-0000000000fe" }, "TEMPLATE_NOT_FOUND", "template_id"],
    [{ offer_id: DEMO_IDS.offerSmall, disk_gb: 800 }, "DISK_TOO_LARGE", "disk_gb"],
    [{ template_id: DEMO_IDS.templateInactive }, "TEMPLATE_NOT_FOUND", "template_id"],
    [{ template_id: DEMO_IDS.templateComingSoon }, "TEMPLATE_COMING_SOON", "template_id"],
    [{ template_id: DEMO_IDS.templateVm }, "OFFER_NOT_VM_CAPABLE", "offer_id"],
    [{ offer_id: DEMO_IDS.offerNewCuda }, "TEMPLATE_CUDA_TOO_NEW", "template_id"],
    [{ ssh_key_id: DEMO_IDS.memberSshKey }, "SSH_KEY_NOT_FOUND", "ssh_key_id"],
  ])("plan-time check %o -> %s on %s", async (over, code, attribute) => {
    const h = await configured();
    const p = await h.plan("gpurental_instance", null, instanceConfig(over));
    const errors = p.diags.filter((d) => d.severity === "error");
    expect(errors.map((d) => d.summary.split(":")[0])).toEqual([code]);
    expect(errors[0]?.path).toEqual([{ attribute }]);
  });

  test("a maintenance within 24 hours is a warning at plan time: the deploy's answer decides", async () => {
    const h = await configured();
    const p = await h.plan(
      "gpurental_instance",
      null,
      instanceConfig({ offer_id: DEMO_IDS.offerMaintenance }),
    );
    expect(p.diags.map((d) => [d.severity, d.summary.split(":")[0], d.path])).toEqual([
      ["warning", "MACHINE_IN_MAINTENANCE", [{ attribute: "offer_id" }]],
    ]);
  });

  test("an API that cannot be asked never blocks a plan: the checks are skipped with a warning", async () => {
    const h = await configured();
    fake.backend.addFault({ route: "GET /v1/offers/:id", kind: "status", status: 503 });
    const p = await h.plan("gpurental_instance", null, instanceConfig({ offer_id: DEMO_IDS.offerSoldOut }));
    expect(p.diags.filter((d) => d.severity === "error")).toEqual([]);
    expect(p.diags.map((d) => d.summary)).toContain("Some plan-time checks were skipped");
    fake.backend.clearFaults();
  });

  test("a credential the API refuses is an error at plan time", async () => {
    const h = await configured(undefined, { org_id: DEMO_IDS.otherOrg });
    const p = await h.plan("gpurental_instance", null, instanceConfig());
    expect(p.diags.map((d) => d.summary.split(":")[0])).toEqual(["ORG_MISMATCH"]);
  });

  test("an SSH key known only after apply skips only the SSH key check", async () => {
    const h = await configured();
    const p = await h.plan(
      "gpurental_instance",
      null,
      instanceConfig({ ssh_key_id: unknown, offer_id: DEMO_IDS.offerSoldOut }),
    );
    expect(p.diags.map((d) => d.summary.split(":")[0])).toEqual(["OFFER_UNAVAILABLE"]);
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
      instanceConfig({ template_id: tpl.id, env: { APP_PASSWORD: "mine" } }),
    );
    expect(p.diags).toMatchObject([
      {
        severity: "warning",
        summary: "APP_PASSWORD is set by the platform",
        path: [{ attribute: "env" }, { key: "APP_PASSWORD" }],
      },
    ]);
  });

  test("plan-time checks are skipped for unknown inputs", async () => {
    const h = await configured();
    // A disk larger than the offer's machine has: refused at plan once the offer is known.
    const known = await h.plan("gpurental_instance", null, instanceConfig({ disk_gb: 20000 }));
    expect(known.diags.filter((d) => d.severity === "error")).not.toEqual([]);
    const p = await h.plan("gpurental_instance", null, instanceConfig({ offer_id: unknown, disk_gb: 20000 }));
    expect(p.diags.filter((d) => d.severity === "error")).toEqual([]);
  });

  test.each([
    [
      "offer_id",
      "",
      'offer_id must be the ID of an offer, a UUID such as "00000000-0000-4000-8000-000000000041"; got "" (an empty string). See the gpurental_offers data source, or set offer_filter instead to let the provider choose one.',
    ],
    [
      "offer_id",
      "offer-41",
      'offer_id must be the ID of an offer, a UUID such as "00000000-0000-4000-8000-000000000041"; got "offer-41". See the gpurental_offers data source, or set offer_filter instead to let the provider choose one.',
    ],
    [
      "template_id",
      "pytorch",
      'template_id must be the ID of a template, a UUID such as "00000000-0000-4000-8000-000000000041"; got "pytorch".',
    ],
    [
      "ssh_key_id",
      "ssh-ed25519 AAAA",
      'ssh_key_id must be the ID of an SSH key, a UUID such as "00000000-0000-4000-8000-000000000041"; got "ssh-ed25519 AAAA".',
    ],
  ])(
    "%s = %j is refused at validation, on the attribute, naming the rule and the value",
    async (attribute, value, detail) => {
      const h = await configured();
      const diags = await h.validate("gpurental_instance", instanceConfig({ [attribute]: value }));
      expect(diags).toEqual([expect.objectContaining({ severity: "error", path: [{ attribute }], detail })]);
    },
  );

  test("env names with = or NUL are refused at validation, on the key", async () => {
    const h = await configured();
    const diags = await h.validate(
      "gpurental_instance",
      instanceConfig({ env: { "A=B": "1" }, secret_env: { "C\u0000": "x" } }),
    );
    expect(diags.map((d) => [d.severity, d.summary, d.path])).toEqual([
      ["error", 'Environment variable name contains "="', [{ attribute: "env" }, { key: "A=B" }]],
      [
        "error",
        "Environment variable name contains a NUL character",
        [{ attribute: "secret_env" }, { key: "C\u0000" }],
      ],
    ]);
  });

  test("env validation names the attribute and key", async () => {
    const h = await configured();
    const diags = await h.validate(
      "gpurental_instance",
      instanceConfig({ env: { A: "1" }, secret_env: { A: "2" } }),
    );
    expect(diags).toMatchObject([{ severity: "error", path: [{ attribute: "secret_env" }, { key: "A" }] }]);
    const warn = await h.validate("gpurental_instance", instanceConfig({ env: { JUPYTER_TOKEN: "x" } }));
    expect(warn).toMatchObject([{ severity: "warning", summary: "JUPYTER_TOKEN is set by the platform" }]);
  });
});

describe("gpurental_instance lifecycle", () => {
  test("create, plan again with no change, stop, start, import, destroy", async () => {
    const h = await configured();
    const cfg = instanceConfig({ env: { A: "1" }, secret_env: { S: "x" } });
    const p = await h.plan("gpurental_instance", null, cfg);
    const created = await h.apply("gpurental_instance", null, p.planned, cfg);
    expect(created.diags).toEqual([]);
    const state = created.value!;
    expect(state.status).toBe("running");

    // Refresh, then the plan equals the state: no changes.
    const refreshed = (await h.read("gpurental_instance", state)).value!;
    const again = await h.plan("gpurental_instance", refreshed, cfg);
    expect(again.diags).toEqual([]);
    expect(again.planned).toEqual(refreshed);
    expect(again.requiresReplace).toEqual([]);

    // Stop in place: power-related values unknown, fixed ones kept.
    const stopCfg = { ...cfg, desired_status: "stopped" };
    const stopPlan = await h.plan("gpurental_instance", refreshed, stopCfg);
    expect(stopPlan.requiresReplace).toEqual([]);
    expect(isUnknown(stopPlan.planned?.status)).toBe(true);
    expect(stopPlan.planned?.id).toBe(state.id);
    const stopped = await h.apply("gpurental_instance", refreshed, stopPlan.planned, stopCfg);
    expect(stopped.diags).toEqual([]);
    expect(stopped.value?.status).toBe("stopped");

    const startPlan = await h.plan("gpurental_instance", stopped.value, cfg);
    const started = await h.apply("gpurental_instance", stopped.value, startPlan.planned, cfg);
    expect(started.value?.status).toBe("running");

    // Import reads the same object, except what the API never returns.
    const imported = await h.import("gpurental_instance", state.id as string);
    expect(imported.diags).toEqual([]);
    const importedRead = (await h.read("gpurental_instance", imported.value!)).value!;
    const now = (await h.read("gpurental_instance", started.value!)).value!;
    for (const k of ["ssh_key_id", "env", "secret_env", "unset_env", "store_access_secrets", "timeouts"]) {
      delete importedRead[k];
      delete now[k];
    }
    expect(importedRead).toEqual(now);

    const destroyed = await h.apply("gpurental_instance", started.value, null, null);
    expect(destroyed.diags).toEqual([]);
    expect(destroyed.value).toBeNull();
    expect(fake.backend.listInstances(fake.creds.org_id).every((i) => i.status === "destroyed")).toBe(true);
    expect((await h.read("gpurental_instance", started.value!)).value).toBeNull();
  });

  test("after an import, the first apply records the create-only arguments in place, with a warning", async () => {
    const h = await configured();
    const cfg = instanceConfig({ env: { A: "1" }, secret_env: { S: "s3cret-value" }, unset_env: ["TZ"] });
    const p = await h.plan("gpurental_instance", null, cfg);
    const created = (await h.apply("gpurental_instance", null, p.planned, cfg)).value!;
    const deploys = fake.backend.listInstances(fake.creds.org_id).length;

    const imported = await h.import("gpurental_instance", created.id as string);
    const refreshed = await h.read("gpurental_instance", imported.value!, imported.private);
    expect(refreshed.value).toMatchObject({ ssh_key_id: null, env: null, secret_env: null, unset_env: null });

    const plan = await h.plan("gpurental_instance", refreshed.value, cfg, refreshed.private);
    expect(plan.requiresReplace).toEqual([]);
    expect(plan.diags.map((d) => [d.severity, d.summary])).toEqual([
      ["warning", `Arguments of imported instance ${created.id} recorded as configured`],
    ]);
    expect(plan.diags[0]?.detail).toContain("`ssh_key_id`, `env`, `secret_env`, `unset_env`");
    expect(JSON.stringify(plan.diags)).not.toContain("s3cret-value");
    expect(plan.planned).toMatchObject({ status: "running", env: { A: "1" } });

    const applied = await h.apply("gpurental_instance", refreshed.value, plan.planned, cfg, plan.private);
    expect(applied.diags).toEqual([]);
    expect(applied.value).toEqual(plan.planned);
    expect(applied.private).toEqual(Buffer.alloc(0));
    expect(fake.backend.listInstances(fake.creds.org_id)).toHaveLength(deploys); // nothing redeployed

    // Adopted: the next plan is empty, and a change now replaces as usual.
    const again = await h.plan("gpurental_instance", applied.value, cfg, applied.private);
    expect(again.diags).toEqual([]);
    expect(again.planned).toEqual(applied.value);
    const changed = await h.plan(
      "gpurental_instance",
      applied.value,
      { ...cfg, env: { A: "2" } },
      applied.private,
    );
    expect(changed.requiresReplace).toEqual([["env"]]);
  });

  test("an import followed by a configuration without create-only arguments plans nothing", async () => {
    const h = await configured();
    const cfg = instanceConfig({ ssh_key_id: null });
    const p = await h.plan("gpurental_instance", null, cfg);
    const created = (await h.apply("gpurental_instance", null, p.planned, cfg)).value!;
    const imported = await h.import("gpurental_instance", created.id as string);
    const refreshed = await h.read("gpurental_instance", imported.value!, imported.private);
    const plan = await h.plan("gpurental_instance", refreshed.value, cfg, refreshed.private);
    expect(plan.diags).toEqual([]);
    expect(plan.planned).toEqual(refreshed.value);
  });

  test("changing only timeouts plans every computed value as it was, nulls included", async () => {
    const h = await configured();
    const cfg = instanceConfig();
    const p = await h.plan("gpurental_instance", null, cfg);
    const state = (await h.apply("gpurental_instance", null, p.planned, cfg)).value!;
    expect(state.jupyter_url).toBeNull();
    const next = { ...cfg, timeouts: { create: null, update: "1h", delete: null } };
    const plan = await h.plan("gpurental_instance", state, next);
    expect(plan.diags).toEqual([]);
    expect(plan.requiresReplace).toEqual([]);
    expect(plan.planned).toEqual({ ...state, timeouts: next.timeouts });
    const applied = await h.apply("gpurental_instance", state, plan.planned, next);
    expect(applied.diags).toEqual([]);
    expect(applied.value).toEqual(plan.planned);
  });

  test.each([
    ["label", "other"],
    ["disk_gb", 60],
    ["offer_id", DEMO_IDS.offerSmall],
    ["env", { B: "2" }],
    ["secret_env", { S: "2" }],
    ["unset_env", ["TZ"]],
    ["ssh_key_id", null],
  ])("changing %s plans a replacement", async (attribute, value) => {
    const h = await configured();
    const cfg = instanceConfig({ env: { A: "1" } });
    const p = await h.plan("gpurental_instance", null, cfg);
    const state = (await h.apply("gpurental_instance", null, p.planned, cfg)).value!;
    const plan = await h.plan("gpurental_instance", state, { ...cfg, [attribute]: value as CtyValue });
    expect(plan.requiresReplace).toEqual([[attribute]]);
  });

  test("a desired_status not known yet plans the power-related values unknown", async () => {
    const h = await configured();
    const cfg = instanceConfig();
    const p = await h.plan("gpurental_instance", null, cfg);
    const state = (await h.apply("gpurental_instance", null, p.planned, cfg)).value!;
    const plan = await h.plan("gpurental_instance", state, { ...cfg, desired_status: unknown });
    expect(isUnknown(plan.planned?.status)).toBe(true);
    expect(plan.planned?.ssh_port).toBe(state.ssh_port);
  });

  test("a failed provisioning is returned with the error (Terraform taints it)", async () => {
    const h = await configured();
    fake.backend.setHostBehaviour(DEMO_IDS.machineLarge, { provisionFails: true });
    const cfg = instanceConfig();
    const p = await h.plan("gpurental_instance", null, cfg);
    const r = await h.apply("gpurental_instance", null, p.planned, cfg);
    expect(r.value?.status).toBe("error");
    expect(r.diags[0]?.summary).toMatch(/^provision_failed: /);
  });

  test("an auto-stopped instance plans a start", async () => {
    const h = await configured();
    const cfg = instanceConfig();
    const p = await h.plan("gpurental_instance", null, cfg);
    const created = (await h.apply("gpurental_instance", null, p.planned, cfg)).value!;
    fake.backend.setBalance(fake.creds.org_id, 1);
    fake.backend.clock.advance(60_000);
    fake.backend.setBalance(fake.creds.org_id, 5_000_000_000);
    const refreshed = (await h.read("gpurental_instance", created)).value!;
    expect(refreshed.desired_status).toBe("stopped");
    const again = await h.plan("gpurental_instance", refreshed, cfg);
    expect(again.planned?.desired_status).toBe("running");
    const applied = await h.apply("gpurental_instance", refreshed, again.planned, cfg);
    expect(applied.diags).toEqual([]);
    expect(applied.value?.status).toBe("running");
  });
});

describe("gpurental_api_key", () => {
  const keyConfig = { name: "ci", kind: "team" };

  test("create with an admin session, read, plan no change, import, delete", async () => {
    const h = await configured();
    const p = await h.plan("gpurental_api_key", null, keyConfig);
    expect(p.diags).toEqual([]);
    const created = await h.apply("gpurental_api_key", null, p.planned, keyConfig);
    expect(created.diags).toEqual([]);
    expect(created.value?.secret).toMatch(/^gpr_[0-9a-f]{48}$/);
    const refreshed = (await h.read("gpurental_api_key", created.value!)).value!;
    expect(refreshed.secret).toBe(created.value?.secret);
    expect((await h.plan("gpurental_api_key", refreshed, keyConfig)).planned).toEqual(refreshed);
    const imported = await h.import("gpurental_api_key", created.value!.id as string);
    expect(imported.value).toEqual({ ...refreshed, secret: null });
    const deleted = await h.apply("gpurental_api_key", refreshed, null, null);
    expect(deleted.diags).toEqual([]);
    expect((await h.read("gpurental_api_key", refreshed)).value).toBeNull();
    // Deleting a key already revoked is fine.
    expect((await h.apply("gpurental_api_key", refreshed, null, null)).diags).toEqual([]);
  });

  test("an API key credential is refused at plan time, naming ADMIN_REQUIRED", async () => {
    const admin = await configured();
    const p = await admin.plan("gpurental_api_key", null, keyConfig);
    const key = (await admin.apply("gpurental_api_key", null, p.planned, keyConfig)).value!;
    const h = await configured(key.secret as string);
    const plan = await h.plan("gpurental_api_key", null, { name: "other" });
    expect(plan.diags[0]?.summary).toMatch(/^ADMIN_REQUIRED: /);
    expect(plan.diags[0]?.detail).toContain("API key");
  });

  test("a member session cannot create a team key: ADMIN_REQUIRED at plan and at apply", async () => {
    const h = await configured(fake.creds.member_session_token);
    const p = await h.plan("gpurental_api_key", null, keyConfig);
    expect(p.diags).toMatchObject([{ severity: "error", path: [{ attribute: "kind" }] }]);
    expect(p.diags[0]?.summary).toMatch(/^ADMIN_REQUIRED: /);
    const planned = (await h.plan("gpurental_api_key", null, { name: "ci" })).planned!;
    const r = await h.apply("gpurental_api_key", null, { ...planned, kind: "team" }, keyConfig);
    expect(r.value).toBeNull();
    expect(r.diags[0]?.summary).toMatch(/^ADMIN_REQUIRED: /);
    expect(r.diags[0]?.detail).toMatch(/admin/);
    // A personal key is fine for a member.
    const personal = { name: "mine" };
    const p2 = await h.plan("gpurental_api_key", null, personal);
    expect((await h.apply("gpurental_api_key", null, p2.planned, personal)).diags).toEqual([]);
  });

  test("a key revoked out of band leaves the state", async () => {
    const h = await configured();
    const p = await h.plan("gpurental_api_key", null, keyConfig);
    const key = (await h.apply("gpurental_api_key", null, p.planned, keyConfig)).value!;
    await h.apply("gpurental_api_key", key, null, null);
    expect((await h.read("gpurental_api_key", key)).value).toBeNull();
  });

  test("a lost create answer leaves no orphan key: it is revoked and the key created again", async () => {
    const h = await configured();
    fake.backend.addFault({ route: "POST /v1/api-keys", kind: "lost-response", times: 1 });
    const p = await h.plan("gpurental_api_key", null, keyConfig);
    const r = await h.apply("gpurental_api_key", null, p.planned, keyConfig);
    expect(r.diags).toEqual([]);
    const active = Object.values(fake.backend.state().api_keys).filter(
      (k) => k.revoked_at === null && k.name === "ci",
    );
    expect(active.map((k) => k.id)).toEqual([r.value?.id]);
  });

  test("a personal key whose creator left the organization leaves the state; a team key stays", async () => {
    const member = await configured(fake.creds.member_session_token);
    const personal = { name: "mine" };
    const p = await member.plan("gpurental_api_key", null, personal);
    const key = (await member.apply("gpurental_api_key", null, p.planned, personal)).value!;
    const admin = await configured();
    const tp = await admin.plan("gpurental_api_key", null, keyConfig);
    const team = (await admin.apply("gpurental_api_key", null, tp.planned, keyConfig)).value!;
    fake.backend.removeMember(fake.creds.org_id, fake.creds.member_user_id);
    expect((await admin.read("gpurental_api_key", key)).value).toBeNull();
    const stillThere = (await admin.read("gpurental_api_key", team)).value;
    expect(stillThere?.id).toBe(team.id);
  });
});
