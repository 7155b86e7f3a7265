import { DEMO_IDS } from "../fake-backend";
import { createHarness } from "../framework/testing";
import type { CtyValue } from "../plugin/cty";
import { createProvider } from "../provider";
import { useFakeBackend } from "../testing/fake-backend";

// gpurental_instance_power driven in memory against the in-process fake backend: its progress, its
// refusals, and how it meets a gpurental_instance that manages the same instance. The protocol
// driver (test/protocol) plays the same calls against the provider process.

type Rec = Record<string, CtyValue>;

const fake = useFakeBackend({ workDir: "file" });

const configured = () => fake.configured();
type Harness = Awaited<ReturnType<typeof configured>>;

const instanceConfig = (over: Rec = {}): Rec => ({
  offer_id: fake.creds.offer_id,
  template_id: fake.creds.template_id,
  disk_gb: 50,
  label: "power",
  ...over,
});

async function createInstance(h: Harness, cfg: Rec = instanceConfig()): Promise<Rec & { id: string }> {
  const p = await h.plan("gpurental_instance", null, cfg);
  const created = await h.apply("gpurental_instance", null, p.planned, cfg, p.private);
  expect(created.diags).toEqual([]);
  return created.value as Rec & { id: string };
}

const status = (id: CtyValue) => fake.backend.instance(id as string)?.status;

