import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { GpurentalClient } from "../../../src/api/client";
import { runStrays, STRAYS_EXIT } from "../../../src/cli/account/strays";
import { formatMicro } from "../../../src/report/money";
import { runProcess } from "../../../src/testing/child-process";
import type { RunResult } from "../harness";
import {
  apply,
  expectCode,
  liveInstances,
  output,
  plan,
  resetSuite,
  type Suite,
  startSuite,
  stopSuite,
  suiteClientOptions,
  TERRAFORM_BLOCK,
} from "../resources/helpers";
import { runBinary, testIO } from "./io";

// `gpurental strays` with the real terraform and the fake backend: a configuration with a module
// (count instances, for_each keys) is applied; an instance and a key are then made outside
// Terraform and one of each is left behind by removing it from the state. The command must find
// exactly those (through `terraform state pull` of the working directory), print import blocks
// that `terraform plan` takes as imports with nothing to create, refuse to destroy without a
// confirmation, never revoke the key it authenticates with, and destroy and revoke the rest. A
// CDKTF-shaped stack (cdktf.json, cdktf.out/stacks/<stack>/cdk.tf.json with a local backend) holds
// an instance under a synthesized name.

jest.setTimeout(300_000);

let s: Suite;
beforeAll(async () => {
  s = await startSuite();
});
afterAll(() => stopSuite(s));
beforeEach(() => resetSuite(s));

function moduleConfig(count: number, keys: string[]): string {
  return `${TERRAFORM_BLOCK}
variable "template_id" {
  type = string
}

resource "gpurental_instance" "c" {
  count        = ${count}
  offer_filter = { gpu_model = "RTX 4090", num_gpus = 1 }
  template_id  = var.template_id
  disk_gb      = 30
  label        = "c\${count.index}"
}

resource "gpurental_api_key" "k" {
  for_each = toset(${JSON.stringify(keys)})
  name     = "key-\${each.key}"
}
`;
}

function rootConfig(): string {
  return `${TERRAFORM_BLOCK}
provider "gpurental" {}

resource "gpurental_instance" "a" {
  offer_id    = "${s.creds.offer_id}"
  template_id = "${s.creds.template_id}"
  disk_gb     = 50
  label       = "a"
}

module "m" {
  source      = "./modules/m"
  template_id = "${s.creds.template_id}"
}
`;
}

function client(token: string): GpurentalClient {
  return new GpurentalClient(suiteClientOptions(s, token));
}

/** Runs terraform in another directory with the suite's CLI configuration and environment. */
function terraformIn(dir: string, args: string[]): Promise<RunResult> {
  return runProcess(s.tf.terraform, args, { cwd: dir, env: s.tf.env });
}

interface StraysJson {
  stray_count: number;
  instances: { id: string; label: string | null; spend_micro: number; hourly_burn_micro: number }[];
  api_keys: { id: string; name: string; this_credential: boolean }[];
  removals?: { type: string; id: string; result: string; detail?: string }[];
}

