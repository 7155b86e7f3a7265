import { resetSuite, type Suite, stopSuite } from "../e2e/resources/helpers";
import { CommandFailed, type ImportBlock, type ResourceBlock, type TerraformVersion } from "./driver";
import { driverFor, PROTOCOL_TEST_MS, rpcs, startProtocolSuite } from "./fixture";

// Resource identity as Terraform 1.12, 1.14 and 1.16 use it, against the provider process over
// gRPC/mTLS (the driver's header cites the code each call is read from): created objects carry
// their identity; a second working directory imports them by identity alone
// (`import { to = ..., identity = { id = "..." } }`), plans no change, applies, and plans no change
// again.

let s: Suite;
beforeAll(async () => {
  s = await startProtocolSuite();
});
afterAll(async () => {
  await stopSuite(s);
});
beforeEach(() => resetSuite(s));

function blocks(): ResourceBlock[] {
  return [
    {
      type: "gpurental_instance",
      name: "train",
      config: { offer_id: s.creds.offer_id, template_id: s.creds.template_id, disk_gb: 50, label: "train" },
    },
    { type: "gpurental_api_key", name: "ci", config: { name: "ci" } },
  ];
}

describe.each<TerraformVersion>(["1.12", "1.14", "1.16"])("Terraform %s", (version) => {
  test(
    "imports by identity, then plans no change, applies, and plans no change again",
    async () => {
      const org = { base_url: s.backend.url, token: s.creds.admin_session_token, org_id: s.creds.org_id };
      const first = driverFor(s, version, { providerConfig: org });
      await first.apply({ resources: blocks() });
      const instance = first.state.get("gpurental_instance.train")!;
      const key = first.state.get("gpurental_api_key.ci")!;
      expect(instance.identity).toEqual({ id: instance.value.id, org_id: s.creds.org_id });
      expect(key.identity).toEqual({ id: key.value.id, org_id: s.creds.org_id });
      // The schema load asks for the identity schemas right after the schema, once per command.
      expect(rpcs(first).slice(0, 2)).toEqual(["GetProviderSchema", "GetResourceIdentitySchemas"]);
      expect(rpcs(first).filter((r) => r === "GetProviderSchema")).toHaveLength(1);

      // Another working directory, an empty state: import blocks by identity only.
      const second = driverFor(s, version, { providerConfig: org });
      const imports: ImportBlock[] = [
        { to: "gpurental_instance.train", identity: { id: instance.value.id ?? null } },
        { to: "gpurental_api_key.ci", identity: { id: key.value.id ?? null, org_id: s.creds.org_id } },
      ];
      const planned = await second.plan({ resources: blocks(), imports });
      expect(planned.map((c) => [c.address, c.importing, c.action])).toEqual([
        ["gpurental_instance.train", true, "noop"],
        ["gpurental_api_key.ci", true, "noop"],
      ]);
      const walk = rpcs(second);
      const at = (rpc: string, from = 0) => walk.indexOf(rpc, from);
      expect(at("ImportResourceState")).toBeLessThan(at("ReadResource"));
      expect(at("ReadResource")).toBeLessThan(at("PlanResourceChange"));
      expect(walk).not.toContain("UpgradeResourceIdentity");
      expect(second.diagnostics.filter((d) => d.severity === "error")).toEqual([]);

      await second.apply({ resources: blocks(), imports });
      expect(second.state.get("gpurental_instance.train")?.identity).toEqual(instance.identity);
      expect(second.state.get("gpurental_api_key.ci")?.value).toMatchObject({ name: "ci", secret: null });
      const again = await second.plan({ resources: blocks() });
      expect(again.map((c) => c.action)).toEqual(["noop", "noop"]);
      expect(s.backend.listInstances(s.creds.org_id).filter((i) => i.status !== "destroyed")).toHaveLength(1);
    },
    PROTOCOL_TEST_MS,
  );
});

test(
  "Terraform 1.14 refuses to import by an identity of another organization, naming both",
  async () => {
    const d = driverFor(s, "1.14", {
      providerConfig: { base_url: s.backend.url, token: s.creds.admin_session_token, org_id: s.creds.org_id },
    });
    const failed = await d
      .plan({
        resources: [blocks()[0]!],
        imports: [
          {
            to: "gpurental_instance.train",
            identity: { id: "0b8f5a0e-3a41-4c9e-9d6e-2f1c7b0a5d11", org_id: s.creds.other_org_id },
          },
        ],
      })
      .catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(CommandFailed);
    const diags = (failed as CommandFailed).diagnostics.filter((x) => x.severity === "error");
    expect(diags.map((x) => [x.rpc, x.summary])).toEqual([
      ["ImportResourceState", "ORG_MISMATCH: the instance is in another organization"],
    ]);
    expect(diags[0]?.detail).toContain(s.creds.other_org_id);
  },
  PROTOCOL_TEST_MS,
);
