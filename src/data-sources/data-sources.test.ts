import type { GpurentalClient } from "../api/client";
import { DEMO_IDS } from "../fake-backend";
import { type CtyValue, type Diagnostic, unknown } from "../framework";
import type { Attributes, Schema } from "../framework/schema";
import { createHarness, fullObject } from "../framework/testing";
import { decodeMsgpack, encodeMsgpack, isRecord } from "../plugin/cty";
import type * as proto from "../plugin/tfplugin6";
import { createProvider } from "../provider";
import { useFakeBackend } from "../testing/fake-backend";
import { dataSources } from ".";

// Every data source read through the provider service in memory (msgpack in and out, as Terraform
// sends it) against the fake backend on port 0.

const fake = useFakeBackend();

type Rec = Record<string, CtyValue>;

// Widened once: mapping over the tuple of every data source's own type is too deep for the compiler.
const all: readonly { typeName: string; schema: Schema }[] = dataSources;

function schemaOf(typeName: string): Schema {
  return all.find((d) => d.typeName === typeName)!.schema;
}

function dynamic(typeName: string, config: Readonly<Rec>): proto.DynamicValue {
  const schema = schemaOf(typeName);
  return { msgpack: encodeMsgpack(fullObject(schema, config), schema.type), json: Buffer.alloc(0) };
}

function diagnostics(diags: readonly proto.DiagnosticOut[] | undefined): Diagnostic[] {
  return (diags ?? []).map((d) => ({
    severity: d.severity === 2 ? "warning" : "error",
    summary: d.summary,
    detail: d.detail ?? "",
    path: d.attribute?.steps.map((s) =>
      "attribute_name" in s ? { attribute: s.attribute_name } : { index: -1 },
    ),
  }));
}

// ReadDataSource through the service directly: gpurental_instance is both a resource and a data
// source, so the lookup must be by data source.
async function harnessWith(token: string, extra: Rec = {}) {
  const h = createHarness(createProvider({ env: {}, clientOptions: { retry: { maxAttempts: 1 } } }));
  const diags = await h.configure({ base_url: fake.url, token, ...extra });
  expect(diags).toEqual([]);
  return {
    async readData(
      typeName: string,
      config: Readonly<Rec>,
    ): Promise<{ value: Rec | null; diags: Diagnostic[] }> {
      const res = await h.service.ReadDataSource({
        type_name: typeName,
        config: dynamic(typeName, config),
        provider_meta: null,
        client_capabilities: { deferral_allowed: false, write_only_attributes_allowed: true },
      });
      const value = decodeMsgpack(res.state?.msgpack ?? Buffer.alloc(0), schemaOf(typeName).type);
      return { value: isRecord(value) ? (value as Rec) : null, diags: diagnostics(res.diagnostics) };
    },
  };
}

function adminClient(): GpurentalClient {
  return fake.client();
}

function list(value: Rec | null, name: string): Rec[] {
  expect(value).not.toBeNull();
  return (value![name] ?? []) as Rec[];
}

async function validate(typeName: string, config: Readonly<Rec>): Promise<Diagnostic[]> {
  const h = createHarness(createProvider({ env: {} }));
  const res = await h.service.ValidateDataResourceConfig({
    type_name: typeName,
    config: dynamic(typeName, config),
  });
  return diagnostics(res.diagnostics);
}

