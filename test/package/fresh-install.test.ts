import { execFile } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { promisify } from "node:util";

// A new project of each CDK installs this package with npm, offline from the npm cache, and gets
// only its own CDK: cdktf, cdktn and constructs are optional peer dependencies. Each project then
// synthesizes a stack with ApiKey and Instance through its own entry. The package is packed from a
// staging copy of package.json and dist/ (the built package), so what `files` ships is not judged.

jest.setTimeout(300_000);

const run = promisify(execFile);
const ROOT = join(__dirname, "..", "..");
const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
  name: string;
  devDependencies: Record<string, string>;
};
/** The package's name, whatever it is published as. */
const NAME = pkg.name;

let work: string;
let tarball: string;

beforeAll(async () => {
  if (!existsSync(join(ROOT, "dist", "cdktn", "index.js"))) {
    throw new Error("the package is not built: run `npm run build` first");
  }
  work = mkdtempSync(join(tmpdir(), "gpurental-fresh-install-"));
  const stage = join(work, "stage");
  mkdirSync(stage);
  mkdirSync(join(work, "tmp"));
  const manifest = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as Record<string, unknown>;
  // The staged package is its runtime only: no dev tools, no scripts, no files beyond dist/.
  for (const key of ["devDependencies", "scripts", "bin", "files", "allowScripts", "overrides"])
    delete manifest[key];
  writeFileSync(join(stage, "package.json"), JSON.stringify(manifest, null, 2));
  cpSync(join(ROOT, "dist"), join(stage, "dist"), { recursive: true });
  const { stdout } = await run("npm", ["pack", "--ignore-scripts", "--silent", "--pack-destination", work], {
    cwd: stage,
    env: npmEnv(),
  });
  tarball = join(work, stdout.trim().split("\n").pop()!);
});

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

function npmEnv(): NodeJS.ProcessEnv {
  return {
    ...process.env,
    // npm's temp files (under Node 22 or later, its compile cache too) go with the work folder.
    TMPDIR: join(work, "tmp"),
    npm_config_audit: "false",
    npm_config_fund: "false",
    npm_config_update_notifier: "false",
  };
}

interface LockEntry {
  version?: string;
  resolved?: string;
  integrity?: string;
  link?: boolean;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  [key: string]: unknown;
}

const rootLock = JSON.parse(readFileSync(join(ROOT, "package-lock.json"), "utf8")) as {
  packages: Record<string, LockEntry>;
};

/** The lock path `name` resolves to from the package at lock path `from`, as Node looks it up. */
function resolveIn(from: string, name: string): string | undefined {
  for (let dir = from; ; ) {
    const candidate = `${dir ? `${dir}/` : ""}node_modules/${name}`;
    if (rootLock.packages[candidate]) return candidate;
    if (!dir) return undefined;
    const cut = dir.lastIndexOf("/node_modules/");
    dir = cut < 0 ? "" : dir.slice(0, cut);
  }
}

/**
 * A lock file for a project depending on the packed package and `deps`, made of this repository's
 * own lock entries (what `npm ci` put in the cache), so that `npm ci --offline` needs no registry
 * metadata. Every package the runtime reaches is copied with its lock path; dev flags are dropped.
 */
function freshLock(name: string, deps: Record<string, string>, packed: LockEntry): Record<string, unknown> {
  const packages: Record<string, LockEntry> = {
    "": { name, version: "1.0.0", dependencies: deps },
    [`node_modules/${NAME}`]: packed,
  };
  const queue: Array<[string, LockEntry]> = [[`node_modules/${NAME}`, packed]];
  for (const dep of Object.keys(deps)) {
    if (dep === NAME) continue;
    const at = resolveIn("", dep);
    if (!at) throw new Error(`${dep} is not in package-lock.json`);
    queue.push([at, rootLock.packages[at]!]);
  }
  while (queue.length > 0) {
    const [path, entry] = queue.shift()!;
    if (path !== `node_modules/${NAME}` && packages[path]) continue;
    const { dev: _dev, devOptional: _devOptional, peer: _peer, ...kept } = entry;
    // The lock leaves registry addresses out (omit-lockfile-registry-resolved); without one npm
    // would ask the registry where the tarball is. The cache finds it by its integrity.
    if (!kept.resolved && !kept.inBundle && !kept.link && path !== `node_modules/${NAME}`) {
      const name = path.slice(path.lastIndexOf("node_modules/") + "node_modules/".length);
      kept.resolved = `https://registry.npmjs.org/${name}/-/${name.split("/").pop()}-${kept.version}.tgz`;
    }
    packages[path] = kept;
    const wanted = [
      ...Object.keys(entry.dependencies ?? {}),
      ...Object.keys(entry.optionalDependencies ?? {}),
      ...Object.keys(entry.peerDependencies ?? {}).filter((p) => !entry.peerDependenciesMeta?.[p]?.optional),
    ];
    for (const dep of wanted) {
      const at = resolveIn(path === `node_modules/${NAME}` ? "" : path, dep);
      if (at && !packages[at]) queue.push([at, rootLock.packages[at]!]);
    }
  }
  return { name, version: "1.0.0", lockfileVersion: 3, requires: true, packages };
}

