import { resetSuite, type Suite, stopSuite } from "../e2e/resources/helpers";
import { CommandFailed, type ResourceBlock, type TerraformVersion } from "./driver";
import { driverFor, PROTOCOL_TEST_MS, rpcs, startProtocolSuite } from "./fixture";

// gpurental_instance_power as Terraform 1.14 and 1.16 invoke it (`terraform apply -invoke=...`),
// against the provider process: ValidateActionConfig, PlanAction, then InvokeAction's stream of
// progress and its completion; a refusal with its remedy; the next plan of a gpurental_instance
// that manages the same instance; and 1.16's action before a destroy.

let s: Suite;
beforeAll(async () => {
  s = await startProtocolSuite();
});
afterAll(async () => {
  await stopSuite(s);
});
beforeEach(() => resetSuite(s));

const instanceBlock = (): ResourceBlock => ({
  type: "gpurental_instance",
  name: "train",
  config: { offer_id: s.creds.offer_id, template_id: s.creds.template_id, disk_gb: 50, label: "train" },
});

describe.each<TerraformVersion>(["1.14", "1.16"])("Terraform %s", (version) => {
  test(
    "stops an instance with progress, is refused a start with the remedy, and the managing resource's plan says why it starts it again",
    async () => {
      const d = driverFor(s, version);
      await d.apply({ resources: [instanceBlock()] });
      const id = d.state.get("gpurental_instance.train")!.value.id as string;

      const before = d.calls.length;
      await d.invoke({
        type: "gpurental_instance_power",
        name: "night",
        config: { instance_id: id, state: "stopped" },
      });
      expect(s.backend.instance(id)?.status).toBe("stopped");
      const walk = rpcs(d, before);
      expect(walk.filter((r) => /Action/.test(r))).toEqual([
        "ValidateActionConfig",
        "PlanAction",
        "InvokeAction",
      ]);
      expect(walk.indexOf("PlanAction")).toBeLessThan(walk.indexOf("InvokeAction"));
      expect(d.progress[0]).toMatch(
        new RegExp(`^instance ${id} \\(train\\): running, \\d+ s elapsed; now charged ¥`),
      );
      expect(d.progress).toContainEqual(
        expect.stringMatching(/: stopped, \d+ s elapsed; now charged ¥[\d,.]+\/h \(disk/),
      );

      // Balance at one micro: the start is refused, with the API's code and what to do.
      s.backend.setBalance(s.creds.org_id, 1);
      const refused = await d
        .invoke({
          type: "gpurental_instance_power",
          name: "morning",
          config: { instance_id: id, state: "running" },
        })
        .catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(CommandFailed);
      const errors = (refused as CommandFailed).diagnostics.filter((x) => x.severity === "error");
      expect(errors.map((x) => [x.rpc, x.summary.split(":")[0]])).toEqual([
        ["InvokeAction", "INSUFFICIENT_BALANCE"],
      ]);
      expect(errors[0]?.detail).toMatch(/balance/i);
      expect(s.backend.instance(id)?.status).toBe("stopped");
      s.backend.topUp(s.creds.org_id, 5_000_000_000);

      // The resource still says running: its next plan starts the instance again, and says why.
      const planned = await d.plan({ resources: [instanceBlock()] });
      expect(planned.map((c) => [c.action, c.planned?.desired_status])).toEqual([["update", "running"]]);
      const warnings = d.diagnostics.filter(
        (x) => x.severity === "warning" && x.rpc === "PlanResourceChange",
      );
      expect(warnings.map((w) => w.summary)).toEqual([
        `Instance ${id} was stopped outside this configuration: this plan starts it again`,
      ]);
      expect(warnings[0]?.detail).toContain("lifecycle { ignore_changes = [desired_status] }");
    },
    PROTOCOL_TEST_MS,
  );
});

test(
  "Terraform 1.16 runs the action before the destroy it is triggered by",
  async () => {
    const d = driverFor(s, "1.16");
    await d.apply({ resources: [instanceBlock()] });
    const id = d.state.get("gpurental_instance.train")!.value.id as string;
    const before = d.calls.length;
    await d.apply({
      resources: [],
      destroyed: [
        {
          ...instanceBlock(),
          beforeDestroy: {
            type: "gpurental_instance_power",
            name: "park",
            config: { instance_id: id, state: "stopped" },
          },
        },
      ],
    });
    const walk = rpcs(d, before);
    expect(walk.indexOf("PlanAction")).toBeGreaterThan(-1);
    expect(walk.indexOf("PlanAction")).toBeLessThan(walk.indexOf("InvokeAction"));
    expect(walk.indexOf("InvokeAction")).toBeLessThan(walk.lastIndexOf("ApplyResourceChange"));
    expect(d.progress.some((l) => /: stopped,/.test(l))).toBe(true);
    expect(s.backend.instance(id)?.status).toBe("destroyed");
    expect(d.state.size).toBe(0);
  },
  PROTOCOL_TEST_MS,
);
