import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { build } from "esbuild";
import type { GpuWorkstationStackProps } from "../../examples/cdktn-app/stack";
import { cdktfCommand } from "../../src/cli/cdk";
import { runDemo } from "../../src/cli/demo/demo";
import { installProvider } from "../../src/cli/provider/provider";
import { type DemoCredentials, type FakeBackend, startFakeBackend } from "../../src/fake-backend";
import { type ProcessResult, runProcess } from "../../src/testing/child-process";
import { version } from "../../src/version";
import { cdktfCliEnv } from "../cdktf/cli-env";
import { findPostgres, postgresRequired, startPostgres } from "../e2e/postgres";
import { cdktnCli } from "./cdktn-cli";
import type { CdktnTestAppSettings } from "./fixtures/app";

// The example CDK Terrain app (examples/cdktn-app, plus a lookup by id) through the real cdktn-cli
// and terraform against the in-process fake backend, offline: synth-time validation, diff, one
// deploy checked several ways (outputs, sensitive ones too; the write-only secret env; the lookup;
// ephemeral resources: a key for the run behind a provider alias, an instance's access secrets;
// plan-report and strays reading the project), an in-place stop, and destroy; the demo on cdktn; and
// the state in PostgreSQL (skipped without the server programs, unless GPURENTAL_REQUIRE_POSTGRES);
// and a migration: the cdktf example app deployed with cdktf, then with its imports changed, under
// cdktn, plans no change.
// Needs the built package (dist/).

jest.setTimeout(600_000);

const ROOT = join(__dirname, "..", "..");
const STACK = "gpu-workstation";
const SECRET = "cdktn-hf-token-5b0c91d7e2";

let work: string;
let app: string;
let fake: FakeBackend;
let creds: DemoCredentials;
let env: NodeJS.ProcessEnv;

/** Runs a command in the app folder (or `cwd`) with the suite's environment and `extraEnv`. */
function spawnCollect(
  command: string,
  args: string[],
  extraEnv: NodeJS.ProcessEnv,
  cwd = app,
): Promise<ProcessResult> {
  return runProcess(command, args, { cwd, env: { ...env, ...extraEnv } });
}

function cdktn(
  args: string[],
  props: Partial<GpuWorkstationStackProps> = {},
  extra: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<ProcessResult> {
  const settings: CdktnTestAppSettings = props.postgres
    ? { props }
    : {
        props: {
          statePath: join(work, "terraform.gpu-workstation.tfstate"),
          secretEnv: ["HF_TOKEN"],
          ...props,
        },
        ephemeral: { templateId: creds.template_id },
      };
  const cli = cdktnCli(ROOT, env);
  return spawnCollect(
    cli.command,
    [...cli.argv, ...args],
    {
      PATH: cli.env.PATH,
      GPURENTAL_TEST_APP: JSON.stringify(settings),
      TF_VAR_hf_token: SECRET,
      ...extra.env,
    },
    extra.cwd,
  );
}

function gpurental(args: string[], extraEnv: NodeJS.ProcessEnv = {}): Promise<ProcessResult> {
  return spawnCollect(process.execPath, [join(ROOT, "bin", "gpurental"), ...args], extraEnv);
}

async function deploy(props: Partial<GpuWorkstationStackProps> = {}): Promise<Record<string, unknown>> {
  const outputs = join(work, "outputs.json");
  const r = await cdktn(
    [
      "deploy",
      STACK,
      "--auto-approve",
      "--skip-provider-lock",
      "--outputs-file",
      outputs,
      "--outputs-file-include-sensitive-outputs",
    ],
    props,
  );
  if (r.code !== 0) throw new Error(`cdktn deploy exited ${r.code}\n${r.output}`);
  expect(r.output).not.toContain(SECRET);
  return (JSON.parse(readFileSync(outputs, "utf8")) as Record<string, Record<string, unknown>>)[STACK]!;
}

/** Every file the run wrote (but the provider mirror and the outputs file, which holds the sensitive outputs asked for). */
function writtenFiles(): Array<[string, string]> {
  const files: Array<[string, string]> = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const p = join(dir, name);
      if (name === "mirror" || name === "node_modules" || name === "outputs.json") continue;
      const st = statSync(p, { throwIfNoEntry: false });
      if (st?.isDirectory()) walk(p);
      else if (st?.isFile()) files.push([p, readFileSync(p, "latin1")]);
    }
  };
  walk(work);
  return files;
}

