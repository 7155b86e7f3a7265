import { createHash } from "node:crypto";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CDKTN_MIN_NODE, nodeTooOld } from "../../src/cli/cdk";
import { terraformPlatform } from "../../src/cli/provider/provider";
import { type FakeBackend, startFakeBackend } from "../../src/fake-backend";
import { type ProcessResult, runProcess } from "../../src/testing/child-process";
import { packageName, version } from "../../src/version";
import { findTerraform } from "../e2e/harness";
import { olderNode } from "./old-node";

// The npm package as a CDK user gets it: `npm pack` in this repository, then a new project outside
// it that installs the tarball offline from the local npm cache (with a lock file naming the same
// dependency versions as this repository's, which `npm ci` put in the cache), imports the
// constructs and bindings from it, and runs `npx --no -- gpurental ...` from its node_modules.

const ROOT = join(__dirname, "..", "..");
const TARBALL = `gpurental-gpurental-${version}.tgz`;

let root: string;
let project: string;
let backend: FakeBackend;
let tarball: { files: string[]; size: number; unpackedSize: number };
let installOutput: string;

/** Runs a command without blocking this process (the fake backend answers from it). */
function run(
  cmd: string,
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<ProcessResult> {
  return runProcess(cmd, args, { cwd, env });
}

async function ok(cmd: string, args: string[], cwd: string, env?: NodeJS.ProcessEnv): Promise<ProcessResult> {
  const r = await run(cmd, args, cwd, env);
  if (r.code !== 0) throw new Error(`${cmd} ${args.join(" ")} exited ${r.code}:\n${r.stdout}\n${r.stderr}`);
  return r;
}

interface LockEntry {
  version?: string;
  resolved?: string;
  integrity?: string;
  dev?: boolean;
  optional?: boolean;
  devOptional?: boolean;
  peer?: boolean;
  link?: boolean;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  [key: string]: unknown;
}

/**
 * The entries of this repository's lock file that the given packages need (Node's lookup through
 * the nested node_modules folders), as another project's lock file would hold them.
 */
function lockClosure(packages: Record<string, LockEntry>, roots: string[]): Record<string, LockEntry> {
  const out: Record<string, LockEntry> = {};
  const find = (from: string, name: string): string | undefined => {
    for (let dir = from; ; dir = dir.replace(/\/?node_modules\/(@[^/]+\/)?[^/]+$/, "")) {
      const key = dir ? `${dir}/node_modules/${name}` : `node_modules/${name}`;
      if (packages[key]) return key;
      if (!dir) return undefined;
    }
  };
  const visit = (key: string) => {
    if (out[key]) return;
    const { dev, devOptional, peer, ...entry } = packages[key] as LockEntry;
    out[key] = entry;
    const optionalPeers = Object.entries(entry.peerDependenciesMeta ?? {})
      .filter(([, m]) => m.optional)
      .map(([n]) => n);
    const names = [
      ...Object.keys(entry.dependencies ?? {}),
      ...Object.keys(entry.optionalDependencies ?? {}),
      ...Object.keys(entry.peerDependencies ?? {}).filter((n) => !optionalPeers.includes(n)),
    ];
    for (const name of names) {
      const dep = find(key, name);
      if (dep) visit(dep);
    }
  };
  for (const name of roots) {
    const key = find("", name);
    if (!key) throw new Error(`${name} is not in the lock file`);
    visit(key);
  }
  return out;
}

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "gpurental-package-"));
  const packDir = join(root, "pack");
  mkdirSync(packDir);
  // dist/ was built by the run's global setup; `npm pack` ships what it holds.
  const packed = await ok(
    "npm",
    ["pack", "--json", "--ignore-scripts", "--pack-destination", packDir],
    ROOT,
    projectEnv(),
  );
  const info = JSON.parse(packed.stdout)[0] as {
    files: { path: string }[];
    size: number;
    unpackedSize: number;
    filename: string;
  };
  expect(info.filename).toBe(TARBALL);
  tarball = { files: info.files.map((f) => f.path), size: info.size, unpackedSize: info.unpackedSize };

  const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
    dependencies: Record<string, string>;
    peerDependencies: Record<string, string>;
    peerDependenciesMeta: Record<string, { optional?: boolean }>;
    bin: Record<string, string>;
    engines: Record<string, string>;
    license: string;
  };
  const repoLock = JSON.parse(readFileSync(join(ROOT, "package-lock.json"), "utf8")) as {
    packages: Record<string, LockEntry>;
  };
  project = join(root, "project");
  mkdirSync(project);
  const spec = `file:../pack/${TARBALL}`;
  // A CDK for Terraform project: cdktf and constructs (the package's optional peers) of its own,
  // at the versions this repository's lock file holds.
  const cdkDeps = ["cdktf", "constructs"];
  const locked = (name: string) => repoLock.packages[`node_modules/${name}`]?.version as string;
  const manifest = {
    name: "gpu-infra",
    version: "1.0.0",
    private: true,
    dependencies: { [packageName]: spec, ...Object.fromEntries(cdkDeps.map((d) => [d, locked(d)])) },
  };
  const data = readFileSync(join(packDir, TARBALL));
  const lock = {
    name: manifest.name,
    version: manifest.version,
    lockfileVersion: 3,
    requires: true,
    packages: {
      "": { name: manifest.name, version: manifest.version, dependencies: manifest.dependencies },
      [`node_modules/${packageName}`]: {
        version,
        resolved: spec,
        integrity: `sha512-${createHash("sha512").update(data).digest("base64")}`,
        license: pkg.license,
        dependencies: pkg.dependencies,
        peerDependencies: pkg.peerDependencies,
        peerDependenciesMeta: pkg.peerDependenciesMeta,
        bin: pkg.bin,
        engines: pkg.engines,
      },
      ...lockClosure(repoLock.packages, [...Object.keys(pkg.dependencies), ...cdkDeps]),
    },
  };
  writeFileSync(join(project, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
  writeFileSync(join(project, "package-lock.json"), `${JSON.stringify(lock, null, 2)}\n`);
  const install = await ok("npm", ["ci", "--offline", "--no-audit", "--no-fund"], project, projectEnv());
  installOutput = install.stdout + install.stderr;
  backend = await startFakeBackend({ port: 0, seed: "demo", transitions: "immediate" });
}, 180_000);

