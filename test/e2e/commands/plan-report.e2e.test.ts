import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { GpurentalClient } from "../../../src/api/client";
import { PLAN_REPORT_EXIT, runPlanReport } from "../../../src/cli/account/plan-report";
import { formatMicro } from "../../../src/report/money";
import { runProcess } from "../../../src/testing/child-process";
import type { RunResult } from "../harness";
import {
  expectCode,
  liveInstances,
  output,
  resetSuite,
  type Suite,
  startSuite,
  stopSuite,
  suiteClientOptions,
  writeConfig,
} from "../resources/helpers";
import { runBinary, testIO } from "./io";

// `gpurental plan-report` on the plans of the scenarios with the real terraform and the fake
// backend: create 3, replace 1 by changing its disk, stop 1, destroy all. Each report is checked
// against the fake backend's own figures: its balance, what it charges over an hour once the plan
// is applied (the clock is frozen and moved by exactly one hour), and for the balance rule the
// amount its own INSUFFICIENT_BALANCE refusal says is required. Exit codes gate as documented.

jest.setTimeout(400_000);

let s: Suite;
beforeAll(async () => {
  s = await startSuite();
});
afterAll(() => stopSuite(s));
beforeEach(() => {
  resetSuite(s);
  s.backend.clock.freeze();
});
afterEach(() => s.backend.clock.unfreeze());

interface ReportJson {
  instance_changes: Record<string, number>;
  disk_loss: { address: string; action: string; disk_gb: number }[];
  burn: {
    before_micro: number;
    after_micro: number | null;
    charged_before_micro: number;
    charged_after_micro: number | null;
  };
  balance: { read: boolean; balance_micro?: number; hours_after?: string | null; reason?: string };
  balance_rule: { status: string; required_micro: number | null };
  instances: {
    address: string;
    action: string;
    price_per_hour_micro: number | null;
    price_estimate: boolean | null;
    offer_id: string | null;
    gpu_model: string | null;
    replace_reasons: string[];
    construct_path: string | null;
  }[];
  api_keys: { address: string; action: string }[];
  gates: { gate: string; status: string }[];
}

function config(opts: { evalDisk?: number; trainStatus?: string } = {}): string {
  return `
resource "gpurental_instance" "train" {
  offer_filter   = { gpu_model = "RTX 4090", num_gpus = 1 }
  template_id    = "${s.creds.template_id}"
  disk_gb        = 50
  label          = "train"
  desired_status = "${opts.trainStatus ?? "running"}"
}

resource "gpurental_instance" "eval" {
  offer_filter = { gpu_model = "RTX 3090", num_gpus = 1 }
  template_id  = "${s.creds.template_id}"
  disk_gb      = ${opts.evalDisk ?? 100}
  label        = "eval"
}

resource "gpurental_instance" "notebook" {
  offer_id    = "${s.creds.offer_id}"
  template_id = "${s.creds.template_id}"
  disk_gb     = 30
  label       = "notebook"
}

resource "gpurental_api_key" "ci" {
  name = "ci"
  kind = "team"
}
`;
}

async function savedPlan(extra: string[] = []): Promise<void> {
  expectCode(await s.tf.run(["plan", "-input=false", "-out=plan.bin", ...extra]), 0);
}

async function report(
  args: { plan?: string; env?: NodeJS.ProcessEnv } & Parameters<typeof runPlanReport>[1] = {},
) {
  const { plan, env, ...opts } = args;
  const io = testIO(env ?? s.tf.env, s.tf.workDir);
  const code = await runPlanReport(plan ?? "plan.bin", { json: true, ...opts }, io);
  return {
    code,
    io,
    json: code === PLAN_REPORT_EXIT.failed ? undefined : (JSON.parse(io.out) as ReportJson),
  };
}

async function applyPlan(): Promise<RunResult> {
  return s.tf.run(["apply", "-input=false", "plan.bin"]);
}

