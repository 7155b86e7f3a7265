import { readFileSync } from "node:fs";
import { join } from "node:path";
import { GpurentalClient } from "../../src/api/client";
import {
  apply,
  expectCode,
  plan,
  resetSuite,
  type Suite,
  stateOf,
  stopSuite,
  suiteClientOptions,
  writeConfig,
} from "../e2e/resources/helpers";
import type { TerraformVersion } from "./driver";
import { driverFor, PROTOCOL_TEST_MS, rpcs, startProtocolSuite } from "./fixture";
import { renderForTerraform111, renderGenerated } from "./genconfig";

// `terraform query` as Terraform 1.14 and 1.16 run it, against the provider process: list blocks
// with and without include_resource, a limit, filters, then `-generate-config-out`. The
// configuration the provider generates goes back through the real terraform 1.11.4 (the CLI on
// these machines), with import blocks by id since 1.11 has none by identity: it must plan only
// imports, apply, and then plan no change at all.

let s: Suite;
beforeAll(async () => {
  s = await startProtocolSuite();
});
afterAll(async () => {
  await stopSuite(s);
});
beforeEach(() => resetSuite(s));

/** Deploys instances straight through the API, as another tool would; returns their ids. */
async function deploy(labels: string[], template = () => s.creds.template_id): Promise<string[]> {
  const client = new GpurentalClient(suiteClientOptions(s, s.creds.admin_session_token));
  const ids: string[] = [];
  for (const label of labels)
    ids.push(
      (
        await client.deployInstance({
          offer_id: s.creds.offer_id,
          template_id: template(),
          disk_gb: 50,
          label,
        })
      ).id,
    );
  return ids;
}

describe.each<TerraformVersion>(["1.14", "1.16"])("Terraform %s", (version) => {
  test(
    "lists with and without the objects, within the limit and the filters",
    async () => {
      const ids = await deploy(["train-1", "train-2", "infer-1"], () => s.creds.jupyter_template_id);
      const d = driverFor(s, version);
      const bare = await d.query([
        { type: "gpurental_instance", name: "train", config: { label_prefix: "train-" } },
      ]);
      expect(bare.found.map((f) => f.identity.id).sort()).toEqual([ids[0], ids[1]].sort());
      expect(bare.found.every((f) => f.object === null)).toBe(true);
      expect(bare.found.map((f) => f.displayName).sort()).toEqual([
        expect.stringMatching(/^train-1 \(.+ x\d+, running\)$/),
        expect.stringMatching(/^train-2 \(.+ x\d+, running\)$/),
      ]);
      const walk = rpcs(d);
      expect(walk.slice(0, 2)).toEqual(["GetProviderSchema", "GetResourceIdentitySchemas"]);
      expect(walk.slice(-4)).toEqual([
        "ValidateProviderConfig",
        "ConfigureProvider",
        "ValidateListResourceConfig",
        "ListResource",
      ]);

      const whole = await d.query([
        { type: "gpurental_instance", name: "all", config: {}, includeResource: true, limit: 2 },
        { type: "gpurental_api_key", name: "keys", config: { kind: "personal" }, includeResource: true },
      ]);
      const instances = whole.found.filter((f) => f.list === "list.gpurental_instance.all");
      expect(instances).toHaveLength(2);
      for (const f of instances) {
        expect(f.object).toMatchObject({
          id: f.identity.id,
          access_token: null,
          jupyter_url: null,
          open_url: null,
        });
        expect(s.backend.instance(f.identity.id as string)?.access_token).toEqual(expect.any(String));
      }
      const stopped = await d.query([
        { type: "gpurental_instance", name: "stopped", config: { status: "stopped" } },
      ]);
      expect(stopped.found).toEqual([]);
    },
    PROTOCOL_TEST_MS,
  );

  test(
    "generates configuration that the real terraform 1.11 imports with no change",
    async () => {
      const [trainId] = await deploy(["gen-train"]);
      const client = new GpurentalClient(suiteClientOptions(s, s.creds.admin_session_token));
      const key = await client.createApiKey({ name: "gen-ci", kind: "team" });
      const d = driverFor(s, version);
      const q = await d.query(
        [
          { type: "gpurental_instance", name: "found", config: { label_prefix: "gen-" } },
          { type: "gpurental_api_key", name: "found", config: { name_prefix: "gen-" } },
        ],
        { generateConfig: true },
      );
      expect(q.generated.map((g) => g.address)).toEqual([
        "gpurental_instance.found_0",
        "gpurental_api_key.found_0",
      ]);
      expect(rpcs(d).filter((r) => r === "GenerateResourceConfig")).toHaveLength(2);

      // What 1.14 writes: resource blocks to keep, imports by identity, no secret.
      const written = renderGenerated(q.generated);
      expect(written).toContain(`offer_id = "${s.creds.offer_id}"`);
      expect(written).toContain('label = "gen-train"');
      expect(written).toContain(`identity = {\n    id = "${trainId}"\n    org_id = null\n  }`);
      expect(written).toContain('kind = "team"');
      expect(written).not.toContain(key.secret);
      for (const computed of ["status", "access_token", "secret", "prefix", "spend_micro"])
        expect(written).not.toMatch(new RegExp(`^\\s*${computed} =`, "m"));

      // The real terraform 1.11.4 plans exactly the imports, applies them, and then plans nothing.
      writeConfig(s, renderForTerraform111(q.generated));
      const imported = expectCode(await plan(s), 2);
      expect(imported.stdout).toContain("Plan: 2 to import, 0 to add, 0 to change, 0 to destroy.");
      expectCode(await apply(s), 0);
      expect(await stateOf(s, "gpurental_instance.found_0")).toMatchObject({
        id: trainId,
        label: "gen-train",
      });
      expect(await stateOf(s, "gpurental_api_key.found_0")).toMatchObject({ id: key.key.id, kind: "team" });
      const clean = expectCode(await plan(s), 0);
      expect(clean.stdout).toContain("No changes.");
      expect(readFileSync(join(s.tf.workDir, "main.tf"), "utf8")).not.toContain(key.secret);
    },
    PROTOCOL_TEST_MS,
  );
});

test(
  "Terraform 1.14.0, which sends no state to generate from, gets a warning saying what to do",
  async () => {
    await deploy(["old-gen"]);
    const d = driverFor(s, "1.14", { patch: "1.14.0" });
    const q = await d.query([{ type: "gpurental_instance", name: "old", config: { label_prefix: "old-" } }], {
      generateConfig: true,
    });
    expect(q.generated.map((g) => g.config)).toEqual([null]);
    expect(d.diagnostics.map((x) => [x.rpc, x.severity, x.summary])).toEqual([
      ["GenerateResourceConfig", "warning", "No configuration generated for gpurental_instance"],
    ]);
  },
  PROTOCOL_TEST_MS,
);