describe("gpurental_instance_power", () => {
  test("stops a running instance, streaming its status, the time elapsed and the price now charged", async () => {
    const h = await configured();
    const inst = await createInstance(h);
    const r = await h.invoke("gpurental_instance_power", { instance_id: inst.id, state: "stopped" });
    expect(r.diags).toEqual([]);
    expect(status(inst.id)).toBe("stopped");
    const lines = r.progress;
    expect(lines[0]).toMatch(
      new RegExp(
        `^instance ${inst.id} \\(power\\): running, \\d+ s elapsed; now charged ¥[\\d,]+\\.\\d+/h \\(GPU time\\)$`,
      ),
    );
    expect(lines).toContainEqual(
      expect.stringMatching(/: stopped, \d+ s elapsed; now charged ¥[\d,.]+\/h \(disk/),
    );
    // The last line says what a resource managing the instance will do with it.
    expect(lines.at(-1)).toMatch(
      /is stopped\. A gpurental_instance resource managing it keeps its desired_status/,
    );
    // The price once stopped is the disk's, from the instance's own snapshot.
    const disk = (inst.storage_price_per_gb_hour_micro as number) * 50;
    expect(lines.join("\n")).toContain(`¥${(disk / 1e6).toFixed(2)}`);
  });

  test("does nothing for the state the instance is in, and restarts a running one", async () => {
    const h = await configured();
    const inst = await createInstance(h);
    const same = await h.invoke("gpurental_instance_power", { instance_id: inst.id, state: "running" });
    expect(same.diags).toEqual([]);
    expect(same.progress).toHaveLength(1);
    const restarted = await h.invoke("gpurental_instance_power", {
      instance_id: inst.id,
      state: "restarted",
    });
    expect(restarted.diags).toEqual([]);
    expect(status(inst.id)).toBe("running");
    const statuses = restarted.progress.map((l) => /: (\w+),/.exec(l)?.[1]).filter(Boolean);
    expect(statuses).toEqual(["running", "stopping", "stopped", "starting", "running"]);
  });

  test("ends with the API's refusal and its remedy, on `state`, and leaves the instance as it was", async () => {
    const h = await configured();
    const inst = await createInstance(h);
    await h.invoke("gpurental_instance_power", { instance_id: inst.id, state: "stopped" });
    fake.backend.setBalance(fake.creds.org_id, 1);
    const refused = await h.invoke("gpurental_instance_power", { instance_id: inst.id, state: "running" });
    expect(refused.diags.map((d) => [d.severity, d.summary.split(":")[0], d.path])).toEqual([
      ["error", "INSUFFICIENT_BALANCE", [{ attribute: "state" }]],
    ]);
    expect(refused.diags[0]?.detail).toMatch(/top up|balance/i);
    expect(status(inst.id)).toBe("stopped");

    fake.backend.topUp(fake.creds.org_id, 5_000_000_000);
    fake.backend.setHostBehaviour(DEMO_IDS.machineLarge, { unreachable: true });
    const unreachable = await h.invoke("gpurental_instance_power", {
      instance_id: inst.id,
      state: "running",
    });
    expect(unreachable.diags.map((d) => d.summary.split(":")[0])).toEqual(["HOST_UNREACHABLE"]);
  });

  test("refuses at plan time an instance that is gone or in error, and one that never was", async () => {
    const h = await configured();
    const missing = await h.planAction("gpurental_instance_power", {
      instance_id: "0b8f5a0e-3a41-4c9e-9d6e-2f1c7b0a5d11",
      state: "stopped",
    });
    expect(missing.map((d) => [d.severity, d.summary.split(":")[0], d.path])).toEqual([
      ["error", "INSTANCE_NOT_FOUND", [{ attribute: "instance_id" }]],
    ]);
    const invoked = await h.invoke("gpurental_instance_power", {
      instance_id: "0b8f5a0e-3a41-4c9e-9d6e-2f1c7b0a5d11",
      state: "stopped",
    });
    expect(invoked.diags.map((d) => d.summary.split(":")[0])).toEqual(["INSTANCE_NOT_FOUND"]);

    const inst = await createInstance(h);
    expect(
      await h.planAction("gpurental_instance_power", { instance_id: inst.id, state: "stopped" }),
    ).toEqual([]);
  });

  test("validates its arguments before the provider is configured, naming each value", async () => {
    const h = createHarness(createProvider({ env: {} }));
    const res = await h.service.ValidateActionConfig({
      type_name: "gpurental_instance_power",
      config: {
        msgpack: (await import("../plugin/cty")).encodeMsgpack(
          { instance_id: "i-1", state: "paused", timeout: "soon" },
          (await import("./instance-power")).instancePowerAction.schema.type,
        ),
        json: Buffer.alloc(0),
      },
    });
    const details = (res.diagnostics ?? []).map((d) => d.detail ?? "");
    expect(details).toEqual([
      expect.stringContaining('instance_id must be the ID of an instance, a UUID such as "'),
      expect.stringContaining('"paused" is not one of "running", "stopped", "restarted"'),
      expect.stringMatching(/timeout.*soon/),
    ]);
  });
});

describe("an action on an instance a gpurental_instance manages", () => {
  test("is moved back by the configuration's desired_status, with a warning that says why and how to keep it", async () => {
    const h = await configured();
    const cfg = instanceConfig();
    const inst = await createInstance(h, cfg);
    await h.invoke("gpurental_instance_power", { instance_id: inst.id, state: "stopped" });

    const refreshed = await h.read("gpurental_instance", inst);
    expect(refreshed.value).toMatchObject({ desired_status: "stopped", status: "stopped" });
    const plan = await h.plan("gpurental_instance", refreshed.value, cfg, refreshed.private);
    expect(plan.planned).toMatchObject({ desired_status: "running" });
    expect(plan.diags.map((d) => [d.severity, d.summary, d.path])).toEqual([
      [
        "warning",
        `Instance ${inst.id} was stopped outside this configuration: this plan starts it again`,
        [{ attribute: "desired_status" }],
      ],
    ]);
    expect(plan.diags[0]?.detail).toContain('desired_status is "running" (the default when unset)');
    expect(plan.diags[0]?.detail).toContain("lifecycle { ignore_changes = [desired_status] }");

    // ignore_changes makes Terraform plan with the refreshed value: nothing to do, nothing to say.
    const ignored = await h.plan(
      "gpurental_instance",
      refreshed.value,
      { ...cfg, desired_status: "stopped" },
      refreshed.private,
    );
    expect(ignored.diags).toEqual([]);
    expect(ignored.planned).toEqual(refreshed.value);

    // Applying the plan starts it; the next refresh has nothing more to say.
    const applied = await h.apply("gpurental_instance", refreshed.value, plan.planned, cfg, plan.private);
    expect(applied.diags).toEqual([]);
    expect(status(inst.id)).toBe("running");
    const after = await h.read("gpurental_instance", applied.value!, applied.private);
    const quiet = await h.plan("gpurental_instance", after.value, cfg, after.private);
    expect(quiet.diags).toEqual([]);
    expect(quiet.planned).toEqual(after.value);
  });

  test("a change Terraform itself made is no drift: no warning", async () => {
    const h = await configured();
    const cfg = instanceConfig({ desired_status: "stopped" });
    const inst = await createInstance(h, cfg);
    const refreshed = await h.read("gpurental_instance", inst);
    const plan = await h.plan("gpurental_instance", refreshed.value, cfg, refreshed.private);
    expect(plan.diags).toEqual([]);
    expect(refreshed.private.length).toBe(0);
  });
});