afterAll(async () => {
  await backend?.close();
  if (root) rmSync(root, { recursive: true, force: true });
});

/** The environment of commands run in the project: its own HOME and temp dir, npm offline. */
function projectEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const home = join(root, "home");
  const tmp = join(root, "tmp");
  mkdirSync(home, { recursive: true });
  mkdirSync(tmp, { recursive: true });
  return {
    PATH: process.env.PATH,
    HOME: home,
    TMPDIR: tmp,
    // npm's cache stays the user's (where `npm ci` put the packages); nothing is fetched.
    npm_config_cache: process.env.npm_config_cache ?? join(process.env.HOME ?? "", ".npm"),
    npm_config_offline: "true",
    npm_config_update_notifier: "false",
    CHECKPOINT_DISABLE: "1",
    TF_IN_AUTOMATION: "1",
    GPURENTAL_PROVIDER_RESIDENT: "off",
    TERRAFORM_BINARY_NAME: process.env.TERRAFORM_BINARY_NAME,
    ...extra,
  };
}

test("the tarball holds what a user runs and imports: dist/ without maps and tests, bin/, the HCL example, the README", () => {
  const outside = tarball.files.filter(
    (f) => !/^(dist\/|bin\/|examples\/hcl\/[^/]+\.tf$)/.test(f) && !["package.json", "README.md"].includes(f),
  );
  expect(outside).toEqual([]);
  expect(tarball.files.filter((f) => /\.map$|\.test\.|\.tsbuildinfo$/.test(f))).toEqual([]);
  expect(tarball.files).toEqual(
    expect.arrayContaining([
      "bin/gpurental",
      "dist/index.js",
      "dist/index.d.ts",
      "dist/demo/cdktf-app.js",
      "dist/provider-bundle/provider.js",
      "dist/provider-bundle/provider-schema.pb",
      "examples/hcl/main.tf",
      "examples/hcl/variables.tf",
      "examples/hcl/outputs.tf",
    ]),
  );
  // The npm provider's launchers (src/executable/compact/node-launcher.c), where the build had a C
  // compiler for them, as on linux here: static, so about 0.8 MB each, most of it glibc.
  const launchers = tarball.files.filter((f) => f.startsWith("dist/provider-bundle/node-launcher-"));
  if (process.platform === "linux" && ["x64", "arm64"].includes(process.arch))
    expect(launchers).toContain(`dist/provider-bundle/node-launcher-${terraformPlatform()}`);
  // 1.0 MB packed, 5.2 MB unpacked in 0.1.0 without launchers; a pack without the list gave 9.1 MB.
  expect(tarball.unpackedSize).toBeLessThan(6_000_000 + launchers.length * 900_000);
});

test("it installs offline in a new project with no build and no install-script warning", () => {
  expect(installOutput).not.toMatch(/install-scripts|prepare|npm run build|No \.npmignore/);
  const installed = join(project, "node_modules", ...packageName.split("/"));
  expect(readdirSync(installed).sort()).toEqual(["README.md", "bin", "dist", "examples", "package.json"]);
  expect(existsSync(join(project, "node_modules", "protobufjs"))).toBe(false);
});

test("constructs and bindings import from it, and an app synthesizes", async () => {
  writeFileSync(
    join(project, "synth.js"),
    `const { App, TerraformStack } = require("cdktf");
const { GpurentalProvider, Instance } = require("${packageName}");
const { Instance: L1Instance } = require("${packageName}/providers/instance");
const app = new App({ outdir: "cdktf.out" });
const stack = new TerraformStack(app, "gpu");
new GpurentalProvider(stack, "gpurental");
new Instance(stack, "gpu", { offer: { gpuModel: "RTX 4090" }, templateId: "00000000-0000-4000-8000-000000000041", diskGb: 50 });
console.log(typeof L1Instance);
app.synth();
`,
  );
  const r = await ok(process.execPath, ["synth.js"], project, projectEnv());
  expect(r.stdout.trim()).toBe("function");
  const synthesized = JSON.parse(
    readFileSync(join(project, "cdktf.out", "stacks", "gpu", "cdk.tf.json"), "utf8"),
  );
  expect(Object.keys(synthesized.resource)).toEqual(["gpurental_instance"]);
  expect(synthesized.terraform.required_providers.gpurental.source).toBe(
    "registry.terraform.io/gpurental/gpurental",
  );
});

