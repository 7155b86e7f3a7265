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

    await tf.ok(["destroy", "-auto-approve", ...vars]);
    expect(fb.renderInstance(instanceId)?.status).toBe("destroyed");
    const admin = new GpurentalClient({ baseUrl: fb.url, token: creds.admin_session_token });
    expect(await admin.listApiKeys()).toEqual([]);
    expect(await admin.listInstances()).toEqual([]);
  });
});

describe("docs snippets", () => {
  const snippets: { name: string; file: string }[] = [];
  for (const kind of ["resources", "data-sources"]) {
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
