import type { CtyValue } from "../plugin/cty";
import { useFakeBackend } from "../testing/fake-backend";

// Identity, list resources and generated configuration of gpurental_instance and gpurental_api_key
// (Terraform 1.12 and 1.14), driven in memory against the in-process fake backend. The protocol
// driver (test/protocol) plays the same against the provider process, and feeds generated
// configuration to the real terraform.

type Rec = Record<string, CtyValue>;

const fake = useFakeBackend({ workDir: "file" });

const configured = (extra: Rec = {}) => fake.configured(extra);

type Harness = Awaited<ReturnType<typeof configured>>;

async function createInstance(h: Harness, over: Rec = {}): Promise<Rec> {
  const cfg = {
    offer_id: fake.creds.offer_id,
    template_id: fake.creds.template_id,
    disk_gb: 50,
    ...over,
  };
  const p = await h.plan("gpurental_instance", null, cfg);
  expect(p.diags.filter((d) => d.severity === "error")).toEqual([]);
  const created = await h.apply("gpurental_instance", null, p.planned, cfg, p.private);
  expect(created.diags).toEqual([]);
  return created.value!;
}

const UUID = "0b8f5a0e-3a41-4c9e-9d6e-2f1c7b0a5d11";

describe("identity of gpurental_instance and gpurental_api_key", () => {
  test("is the object's id and the provider's organization, kept as Terraform stored it", async () => {
    const plain = await configured();
    const state = await createInstance(plain, { label: "id-1" });
    const p = await plain.plan("gpurental_instance", null, {
      offer_id: fake.creds.offer_id,
      template_id: fake.creds.template_id,
      disk_gb: 50,
    });
    expect(p.identity).toBeNull();
    const read = await plain.read("gpurental_instance", state);
    // The provider names no organization, and the API tells a credential nothing of its own.
    expect(read.identity).toEqual({ id: state.id, org_id: null });

    const withOrg = await configured({ org_id: fake.creds.org_id });
    expect((await withOrg.read("gpurental_instance", state)).identity).toEqual({
      id: state.id,
      org_id: fake.creds.org_id,
    });
    // A stored identity keeps its organization.
    const stored: Rec = { id: state.id ?? null, org_id: "11111111-1111-4111-8111-111111111111" };
    expect((await withOrg.read("gpurental_instance", state, Buffer.alloc(0), stored)).identity).toEqual(
      stored,
    );
    const update = await withOrg.plan("gpurental_instance", state, {
      offer_id: fake.creds.offer_id,
      template_id: fake.creds.template_id,
      disk_gb: 50,
      label: "id-1",
      desired_status: "stopped",
    });
    expect(update.identity).toEqual({ id: state.id, org_id: fake.creds.org_id });
  });

  test("imports by identity exactly as by id", async () => {
    const h = await configured({ org_id: fake.creds.org_id });
    const state = await createInstance(h, { label: "imp" });
    const byId = await h.import("gpurental_instance", state.id as string);
    const byIdentity = await h.import("gpurental_instance", { id: state.id as string });
    expect(byIdentity.diags).toEqual([]);
    expect(byIdentity.value).toEqual(byId.value);
    expect(byIdentity.private).toEqual(byId.private);
    expect(byIdentity.identity).toEqual({ id: state.id, org_id: fake.creds.org_id });
    const withOrg = await h.import("gpurental_instance", {
      id: state.id as string,
      org_id: fake.creds.org_id,
    });
    expect(withOrg.diags).toEqual([]);

    const key = await h.import("gpurental_api_key", { id: (await apiKeyId(h)) as string });
    expect(key.diags).toEqual([]);
    expect(key.value).toMatchObject({ secret: null });
  });

  test("refuses an identity that is not an id, or names another organization, naming both", async () => {
    const h = await configured({ org_id: fake.creds.org_id });
    const bad = await h.import("gpurental_instance", { id: "not-a-uuid" });
    expect(bad.value).toBeNull();
    expect(bad.diags.map((d) => [d.severity, d.summary])).toEqual([["error", "Invalid identity"]]);
    expect(bad.diags[0]?.detail).toContain('got "not-a-uuid"');

    const other = await h.import("gpurental_instance", { id: UUID, org_id: fake.creds.other_org_id });
    expect(other.diags.map((d) => d.summary)).toEqual([
      "ORG_MISMATCH: the instance is in another organization",
    ]);
    expect(other.diags[0]?.detail).toContain(fake.creds.other_org_id);
    expect(other.diags[0]?.detail).toContain(fake.creds.org_id);

    const unnamed = await configured();
    const noOrg = await unnamed.import("gpurental_api_key", { id: UUID, org_id: fake.creds.org_id });
    expect(noOrg.diags[0]?.detail).toMatch(/names none .*Set org_id = /);
    const badOrg = await unnamed.import("gpurental_api_key", { id: UUID, org_id: "acme" });
    expect(badOrg.diags[0]?.detail).toContain(
      'identity.org_id must be an organization ID (a UUID) or left out; got "acme"',
    );
  });

  test("has version 0, read back as stored; a newer version is refused", async () => {
    const h = await configured();
    const same = await h.service.UpgradeResourceIdentity({
      type_name: "gpurental_instance",
      version: 0,
      raw_identity: { json: Buffer.from(`{"id":"${UUID}"}`), flatmap: {} },
    });
    expect(same.diagnostics).toEqual([]);
    const newer = await h.service.UpgradeResourceIdentity({
      type_name: "gpurental_api_key",
      version: 1,
      raw_identity: { json: Buffer.from(`{"id":"${UUID}"}`), flatmap: {} },
    });
    expect(newer.diagnostics?.[0]?.summary).toBe("Identity from a newer provider");
  });
});