test("finds exactly what no state holds, adopts it with import blocks, destroys and revokes it on confirmation", async () => {
  mkdirSync(join(s.tf.workDir, "modules", "m"), { recursive: true });
  s.tf.write({ "main.tf": rootConfig(), "modules/m/main.tf": moduleConfig(2, ["x", "y"]) });
  await s.tf.ok(["init", "-input=false"]);
  expectCode(await apply(s), 0);

  // Made outside Terraform: an instance, a key, an instance destroyed since, and the team key the
  // command will authenticate with.
  const admin = client(s.creds.admin_session_token);
  const outside = await admin.deployInstance({
    offer_id: s.creds.small_disk_offer_id,
    template_id: s.creds.template_id,
    disk_gb: 20,
    label: "outside",
  });
  const outsideKey = await admin.createApiKey({ name: "outside-key", kind: "personal" });
  const gone = await admin.deployInstance({
    offer_id: s.creds.small_disk_offer_id,
    template_id: s.creds.template_id,
    disk_gb: 10,
  });
  await admin.destroyInstance(gone.id);
  const runner = await admin.createApiKey({ name: "nightly-runner", kind: "team" });

  // Left behind: removed from the state, and from the configuration.
  const state = await s.tf.state();
  const m = (
    state.values as {
      root_module: { child_modules: { resources: { address: string; values: { id: string } }[] }[] };
    }
  ).root_module.child_modules[0]!.resources;
  const idOf = (address: string) => m.find((r) => r.address === address)!.values.id;
  const c1 = idOf("module.m.gpurental_instance.c[1]");
  const keyY = idOf('module.m.gpurental_api_key.k["y"]');
  await s.tf.ok(["state", "rm", "module.m.gpurental_instance.c[1]", 'module.m.gpurental_api_key.k["y"]']);
  s.tf.write({ "modules/m/main.tf": moduleConfig(1, ["x"]) });
  expectCode(await plan(s), 0);

  // Authenticated with the runner key: listed, marked, never counted.
  const runnerEnv = { ...s.tf.env, GPURENTAL_TOKEN: runner.secret };
  const json = testIO(runnerEnv, s.tf.root);
  // The instance bills by the second while strays reads it: its spend then lies between these.
  const spentBefore = s.backend.instance(c1)!.spend_micro;
  expect(await runStrays([s.tf.workDir], { json: true }, json)).toBe(STRAYS_EXIT.found);
  const spentAfter = s.backend.instance(c1)!.spend_micro;
  const found = JSON.parse(json.out) as StraysJson;
  expect(found.stray_count).toBe(4);
  expect(found.instances.map((i) => i.id).sort()).toEqual([outside.id, c1].sort());
  expect(found.api_keys.map((k) => [k.id, k.this_credential]).sort()).toEqual(
    [
      [outsideKey.key.id, false],
      [keyY, false],
      [runner.key.id, true],
    ].sort(),
  );
  const c1Row = found.instances.find((i) => i.id === c1)!;
  const c1Record = s.backend.instance(c1)!;
  expect(c1Row.hourly_burn_micro).toBe(
    c1Record.price_per_hour_micro + 30 * c1Record.storage_price_per_gb_hour_micro,
  );
  expect(c1Row.spend_micro).toBeGreaterThanOrEqual(spentBefore);
  expect(c1Row.spend_micro).toBeLessThanOrEqual(spentAfter);
  const burn = found.instances.reduce((n, i) => n + BigInt(i.hourly_burn_micro), 0n);

  // The table, and the binary's exit code; no secret anywhere.
  const table = testIO(runnerEnv, s.tf.root);
  expect(await runStrays([s.tf.workDir], {}, table)).toBe(STRAYS_EXIT.found);
  const price = formatMicro(BigInt(c1Record.price_per_hour_micro)).replace(".", "\\.");
  expect(table.out).toMatch(new RegExp(`${c1} +c1 +running +RTX 4090 × 1 +\\S+( \\S+)? +${price} +`));
  expect(table.out).toContain(`${runner.key.id}  nightly-runner`);
  expect(table.out).toContain("this command's credential (not counted, never revoked)");
  const summary = `4 strays found: 2 instances burning ${formatMicro(burn)}/h and 2 API keys.`;
  expect(table.out).toContain(summary);
  const bin = await runBinary(["strays", s.tf.workDir], runnerEnv, s.tf.root);
  expect(bin.code).toBe(2);
  expect(bin.stdout).toContain(summary);
  for (const out of [json.out, json.err, table.out, table.err, bin.stdout, bin.stderr]) {
    expect(out).not.toContain(runner.secret);
    expect(out).not.toContain(outsideKey.secret);
    expect(out).not.toContain(s.creds.admin_session_token);
  }

  // Import blocks that terraform plans as imports, with nothing to create or change.
  const adopt = testIO(runnerEnv, s.tf.workDir);
  expect(await runStrays(["."], { outputImport: "adopt.tf" }, adopt)).toBe(STRAYS_EXIT.found);
  const planned = expectCode(await plan(s), 2);
  expect(planned.stdout).toContain("Plan: 4 to import, 0 to add, 0 to change, 0 to destroy.");
  for (const id of [outside.id, c1, outsideKey.key.id, keyY]) expect(planned.stdout).toContain(`[id=${id}]`);
  rmSync(join(s.tf.workDir, "adopt.tf"));

  // No destroy without a confirmation: CI, no terminal, a "no".
  const ci = testIO({ ...runnerEnv, CI: "true" }, s.tf.root, { interactive: true, answers: ["yes"] });
  expect(await runStrays([s.tf.workDir], { destroy: true }, ci)).toBe(STRAYS_EXIT.failed);
  expect(ci.err).toContain("CI is set, so nothing is destroyed without --yes");
  expect(ci.questions).toEqual([]);
  const noTerminal = testIO(runnerEnv, s.tf.root);
  expect(await runStrays([s.tf.workDir], { destroy: true }, noTerminal)).toBe(STRAYS_EXIT.failed);
  expect(noTerminal.err).toContain("standard input is not a terminal to confirm on: add --yes");
  const declined = testIO(runnerEnv, s.tf.root, { interactive: true, answers: ["y"] });
  expect(await runStrays([s.tf.workDir], { destroy: true }, declined)).toBe(STRAYS_EXIT.found);
  expect(declined.questions[0]).toContain(
    "Destroy 2 instance(s) (their disks are lost) and revoke 2 API key(s)",
  );
  expect(liveInstances(s).map((i) => i.id)).toEqual(expect.arrayContaining([outside.id, c1]));

  // Confirmed with the runner key: instances destroyed; keys need a session, its own never revoked.
  const confirmed = testIO(runnerEnv, s.tf.root, { interactive: true, answers: ["yes"] });
  expect(await runStrays([s.tf.workDir], { destroy: true, json: true }, confirmed)).toBe(STRAYS_EXIT.found);
  const removals = (JSON.parse(confirmed.out) as StraysJson).removals!;
  expect(removals.map((r) => [r.id, r.result]).sort()).toEqual(
    [
      [outside.id, "destroyed"],
      [c1, "destroyed"],
      [outsideKey.key.id, "skipped"],
      [keyY, "skipped"],
      [runner.key.id, "skipped"],
    ].sort(),
  );
  expect(removals.find((r) => r.id === runner.key.id)!.detail).toBe(
    "this command's own credential is never revoked",
  );

  // With an admin session and --yes: the keys are revoked (the runner key is now just a stray).
  const yes = testIO(s.tf.env, s.tf.root);
  expect(await runStrays([s.tf.workDir], { destroy: true, yes: true }, yes)).toBe(STRAYS_EXIT.none);
  expect(yes.out).toContain(`API key ${runner.key.id} (nightly-runner): revoked`);
  const after = testIO(s.tf.env, s.tf.root);
  expect(await runStrays([s.tf.workDir], {}, after)).toBe(STRAYS_EXIT.none);
  expect(after.out).toContain("No strays");

  // What Terraform holds was never touched.
  expect(
    liveInstances(s)
      .map((i) => i.label)
      .sort(),
  ).toEqual(["a", "c0"]);
  expect((await admin.listApiKeys()).map((k) => k.name)).toEqual(["key-x"]);
  expect(output(expectCode(await plan(s), 0))).toContain("No changes.");
});

