#!/usr/bin/env node
// The long run of the generative suites: the same properties as in `npm test`, with many more cases
// and a seed of their own, then one line of figures per suite to keep in bench/RESULTS.md: the seed,
// the cases, the failures, the time. The provider's suite (src/provider.generative.test.ts) takes
// --runs cases in all; every other `*.generative.test.ts` takes --others cases per property (each
// of their cases is an HTTP exchange, a command or a whole report, so fewer of them fit an hour).
//
// Usage: node scripts/testing/generative.js [--runs 100000] [--others 5000] [--seed N] [--only <part of a path>]
// A failure prints fast-check's counterexample and the seed and path that replay it:
//   GPURENTAL_GENERATIVE_RUNS=<runs> GPURENTAL_GENERATIVE_SEED=<seed> npx jest <the suite>
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
const others = Number(arg("--others", "5000"));
const seed = Number(arg("--seed", String(Date.now() % 2 ** 31)));
const only = arg("--only", "");
const root = path.resolve(__dirname, "..", "..");
const PROVIDER = "src/provider.generative.test.ts";
// Every generative suite of the repository, found by its name so that a new one is never left out;
// the provider's first.
const SUITES = ["src", "test"]
  .flatMap((top) =>
    fs
      .readdirSync(path.join(root, top), { recursive: true })
      .map((f) => path.posix.join(top, String(f).split(path.sep).join("/"))),
  )
  .filter((f) => f.endsWith(".generative.test.ts"))
  .sort((a, b) => (a === PROVIDER ? -1 : b === PROVIDER ? 1 : a.localeCompare(b)))
  .filter((s) => s.includes(only));

let failed = false;
for (const suite of SUITES) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "gpurental-generative-"));
  const report = path.join(dir, "report.json");
  const cases = suite === PROVIDER ? runs : others;
  const started = Date.now();
  const r = spawnSync(process.execPath, [path.join(root, "node_modules", "jest", "bin", "jest.js"), suite], {
    cwd: root,
    stdio: "inherit",
    env: {
      ...process.env,
      GPURENTAL_GENERATIVE_RUNS: String(cases),
      GPURENTAL_GENERATIVE_SEED: String(seed),
      GPURENTAL_GENERATIVE_REPORT: report,
    },
  });
  const seconds = Math.round((Date.now() - started) / 1000);
  let counts = {};
  try {
    counts = JSON.parse(fs.readFileSync(report, "utf8"));
  } catch {
    // no report: the suite writes none, or the run stopped before its end
  }
  fs.rmSync(dir, { recursive: true, force: true });
  const what =
    suite === PROVIDER
      ? `${counts.total ?? "?"} cases (${counts.decoded ?? "?"} decodes, ${counts.configures ?? "?"} provider blocks, ${counts.rpcs ?? "?"} RPCs)`
      : `${cases} cases per property`;
  console.log(
    `generative run: ${suite}, seed ${seed}, ${what}, ${r.status === 0 ? "0 failures" : "FAILED (see above)"}, ${seconds} s`,
  );
  if (r.status !== 0) failed = true;
}
process.exitCode = failed ? 1 : 0;
