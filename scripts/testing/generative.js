#!/usr/bin/env node
// The long run of the generative suite (src/provider.generative.test.ts): the same properties as in
// `npm test`, with many more cases and a seed of its own, then one line of figures to keep in
// bench/RESULTS.md: the seed, how many cases of each kind ran, the failures, the time.
//
// Usage: node scripts/testing/generative.js [--runs 100000] [--seed N]
// A failure prints fast-check's counterexample and the seed and path that replay it:
//   GPURENTAL_GENERATIVE_RUNS=<runs> GPURENTAL_GENERATIVE_SEED=<seed> npx jest src/provider.generative.test.ts
"use strict";

const { spawnSync } = require("node:child_process");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");

function arg(name, fallback) {
  const i = process.argv.indexOf(name);
  return i === -1 ? fallback : process.argv[i + 1];
}

const runs = Number(arg("--runs", "100000"));
const seed = Number(arg("--seed", String(Date.now() % 2 ** 31)));
const root = path.resolve(__dirname, "..", "..");
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "gpurental-generative-"));
const report = path.join(dir, "report.json");

const started = Date.now();
const r = spawnSync(
  process.execPath,
  [path.join(root, "node_modules", "jest", "bin", "jest.js"), "src/provider.generative.test.ts"],
  {
    cwd: root,
    stdio: "inherit",
    env: {
      ...process.env,
      GPURENTAL_GENERATIVE_RUNS: String(runs),
      GPURENTAL_GENERATIVE_SEED: String(seed),
      GPURENTAL_GENERATIVE_REPORT: report,
    },
  },
);
const seconds = Math.round((Date.now() - started) / 1000);
let counts = {};
try {
  counts = JSON.parse(fs.readFileSync(report, "utf8"));
} catch {
  // no report: the run stopped before its end
}
fs.rmSync(dir, { recursive: true, force: true });
console.log(
  `generative run: seed ${seed}, ${counts.total ?? "?"} cases (${counts.decoded ?? "?"} decodes, ${counts.configures ?? "?"} provider blocks, ${counts.rpcs ?? "?"} RPCs), ${r.status === 0 ? "0 failures" : "FAILED (see above)"}, ${seconds} s`,
);
process.exitCode = r.status ?? 1;