/** The fake's own charges over the next hour: its balance now minus its balance an hour later. */
function chargedOverAnHour(): number {
  const before = s.backend.balance(s.creds.org_id);
  s.backend.clock.advance(3_600_000);
  return before - s.backend.balance(s.creds.org_id);
}

const hoursTenths = (balance: number, burn: number) =>
  `${Math.floor((balance * 10) / burn / 10)}.${Math.floor((balance * 10) / burn) % 10}`;

test("create 3, replace 1 by its disk, stop 1, destroy all: the right instances, disk losses, burn and balance, gates", async () => {
  const org = s.creds.org_id;
  writeConfig(s, config());

  // ---- create 3 -----------------------------------------------------------------------------
  await savedPlan();
  const created = await report({ failOn: ["disk-loss"] });
  expect(created.code).toBe(PLAN_REPORT_EXIT.ok);
  const c = created.json!;
  expect(c.instance_changes).toEqual({ create: 3 });
  expect(c.disk_loss).toEqual([]);
  expect(c.api_keys).toEqual([
    expect.objectContaining({ address: "gpurental_api_key.ci", action: "create" }),
  ]);
  expect(c.burn.before_micro).toBe(0);
  const byAddress = Object.fromEntries(c.instances.map((i) => [i.address, i]));
  expect(byAddress["gpurental_instance.train"]).toMatchObject({
    gpu_model: "RTX 4090",
    price_estimate: true,
  });
  expect(byAddress["gpurental_instance.eval"]).toMatchObject({ gpu_model: "RTX 3090", price_estimate: true });
  expect(byAddress["gpurental_instance.notebook"]).toMatchObject({
    offer_id: s.creds.offer_id,
    price_estimate: false,
  });
  const balance = s.backend.balance(org);
  expect(c.balance).toMatchObject({
    read: true,
    balance_micro: balance,
    hours_after: hoursTenths(balance, c.burn.after_micro!),
  });
  expect(c.balance_rule).toMatchObject({ status: "met", required_micro: c.burn.after_micro });

  // The balance rule is the fake's own: one micro short of what the report requires, the fake
  // refuses the last deploy and says it required exactly that.
  const required = c.balance_rule.required_micro!;
  s.backend.setBalance(org, required - 1);
  const short = await report({ failOn: ["balance-rule"] });
  expect(short.code).toBe(PLAN_REPORT_EXIT.gated);
  expect(short.json!.balance_rule.status).toBe("broken");
  const refused = await applyPlan();
  expect(refused.code).toBe(1);
  expect(output(refused)).toContain("INSUFFICIENT_BALANCE");
  expect(output(refused)).toContain(`${formatMicro(BigInt(required))} is required`);
  s.backend.setBalance(org, 5_000_000_000);
  expectCode(await s.tf.run(["apply", "-auto-approve", "-input=false"]), 0);
  // Every estimate was the offer the deploy rented, at that price.
  for (const i of liveInstances(s)) {
    const line = c.instances.find((x) => x.address === `gpurental_instance.${i.label}`)!;
    expect([i.offer_id, i.price_per_hour_micro]).toEqual([line.offer_id, line.price_per_hour_micro]);
  }
  expect(chargedOverAnHour()).toBe(c.burn.charged_after_micro);

  // ---- replace 1 by changing its disk ------------------------------------------------------
  writeConfig(s, config({ evalDisk: 200 }));
  await savedPlan();
  const replaced = await report({ failOn: ["disk-loss"] });
  expect(replaced.code).toBe(PLAN_REPORT_EXIT.gated);
  const r = replaced.json!;
  expect(r.instance_changes).toEqual({ replace: 1 });
  expect(r.disk_loss).toEqual([{ address: "gpurental_instance.eval", action: "replace", disk_gb: 100 }]);
  expect(r.instances[0]!.replace_reasons).toEqual(["disk_gb 100 → 200"]);
  expect(r.gates).toEqual([expect.objectContaining({ gate: "disk-loss", status: "tripped" })]);
  const evalBefore = liveInstances(s).find((i) => i.label === "eval")!;
  expect(r.burn.before_micro).toBe(c.burn.after_micro);
  expect(r.burn.after_micro).toBe(c.burn.after_micro! + 100 * evalBefore.storage_price_per_gb_hour_micro);
  expect(r.burn.charged_before_micro).toBe(c.burn.charged_after_micro);
  const balance2 = s.backend.balance(org);
  expect(r.balance).toMatchObject({
    balance_micro: balance2,
    hours_after: hoursTenths(balance2, r.burn.after_micro!),
  });
  // The Markdown opens with the disk the replacement destroys; the binary gates the same way.
  const md = testIO(s.tf.env, s.tf.workDir);
  expect(await runPlanReport("plan.bin", { failOn: ["disk-loss"] }, md)).toBe(PLAN_REPORT_EXIT.gated);
  expect(md.out).toMatch(
    /^<!-- gpurental-plan-report -->\n### gpurental plan report\n\n> \[!CAUTION\]\n> \*\*1 replacement destroys a disk\*\*.*\n> - `gpurental_instance.eval` "eval": \*\*100 GB destroyed\*\*, new empty 200 GB, because disk\\_gb 100 → 200/,
  );
  const bin = await runBinary(["plan-report", "plan.bin", "--fail-on", "disk-loss"], s.tf.env, s.tf.workDir);
  expect(bin.code).toBe(2);
  const untimed = (t: string) => t.replace(/read \S+Z; /, "read (time); ");
  expect(untimed(bin.stdout)).toBe(untimed(md.out));
  expect(bin.stderr).toContain("gate disk-loss tripped: 1 disk destroyed: gpurental_instance.eval");
  expectCode(await applyPlan(), 0);
  expect(chargedOverAnHour()).toBe(r.burn.charged_after_micro);

  // ---- stop 1, from `terraform show -json`, with an API key --------------------------------
  writeConfig(s, config({ evalDisk: 200, trainStatus: "stopped" }));
  await savedPlan();
  writeFileSync(join(s.tf.workDir, "plan.json"), (await s.tf.ok(["show", "-json", "plan.bin"])).stdout);
  const key = await new GpurentalClient(suiteClientOptions(s, s.creds.admin_session_token)).createApiKey({
    name: "plan-review",
    kind: "team",
  });
  const keyEnv = { ...s.tf.env, GPURENTAL_TOKEN: key.secret };
  const stopped = await report({ plan: "plan.json", env: keyEnv, minBalanceHours: 10n });
  expect(stopped.code).toBe(PLAN_REPORT_EXIT.ok);
  const st = stopped.json!;
  expect(st.instance_changes).toEqual({ stop: 1 });
  expect(st.disk_loss).toEqual([]);
  const train = liveInstances(s).find((i) => i.label === "train")!;
  expect(st.burn.after_micro).toBe(st.burn.before_micro - train.price_per_hour_micro);
  expect(st.balance).toEqual({
    read: false,
    reason: "the balance is only in GET /v1/me, which needs a signed-in session; an API key cannot read it",
  });
  expect(st.balance_rule.status).toBe("not-applicable");
  expect(st.gates).toEqual([
    expect.objectContaining({ gate: "min-balance-hours=1.0", status: "not-judged" }),
  ]);
  const strict = await report({ plan: "plan.json", env: keyEnv, minBalanceHours: 10n, failOn: ["unjudged"] });
  expect(strict.code).toBe(PLAN_REPORT_EXIT.gated);
  for (const out of [stopped.io.out, stopped.io.err, strict.io.out]) expect(out).not.toContain(key.secret);
  expectCode(await applyPlan(), 0);
  expect(chargedOverAnHour()).toBe(st.burn.charged_after_micro);

  // ---- destroy all --------------------------------------------------------------------------
  await savedPlan(["-destroy"]);
  const destroyed = await report({ failOn: ["destroy", "key-revoke"], maxBurnPerHour: 0n });
  expect(destroyed.code).toBe(PLAN_REPORT_EXIT.gated);
  const d = destroyed.json!;
  expect(d.instance_changes).toEqual({ destroy: 3 });
  expect(d.disk_loss.map((x) => [x.address, x.disk_gb]).sort()).toEqual([
    ["gpurental_instance.eval", 200],
    ["gpurental_instance.notebook", 30],
    ["gpurental_instance.train", 50],
  ]);
  expect(d.api_keys).toEqual([
    expect.objectContaining({ address: "gpurental_api_key.ci", action: "revoke" }),
  ]);
  expect(d.burn).toMatchObject({ after_micro: 0, charged_after_micro: 0 });
  expect(d.gates.map((g) => [g.gate, g.status])).toEqual([
    ["destroy", "tripped"],
    ["key-revoke", "tripped"],
    ["max-burn-per-hour=¥0.00", "passed"],
  ]);
  expectCode(await applyPlan(), 0);
  expect(liveInstances(s)).toEqual([]);
  expect(chargedOverAnHour()).toBe(0);
});