beforeAll(async () => {
  if (!existsSync(join(ROOT, "dist", "cdktn", "index.js"))) {
    throw new Error("the package is not built: run `npm run build` first");
  }
  work = mkdtempSync(join(tmpdir(), "gpurental-cdktn-"));
  app = join(work, "app");
  fake = await startFakeBackend({ port: 0, seed: "demo", transitions: "immediate" });
  creds = fake.credentials!;
  const installed = installProvider({ dir: join(work, "mirror"), version });
  writeFileSync(join(work, "terraform.rc"), installed.cliConfig);
  mkdirSync(app);
  await build({
    entryPoints: [join(__dirname, "fixtures", "app.ts")],
    outfile: join(app, "app.js"),
    bundle: true,
    platform: "node",
    target: "node20",
    packages: "external",
    logLevel: "silent",
  });
  writeFileSync(
    join(app, "cdktf.json"),
    JSON.stringify({
      language: "typescript",
      app: "node app.js",
      output: "cdktf.out",
      projectId: "gpurental-cdktn-test",
      sendCrashReports: false,
      // cdktn checks features against the Terraform versions a project declares; write-only
      // arguments (secretEnvWo) need 1.11, and without a declaration every release since 1.5.7 counts.
      targetVersions: { terraform: ">=1.11.0" },
    }),
  );
  env = cdktfCliEnv({
    HOME: join(work, "home"),
    TMPDIR: join(work, "tmp"),
    GPURENTAL_BASE_URL: fake.url,
    GPURENTAL_TOKEN: creds.admin_session_token,
    GPURENTAL_ORG_ID: creds.org_id,
    GPURENTAL_PROVIDER_CODE_CACHE_DIR: join(work, "code-cache"),
    TF_CLI_CONFIG_FILE: join(work, "terraform.rc"),
    CDKTF_HOME: join(work, "cdk-home"),
    // The bundled app requires cdktn, constructs and zod; with no cdktf among what it loads.
    NODE_PATH: join(ROOT, "node_modules"),
  });
  mkdirSync(env.HOME!, { recursive: true });
  mkdirSync(env.TMPDIR!, { recursive: true });
});