/** A fresh project with this package and one CDK, installed offline from the cache; returns its directory. */
async function project(name: string, cdk: "cdktf" | "cdktn"): Promise<string> {
  const dir = join(work, name);
  mkdirSync(dir);
  const manifest = JSON.parse(readFileSync(join(work, "stage", "package.json"), "utf8")) as LockEntry;
  const deps = {
    [NAME]: `file:../${basename(tarball)}`,
    [cdk]: pkg.devDependencies[cdk]!,
    constructs: pkg.devDependencies.constructs!,
  };
  writeFileSync(
    join(dir, "package.json"),
    JSON.stringify({ name, version: "1.0.0", private: true, dependencies: deps }),
  );
  const packed: LockEntry = {
    version: manifest.version,
    resolved: deps[NAME],
    dependencies: manifest.dependencies,
    peerDependencies: manifest.peerDependencies,
    peerDependenciesMeta: manifest.peerDependenciesMeta,
  };
  writeFileSync(join(dir, "package-lock.json"), JSON.stringify(freshLock(name, deps, packed), null, 2));
  await run("npm", ["ci", "--offline", "--no-audit", "--no-fund", "--ignore-scripts"], {
    cwd: dir,
    env: npmEnv(),
  });
  return dir;
}

const installed = (dir: string, name: string) => existsSync(join(dir, "node_modules", name, "package.json"));

/** Synthesizes a stack with an ApiKey and an Instance in `dir`, importing `cdk` and `entry`; returns cdk.tf.json. */
async function synth(
  dir: string,
  cdk: string,
  entry: string,
): Promise<Record<string, Record<string, unknown>>> {
  const app = `
    const { App, TerraformStack } = require(${JSON.stringify(cdk)});
    const { ApiKey, GpurentalProvider, Instance } = require(${JSON.stringify(entry)});
    // The L1 bindings, through both subpaths, built on the same CDK.
    const { instance } = require(${JSON.stringify(`${entry}/providers`)});
    const { Instance: L1 } = require(${JSON.stringify(`${entry}/providers/instance`)});
    if (instance.Instance !== L1 || !(L1.prototype instanceof require(${JSON.stringify(cdk)}).TerraformResource)) {
      throw new Error("the bindings are not this CDK's");
    }
    const app = new App({ outdir: "out" });
    const stack = new TerraformStack(app, "gpu");
    new GpurentalProvider(stack, "gpurental");
    new ApiKey(stack, "ci", { name: "ci", kind: "team" });
    new Instance(stack, "gpu", { offer: { gpuModel: "RTX 4090" }, templateId: "00000000-0000-4000-8000-000000000001", diskGb: 50 });
    app.synth();
  `;
  await run(process.execPath, ["-e", app], { cwd: dir, env: npmEnv() });
  return JSON.parse(readFileSync(join(dir, "out", "stacks", "gpu", "cdk.tf.json"), "utf8"));
}

test("a cdktf project gets no cdktn, and synthesizes with gpurental", async () => {
  const dir = await project("cdktf-project", "cdktf");
  expect({ cdktf: installed(dir, "cdktf"), cdktn: installed(dir, "cdktn") }).toEqual({
    cdktf: true,
    cdktn: false,
  });
  const stack = await synth(dir, "cdktf", NAME);
  expect(Object.keys(stack.resource!).sort()).toEqual(["gpurental_api_key", "gpurental_instance"]);
});

test("a cdktn project gets no cdktf, and synthesizes with gpurental/cdktn", async () => {
  const dir = await project("cdktn-project", "cdktn");
  expect({ cdktf: installed(dir, "cdktf"), cdktn: installed(dir, "cdktn") }).toEqual({
    cdktf: false,
    cdktn: true,
  });
  const stack = await synth(dir, "cdktn", `${NAME}/cdktn`);
  expect(Object.keys(stack.resource!).sort()).toEqual(["gpurental_api_key", "gpurental_instance"]);
  expect(readdirSync(join(dir, "node_modules")).filter((n) => n.startsWith("cdktf"))).toEqual([]);
});
