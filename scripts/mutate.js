#!/usr/bin/env node
"use strict";
// `npm run mutate [-- [--force] <group>...]`: runs Stryker (stryker.config.js) on each group of mutated code
// in turn, each with its own tests and settings, then prints the score of every file of every
// group from their JSON reports. Exits non-zero when a run fails, not when mutants survive: the
// targets and the survivors explained as equivalent are in docs/development.md. `--force` tests
// every mutant again instead of reusing the results of the group's incremental file (which keeps a
// static mutant's old verdict after a test for it was added).
const { spawnSync } = require("node:child_process");
const { existsSync, readFileSync } = require("node:fs");
const { join } = require("node:path");

const root = join(__dirname, "..");
const ALL = [
  "redaction",
  "refusals",
  "plan-checks",
  "fake-billing",
  "fake-limits",
  "retry",
  "schema",
  "reconciliation",
];
const args = process.argv.slice(2);
const force = args.includes("--force");
const named = args.filter((a) => a !== "--force");
const groups = named.length > 0 ? named : ALL;
for (const g of groups)
  if (!ALL.includes(g)) throw new Error(`unknown group ${g}; groups: ${ALL.join(", ")}`);

// A group whose run failed is reported as such, never with the scores of an earlier run.
const failed = [];
for (const group of groups) {
  process.stdout.write(`\n== mutation testing: ${group}\n`);
  const r = spawnSync(join(root, "node_modules", ".bin", "stryker"), ["run", ...(force ? ["--force"] : [])], {
    cwd: root,
    stdio: "inherit",
    env: { ...process.env, MUTATE: group },
  });
  if (r.status !== 0) failed.push(group);
}

const rows = [["group", "file", "score", "killed", "timeout", "survived", "no coverage", "ignored"]];
for (const group of groups) {
  const file = join(root, "reports", "mutation", `${group}.json`);
  if (failed.includes(group) || !existsSync(file)) {
    rows.push([group, "(the run failed; see its output above)", "", "", "", "", "", ""]);
    continue;
  }
  const report = JSON.parse(readFileSync(file, "utf8"));
  for (const [name, f] of Object.entries(report.files)) {
    const n = (s) => f.mutants.filter((m) => m.status === s).length;
    const killed = n("Killed");
    const timeout = n("Timeout");
    const survived = n("Survived");
    const noCoverage = n("NoCoverage");
    const valid = killed + timeout + survived + noCoverage;
    const score = valid === 0 ? "n/a" : `${((100 * (killed + timeout)) / valid).toFixed(1)}%`;
    rows.push([group, name, score, killed, timeout, survived, noCoverage, n("Ignored")].map(String));
  }
}
const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
process.stdout.write("\n");
for (const r of rows) process.stdout.write(`${r.map((c, i) => c.padEnd(widths[i])).join("  ")}\n`);
process.exitCode = failed.length > 0 ? 1 : 0;