describe("schemas", () => {
  it("registers the nine data sources with unique names", () => {
    expect(all.map((d) => d.typeName)).toEqual([
      "gpurental_offers",
      "gpurental_offer",
      "gpurental_templates",
      "gpurental_template",
      "gpurental_ssh_keys",
      "gpurental_instance",
      "gpurental_instances",
      "gpurental_api_keys",
      "gpurental_instance_logs",
    ]);
  });

  it("describes every attribute, nested ones included", () => {
    const missing: string[] = [];
    const walk = (where: string, attributes: Attributes) => {
      for (const [name, a] of Object.entries(attributes)) {
        if (!a.description?.trim()) missing.push(`${where}.${name}`);
        if (a.nested) walk(`${where}.${name}`, a.nested.attributes);
      }
    };
    for (const d of all) {
      if (!d.schema.description.trim()) missing.push(d.typeName);
      walk(d.typeName, d.schema.attributes);
    }
    expect(missing).toEqual([]);
  });

  it("marks the access token and the addresses that carry it sensitive wherever an instance appears", () => {
    const instance = schemaOf("gpurental_instance").attributes as Attributes;
    const listed = (schemaOf("gpurental_instances").attributes as Attributes).instances!.nested!.attributes;
    for (const attrs of [instance, listed]) {
      expect([
        attrs.access_token?.sensitive,
        attrs.jupyter_url?.sensitive,
        attrs.open_url?.sensitive,
      ]).toEqual([true, true, true]);
    }
  });
});