async function apiKeyId(h: Harness): Promise<unknown> {
  const p = await h.plan("gpurental_api_key", null, { name: "ci-listed" });
  const created = await h.apply("gpurental_api_key", null, p.planned, { name: "ci-listed" });
  expect(created.diags).toEqual([]);
  return created.value!.id;
}

describe("the gpurental_instance list resource", () => {
  test("filters by label prefix, status, GPU model and creation time", async () => {
    const h = await configured();
    const a = await createInstance(h, { label: "train-a" });
    const b = await createInstance(h, { label: "train-b", desired_status: "stopped" });
    const c = await createInstance(h, { label: "infer-c" });
    const ids = (r: { found: { identity: Rec | null }[] }) => r.found.map((f) => f.identity?.id).sort();

    expect(ids(await h.list("gpurental_instance", { label_prefix: "train-" }))).toEqual([a.id, b.id].sort());
    expect(ids(await h.list("gpurental_instance", { label_prefix: "train-", status: "stopped" }))).toEqual([
      b.id,
    ]);
    const model = (a.offer as Rec).gpu_model as string;
    expect(ids(await h.list("gpurental_instance", { gpu_model: model.toLowerCase() }))).toEqual(
      expect.arrayContaining([a.id, b.id, c.id]),
    );
    expect((await h.list("gpurental_instance", { gpu_model: "No Such GPU" })).found).toEqual([]);
    const later = new Date(Date.parse(c.created_at as string) + 1000).toISOString();
    expect((await h.list("gpurental_instance", { created_after: later })).found).toEqual([]);
    const before = new Date(Date.parse(a.created_at as string) - 1000).toISOString();
    expect(ids(await h.list("gpurental_instance", { created_after: before, label_prefix: "infer" }))).toEqual(
      [c.id],
    );
  });

  test("names each instance for people, honours the limit, and sends objects without secrets only on request", async () => {
    const h = await configured();
    const tokens: string[] = [];
    for (const label of ["lim-1", "lim-2", "lim-3"]) {
      const created = await createInstance(h, { label, template_id: fake.creds.jupyter_template_id });
      tokens.push(created.access_token as string);
    }
    // A jupyter template's instances carry an access token, in jupyter_url too.
    expect(tokens.every((t) => typeof t === "string" && t.length > 8)).toBe(true);
    const limited = await h.list("gpurental_instance", { label_prefix: "lim-" }, { limit: 2 });
    expect(limited.found).toHaveLength(2);
    expect(limited.found.every((f) => f.object === null)).toBe(true);
    expect(limited.found[0]?.displayName).toMatch(/^lim-\d \(.+ x\d+, running\)$/);

    const whole = await h.list("gpurental_instance", { label_prefix: "lim-" }, { includeResource: true });
    expect(whole.found).toHaveLength(3);
    for (const f of whole.found) {
      expect(f.object).toMatchObject({
        id: f.identity?.id,
        status: "running",
        access_token: null,
        jupyter_url: null,
        open_url: null,
      });
    }
    const sent = JSON.stringify(whole.events.map((e) => e.resource_object?.msgpack?.toString("latin1")));
    for (const token of tokens) expect(sent).not.toContain(token);
  });

  test("refuses filters it cannot use, naming the filter and the value", async () => {
    const h = await configured();
    const bad = await h.list("gpurental_instance", { created_after: "yesterday", status: "destroyed" });
    expect(bad.found).toEqual([]);
    // In the list block's `config` block, where Terraform 1.14 and 1.15 look for the filters.
    expect(bad.diags.map((d) => [d.path, d.detail])).toEqual([
      [
        [{ attribute: "config" }, { attribute: "status" }],
        expect.stringContaining('"destroyed" is not one of'),
      ],
      [
        [{ attribute: "config" }, { attribute: "created_after" }],
        expect.stringContaining(
          'created_after must be a time in RFC 3339 with its offset, e.g. "2026-11-01T00:00:00Z"; got "yesterday"',
        ),
      ],
    ]);
  });
});