afterAll(async () => {
  await fake?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

test("synth fails on the constructs' own checks, naming the construct, the prop and the value", async () => {
  const r = await cdktn(["synth"], { diskGb: 5, sshKeyId: "not-an-id" });
  expect(r.code).not.toBe(0);
  expect(r.output).toContain("diskGb must be a whole number from 10 to 20000 GB, got 5");
  expect(r.output).toContain("gpu-workstation/workstation");
  expect(r.output).toContain("sshKeyId");
});

test("diff, deploy, plan-report and strays, an in-place stop and destroy through cdktn-cli", async () => {
  const diff = await cdktn(["diff", STACK, "--skip-provider-lock"]);
  expect({ code: diff.code, output: diff.code === 0 ? "" : diff.output }).toEqual({ code: 0, output: "" });
  expect(diff.output).toMatch(/Plan: 3 to add/);
  const stackDir = join(app, "cdktf.out", "stacks", STACK);
  // The synthesized stack is cdktn's (its metadata), and its secret is a variable reference only.
  const synthesized = JSON.parse(readFileSync(join(stackDir, "cdk.tf.json"), "utf8"));
  expect(synthesized["//"].metadata.version).toMatch(/^0\.24\./);
  expect(synthesized.resource.gpurental_instance.workstation.secret_env_wo).toEqual({
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a Terraform interpolation.
    HF_TOKEN: "${var.hf_token}",
  });
  expect(synthesized.variable.hf_token).toMatchObject({ ephemeral: true, sensitive: true });

  // plan-report reads the plan cdktn diff saved in the project.
  const report = await gpurental(["plan-report", app, "--json"]);
  expect({ code: report.code, output: report.code === 0 ? "" : report.output }).toEqual({
    code: 0,
    output: "",
  });
  const parsed = JSON.parse(report.output) as { cdktf_stack: string; instances: Array<{ action: string }> };
  expect(parsed.cdktf_stack).toBe(STACK);
  expect(parsed.instances.map((i) => i.action)).toEqual(["create", "create"]);

  const outputs = await deploy();
  const id = outputs.instance_id as string;
  expect(fake.instance(id)?.status).toBe("running");
  expect(outputs).toMatchObject({
    instance_status: "running",
    offer_gpu_model: "RTX 4090",
    looked_up_status: "running",
    looked_up_ssh: outputs.ssh_command,
  });
  expect(outputs.ci_key_secret).toMatch(/^gpr_/);
  expect(outputs.access_token).toEqual(expect.any(String));
  expect(fake.instance(id)?.env).toContainEqual({ key: "HF_TOKEN", value: SECRET, secret: true });
  // cdktn's ephemeral resources: the run's key deployed the dashboard and was revoked when the run
  // ended; the dashboard got the workstation's access token through its write-only env.
  const dashboard = fake.instance(outputs.dashboard_id as string)!;
  expect(dashboard.deployed_via_api_key).toMatchObject({ name: "cdktn-run", kind: "team" });
  const runKeys = Object.values(fake.state().api_keys).filter((k) => k.name === "cdktn-run");
  expect(runKeys.length).toBeGreaterThan(0);
  expect(runKeys.filter((k) => k.revoked_at === null)).toEqual([]);
  const accessToken = fake.instance(id)!.access_token!;
  expect(dashboard.env).toContainEqual({ key: "NOTEBOOK_TOKEN", value: accessToken, secret: true });
  expect(synthesized.ephemeral).toEqual({
    gpurental_api_key: { run_key: expect.objectContaining({ name: "cdktn-run", kind: "team" }) },
    gpurental_instance_access: { workstation_access: expect.any(Object) },
  });
  for (const [path, text] of writtenFiles()) {
    if (text.includes(SECRET)) throw new Error(`${path} holds the secret`);
    if (text.includes(outputs.ci_key_secret as string) && !path.endsWith(".tfstate")) {
      throw new Error(`${path} holds the API key's secret`);
    }
  }

  // strays reads the cdktn project's state: nothing of the organization is outside it but what the
  // demo seed holds; the stack's instance and key are not strays.
  const strays = await gpurental(["strays", app, "--json"]);
  expect([0, 2]).toContain(strays.code);
  const found = JSON.parse(strays.output) as {
    instances: Array<{ id: string }>;
    api_keys: Array<{ id: string }>;
  };
  expect(found.instances.map((i) => i.id)).not.toContain(id);
  const keyId = (
    JSON.parse(readFileSync(join(work, "terraform.gpu-workstation.tfstate"), "utf8")) as {
      resources: Array<{ type: string; instances: Array<{ attributes: { id: string } }> }>;
    }
  ).resources.find((r) => r.type === "gpurental_api_key")!.instances[0]!.attributes.id;
  expect(found.api_keys.map((k) => k.id)).not.toContain(keyId);

  // Stopping is an in-place change: the same instance, stopped.
  const stopped = await deploy({ desiredStatus: "stopped" });
  expect(stopped.instance_id).toBe(id);
  expect(stopped.instance_status).toBe("stopped");
  expect(fake.instance(id)?.status).toBe("stopped");

  const destroyed = await cdktn(["destroy", STACK, "--auto-approve", "--skip-provider-lock"], {
    desiredStatus: "stopped",
  });
  expect({ code: destroyed.code, output: destroyed.code === 0 ? "" : destroyed.output }).toEqual({
    code: 0,
    output: "",
  });
  expect(fake.instance(id)?.status).toBe("destroyed");
  expect(fake.instance(outputs.dashboard_id as string)?.status).toBe("destroyed");
  expect(
    Object.values(fake.state().api_keys).filter((k) => k.revoked_at === null && k.name === "cdktn-run"),
  ).toEqual([]);
});

test("gpurental demo --cdk cdktn deploys and destroys the example app with cdktn-cli", async () => {
  const chunks: string[] = [];
  const out = new PassThrough();
  out.on("data", (c: Buffer) => chunks.push(c.toString("utf8")));
  let live = -1;
  const result = await runDemo({
    cdk: "cdktn",
    tempDir: join(work, "tmp"),
    transitions: "immediate",
    out,
    onDeployed: ({ backend, orgId }) => {
      live = backend.listInstances(orgId).filter((i) => i.status === "running").length;
    },
  });
  const printed = chunks.join("");
  expect(printed).toContain("bundling the example app (examples/cdktn-app)");
  expect(printed).toContain("deploying with cdktn and terraform");
  expect(result.outputs).toMatchObject({ instance_status: "running", offer_gpu_model: "RTX 4090" });
  expect(result.outputs).not.toHaveProperty("ci_key_secret");
  expect(live).toBeGreaterThan(0);
  expect({ instances: result.liveInstancesAtEnd, keys: result.liveApiKeysAtEnd }).toEqual({
    instances: 0,
    keys: 0,
  });
});

const postgres = findPostgres();
if (postgres.missing && !postgresRequired()) {
  process.stderr.write(`test/cdktn/cdktn.e2e.test.ts: the PostgreSQL test skipped: ${postgres.missing}\n`);
}
const withPostgres = postgres.binDir || postgresRequired() ? test : test.skip;

withPostgres("the state in PostgreSQL: deploy, strays through the pg backend, destroy", async () => {
  const server = await startPostgres(postgres as { binDir: string });
  try {
    const dir = join(work, "app-pg");
    mkdirSync(dir);
    for (const f of ["app.js", "cdktf.json"]) writeFileSync(join(dir, f), readFileSync(join(app, f)));
    const pgEnv = { PG_CONN_STR: server.connStr() };
    const props = { postgres: { schemaName: "cdktn_workstation" } };
    const deployed = await cdktn(["deploy", STACK, "--auto-approve", "--skip-provider-lock"], props, {
      cwd: dir,
      env: pgEnv,
    });
    expect({ code: deployed.code, output: deployed.code === 0 ? "" : deployed.output }).toEqual({
      code: 0,
      output: "",
    });
    const synthesized = JSON.parse(
      readFileSync(join(dir, "cdktf.out", "stacks", STACK, "cdk.tf.json"), "utf8"),
    );
    expect(synthesized.terraform.backend).toEqual({ pg: { schema_name: "cdktn_workstation" } });
    expect(JSON.stringify(synthesized)).not.toContain(server.connStr());
    expect(await server.query("select name from cdktn_workstation.states")).toBe("default");
    const state = JSON.parse(await server.query("select data from cdktn_workstation.states")) as {
      resources: Array<{ type: string; instances: Array<{ attributes: { id: string } }> }>;
    };
    const id = state.resources.find((r) => r.type === "gpurental_instance")!.instances[0]!.attributes.id;
    expect(fake.instance(id)?.status).toBe("running");

    const strays = await gpurental(["strays", dir, "--json"], pgEnv);
    expect([0, 2]).toContain(strays.code);
    const found = JSON.parse(strays.output) as { instances: Array<{ id: string }> };
    expect(found.instances.map((i) => i.id)).not.toContain(id);

    const destroyed = await cdktn(["destroy", STACK, "--auto-approve", "--skip-provider-lock"], props, {
      cwd: dir,
      env: pgEnv,
    });
    expect({ code: destroyed.code, output: destroyed.code === 0 ? "" : destroyed.output }).toEqual({
      code: 0,
      output: "",
    });
    expect(fake.instance(id)?.status).toBe("destroyed");
  } finally {
    await server.stop();
  }
});

test("from cdktf to cdktn: the cdktf example app deployed with cdktf, its imports changed, plans no change", async () => {
  const dir = join(work, "app-migrate");
  mkdirSync(dir);
  const entry = join(ROOT, "examples", "cdktf-app", "main.ts");
  const bundle = (outfile: string, cdk: "cdktf" | "cdktn") =>
    build({
      entryPoints: [entry],
      outfile,
      bundle: true,
      platform: "node",
      target: "node20",
      packages: "external",
      logLevel: "silent",
      // The only change a migration makes: "cdktf" becomes "cdktn", the package root its cdktn entry.
      ...(cdk === "cdktn" ? { alias: { cdktf: "cdktn" } } : {}),
      plugins: [
        {
          name: "package-entry",
          setup(b) {
            b.onResolve({ filter: /^\.\.\/\.\.\/src$/ }, () => ({
              path: join(ROOT, "src", ...(cdk === "cdktn" ? ["cdktn", "index.ts"] : ["index.ts"])),
            }));
          },
        },
      ],
    });
  await bundle(join(dir, "app.js"), "cdktf");
  writeFileSync(
    join(dir, "cdktf.json"),
    JSON.stringify({
      language: "typescript",
      app: "node app.js",
      output: "cdktf.out",
      sendCrashReports: false,
    }),
  );
  const stateEnv = { GPURENTAL_CDKTF_STATE: join(work, "terraform.migrated.tfstate") };
  const cdktfCli = cdktfCommand(ROOT);
  const deployed = await spawnCollect(
    cdktfCli.command,
    [...cdktfCli.argv, "deploy", "gpu-workstation", "--auto-approve", "--skip-provider-lock"],
    stateEnv,
    dir,
  );
  expect({ code: deployed.code, output: deployed.code === 0 ? "" : deployed.output }).toEqual({
    code: 0,
    output: "",
  });

  await bundle(join(dir, "app.js"), "cdktn");
  expect(readFileSync(join(dir, "app.js"), "utf8")).not.toMatch(/require\("cdktf"\)/);
  const diff = await cdktn(
    ["diff", "gpu-workstation", "--skip-provider-lock"],
    {},
    { cwd: dir, env: stateEnv },
  );
  expect({ code: diff.code, output: diff.code === 0 ? "" : diff.output }).toEqual({ code: 0, output: "" });
  expect(diff.output).toContain("No changes.");
  const deployedHere = () =>
    fake
      .listInstances(creds.org_id)
      .filter((i) => i.label === "cdktf-workstation" && i.status !== "destroyed");
  expect(deployedHere()).toHaveLength(1);

  const destroyed = await cdktn(
    ["destroy", "gpu-workstation", "--auto-approve", "--skip-provider-lock"],
    {},
    {
      cwd: dir,
      env: stateEnv,
    },
  );
  expect({ code: destroyed.code, output: destroyed.code === 0 ? "" : destroyed.output }).toEqual({
    code: 0,
    output: "",
  });
  expect(deployedHere()).toEqual([]);
});