describe("reads against the fake backend", () => {
  it("gpurental_offers filters by model and count and sorts by price", async () => {
    const h = await harnessWith(fake.creds.admin_session_token);
    const { value, diags } = await h.readData("gpurental_offers", {
      gpu_model: "rtx 4090",
      num_gpus: 1,
      sort: "price_asc",
    });
    expect(diags).toEqual([]);
    const offers = list(value, "offers");
    expect(offers.map((o) => o.id)).toEqual([DEMO_IDS.offerMaintenance, DEMO_IDS.offer]);
    const offer = offers.find((o) => o.id === DEMO_IDS.offer)!;
    expect(offer).toMatchObject({
      gpu_model: "RTX 4090",
      num_gpus: 1,
      price_per_hour_micro: 2_500_000,
      availability: "available",
      next_maintenance: null,
    });
    expect(offer.machine).toMatchObject({ id: DEMO_IDS.machineLarge, disk_gb: 2000, cuda_version: "12.4" });
    expect(offers[0]!.next_maintenance).toEqual(expect.stringMatching(/^\d{4}-\d\d-\d\dT/));
    expect(value!.gpu_model).toBe("rtx 4090");
  });

  it("gpurental_offers filters by price and region like offer_filter", async () => {
    const h = await harnessWith(fake.creds.admin_session_token);
    const m = fake.backend.createMachine({ disk_gb: 1000 });
    const north = fake.backend.createOffer({
      machine_id: m.id,
      gpu_model: "RTX 4090",
      price_per_hour_micro: 1_000_000,
      region: "cn-north-1",
    });
    const cheap = list(
      (await h.readData("gpurental_offers", { gpu_model: "RTX 4090", max_price_per_hour_micro: 2_400_000 }))
        .value,
      "offers",
    );
    expect(cheap.map((o) => o.id).sort()).toEqual([north.id, DEMO_IDS.offerMaintenance].sort());
    const east = list(
      (
        await h.readData("gpurental_offers", {
          gpu_model: "RTX 4090",
          region: "CN-EAST-1",
          sort: "price_asc",
        })
      ).value,
      "offers",
    );
    expect(east.map((o) => o.id)).toEqual([DEMO_IDS.offerMaintenance, DEMO_IDS.offer]);
  });

  it("gpurental_offers with deployable_with leaves out offers a deploy would refuse, doubtful ones last", async () => {
    const h = await harnessWith(fake.creds.admin_session_token);
    const small = fake.backend.createMachine({ disk_gb: 100 });
    fake.backend.createOffer({
      machine_id: small.id,
      gpu_model: "RTX 4090",
      price_per_hour_micro: 1_000_000,
    });
    const read = async (template_id: string, disk_gb: number) => {
      const r = await h.readData("gpurental_offers", {
        sort: "price_asc",
        deployable_with: { template_id, disk_gb },
      });
      expect(r.diags).toEqual([]);
      return list(r.value, "offers").map((o) => o.id);
    };
    // The ssh template pins CUDA 12.4: the 12.8 machine is left out; so is the 100 GB machine for
    // 200 GB; the machine going into maintenance within 24 hours comes last.
    expect(await read(DEMO_IDS.templateSsh, 200)).toEqual([
      DEMO_IDS.offerSmall,
      DEMO_IDS.offer,
      DEMO_IDS.offerVm,
      DEMO_IDS.offerMaintenance,
    ]);
    // Only the VM-capable machine runs the vm template.
    expect(await read(DEMO_IDS.templateVm, 50)).toEqual([DEMO_IDS.offerVm]);
  });

  it("gpurental_offers with deployable_with reports an unknown template on its attribute", async () => {
    const h = await harnessWith(fake.creds.admin_session_token);
    const r = await h.readData("gpurental_offers", {
      deployable_with: { template_id: "00000000-0000-4000-8000-0000000000fe", disk_gb: 50 },
    });
    expect(r.diags.map((d) => [d.summary.split(":")[0], d.path])).toEqual([
      ["TEMPLATE_NOT_FOUND", [{ attribute: "deployable_with" }]],
    ]);
    expect(r.diags[0]?.detail).toMatch(/^deployable_with\.template_id: No template /);
  });

  it("gpurental_offers lists unavailable offers only when asked", async () => {
    const h = await harnessWith(fake.creds.admin_session_token);
    const plain = list((await h.readData("gpurental_offers", {})).value, "offers");
    expect(plain.map((o) => o.id)).not.toContain(DEMO_IDS.offerSoldOut);
    const all = list((await h.readData("gpurental_offers", { include_unavailable: true })).value, "offers");
    expect(all.find((o) => o.id === DEMO_IDS.offerSoldOut)).toMatchObject({
      availability: "sold_out",
      free_units: 0,
    });
  });

  it("gpurental_offer reads one offer, also a sold-out one", async () => {
    const h = await harnessWith(fake.creds.admin_session_token);
    const { value, diags } = await h.readData("gpurental_offer", { id: DEMO_IDS.offerSoldOut });
    expect(diags).toEqual([]);
    expect(value).toMatchObject({ id: DEMO_IDS.offerSoldOut, availability: "sold_out", num_gpus: 4 });
  });

  it("gpurental_offer reports an unknown id with the API's code", async () => {
    const h = await harnessWith(fake.creds.admin_session_token);
    const missing = "00000000-0000-4000-8000-0000000009ff";
    const { value, diags } = await h.readData("gpurental_offer", { id: missing });
    expect(value).toBeNull();
    expect(diags).toHaveLength(1);
    expect(diags[0]!.severity).toBe("error");
    expect(diags[0]!.summary).toMatch(/^OFFER_NOT_FOUND/);
    expect(diags[0]!.detail).toContain(missing);
    expect(diags[0]!.detail).toContain("gpurental_offers");
  });

  it("gpurental_templates filters by tab and mode; secret env values stay hidden", async () => {
    const h = await harnessWith(fake.creds.admin_session_token);
    const ssh = list(
      (await h.readData("gpurental_templates", { tab: "recommended", mode: "ssh" })).value,
      "templates",
    );
    expect(ssh.map((t) => t.id)).toEqual([DEMO_IDS.templateSsh]);
    expect(ssh[0]).toMatchObject({ mode: "ssh", cuda_max: "12.4", recommended: true, active: true });
    const jupyter = list((await h.readData("gpurental_templates", { mode: "jupyter" })).value, "templates");
    const env = jupyter.find((t) => t.id === DEMO_IDS.templateJupyter)!.env as Rec[];
    expect(env).toEqual([
      { key: "TZ", value: "UTC", secret: false },
      { key: "APP_PASSWORD", value: null, secret: true },
    ]);
  });

  it("gpurental_template reads readme and onstart; an inactive one is still readable", async () => {
    const h = await harnessWith(fake.creds.admin_session_token);
    const { value, diags } = await h.readData("gpurental_template", { id: DEMO_IDS.templateSsh });
    expect(diags).toEqual([]);
    expect(value).toMatchObject({
      name: "PyTorch 2.5 (SSH)",
      readme: expect.stringContaining("PyTorch"),
      onstart: "nvidia-smi",
    });
    const missing = await h.readData("gpurental_template", { id: "00000000-0000-4000-8000-0000000009fe" });
    expect(missing.diags[0]!.summary).toMatch(/^TEMPLATE_NOT_FOUND/);
  });

  it("gpurental_ssh_keys lists the signed-in user's keys", async () => {
    const h = await harnessWith(fake.creds.member_session_token);
    const keys = list((await h.readData("gpurental_ssh_keys", {})).value, "ssh_keys");
    expect(keys.map((k) => k.id)).toEqual([DEMO_IDS.memberSshKey]);
    expect(keys[0]).toMatchObject({ name: "member workstation", fingerprint: expect.any(String) });
  });

  it("gpurental_ssh_keys explains that an API key cannot list SSH keys, without showing the key", async () => {
    const { secret } = await adminClient().createApiKey({ name: "ci", kind: "team" });
    const h = await harnessWith(secret);
    const { value, diags } = await h.readData("gpurental_ssh_keys", {});
    expect(value).toBeNull();
    expect(diags[0]!.summary).toMatch(/^TOKEN_INVALID/);
    expect(diags[0]!.detail).toContain("session token");
    expect(JSON.stringify(diags)).not.toContain(secret);
    expect(JSON.stringify(diags)).not.toContain(secret.slice(4));
  });

  it("gpurental_api_keys lists active keys without secrets", async () => {
    const client = adminClient();
    const a = await client.createApiKey({ name: "first", kind: "personal" });
    const b = await client.createApiKey({ name: "second", kind: "team" });
    const h = await harnessWith(b.secret);
    const { value, diags } = await h.readData("gpurental_api_keys", {});
    expect(diags).toEqual([]);
    const keys = list(value, "api_keys");
    expect(keys.map((k) => k.name)).toEqual(["second", "first"]);
    expect(keys[0]).toMatchObject({
      id: b.key.id,
      kind: "team",
      prefix: b.secret.slice(0, 12),
      creator_email: fake.creds.admin_email,
      creator_is_member: true,
    });
    // The key making the request has been used; the other one not yet.
    expect(keys[0]!.last_used_at).toEqual(expect.any(String));
    expect(keys[1]!.last_used_at).toBeNull();
    const text = JSON.stringify(value);
    expect(text).not.toContain(a.secret);
    expect(text).not.toContain(b.secret);
  });

  it("gpurental_instance and gpurental_instances read every field, the access token included", async () => {
    const client = adminClient();
    const deployed = await client.deployInstance({
      offer_id: fake.creds.offer_id,
      template_id: fake.creds.jupyter_template_id,
      disk_gb: 40,
      label: "reader",
      ssh_key_id: fake.creds.ssh_key_id,
    });
    const api = await client.getInstance(deployed.id);
    const h = await harnessWith(fake.creds.admin_session_token);
    const one = await h.readData("gpurental_instance", { id: deployed.id });
    expect(one.diags).toEqual([]);
    expect(one.value).toMatchObject({
      id: deployed.id,
      offer_id: fake.creds.offer_id,
      template_id: fake.creds.jupyter_template_id,
      disk_gb: 40,
      label: "reader",
      status: api.status,
      ssh_host: api.ssh_host,
      ssh_port: api.ssh_port,
      access_token: api.access_token,
      allowed_actions: api.allowed_actions,
      deployed_by: fake.creds.admin_email,
      deployed_via_api_key: null,
    });
    expect(api.access_token).toMatch(/^[0-9a-f]{32}$/);
    expect((one.value!.offer as Rec).gpu_model).toBe("RTX 4090");
    expect((one.value!.template as Rec).readme).toBeNull();

    await client.destroyInstance(deployed.id);
    fake.backend.clock.advance(60_000);
    const active = list((await h.readData("gpurental_instances", {})).value, "instances");
    expect(active.map((i) => i.id)).not.toContain(deployed.id);
    const all = list(
      (await h.readData("gpurental_instances", { include_destroyed: true })).value,
      "instances",
    );
    expect(all.find((i) => i.id === deployed.id)).toMatchObject({ status: "destroyed", access_token: null });
  });

  it("gpurental_instance reports an unknown id with INSTANCE_NOT_FOUND", async () => {
    const h = await harnessWith(fake.creds.admin_session_token);
    const { diags } = await h.readData("gpurental_instance", { id: "00000000-0000-4000-8000-0000000009fd" });
    expect(diags[0]!.summary).toMatch(/^INSTANCE_NOT_FOUND/);
    expect(diags[0]!.detail).toMatch(/^Reading data source gpurental_instance failed\./);
  });

  it("gpurental_instance_logs reads the last lines, 200 by default", async () => {
    const client = adminClient();
    const deployed = await client.deployInstance({
      offer_id: fake.creds.offer_id,
      template_id: fake.creds.template_id,
      disk_gb: 20,
    });
    await client.getInstance(deployed.id); // lands the immediate transition to running
    const h = await harnessWith(fake.creds.admin_session_token);
    const before = (await h.readData("gpurental_instance_logs", { instance_id: deployed.id })).value!;
    fake.backend.appendLogs(
      deployed.id,
      Array.from({ length: 250 }, (_, i) => `line ${i + 1}`),
    );
    const dflt = (await h.readData("gpurental_instance_logs", { instance_id: deployed.id })).value!;
    expect(dflt.tail).toBe(200);
    const lines = dflt.lines as string[];
    expect(lines).toHaveLength(200);
    expect(lines.at(-1)).toBe("line 250");
    const three = (await h.readData("gpurental_instance_logs", { instance_id: deployed.id, tail: 3 })).value!;
    expect(three).toMatchObject({ tail: 3, lines: ["line 248", "line 249", "line 250"] });
    expect(Array.isArray(before.lines)).toBe(true);
  });

  it("names the data source when the provider configuration is not known yet", async () => {
    const h = await harnessWith(fake.creds.admin_session_token, { token: unknown });
    const { value, diags } = await h.readData("gpurental_api_keys", {});
    expect(value).toBeNull();
    expect(diags).toEqual([
      expect.objectContaining({
        severity: "error",
        summary: "Reading data source gpurental_api_keys failed",
        detail: expect.stringContaining("not known yet"),
      }),
    ]);
  });

  it("reports an unreachable API without a token in the message", async () => {
    const h = createHarness(createProvider({ env: {}, clientOptions: { retry: { maxAttempts: 1 } } }));
    expect(
      await h.configure({ base_url: "http://127.0.0.1:9", token: fake.creds.admin_session_token }),
    ).toEqual([]);
    const res = await h.service.ReadDataSource({
      type_name: "gpurental_offers",
      config: dynamic("gpurental_offers", {}),
      provider_meta: null,
      client_capabilities: { deferral_allowed: false, write_only_attributes_allowed: true },
    });
    const diags = diagnostics(res.diagnostics);
    expect(diags[0]).toMatchObject({ severity: "error", summary: "Cannot reach the gpurental API" });
    expect(diags[0]!.detail).toMatch(
      /^Reading data source gpurental_offers failed\. GET \/v1\/offers: cannot connect to http:\/\/127\.0\.0\.1:9 \(base_url in the provider block\): connect ECONNREFUSED 127\.0\.0\.1:9\. /,
    );
    expect(JSON.stringify(diags)).not.toContain(fake.creds.admin_session_token);
  });

  it("names GPURENTAL_BASE_URL when the address came from the environment", async () => {
    const h = createHarness(
      createProvider({
        env: { GPURENTAL_BASE_URL: "http://127.0.0.1:9" },
        clientOptions: { retry: { maxAttempts: 1 } },
      }),
    );
    expect(await h.configure({ token: fake.creds.admin_session_token })).toEqual([]);
    const res = await h.service.ReadDataSource({
      type_name: "gpurental_instances",
      config: dynamic("gpurental_instances", {}),
      provider_meta: null,
      client_capabilities: { deferral_allowed: false, write_only_attributes_allowed: true },
    });
    expect(diagnostics(res.diagnostics)[0]!.detail).toContain(
      "cannot connect to http://127.0.0.1:9 (the GPURENTAL_BASE_URL environment variable): connect ECONNREFUSED 127.0.0.1:9",
    );
  });

  it("a credential of another organization gets ORG_MISMATCH", async () => {
    const h = await harnessWith(fake.creds.admin_session_token, { org_id: fake.creds.other_org_id });
    const { diags } = await h.readData("gpurental_offers", {});
    expect(diags[0]!.summary).toMatch(/^ORG_MISMATCH/);
  });
});

