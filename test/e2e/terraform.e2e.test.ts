import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { packageHash } from "../../src/cli/provider/provider";
import { findTerraform, type StateResource, TerraformHarness } from "./harness";

// The real terraform CLI against the real provider executable, installed from a filesystem mirror,
// serving a test-only resource (fixtures/test-provider.ts) built with the provider framework.

jest.setTimeout(180_000);

let tf: TerraformHarness;
const storeDir = () => join(tf.root, "store");

beforeAll(async () => {
  tf = await TerraformHarness.create({
    providerEntry: join(__dirname, "fixtures", "test-provider.ts"),
    env: {},
  });
  tf.env.E2E_STORE_DIR = join(tf.root, "store");
});

afterAll(() => tf?.cleanup());

const header = (source: string) => `terraform {
  required_providers {
    gpurental = { source = "${source}" }
  }
}

provider "gpurental" {
  token = "gpr_0123456789abcdef0123456789abcdef0123456789abcdef"
}
`;

function config(opts: { aName?: string; size?: number; labelValue?: string; source?: string } = {}): string {
  return `${header(opts.source ?? "gpurental/gpurental")}
resource "gpurental_e2e_thing" "a" {
  name   = "${opts.aName ?? "alpha"}"
  size   = ${opts.size ?? 1}
  secret = "s3cr3t-value"
  label = {
    key   = "team"
    value = "${opts.labelValue ?? "ml"}"
  }
}

resource "gpurental_e2e_thing" "b" {
  # unknown until a is created: flows through the plan as "known after apply"
  name = "b-\${gpurental_e2e_thing.a.slug}"
}

output "a_id" {
  value = gpurental_e2e_thing.a.id
}
`;
}

function resource(state: Awaited<ReturnType<TerraformHarness["state"]>>, address: string): StateResource {
  const r = state.values?.root_module?.resources?.find((x) => x.address === address);
  if (!r) throw new Error(`${address} not in state`);
  return r;
}