test("`npx --no -- gpurental provider install`, `plan-report` and `strays` work from the project's node_modules", async () => {
  const terraform = findTerraform();
  const mirror = join(root, "mirror");
  const install = await ok(
    "npx",
    ["--no", "--", "gpurental", "provider", "install", "--dir", mirror],
    project,
    projectEnv(),
  );
  expect(install.stdout).toContain(`Installed terraform-provider-gpurental ${version}`);
  const work = join(root, "work");
  mkdirSync(work);
  writeFileSync(
    join(root, "cli.tfrc"),
    install.stdout.slice(install.stdout.indexOf("provider_installation")),
  );
  const c = backend.credentials!;
  writeFileSync(
    join(work, "main.tf"),
    `terraform {
  required_providers {
    gpurental = { source = "gpurental/gpurental" }
  }
}

resource "gpurental_instance" "gpu" {
  offer_id    = "${c.offer_id}"
  template_id = "${c.template_id}"
  disk_gb     = 50
}
`,
  );
  const env = projectEnv({
    TF_CLI_CONFIG_FILE: join(root, "cli.tfrc"),
    GPURENTAL_BASE_URL: backend.url,
    GPURENTAL_TOKEN: c.admin_session_token,
    GPURENTAL_PROVIDER_CODE_CACHE_DIR: join(root, "code-cache"),
  });
  await ok(terraform, ["init", "-no-color"], work, env);
  await ok(terraform, ["plan", "-no-color", "-out=plan.bin"], work, env);
  const npx = join(project, "node_modules", ".bin", "gpurental");
  expect(existsSync(npx)).toBe(true);
  // From the project, where its node_modules hold the command; elsewhere `npx --no` refuses to
  // fetch a package of that name from the registry.
  const report = await ok(
    "npx",
    ["--no", "--", "gpurental", "plan-report", join(work, "plan.bin")],
    project,
    env,
  );
  expect(report.stdout).toMatch(/RTX 4090|create/i);
  const strays = await run("npx", ["--no", "--", "gpurental", "strays", work, "--json"], project, env);
  expect([0, 2]).toContain(strays.code);
  expect(() => JSON.parse(strays.stdout)).not.toThrow();
}, 120_000);

test("on a Node.js too old for cdktn-cli, `demo --cdk cdktn` says so in one line before starting anything", async () => {
  const old = olderNode(CDKTN_MIN_NODE);
  if (!old) {
    console.log("no Node.js older than 22.19 on this machine: the refusal is not run here");
    return;
  }
  const bin = join(project, "node_modules", ".bin", "gpurental");
  const r = await run(old.file, [bin, "demo", "--cdk", "cdktn"], project, projectEnv());
  expect({ code: r.code, out: r.stdout, err: r.stderr }).toEqual({
    code: 1,
    out: "",
    err: `gpurental demo: ${nodeTooOld("CDK Terrain (cdktn-cli 0.24)", CDKTN_MIN_NODE, old.version)}, or name one in GPURENTAL_CDKTN_NODE\n`,
  });
  expect(readdirSync(join(root, "tmp")).filter((f) => f.startsWith("gpurental-demo-"))).toEqual([]);
});

test("`npx --no -- gpurental --help` prints the command's help, as the README writes it", async () => {
  const r = await ok("npx", ["--no", "--", "gpurental", "--help"], project, projectEnv());
  expect(r.stdout).toContain("Usage: gpurental [options] [command]");
});

test("`npx --no -- gpurental demo` deploys and destroys the example app with the project's cdktf-cli", async () => {
  // A CDK project has cdktf-cli as a dev dependency (npm install -D cdktf-cli@0.21.0); here it is
  // linked from this repository's node_modules, where `npm ci` put the same version.
  symlinkSync(join(ROOT, "node_modules", "cdktf-cli"), join(project, "node_modules", "cdktf-cli"));
  const r = await run("npx", ["--no", "--", "gpurental", "demo"], project, projectEnv());
  const pty = join(ROOT, "node_modules", "@cdktf", "node-pty-prebuilt-multiarch");
  const abi = process.versions.modules;
  if (!existsSync(join(pty, "prebuilds", `${process.platform}-${process.arch}`, `node.abi${abi}.node`))) {
    // cdktf-cli 0.21 cannot run on this Node.js (24 and later): the demo says so before it starts.
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`cdktf-cli cannot run on Node.js ${process.version}`);
    expect(r.stderr).toContain("or with CDK Terrain: gpurental demo --cdk cdktn");
    return;
  }
  if (r.code !== 0) throw new Error(`the demo exited ${r.code}:\n${r.stdout}\n${r.stderr}`);
  expect(r.stdout).toMatch(/destroy/i);
}, 400_000);
