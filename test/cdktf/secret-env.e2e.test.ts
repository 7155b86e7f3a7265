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
import { dirname, join } from "node:path";
import { build } from "esbuild";
import { installProvider } from "../../src/cli/provider/provider";
import { type DemoCredentials, type FakeBackend, startFakeBackend } from "../../src/fake-backend";
import { type ProcessResult, runProcess } from "../../src/testing/child-process";
import { version } from "../../src/version";
import { cdktfCliEnv } from "./cli-env";
import type { SecretAppSettings } from "./fixtures/secret-env-app";

// The CDKTF Instance's write-only secret env through `cdktf deploy` with the real terraform,
// against the in-process fake backend: the value, fed from an ephemeral variable, reaches the
// instance and is found in no file cdktf or terraform wrote (cdk.tf.json, the state, also as
// `terraform show -json` renders it), and a new version replaces the instance.
// Needs the built package (dist/).

jest.setTimeout(600_000);

const ROOT = join(__dirname, "..", "..");
const CDKTF = join(
  dirname(require.resolve("cdktf-cli/package.json", { paths: [ROOT] })),
  "bundle",
  "bin",
  "cdktf",
);
const FIRST = "cdktf-wo-first-3c9e1f0a";
const SECOND = "cdktf-wo-second-8d2b7e45";

let work: string;
let fake: FakeBackend;
let creds: DemoCredentials;
let env: NodeJS.ProcessEnv;

function cdktf(args: string[], settings: Partial<SecretAppSettings>, token: string): Promise<ProcessResult> {
  const full: SecretAppSettings = {
    statePath: join(work, "terraform.secrets.tfstate"),
    offerId: creds.offer_id,
    templateId: creds.template_id,
    version: 1,
    ...settings,
  };
  return runProcess(process.execPath, [CDKTF, ...args], {
    cwd: join(work, "app"),
    env: { ...env, GPURENTAL_SECRET_APP: JSON.stringify(full), TF_VAR_api_token: token },
  });
}

async function deploy(settings: Partial<SecretAppSettings>, token: string): Promise<string> {
  const outputs = join(work, "outputs.json");
  const r = await cdktf(
    ["deploy", "secrets", "--auto-approve", "--skip-provider-lock", "--outputs-file", outputs],
    settings,
    token,
  );
  if (r.code !== 0) throw new Error(`cdktf deploy exited ${r.code}\n${r.output}`);
  for (const secret of [FIRST, SECOND]) expect(r.output).not.toContain(secret);
  return (JSON.parse(readFileSync(outputs, "utf8")) as { secrets: { instance_id: string } }).secrets
    .instance_id;
}

/** Every file under the work folder but the provider mirror, with its path. */
function writtenFiles(): Array<[string, string]> {
  const files: Array<[string, string]> = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const p = join(dir, name);
      if (name === "mirror" || name === "node_modules") continue;
      const st = statSync(p, { throwIfNoEntry: false });
      if (st?.isDirectory()) walk(p);
      else if (st?.isFile()) files.push([p, readFileSync(p, "latin1")]);
    }
  };
  walk(work);
  return files;
}

async function terraformShow(args: string[], cwd: string): Promise<string> {
  const r = await runProcess(process.env.TERRAFORM_BINARY_NAME || "terraform", ["show", "-json", ...args], {
    cwd,
    env: { ...env, TF_VAR_api_token: FIRST },
  });
  if (r.code !== 0) throw new Error(`terraform show exited ${r.code}`);
  return r.stdout;
}

beforeAll(async () => {
  if (!existsSync(join(ROOT, "dist", "cli", "main.js"))) {
    throw new Error("the package is not built: run `npm run build` first");
  }
  work = mkdtempSync(join(tmpdir(), "gpurental-cdktf-secrets-"));
  fake = await startFakeBackend({ port: 0, seed: "demo", transitions: "immediate" });
  creds = fake.credentials!;
  const installed = installProvider({ dir: join(work, "mirror"), version });
  writeFileSync(join(work, "terraform.rc"), installed.cliConfig);
  mkdirSync(join(work, "app"));
  await build({
    entryPoints: [join(__dirname, "fixtures", "secret-env-app.ts")],
    outfile: join(work, "app", "app.js"),
    bundle: true,
    platform: "node",
    target: "node20",
    packages: "external",
    logLevel: "silent",
  });
  writeFileSync(
    join(work, "app", "cdktf.json"),
    JSON.stringify({
      language: "typescript",
      app: "node app.js",
      output: "cdktf.out",
      projectId: "gpurental-secrets-test",
      sendCrashReports: false,
    }),
  );
  env = cdktfCliEnv({
    HOME: join(work, "home"),
    TMPDIR: join(work, "tmp"),
    GPURENTAL_BASE_URL: fake.url,
    GPURENTAL_TOKEN: creds.admin_session_token,
    GPURENTAL_PROVIDER_CODE_CACHE_DIR: join(work, "code-cache"),
    GPURENTAL_PROVIDER_RESIDENT: "off",
    TF_CLI_CONFIG_FILE: join(work, "terraform.rc"),
    CDKTF_HOME: join(work, "cdktf-home"),
    NODE_PATH: join(ROOT, "node_modules"),
  });
  mkdirSync(env.HOME!, { recursive: true });
  mkdirSync(env.TMPDIR!, { recursive: true });
});

afterAll(async () => {
  await fake?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

test("the secret reaches the instance and no file cdktf or terraform wrote; a new version replaces it", async () => {
  const first = await deploy({ version: 1 }, FIRST);
  expect(fake.instance(first)?.env).toContainEqual({ key: "API_TOKEN", value: FIRST, secret: true });

  const stackDir = join(work, "app", "cdktf.out", "stacks", "secrets");
  const synthesized = readFileSync(join(stackDir, "cdk.tf.json"), "utf8");
  expect(JSON.parse(synthesized).resource.gpurental_instance.gpu.secret_env_wo).toEqual({
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a Terraform interpolation.
    API_TOKEN: "${var.api_token}",
  });
  for (const [path, text] of writtenFiles()) {
    if (text.includes(FIRST)) throw new Error(`${path} holds the secret`);
  }
  // cdktf removes the plan it saved for the apply; the state, as terraform renders it:
  expect(await terraformShow([join(work, "terraform.secrets.tfstate")], stackDir)).not.toContain(FIRST);

  // New value, same version: nothing happens. New version: a new instance with the new value.
  expect(await deploy({ version: 1 }, SECOND)).toBe(first);
  expect(fake.instance(first)?.env).toContainEqual({ key: "API_TOKEN", value: FIRST, secret: true });
  const second = await deploy({ version: 2 }, SECOND);
  expect(second).not.toBe(first);
  expect(fake.instance(first)?.status).toBe("destroyed");
  expect(fake.instance(second)?.env).toContainEqual({ key: "API_TOKEN", value: SECOND, secret: true });
  for (const [path, text] of writtenFiles()) {
    if (text.includes(FIRST) || text.includes(SECOND)) throw new Error(`${path} holds a secret`);
  }

  const destroyed = await cdktf(
    ["destroy", "secrets", "--auto-approve", "--skip-provider-lock"],
    { version: 2 },
    SECOND,
  );
  expect({ code: destroyed.code }).toEqual({ code: 0 });
  expect(fake.instance(second)?.status).toBe("destroyed");
});
