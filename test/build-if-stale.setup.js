"use strict";
// Jest global setup. Some suites run the built package, not the sources: the provider bundle that
// `gpurental provider install` copies (test/cdktf: terraform providers schema, cdktf deploy; the
// example CI pipeline) and bin/gpurental (test/e2e/commands). Judging a dist/ older than the sources would test yesterday's
// code, so when one of them is selected, dist/ is rebuilt first if any source is newer
// (scripts/build/build-if-stale.js, as `npm run demo` does). Runs of other suites pay nothing.
const { spawnSync } = require("node:child_process");
const { readdirSync } = require("node:fs");
const { join } = require("node:path");

const root = join(__dirname, "..");

/** Test files that run dist/. */
const BUILT_PACKAGE_SUITES = [
  /[\\/]test[\\/]cdktf[\\/](schema|validate)\.test\.ts$/,
  /[\\/]test[\\/]cdktf[\\/][^\\/]+\.e2e\.test\.ts$/,
  /[\\/]test[\\/]e2e[\\/]commands[\\/][^\\/]+\.test\.ts$/,
  /[\\/]test[\\/]e2e[\\/]examples-ci\.e2e\.test\.ts$/,
  /[\\/]test[\\/](release|package|cdktn)[\\/][^\\/]+\.test\.ts$/,
];

function testFiles(dir) {
  const out = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...testFiles(path));
    else if (entry.name.endsWith(".test.ts")) out.push(path);
  }
  return out;
}

/** Whether Jest may run `file` in this invocation (its path pattern, when one was given). */
function selected(file, globalConfig) {
  const pattern = globalConfig.testPathPattern;
  if (!pattern) return true;
  try {
    return new RegExp(pattern, "i").test(file);
  } catch {
    return true;
  }
}

/** Whether this invocation may run a test file under src/ or test/ that one of `patterns` matches. */
function selects(globalConfig, patterns) {
  return [...testFiles(join(root, "src")), ...testFiles(join(root, "test"))].some(
    (f) => patterns.some((re) => re.test(f)) && selected(f, globalConfig),
  );
}

module.exports = async (globalConfig) => {
  if (!selects(globalConfig, BUILT_PACKAGE_SUITES)) return;
  const r = spawnSync(process.execPath, [join(root, "scripts", "build", "build-if-stale.js")], {
    cwd: root,
    stdio: "inherit",
  });
  if (r.status !== 0)
    throw new Error(`building dist/ failed (exit ${r.status}); run npm run build to see why`);
};

module.exports.BUILT_PACKAGE_SUITES = BUILT_PACKAGE_SUITES;
module.exports.selects = selects;
