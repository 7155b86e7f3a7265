import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { GpurentalClient } from "../../src/api/client";
import { DEMO_IDS, type FakeBackend, startFakeBackend } from "../../src/fake-backend";
import type { DemoCredentials } from "../../src/fake-backend/types";
import { TerraformHarness } from "./harness";

// examples/hcl applied and destroyed with the real terraform CLI against the fake backend, and
// every docs snippet of examples/hcl/snippets formatted and validated against the real provider.

jest.setTimeout(300_000);

const EXAMPLE_DIR = join(__dirname, "..", "..", "examples", "hcl");
const SNIPPETS_DIR = join(EXAMPLE_DIR, "snippets");

let fb: FakeBackend;
let creds: DemoCredentials;
let tf: TerraformHarness;

beforeAll(async () => {
  fb = await startFakeBackend({ port: 0, seed: "demo" });
  creds = fb.credentials!;
  tf = await TerraformHarness.create();
  tf.env.GPURENTAL_BASE_URL = fb.url;
  tf.env.GPURENTAL_TOKEN = creds.admin_session_token;
});

afterAll(async () => {
  tf?.cleanup();
  await fb?.close();
});

type Outputs = Record<string, { value: unknown; sensitive: boolean }>;

/** Calls the fake backend's control API over HTTP. */
async function control(method: string, path: string, body?: unknown): Promise<void> {
  const res = await fetch(`${fb.url}/_control${path}`, {
    method,
    headers: { "x-control-token": fb.controlToken, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  expect(res.status).toBe(200);
}

/** The HCL code block of README.md's "Using it from HCL" section. */
function readmeHcl(): string {
  const readme = readFileSync(join(__dirname, "..", "..", "README.md"), "utf8");
  const section = readme.slice(readme.indexOf("## Using it from HCL"));
  const block = /```hcl\n([\s\S]*?)```/.exec(section);
  if (!block?.[1]) throw new Error("README.md has no hcl block under ## Using it from HCL");
  return block[1];
}

describe("examples/hcl", () => {
  beforeAll(async () => {
    for (const name of readdirSync(EXAMPLE_DIR).filter((n) => n.endsWith(".tf"))) {
      copyFileSync(join(EXAMPLE_DIR, name), join(tf.workDir, name));
    }
    await tf.ok(["init"]);
  });

  it("applies, plans no changes, and destroys everything it created", async () => {
    const vars = [`-var=ssh_key_id=${creds.ssh_key_id}`];
    const applied = await tf.ok(["apply", "-auto-approve", ...vars]);
    const outputs = JSON.parse((await tf.ok(["output", "-json"])).stdout) as Outputs;

    // The cheapest RTX 4090 is on a machine going into maintenance; the example skips it.
    expect(outputs.offer?.value).toEqual({
      id: DEMO_IDS.offer,
      gpu_model: "RTX 4090",
      price_per_hour_micro: 2_500_000,
    });
    const instanceId = outputs.instance_id?.value as string;
    expect(outputs.instance_status?.value).toBe("running");
    const instance = fb.instance(instanceId)!;
    expect(instance.status).toBe("running");
    const rendered = fb.renderInstance(instanceId)!;
    expect(outputs.ssh_command?.value).toBe(
      `ssh -p ${rendered.ssh_port} ${rendered.ssh_user}@${rendered.ssh_host}`,
    );
    // terraform leaves null outputs out; the SSH template's instance may have no access token.
    if (rendered.access_token === null) expect(outputs.access_token).toBeUndefined();
    else expect(outputs.access_token).toMatchObject({ sensitive: true, value: rendered.access_token });
    expect(outputs.ci_api_key_secret).toMatchObject({ sensitive: true });
    const secret = outputs.ci_api_key_secret?.value as string;
    expect(secret).toMatch(/^gpr_[0-9a-f]{48}$/);
    expect(applied.stdout).not.toContain(secret);
    if (typeof rendered.access_token === "string")
      expect(applied.stdout).not.toContain(rendered.access_token);

    // The team key works, and sees the instance deployed with the admin's session.
    const asKey = new GpurentalClient({ baseUrl: fb.url, token: secret });
    expect((await asKey.listInstances()).map((i) => i.id)).toEqual([instanceId]);

    const again = await tf.run(["plan", "-detailed-exitcode", ...vars]);
    expect({ code: again.code, stderr: again.stderr }).toEqual({ code: 0, stderr: "" });
    expect(again.stdout).toContain("No changes.");
    expect(outputs.market_now?.value).toEqual({ offers: 2, cheapest_price_per_hour_micro: 2_500_000 });

    // The market moves: a cheaper offer appears and the rented one sells out. The instance stays;
    // only the market_now output follows.
    const m = fb.createMachine({ disk_gb: 2000 });
    fb.createOffer({ machine_id: m.id, gpu_model: "RTX 4090", price_per_hour_micro: 1_500_000 });
    await control("PATCH", `/offers/${DEMO_IDS.offer}`, { free_units: 0 });
    const moved = await tf.run(["plan", "-detailed-exitcode", ...vars]);
    expect({ code: moved.code, stderr: moved.stderr }).toEqual({ code: 2, stderr: "" });
    expect(moved.stdout).toContain("Changes to Outputs:");
    expect(moved.stdout).not.toMatch(/gpurental_instance\.workstation (will|must)/);
    expect(moved.stdout).toContain("without changing any real infrastructure");
    expect(moved.stdout).toContain("cheapest_price_per_hour_micro = 2500000 -> 1500000");

    await tf.ok(["destroy", "-auto-approve", ...vars]);
    expect(fb.renderInstance(instanceId)?.status).toBe("destroyed");
    const admin = new GpurentalClient({ baseUrl: fb.url, token: creds.admin_session_token });
    expect(await admin.listApiKeys()).toEqual([]);
    expect(await admin.listInstances()).toEqual([]);
  });
});

describe("the README's HCL snippet", () => {
  it("deploys as written on the demo seed, plans no change, and destroys", async () => {
    const dir = join(tf.root, "readme");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "main.tf"), readmeHcl());
    creds = fb.seedDemo();
    const env = { GPURENTAL_TOKEN: creds.admin_session_token };
    const inDir = (...args: string[]) =>
      tf.spawn([`-chdir=${dir}`, args[0]!, "-no-color", ...args.slice(1)], env).result;
    const init = await inDir("init", "-input=false");
    expect({ code: init.code, stderr: init.stderr }).toEqual({ code: 0, stderr: "" });
    const applied = await inDir("apply", "-auto-approve", "-input=false");
    expect({ code: applied.code, stderr: applied.stderr }).toEqual({ code: 0, stderr: "" });
    const [instance] = fb.listInstances(creds.org_id);
    expect(instance).toMatchObject({
      status: "running",
      offer_id: DEMO_IDS.offer,
      template_id: DEMO_IDS.templateSsh,
    });
    expect(applied.stdout).toContain(`ssh_command = "ssh -p ${instance!.ssh_port} root@`);
    const again = await inDir("plan", "-detailed-exitcode", "-input=false");
    expect({ code: again.code, stderr: again.stderr }).toEqual({ code: 0, stderr: "" });
    const destroyed = await inDir("destroy", "-auto-approve", "-input=false");
    expect({ code: destroyed.code, stderr: destroyed.stderr }).toEqual({ code: 0, stderr: "" });
    expect(fb.listInstances(creds.org_id).every((i) => i.status === "destroyed")).toBe(true);
  });
});

describe("docs snippets", () => {
  const snippets: { name: string; file: string }[] = [];
  for (const kind of ["resources", "data-sources", "ephemeral-resources"]) {
    for (const type of readdirSync(join(SNIPPETS_DIR, kind))) {
      for (const file of readdirSync(join(SNIPPETS_DIR, kind, type)).filter((f) => f.endsWith(".tf"))) {
        snippets.push({ name: `${kind}/${type}/${file}`, file: join(SNIPPETS_DIR, kind, type, file) });
      }
    }
  }
  const dir = () => join(tf.root, "snippets");
  // The harness puts -no-color after the first argument, which must be -chdir here.
  const inDir = (...args: string[]) =>
    tf.spawn([`-chdir=${dir()}`, args[0]!, "-no-color", ...args.slice(1)]).result;

  beforeAll(async () => {
    mkdirSync(dir(), { recursive: true });
    copyFileSync(join(SNIPPETS_DIR, "provider", "provider.tf"), join(dir(), "provider.tf"));
    const init = await inDir("init");
    expect({ code: init.code, stderr: init.stderr }).toEqual({ code: 0, stderr: "" });
  });

  it("are formatted as terraform fmt formats them", () => {
    const out = execFileSync(tf.terraform, ["fmt", "-check", "-recursive", "-list=true", SNIPPETS_DIR], {
      env: tf.env,
    }).toString();
    expect(out).toBe("");
  });

  it.each(snippets.map((s) => [s.name, s.file]))(
    "%s is valid with the provider's schema",
    async (_name, file) => {
      const target = join(dir(), "snippet.tf");
      writeFileSync(target, readFileSync(file, "utf8"));
      try {
        const r = await inDir("validate");
        expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
      } finally {
        rmSync(target, { force: true });
      }
    },
  );
});
