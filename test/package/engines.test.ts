import { readFileSync } from "node:fs";
import { join } from "node:path";
import semver from "semver";

// The Node versions package.json promises (engines.node) must be ones every package of the locked
// tree supports too: otherwise `npm ci` warns EBADENGINE on a Node the README calls supported.
// The one exception is cdktn-cli, a dev tool that needs Node 22.19 and that the tests and the demo
// run under the Node binaries installed from npm (src/cli/cdk.ts); `npm ci` warns about it once.

/** Dev tools run under a newer Node than the one running npm; see above. */
const RUN_UNDER_OWN_NODE = new Set(["cdktn-cli"]);

const ROOT = join(__dirname, "..", "..");
const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { engines: { node: string } };
const lock = JSON.parse(readFileSync(join(ROOT, "package-lock.json"), "utf8")) as {
  packages: Record<string, { version?: string; engines?: unknown }>;
};

/** The node range a package declares, when it declares one the way npm reads it. */
function nodeRange(engines: unknown): string | undefined {
  if (engines === null || typeof engines !== "object" || Array.isArray(engines)) return undefined;
  const node = (engines as { node?: unknown }).node;
  return typeof node === "string" ? node : undefined;
}

it("promises Node 20", () => {
  expect(semver.minVersion(pkg.engines.node)?.major).toBe(20);
});

it("every locked package supports the oldest Node the package promises", () => {
  const oldest = semver.minVersion(pkg.engines.node)!;
  const unsupported = Object.entries(lock.packages)
    .filter(([path]) => path !== "" && !RUN_UNDER_OWN_NODE.has(path.replace(/^.*node_modules\//, "")))
    .flatMap(([path, entry]) => {
      const range = nodeRange(entry.engines);
      return range && !semver.satisfies(oldest, range, { includePrerelease: true })
        ? [`${path.replace(/^.*node_modules\//, "")}@${entry.version} needs node ${range}`]
        : [];
    });
  expect({ oldest: oldest.version, unsupported }).toEqual({ oldest: oldest.version, unsupported: [] });
});