test("a CDKTF stack's plan, saved where cdktf diff saves it, with construct paths", async () => {
  const project = join(s.tf.root, "cdktf-plan");
  const stackDir = join(project, "cdktf.out", "stacks", "gpu-stack");
  mkdirSync(stackDir, { recursive: true });
  writeFileSync(join(project, "cdktf.json"), JSON.stringify({ language: "typescript", app: "true" }));
  writeFileSync(
    join(stackDir, "cdk.tf.json"),
    JSON.stringify({
      terraform: {
        backend: { local: { path: join(project, "terraform.gpu-stack.tfstate") } },
        required_providers: { gpurental: { source: "gpurental/gpurental" } },
      },
      provider: { gpurental: [{}] },
      resource: {
        gpurental_instance: {
          workstation_instance_6A3B1C2D: {
            "//": { metadata: { path: "gpu-stack/workstation/instance" } },
            offer_id: s.creds.offer_id,
            template_id: s.creds.template_id,
            disk_gb: 40,
          },
        },
      },
    }),
  );
  const inStack = (args: string[]) => runProcess(s.tf.terraform, args, { cwd: stackDir, env: s.tf.env });
  expectCode(await inStack(["init", "-input=false", "-no-color"]), 0);
  // Not planned yet: the report says what to run.
  const early = testIO(s.tf.env, s.tf.root);
  expect(await runPlanReport(project, {}, early)).toBe(PLAN_REPORT_EXIT.failed);
  expect(early.err).toContain("run `cdktf diff gpu-stack` first");
  expectCode(await inStack(["plan", "-input=false", "-no-color", "-out", "plan"]), 0);
  const io = testIO(s.tf.env, s.tf.root);
  expect(await runPlanReport(project, { stack: "gpu-stack", json: true }, io)).toBe(PLAN_REPORT_EXIT.ok);
  const j = JSON.parse(io.out) as ReportJson & { cdktf_stack: string };
  expect(j.cdktf_stack).toBe("gpu-stack");
  expect(j.instances).toEqual([
    expect.objectContaining({
      address: "gpurental_instance.workstation_instance_6A3B1C2D",
      construct_path: "gpu-stack/workstation/instance",
      action: "create",
      price_per_hour_micro: 2_500_000,
    }),
  ]);
  const md = testIO(s.tf.env, s.tf.root);
  expect(await runPlanReport(join(project, "cdktf.out", "stacks", "gpu-stack"), {}, md)).toBe(
    PLAN_REPORT_EXIT.ok,
  );
  expect(md.out).toContain("### gpurental plan report: stack `gpu-stack`");
  expect(md.out).toContain("<sub>gpu-stack/workstation/instance</sub>");
});