describe("terraform with the gpurental provider", () => {
  it("inits from the local mirror offline and records the package's h1 hash", async () => {
    tf.write({ "main.tf": config() });
    const r = await tf.ok(["init"]);
    expect(r.stdout).toMatch(/Installing gpurental\/gpurental v0\.1\.0/);
    const lock = readFileSync(join(tf.workDir, ".terraform.lock.hcl"), "utf8");
    expect(lock).toContain(`"${packageHash(tf.install.packageDir)}"`);
  });

  it("validates", async () => {
    const r = await tf.ok(["validate"]);
    expect(r.stdout).toMatch(/Success! The configuration is valid/);
  });

  it("plans with unknown values flowing between resources and a sensitive attribute hidden", async () => {
    const r = await tf.ok(["plan", "-out=tfplan"]);
    expect(r.stdout).toMatch(/Plan: 2 to add, 0 to change, 0 to destroy/);
    expect(r.stdout).toMatch(/name\s+= \(known after apply\)/);
    expect(r.stdout).toMatch(/secret\s+= \(sensitive value\)/);
    expect(r.stdout).not.toContain("s3cr3t-value");
  });

  it("applies the saved plan", async () => {
    const r = await tf.ok(["apply", "tfplan"]);
    expect(r.stdout).toMatch(/Apply complete! Resources: 2 added, 0 changed, 0 destroyed/);
    const state = await tf.state();
    const a = resource(state, "gpurental_e2e_thing.a");
    const b = resource(state, "gpurental_e2e_thing.b");
    expect(a.values).toMatchObject({
      name: "alpha",
      size: 1,
      slug: "alpha-slug",
      label: { key: "team", value: "ml" },
    });
    expect(b.values.name).toBe("b-alpha-slug");
    expect(a.sensitive_values).toMatchObject({ secret: true });
    expect(readdirSync(storeDir())).toHaveLength(2);
  });

  it("plans no changes right after apply", async () => {
    const r = await tf.run(["plan", "-detailed-exitcode"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/No changes\. Your infrastructure matches the configuration\./);
  });

  it("TF_LOG=debug shows the provider's own log lines parsed at their level, with no credential", async () => {
    const r = await tf.ok(["plan"], { TF_LOG: "debug" });
    const ours = r.stderr.split("\n").filter((l) => l.includes("provider.terraform-provider-gpurental"));
    // Parsed: Terraform re-logs the record at its @level with its message, not the raw JSON text.
    expect(
      ours.some((l) =>
        /\[DEBUG\] provider\.terraform-provider-gpurental[^:]*: plugin server started/.test(l),
      ),
    ).toBe(true);
    expect(ours.filter((l) => l.includes('"@level"'))).toEqual([]);
    expect(r.stderr).not.toMatch(/gp[rs]_[0-9a-f]{8,}/);
    expect(r.stderr).not.toContain("s3cr3t-value");
  });

  it("updates a nested attribute in place", async () => {
    tf.write({ "main.tf": config({ labelValue: "research", size: 2 }) });
    const r = await tf.ok(["apply", "-auto-approve"]);
    expect(r.stdout).toMatch(/~ update in-place/);
    expect(r.stdout).toMatch(/Resources: 0 added, 1 changed, 0 destroyed/);
    expect(resource(await tf.state(), "gpurental_e2e_thing.a").values.label).toEqual({
      key: "team",
      value: "research",
    });
  });

  it("replaces when a requires-replace attribute changes", async () => {
    tf.write({ "main.tf": config({ aName: "gamma", labelValue: "research", size: 2 }) });
    const plan = await tf.ok(["plan"]);
    expect(plan.stdout).toMatch(/must be replaced/);
    expect(plan.stdout).toMatch(/# forces replacement/);
    const r = await tf.ok(["apply", "-auto-approve"]);
    expect(r.stdout).toMatch(/Resources: 2 added, 0 changed, 2 destroyed/);
    expect(resource(await tf.state(), "gpurental_e2e_thing.b").values.name).toBe("b-gamma-slug");
  });

  it("reports a diagnostic at the configuration line of the bad attribute", async () => {
    tf.write({ "main.tf": config({ aName: "has space" }) });
    const r = await tf.run(["validate"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/Error: Invalid name/);
    expect(r.stderr).toMatch(/on main\.tf line 12, in resource "gpurental_e2e_thing" "a":/);
    expect(r.stderr).toMatch(/name\s+= "has space"/);
    tf.write({ "main.tf": config({ aName: "gamma", labelValue: "research", size: 2 }) });
  });

  it("imports an existing object", async () => {
    const a = resource(await tf.state(), "gpurental_e2e_thing.a");
    await tf.ok(["state", "rm", "gpurental_e2e_thing.a"]);
    const r = await tf.ok(["import", "gpurental_e2e_thing.a", String(a.values.id)]);
    expect(r.stdout).toMatch(/Import successful!/);
    expect(resource(await tf.state(), "gpurental_e2e_thing.a").values).toMatchObject({
      id: a.values.id,
      name: "gamma",
      size: 2,
    });
    const plan = await tf.run(["plan", "-detailed-exitcode"]);
    expect(plan.code).toBe(0);
  });

  it("destroys", async () => {
    const r = await tf.ok(["destroy", "-auto-approve"]);
    expect(r.stdout).toMatch(/Destroy complete! Resources: 2 destroyed/);
    expect(readdirSync(storeDir())).toHaveLength(0);
  });

  it("stops cleanly on Ctrl-C mid-apply: Terraform sends StopProvider and the provider survives SIGINT", async () => {
    tf.write({
      "main.tf": `${header("gpurental/gpurental")}
resource "gpurental_e2e_thing" "slow" {
  name     = "slow"
  delay_ms = 60000
}
`,
    });
    await tf.ok(["init"]);
    const child = tf.spawn(["apply", "-no-color", "-auto-approve"], {}, { processGroup: true });
    let out = "";
    child.stdout!.on("data", (d) => {
      out += d;
    });
    const started = Date.now();
    while (!out.includes("Creating...") && child.exitCode === null && Date.now() - started < 60_000) {
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(out).toContain("Creating...");
    await new Promise((r) => setTimeout(r, 500));
    // A terminal's Ctrl-C reaches the whole process group: terraform and the provider alike.
    child.interrupt();
    const interruptedAt = Date.now();
    const r = await child.result;
    expect(Date.now() - interruptedAt).toBeLessThan(20_000);
    expect(r.stdout + r.stderr).toMatch(/Interrupt received/);
    expect(r.stderr).toMatch(/Create interrupted/);
    expect(r.stderr).not.toMatch(/Plugin did not respond|panic|crash/i);
    expect(r.code).toBe(1);
    // Nothing was created, nothing was left in state.
    expect(existsSync(storeDir()) ? readdirSync(storeDir()) : []).toHaveLength(0);
  });

  it("installs for a fully qualified source as well", async () => {
    tf.write({
      "main.tf": `${header("example.com/test/gpurental")}
resource "gpurental_e2e_thing" "x" {
  name = "fq"
}
`,
    });
    await tf.ok(["init", "-upgrade"]);
    const r = await tf.ok(["plan"]);
    expect(r.stdout).toMatch(/Plan: 1 to add/);
  });
});

describe("finding the terraform CLI", () => {
  it("fails clearly when TERRAFORM_BINARY_NAME names nothing", () => {
    expect(() => findTerraform({ TERRAFORM_BINARY_NAME: "/nonexistent/terraform", PATH: "" })).toThrow(
      "End-to-end tests need the Terraform CLI: none of /nonexistent/terraform was found (set TERRAFORM_BINARY_NAME to the binary to use).",
    );
  });

  it("fails clearly when PATH holds neither terraform nor tofu", () => {
    expect(() => findTerraform({ PATH: "/nonexistent" })).toThrow(
      /none of terraform, tofu was found on PATH/,
    );
  });
});
