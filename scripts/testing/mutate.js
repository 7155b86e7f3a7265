#!/usr/bin/env node
"use strict";
// `npm run mutate [-- [--force | --survivors] <group>...]`: runs Stryker (stryker.config.js) on each group
// of mutated code in turn, each with its own tests and settings, then prints the score of every
// file of every group from their JSON reports. Exits non-zero when a run fails, not when mutants
// survive: the targets and the survivors explained as equivalent are in docs/mutation-testing.md.
// `--force` tests every mutant again instead of reusing the results of the group's incremental file
// (which keeps a static mutant's old verdict after a test for it was added). `--survivors` tests
// again only the mutants that survived the group's last run (or that no test reached), after tests
// were added for them, and records their new results in the group's report; the mutated files must
// be unchanged since that run.
const { spawnSync } = require("node:child_process");
const { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } = require("node:fs");
const { tmpdir } = require("node:os");
const { join } = require("node:path");

const root = join(__dirname, "..", "..");
const ALL = [
  "redaction",
  "refusals",
  "plan-checks",
  "fake-billing",
  "fake-limits",
  "retry",
  "schema",
  "reconciliation",
  "sharing",
];
const args = process.argv.slice(2);
const force = args.includes("--force");
const survivorsOnly = args.includes("--survivors");
if (force && survivorsOnly) throw new Error("--force and --survivors exclude each other");
const named = args.filter((a) => a !== "--force" && a !== "--survivors");
const groups = named.length > 0 ? named : ALL;
for (const g of groups)
  if (!ALL.includes(g)) throw new Error(`unknown group ${g}; groups: ${ALL.join(", ")}`);

const reportOf = (name) => join(root, "reports", "mutation", `${name}.json`);
const UNKILLED = ["Survived", "NoCoverage"];
const sameMutant = (a, b) =>
  a.mutatorName === b.mutatorName &&
  a.replacement === b.replacement &&
  JSON.stringify(a.location) === JSON.stringify(b.location);

/**
 * The Stryker ranges of the mutants of `group` that its last run left standing, or a reason why
 * they cannot be re-tested alone. A range starts at the mutant's first character (the report's
 * columns count from 1, a range's from 0) and ends at its last.
 */
function survivorRanges(group) {
  const file = reportOf(group);
  if (!existsSync(file)) return { why: `${group} has no report yet; run the group in full first` };
  const report = JSON.parse(readFileSync(file, "utf8"));
  const ranges = [];
  for (const [name, f] of Object.entries(report.files)) {
    const standing = f.mutants.filter((m) => UNKILLED.includes(m.status));
    if (standing.length === 0) continue;
    if (!existsSync(join(root, name)) || readFileSync(join(root, name), "utf8") !== f.source)
      return { why: `${name} changed since ${group}'s last run; run the group in full` };
    for (const { location: l } of standing)
      ranges.push(`${name}:${l.start.line}:${l.start.column - 1}-${l.end.line}:${l.end.column}`);
  }
  return { ranges };
}

/** Writes the results of a `--survivors` run into the group's report, mutant by mutant. */
function mergeSurvivors(group) {
  const full = JSON.parse(readFileSync(reportOf(group), "utf8"));
  const retested = JSON.parse(readFileSync(reportOf(`${group}.survivors`), "utf8"));
  let changed = 0;
  for (const [name, f] of Object.entries(retested.files)) {
    const into = full.files[name]?.mutants ?? [];
    for (const m of f.mutants) {
      const old = into.find((o) => sameMutant(o, m));
      if (!old || old.status === m.status) continue;
      Object.assign(old, { status: m.status, killedBy: m.killedBy, coveredBy: m.coveredBy });
      changed++;
    }
  }
  writeFileSync(reportOf(group), JSON.stringify(full));
  process.stdout.write(`${group}: ${changed} mutant(s) left standing by the last run are now killed\n`);
}

// A group whose run failed is reported as such, never with the scores of an earlier run.
const failed = [];
for (const group of groups) {
  process.stdout.write(
    `\n== mutation testing: ${group}${survivorsOnly ? " (the survivors of its last run)" : ""}\n`,
  );
  const env = { ...process.env, MUTATE: group };
  if (survivorsOnly) {
    const { ranges, why } = survivorRanges(group);
    if (why) {
      process.stdout.write(`${why}\n`);
      failed.push(group);
      continue;
    }
    if (ranges.length === 0) {
      process.stdout.write("no mutant survived its last run\n");
      continue;
    }
    env.MUTATE_RANGES = JSON.stringify(ranges);
  }
  // The test runs get a temporary directory of their own, removed after the group: a mutant that
  // hangs is killed before its test removes what it made there.
  const scratch = mkdtempSync(join(tmpdir(), `gpurental-mutate-${group}-`));
  env.TMPDIR = scratch;
  const r = spawnSync(join(root, "node_modules", ".bin", "stryker"), ["run", ...(force ? ["--force"] : [])], {
    cwd: root,
    stdio: "inherit",
    env,
  });
  rmSync(scratch, { recursive: true, force: true });
  if (r.status !== 0) failed.push(group);
  else if (survivorsOnly) mergeSurvivors(group);
}

const rows = [["group", "file", "score", "killed", "timeout", "survived", "no coverage", "ignored"]];
for (const group of groups) {
  const file = reportOf(group);
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