describe("the gpurental_api_key list resource", () => {
  test("filters by kind and name prefix, and never lists a secret", async () => {
    const h = await configured();
    const plan = await h.plan("gpurental_api_key", null, { name: "team-ci", kind: "team" });
    const team = await h.apply("gpurental_api_key", null, plan.planned, { name: "team-ci", kind: "team" });
    expect(team.diags).toEqual([]);
    const secret = team.value!.secret as string;
    const teams = await h.list("gpurental_api_key", { kind: "team" }, { includeResource: true });
    expect(teams.found.map((f) => f.identity?.id)).toEqual([team.value!.id]);
    expect(teams.found[0]?.displayName).toBe(`team-ci (${team.value!.prefix}…, team)`);
    expect(teams.found[0]?.object).toMatchObject({ name: "team-ci", kind: "team", secret: null });
    expect(JSON.stringify(teams.events)).not.toContain(secret);
    expect((await h.list("gpurental_api_key", { name_prefix: "nobody" })).found).toEqual([]);
  });
});

describe("generated configuration", () => {
  test("of an instance: the offer it runs on, its template, disk and label; stopped only when stopped", async () => {
    const h = await configured();
    const running = await createInstance(h, { label: "gen" });
    const gen = await h.generateConfig("gpurental_instance", running);
    expect(gen.diags).toEqual([]);
    const set = Object.fromEntries(Object.entries(gen.value!).filter(([, v]) => v !== null));
    expect(set).toEqual({
      offer_id: running.offer_id,
      template_id: running.template_id,
      disk_gb: running.disk_gb,
      label: "gen",
    });
    const stopped = await createInstance(h, { desired_status: "stopped" });
    expect((await h.generateConfig("gpurental_instance", stopped)).value).toMatchObject({
      desired_status: "stopped",
      label: null,
    });
  });

  test("of a key: its name, and its kind when team; never its secret", async () => {
    const h = await configured();
    const p = await h.plan("gpurental_api_key", null, { name: "gen-key" });
    const key = (await h.apply("gpurental_api_key", null, p.planned, { name: "gen-key" })).value!;
    const gen = await h.generateConfig("gpurental_api_key", key);
    expect(Object.fromEntries(Object.entries(gen.value!).filter(([, v]) => v !== null))).toEqual({
      name: "gen-key",
    });
  });

  test("without a state: nothing, and a warning saying how to get it", async () => {
    const h = await configured();
    const gen = await h.generateConfig("gpurental_instance", null);
    expect(gen.value).toBeNull();
    expect(gen.diags.map((d) => [d.severity, d.summary])).toEqual([
      ["warning", "No configuration generated for gpurental_instance"],
    ]);
    expect(gen.diags[0]?.detail).toContain("Terraform 1.14.0 never sends the state");
  });
});
