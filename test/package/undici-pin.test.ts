import { readFileSync } from "node:fs";
import { join } from "node:path";

// The provider bundle's HTTP client is undici's request() rebuilt from undici's internals
// (scripts/build/undici-request.js), which no undici release promises to keep. So package.json pins
// undici exactly, to the version the file names as read; moving it fails here until the file has
// been read again against the new one (see its comment).

const ROOT = join(__dirname, "..", "..");
const SHIM = join(ROOT, "scripts", "build", "undici-request.js");
const shim = readFileSync(SHIM, "utf8");

/** The undici version the shim says it was read in. */
function readIn(): string | undefined {
  return /read in undici (\d+\.\d+\.\d+)/.exec(shim)?.[1];
}

test("package.json pins undici exactly to the version the bundle's request() was read in, and that is installed", () => {
  const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
    dependencies: Record<string, string>;
  };
  const lock = JSON.parse(readFileSync(join(ROOT, "package-lock.json"), "utf8")) as {
    packages: Record<string, { version?: string }>;
  };
  const installed = (
    JSON.parse(readFileSync(require.resolve("undici/package.json"), "utf8")) as { version: string }
  ).version;
  const read = readIn();
  expect(read).toMatch(/^\d+\.\d+\.\d+$/);
  expect({
    pin: pkg.dependencies.undici,
    locked: lock.packages["node_modules/undici"]?.version,
    installed,
  }).toEqual({ pin: read, locked: read, installed: read });
});

test("every undici module the bundle's request() requires is there", () => {
  const internals = [...shim.matchAll(/require\("(undici\/lib\/[^"]+)"\)/g)].map((m) => m[1]!);
  expect(internals.length).toBeGreaterThanOrEqual(5);
  const missing = internals.filter((name) => {
    try {
      require.resolve(name);
      return false;
    } catch {
      return true;
    }
  });
  expect(missing).toEqual([]);
});
