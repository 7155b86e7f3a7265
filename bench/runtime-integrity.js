#!/usr/bin/env node
// What the compact launcher's integrity rule costs a launch (docs/design/runtime-integrity.md):
// the compact executable around a stand-in runtime (src/executable/compact/testing/probe.c padded
// to --mb megabytes), launched again and again with its runtime unpacked and its stamp matching,
// interleaved with the same launch by a launcher built from another commit's sources (--base,
// default main: the launcher before the rule) and with the stand-in run directly. The difference of
// the medians is what the rule adds; the target is under 2 ms. Then the cost of a verification
// (the stamp removed before each launch, so the launcher reads and hashes the whole runtime).
//
// Usage: node bench/runtime-integrity.js [--rounds 201] [--mb 32] [--base main]
// Needs gcc, liblzma's static library and xz (as the release does), and git for --base.
"use strict";

const { execFileSync, spawnSync } = require("node:child_process");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { compactExecutable, TRAILER_SIZE } = require("../scripts/release/compact-executable");

const root = path.resolve(__dirname, "..");

function arg(name, fallback) {
  const i = process.argv.indexOf(name);
  return i === -1 ? fallback : process.argv[i + 1];
}

const rounds = Number(arg("--rounds", "201"));
const mb = Number(arg("--mb", "32"));
const base = arg("--base", "main");

const work = fs.mkdtempSync(path.join(os.tmpdir(), "gpurental-bench-integrity-"));
process.on("exit", () => fs.rmSync(work, { recursive: true, force: true }));

/** The compact executable with the launcher compiled from `source` instead of this checkout's. */
function withLauncher(compact, sources, out) {
  const launcherFile = path.join(work, "base-launcher");
  execFileSync("gcc", ["-std=gnu11", "-O2", "-static", "-s", "-o", launcherFile, ...sources, "-llzma"]);
  const launcher = fs.readFileSync(launcherFile);
  const trailer = Buffer.from(compact.subarray(compact.length - TRAILER_SIZE));
  const offset = Number(trailer.readBigUInt64LE(16));
  const length = Number(trailer.readBigUInt64LE(24));
  trailer.writeBigUInt64LE(BigInt(launcher.length), 16);
  fs.writeFileSync(out, Buffer.concat([launcher, compact.subarray(offset, offset + length), trailer]), {
    mode: 0o755,
  });
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

/** Milliseconds from spawn to exit of one launch. */
function time(file, env) {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(file, [], { env, input: "" });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 7) throw new Error(`${file} exited ${r.status}: ${r.stderr}`);
  return ms;
}

const probe = path.join(work, "probe");
execFileSync("gcc", [
  "-O2",
  "-static",
  "-o",
  probe,
  path.join(root, "src/executable/compact/testing/probe.c"),
]);
const runtimeFile = path.join(work, "runtime");
const probeBytes = fs.readFileSync(probe);
fs.writeFileSync(runtimeFile, Buffer.concat([probeBytes, Buffer.alloc(mb * 2 ** 20 - probeBytes.length)]), {
  mode: 0o755,
});
const compact = compactExecutable(runtimeFile, work);
const current = path.join(work, "current");
fs.writeFileSync(current, compact, { mode: 0o755 });
// The base's launcher sources: launcher.c, and command-session.c, private-dir.c and print.c with
// their headers where it has them.
const baseDir = path.join(work, "base-src");
fs.mkdirSync(baseDir);
const baseSources = [];
for (const name of [
  "launcher.c",
  "command-session.c",
  "command-session.h",
  "private-dir.c",
  "private-dir.h",
  "print.c",
  "print.h",
]) {
  const shown = spawnSync("git", ["show", `${base}:src/executable/compact/${name}`], { cwd: root });
  if (shown.status !== 0) continue;
  fs.writeFileSync(path.join(baseDir, name), shown.stdout);
  if (name.endsWith(".c")) baseSources.push(path.join(baseDir, name));
}
const before = path.join(work, "base");
withLauncher(compact, baseSources, before);

const envOf = (dir) => ({ GPURENTAL_RUNTIME_DIR: path.join(work, dir), PATH: "/nonexistent" });
// First launches unpack (and stamp); they are not timed.
time(current, envOf("rt-current"));
time(before, envOf("rt-base"));
for (let i = 0; i < 5; i++) {
  time(current, envOf("rt-current"));
  time(before, envOf("rt-base"));
  time(probe, {});
}

const t = { direct: [], base: [], current: [] };
for (let i = 0; i < rounds; i++) {
  t.direct.push(time(probe, {}));
  t.base.push(time(before, envOf("rt-base")));
  t.current.push(time(current, envOf("rt-current")));
}
const stamp = fs.readdirSync(path.join(work, "rt-current")).find((f) => f.endsWith(".stamp"));
const verify = [];
for (let i = 0; i < 7; i++) {
  fs.rmSync(path.join(work, "rt-current", stamp));
  verify.push(time(current, envOf("rt-current")));
}

const f = (ms) => `${ms.toFixed(2)} ms`;
const m = { direct: median(t.direct), base: median(t.base), current: median(t.current) };
console.log(`runtime ${mb} MB, ${rounds} interleaved rounds, medians of spawn to exit`);
console.log(`  stand-in run directly            ${f(m.direct)}`);
console.log(`  launcher of ${base.padEnd(20)} ${f(m.base)}  (+${f(m.base - m.direct)} over direct)`);
console.log(`  this launcher, stamp matching    ${f(m.current)}  (+${f(m.current - m.direct)} over direct)`);
console.log(`  added by the integrity rule      ${f(m.current - m.base)}  (target: under 2 ms)`);
const v = median(verify);
console.log(
  `  a launch that verifies (no stamp) ${f(v)}: ${f(v - m.current)} to hash ${mb} MB, ${((mb / (v - m.current)) * 1000).toFixed(0)} MB/s`,
);