test("a CDKTF project's stacks hold what they deployed, under synthesized names", async () => {
  const project = join(s.tf.root, "cdktf-app");
  const stackDir = join(project, "cdktf.out", "stacks", "gpu-stack");
  mkdirSync(stackDir, { recursive: true });
  writeFileSync(join(project, "cdktf.json"), JSON.stringify({ language: "typescript", app: "true" }));
  const statePath = join(project, "terraform.gpu-stack.tfstate");
  writeFileSync(
    join(stackDir, "cdk.tf.json"),
    JSON.stringify({
      "//": { metadata: { stackName: "gpu-stack" } },
      terraform: {
        backend: { local: { path: statePath } },
        required_providers: { gpurental: { source: "gpurental/gpurental" } },
      },
      provider: { gpurental: [{}] },
      resource: {
        gpurental_instance: {
          workstation_instance_6A3B1C2D: {
            "//": {
              metadata: { path: "gpu-stack/workstation/instance", uniqueId: "workstation_instance_6A3B1C2D" },
            },
            offer_filter: { gpu_model: "RTX 4090", num_gpus: 1 },
            template_id: s.creds.template_id,
            disk_gb: 40,
            label: "cdktf-workstation",
          },
        },
      },
    }),
  );
  expectCode(await terraformIn(stackDir, ["init", "-input=false", "-no-color"]), 0);
  expectCode(await terraformIn(stackDir, ["apply", "-auto-approve", "-input=false", "-no-color"]), 0);
  const cdktfId = liveInstances(s).find((i) => i.label === "cdktf-workstation")!.id;

  // The HCL working directory alone does not hold it; with the project (or the stack) it is held.
  const alone = testIO(s.tf.env, s.tf.root);
  expect(await runStrays([s.tf.workDir], { json: true }, alone)).toBe(STRAYS_EXIT.found);
  expect((JSON.parse(alone.out) as StraysJson).instances.map((i) => i.id)).toEqual([cdktfId]);
  for (const source of [project, stackDir]) {
    const both = testIO(s.tf.env, s.tf.root);
    expect(await runStrays([s.tf.workDir, source], {}, both)).toBe(STRAYS_EXIT.none);
    expect(both.out).toContain(`CDKTF stack gpu-stack (${statePath}): 1 instance, 0 API keys`);
  }
  // --stack takes one name per use: the project after it is a source, not a second stack.
  const named = await runBinary(["strays", "--stack", "gpu-stack", project], s.tf.env, s.tf.root);
  expect({ code: named.code, stderr: named.stderr }).toEqual({ code: 0, stderr: "" });
  expect(named.stdout).toContain(`CDKTF stack gpu-stack (${statePath}): 1 instance, 0 API keys`);
  // A stack that was never synthesized is named, with the ones that were.
  const wrong = testIO(s.tf.env, s.tf.root);
  expect(await runStrays([project], { stack: ["gpu"] }, wrong)).toBe(STRAYS_EXIT.failed);
  expect(wrong.err).toContain('has no synthesized stack "gpu" (synthesized: gpu-stack)');
  expectCode(await terraformIn(stackDir, ["destroy", "-auto-approve", "-input=false", "-no-color"]), 0);
});