describe("validation", () => {
  const SOME_ID = "00000000-0000-4000-8000-0000000000aa";
  it.each([
    [0, "got 0"],
    [1001, "got 1001"],
    [2.5, "got 2.5"],
  ])("gpurental_instance_logs rejects tail = %p naming the limit and the value", async (tail, got) => {
    const diags = await validate("gpurental_instance_logs", { instance_id: SOME_ID, tail });
    expect(diags).toHaveLength(1);
    expect(diags[0]!.path).toEqual([{ attribute: "tail" }]);
    expect(diags[0]!.detail).toContain("from 1 to 1000");
    expect(diags[0]!.detail).toContain(got);
  });

  it.each([
    ["gpurental_instance_logs", { instance_id: SOME_ID, tail: 1000 }],
    ["gpurental_instance_logs", { instance_id: unknown, tail: unknown }],
    ["gpurental_instance_logs", { instance_id: SOME_ID, tail: null }],
    ["gpurental_offers", { gpu_model: unknown, num_gpus: unknown, sort: unknown }],
    ["gpurental_templates", { tab: unknown, mode: null }],
  ])("%s accepts %p (unknown and null values are skipped)", async (typeName, config) => {
    expect(await validate(typeName, config)).toEqual([]);
  });

  it.each([
    ["gpurental_offers", { sort: "cheapest" }, "sort", '"cheapest"'],
    ["gpurental_offers", { num_gpus: 0 }, "num_gpus", "got 0"],
    ["gpurental_offers", { gpu_model: " " }, "gpu_model", "must not be empty"],
    ["gpurental_templates", { tab: "favourites" }, "tab", '"favourites"'],
    ["gpurental_templates", { mode: "docker" }, "mode", '"docker"'],
    [
      "gpurental_offer",
      { id: "" },
      "id",
      'id must be the ID of an offer, a UUID such as "00000000-0000-4000-8000-000000000041"; got "" (an empty string).',
    ],
    [
      "gpurental_instance",
      { id: "i-123" },
      "id",
      'must be the ID of an instance, a UUID such as "00000000-0000-4000-8000-000000000041"; got "i-123".',
    ],
    [
      "gpurental_template",
      { id: " " },
      "id",
      'a UUID such as "00000000-0000-4000-8000-000000000041"; got " ".',
    ],
    [
      "gpurental_instance_logs",
      { instance_id: "x" },
      "instance_id",
      "instance_id must be the ID of an instance, a UUID",
    ],
    ["gpurental_offers", { max_price_per_hour_micro: -5 }, "max_price_per_hour_micro", "got -5"],
    ["gpurental_offers", { region: "" }, "region", "must not be empty"],
    [
      "gpurental_offers",
      { include_unavailable: true, deployable_with: { template_id: SOME_ID, disk_gb: 50 } },
      "include_unavailable",
      "set only one of them",
    ],
  ])("%s rejects %p on the attribute", async (typeName, config, attribute, text) => {
    const diags = await validate(typeName, config);
    expect(diags).toHaveLength(1);
    expect(diags[0]!.path).toEqual([{ attribute }]);
    expect(diags[0]!.detail).toContain(text);
  });

  it("gpurental_offers rejects a deployable_with.template_id that is not an ID, on deployable_with", async () => {
    const diags = await validate("gpurental_offers", { deployable_with: { template_id: "", disk_gb: 50 } });
    expect(diags).toHaveLength(1);
    // Shown on the nested attribute (Terraform places deeper paths at the block's first line).
    expect(diags[0]!.path).toEqual([{ attribute: "deployable_with" }]);
    expect(diags[0]!.detail).toContain("deployable_with.template_id must be the ID of a template, a UUID");
  });
});
