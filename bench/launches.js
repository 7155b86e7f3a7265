#!/usr/bin/env node
// Where a no-op `terraform plan` in automation spends its time, launch by launch. Terraform starts
// a provider process per launch when the resident process is off (TF_IN_AUTOMATION=1, as in CI);
// this runs the real `terraform plan` against the standalone fake backend with N instances
// applied, and reports for each launch: Terraform's side (its client certificate, the exec, when
// it read the handshake, Close, when it saw the exit; from TF_LOG=trace timestamps) and the
// provider's side (node's start, the launcher and the code cache, each bundle, the certificate,
// the handshake line, grpc-js, the TLS handshake, each RPC, the API requests and the journal's
// file reads, the exit; from bench/launch-marks.js, preloaded with NODE_OPTIONS=--require), in
// wall time and in the process's own CPU time. Medians over the runs with their spread.
//
// Each run is two plans per variant: a quiet one (no TF_LOG, only each process's CPU time noted
// at exit) for the totals, and a traced one for the phases (whose processes also carry the
// preload's own cost, about 5 ms, shown on a row of its own). Beside them: the same plan on N
// `terraform_data` (Terraform's floor) and `node -e 0`, interleaved. Wall times wait for whatever
// else runs on the machine; CPU times and callgrind's instruction counts are the steadier figures.
//
// Usage: npm run build && node bench/launches.js [--n 1[,25]] [--runs 7] [--sea <zip>] [--no-npm]
//                                                [--callgrind] [--strace <file>] [--cpu-prof <dir>]
//                                                [--timeline] [--keep]
//   --n 1,25        one variant per instance count (the difference per instance is printed too)
//   --sea <zip>     also the release's compact (or plain) linux_amd64 zip (`npm run release`)
//   --no-npm        only the --sea executable
//   --callgrind     one more plan per variant with each provider process under valgrind's callgrind
//                   (installed through dev_overrides): instructions per launch, by where they run;
//                   counts the machine's load does not move (about a minute per plan)
//   --strace <file> one more plan per variant under `strace -f -tt`, kept in <file>.<variant>, and
//                   per launch the files it opened and the connections it made
//   --cpu-prof <dir> a V8 CPU profile of each provider process of the quiet plans (whose figures
//                   then include the profiler's cost), in <dir>/<variant>/run<i>/<pid>.cpuprofile
//                   (GPURENTAL_PROVIDER_CPU_PROF; summarise with bench/profile-summary.js)
//   --timeline      every mark of the last traced plan of each variant, as it happened
//   --keep          leave the temp directory (mirrors, working directories, logs) in place
"use strict";

const { spawn, spawnSync } = require("node:child_process");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { CATEGORIES, INCLUSIVE, grindCategories } = require("./callgrind");
const { launchesOf, parseTerraformLog } = require("./launch-phases");

const root = path.resolve(__dirname, "..");
const MARKS = path.join(__dirname, "launch-marks.js");

function arg(name, fallback) {
  const i = process.argv.indexOf(name);
  return i === -1 ? fallback : process.argv[i + 1];
}
const flag = (name) => process.argv.includes(name);

const counts = arg("--n", "1").split(",").map(Number);
const runs = Number(arg("--runs", "7"));
const seaArg = arg("--sea", undefined);
const npm = !flag("--no-npm");
const callgrind = flag("--callgrind");
const straceOut = arg("--strace", undefined);
const cpuProf = arg("--cpu-prof", undefined);
const timeline = flag("--timeline");
const keep = flag("--keep");

function fail(message) {
  process.stderr.write(`bench/launches: ${message}\n`);
  process.exit(2);
}
for (const n of counts) if (!Number.isInteger(n) || n < 1 || n > 25) fail("--n: integers from 1 to 25");
if (!Number.isInteger(runs) || runs < 1) fail("--runs must be a positive integer");
if (!npm && !seaArg) fail("--no-npm needs --sea");
if (seaArg && !/_linux_amd64\.zip$/.test(seaArg)) fail("--sea: a release's linux_amd64 zip");
if (!fs.existsSync(path.join(root, "dist", "provider-bundle", "provider.js")))
  fail("no build: run `npm run build` first");

const median = (xs) => {
  const s = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (s.length === 0) return Number.NaN;
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const TICK_MS = 1000 / Number(spawnSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).stdout || 100);
/** CPU time of this process's waited-for children (Terraform and, through it, its providers). */
function childCpuMs() {
  const stat = fs.readFileSync("/proc/self/stat", "utf8");
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(f[13]) + Number(f[14])) * TICK_MS;
}

function run(file, args, opts) {
  return new Promise((resolve, reject) => {
    const cpu0 = childCpuMs();
    const t0 = process.hrtime.bigint();
    const child = spawn(file, args, { ...opts, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (d) => {
      out += d;
    });
    child.stderr.on("data", (d) => {
      out += d;
    });
    child.on("error", reject);
    child.on("close", (code) =>
      resolve({ code, out, ms: Number(process.hrtime.bigint() - t0) / 1e6, cpuMs: childCpuMs() - cpu0 }),
    );
  });
}

// ---------------------------------------------------------------------------------------------
// Set-up: the fake backend, an organization per variant, the mirrors, init and apply.

async function startBackend(tmp) {
  const credentials = path.join(tmp, "credentials.json");
  const child = spawn(
    process.execPath,
    [
      path.join(root, "bin", "gpurental"),
      "fake-backend",
      ...["--port", "0", "--seed", "demo", "--transitions", "immediate", "--quiet"],
      ...["--credentials", credentials],
    ],
    { stdio: ["ignore", "pipe", "pipe"], env: { PATH: process.env.PATH, HOME: tmp } },
  );
  const url = await new Promise((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (d) => {
      out += d;
      const m = /listening on (\S+)/.exec(out);
      if (m && out.includes("credentials written")) resolve(m[1]);
    });
    child.on("exit", (code) => reject(new Error(`the fake backend exited (${code})`)));
  });
  const creds = JSON.parse(fs.readFileSync(credentials, "utf8"));
  const control = async (method, route, body) => {
    const res = await fetch(`${url}/_control${route}`, {
      method,
      headers: { "x-control-token": creds.control_token, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} /_control${route}: ${res.status} ${text}`);
    return text ? JSON.parse(text) : undefined;
  };
  return { child, url, control };
}

async function session(backend, name) {
  const { control } = backend;
  const org = await control("POST", "/orgs", { name, balance_micro: 100_000 * 1_000_000 });
  const user = await control("POST", "/users", { email: `${name}@bench.example` });
  await control("POST", "/memberships", { org_id: org.id, user_id: user.id, role: "admin" });
  return (await control("POST", "/sessions", { user_id: user.id, org_id: org.id })).token;
}

const TEMPLATE = "00000000-0000-4000-8000-000000000051"; // the demo seed's SSH template

function config(backend, token, offerId, n) {
  return `terraform {
  required_providers {
    gpurental = { source = "gpurental/gpurental" }
  }
}

provider "gpurental" {
  base_url = ${JSON.stringify(backend.url)}
  token    = ${JSON.stringify(token)}
}

resource "gpurental_instance" "bench" {
  count       = ${n}
  offer_id    = ${JSON.stringify(offerId)}
  template_id = ${JSON.stringify(TEMPLATE)}
  disk_gb     = 20
  label       = "bench-\${count.index}"
}
`;
}

/** A variant: a working directory with its own CLI configuration, mirror, HOME and code cache. */
function makeVariant(tmp, name, main, install) {
  const dir = path.join(tmp, name);
  const work = path.join(dir, "work");
  const home = path.join(dir, "home");
  fs.mkdirSync(work, { recursive: true });
  fs.mkdirSync(home, { recursive: true });
  const cliConfig = path.join(dir, "cli.tfrc");
  const { installProvider, mirrorCliConfig } = require(
    path.join(root, "dist", "cli", "provider", "provider.js"),
  );
  const source = "registry.terraform.io/gpurental/gpurental";
  if (install === "npm") {
    const r = installProvider({
      dir: path.join(dir, "mirror"),
      sources: [source],
      bundle: path.join(root, "dist", "provider-bundle", "provider.js"),
    });
    fs.writeFileSync(cliConfig, r.cliConfig);
  } else if (install) {
    const pkg = path.join(dir, "mirror", "registry.terraform.io", "gpurental", "gpurental");
    fs.mkdirSync(pkg, { recursive: true });
    fs.copyFileSync(install, path.join(pkg, path.basename(install)));
    fs.writeFileSync(cliConfig, mirrorCliConfig(path.join(dir, "mirror"), [source]));
  } else {
    fs.writeFileSync(cliConfig, "");
  }
  fs.writeFileSync(path.join(work, "main.tf"), main);
  const env = {
    PATH: process.env.PATH,
    HOME: home,
    TMPDIR: process.env.TMPDIR ?? os.tmpdir(),
    TF_CLI_CONFIG_FILE: cliConfig,
    CHECKPOINT_DISABLE: "1",
    TF_INPUT: "0",
    // Automation: a provider process per launch (the resident process is off).
    TF_IN_AUTOMATION: "1",
    GPURENTAL_PROVIDER_CODE_CACHE_DIR: path.join(dir, "code-cache"),
    GPURENTAL_PROVIDER_RESIDENT_DIR: path.join(dir, "run"),
  };
  return { name, dir, work, env, install, quiet: [], traced: [], floor: [], grind: undefined };
}

/** The installed provider executable of a variant (after init). */
function installedExecutable(v) {
  const pkg = path.join(v.work, ".terraform", "providers", "registry.terraform.io", "gpurental", "gpurental");
  const [version] = fs.readdirSync(pkg);
  const [platform] = fs.readdirSync(path.join(pkg, version));
  return fs.realpathSync(path.join(pkg, version, platform, `terraform-provider-gpurental_v${version}`));
}

const PLAN = ["plan", "-input=false", "-no-color", "-detailed-exitcode"];

async function terraform(v, args, extraEnv = {}) {
  const r = await run("terraform", args, { cwd: v.work, env: { ...v.env, ...extraEnv } });
  if (r.code !== 0) throw new Error(`${v.name}: terraform ${args[0]} exited ${r.code}\n${r.out}`);
  return r;
}

// ---------------------------------------------------------------------------------------------
// One plan, quiet or traced, and what it noted.

function readMarks(file) {
  if (!fs.existsSync(file)) return [];
  const lines = fs
    .readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l));
  fs.rmSync(file);
  return lines.sort((a, b) => a.timeOrigin - b.timeOrigin);
}

/** CPU time so far of one process (its /proc stat), 0 once gone. */
function pidCpuMs(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(f[11]) + Number(f[12])) * TICK_MS;
  } catch {
    return 0;
  }
}
let backendPid;

async function quietPlan(v, run) {
  const file = path.join(v.dir, "marks.jsonl");
  const backend0 = pidCpuMs(backendPid);
  const r = await terraform(v, PLAN, {
    ...(cpuProf
      ? { GPURENTAL_PROVIDER_CPU_PROF: path.join(path.resolve(cpuProf), v.name, `run${run + 1}`) }
      : {}),
    NODE_OPTIONS: `--require ${MARKS}`,
    GPURENTAL_BENCH_MARKS: file,
    GPURENTAL_BENCH_MARKS_EXIT_ONLY: "1",
  });
  const procs = readMarks(file);
  const launchCpu = procs.map((p) => p.marks.at(-1).cpu);
  return {
    ms: r.ms,
    cpuMs: r.cpuMs,
    launchCpu,
    providerCpu: launchCpu.reduce((a, b) => a + b, 0),
    backendCpu: pidCpuMs(backendPid) - backend0,
  };
}

async function tracedPlan(v) {
  const file = path.join(v.dir, "marks.jsonl");
  const log = path.join(v.dir, "terraform-trace.log");
  fs.rmSync(log, { force: true });
  const r = await terraform(v, PLAN, {
    NODE_OPTIONS: `--require ${MARKS}`,
    GPURENTAL_BENCH_MARKS: file,
    TF_LOG: "trace",
    // Terraform's trace, but the provider's own log at debug: its trace lines would cost it CPU.
    TF_LOG_PROVIDER: "debug",
    TF_LOG_PATH: log,
  });
  const procs = readMarks(file);
  const tf = parseTerraformLog(fs.readFileSync(log, "utf8"));
  return { ms: r.ms, launches: launchesOf(tf, procs) };
}

// ---------------------------------------------------------------------------------------------
// Instruction counts: valgrind's callgrind on every provider process of one plan.

async function grindPlan(v) {
  const out = path.join(v.dir, "callgrind");
  const override = path.join(v.dir, "override");
  fs.mkdirSync(out, { recursive: true });
  fs.mkdirSync(override, { recursive: true });
  const exe = installedExecutable(v);
  // %p.%n: the compact executable's launcher execs the runtime in the same process.
  const valgrind = [
    "valgrind --tool=callgrind --smc-check=all-non-file --trace-children=yes -q",
    `--callgrind-out-file=${out}/cg.%p.%n`,
  ].join(" ");
  const runs = v.install === "npm" ? `${valgrind} node ${exe}` : `${valgrind} ${exe}`;
  const wrapper = path.join(override, "terraform-provider-gpurental");
  fs.writeFileSync(wrapper, `#!/bin/sh\nexec ${runs} "$@"\n`, { mode: 0o755 });
  // dev_overrides: Terraform runs the wrapper, with no lock-file check (which it would fail).
  const cli = path.join(v.dir, "callgrind.tfrc");
  fs.writeFileSync(
    cli,
    `provider_installation {\n  dev_overrides {\n    "registry.terraform.io/gpurental/gpurental" = ${JSON.stringify(override)}\n  }\n  direct {}\n}\n`,
  );
  await terraform(v, PLAN, { TF_CLI_CONFIG_FILE: cli });
  const files = fs
    .readdirSync(out)
    .filter((f) => f.startsWith("cg."))
    .map((f) => ({ f, pid: Number(f.split(".")[1]), seq: Number(f.split(".")[2]) }));
  // One process per pid: the compact launcher's image (seq 1) is added to the runtime's.
  const byPid = new Map();
  for (const x of files.sort((a, b) => a.pid - b.pid || a.seq - b.seq)) {
    const g = grindCategories(path.join(out, x.f));
    const prev = byPid.get(x.pid);
    if (!prev) byPid.set(x.pid, g);
    else {
      prev.total += g.total;
      for (const [c, ir] of g.cats) prev.cats.set(c, prev.cats.get(c) + ir);
    }
  }
  fs.rmSync(out, { recursive: true, force: true });
  return [...byPid.values()];
}

async function grindNode() {
  const file = path.join(os.tmpdir(), `gpurental-bench-node0-${process.pid}.cg`);
  spawnSync(
    "valgrind",
    ["--tool=callgrind", "-q", `--callgrind-out-file=${file}`, process.execPath, "-e", "0"],
    {
      env: { PATH: process.env.PATH },
    },
  );
  const g = grindCategories(file);
  fs.rmSync(file, { force: true });
  return g;
}

// ---------------------------------------------------------------------------------------------
// strace: what each launch opens and connects to.

async function stracePlan(v) {
  const file = `${path.resolve(straceOut)}.${v.name}`;
  const r = await run(
    "strace",
    [
      "-f",
      "-tt",
      "-qq",
      "-o",
      file,
      "-e",
      "trace=execve,openat,connect,accept4,exit_group",
      "terraform",
      ...PLAN,
    ],
    { cwd: v.work, env: v.env },
  );
  if (r.code !== 0) throw new Error(`${v.name}: strace terraform plan exited ${r.code}\n${r.out}`);
  const byPid = new Map();
  for (const line of fs.readFileSync(file, "utf8").split("\n")) {
    const m = /^(\d+)\s+(\d\d):(\d\d):(\d\d\.\d+) (\w+)\((.*)$/.exec(line);
    if (!m) continue;
    const [, pid, h, mi, s, call, rest] = m;
    const t = (Number(h) * 3600 + Number(mi) * 60 + Number(s)) * 1000;
    let p = byPid.get(pid);
    if (call === "execve" && /terraform-provider-gpurental/.test(rest) && !p) {
      p = { pid, start: t, opens: new Map(), connects: 0, accepts: 0, exit: undefined };
      byPid.set(pid, p);
    }
    if (!p) continue;
    if (call === "openat" && !/= -1 /.test(rest)) {
      const f = /"([^"]+)"/.exec(rest)?.[1] ?? "";
      const kind = /\.v8cache/.test(f)
        ? "code caches"
        : /provider[-\w]*\.(js|pb)$|terraform-provider-gpurental/.test(f)
          ? "the package's files"
          : /gpurental-journal|\.tfstate|\.terraform\/environment/.test(f)
            ? "journal and state files"
            : /^\/(lib|usr|etc)\//.test(f)
              ? "system files (libraries, locale, OpenSSL)"
              : /^\/(proc|sys)\//.test(f)
                ? "/proc and /sys"
                : "other";
      p.opens.set(kind, (p.opens.get(kind) ?? 0) + 1);
    } else if (call === "connect" && !/AF_UNIX/.test(rest)) p.connects += 1;
    else if (call === "accept4") p.accepts += 1;
    else if (call === "exit_group") p.exit = t;
  }
  return [...byPid.values()];
}

// ---------------------------------------------------------------------------------------------
// The report.

const fmt = (x, w = 7) => (Number.isFinite(x) ? x.toFixed(1) : "").padStart(w);
const spread = (xs) => {
  const s = xs.filter(Number.isFinite);
  return s.length > 1 ? `${Math.min(...s).toFixed(0)}-${Math.max(...s).toFixed(0)}` : "";
};

function report(variants, node, floor) {
  const lines = [];
  const load = os
    .loadavg()
    .map((x) => x.toFixed(1))
    .join(" ");
  lines.push(
    `no-op terraform plan in automation (TF_IN_AUTOMATION=1), ${runs} runs, medians (min-max); load average now ${load}`,
  );
  lines.push(`node -e 0: ${fmt(median(node.ms), 0)} ms wall, ${fmt(median(node.cpu), 0)} ms CPU`);
  for (const v of variants) {
    lines.push("");
    lines.push(`== ${v.name} ==`);
    const f = floor.get(v.n);
    const q = v.quiet;
    const wall = q.map((r) => r.ms);
    const cpu = q.map((r) => r.cpuMs);
    const pcpu = q.map((r) => r.providerCpu);
    lines.push(
      `plan: ${fmt(median(wall), 0)} ms wall (${spread(wall)}), ${fmt(median(cpu), 0)} ms CPU of terraform and its providers; terraform_data: ${fmt(median(f.ms), 0)} ms wall, ${fmt(median(f.cpu), 0)} ms CPU`,
    );
    const tfCpu = q.map((r) => r.cpuMs - r.providerCpu);
    lines.push(
      `  provider processes' CPU ${fmt(median(pcpu), 0)} ms (${spread(pcpu)}), per launch ${[0, 1, 2, 3, 4]
        .map((i) => median(q.map((r) => r.launchCpu[i])))
        .filter(Number.isFinite)
        .map((x) => x.toFixed(0))
        .join(" + ")} ms; terraform's own CPU ${fmt(median(tfCpu), 0)} ms`,
    );
    lines.push(
      `  the fake backend's CPU (another process on the same cores, not counted above): ${fmt(median(q.map((r) => r.backendCpu)), 0)} ms`,
    );
    lines.push(
      `  overhead over terraform_data: ${fmt(median(wall) - median(f.ms), 0)} ms wall, ${fmt(median(cpu) - median(f.cpu), 0)} ms CPU`,
    );
    const launchCount = median(v.traced.map((r) => r.launches.length));
    for (let i = 0; i < launchCount; i++) {
      const runsOf = v.traced.map((r) => r.launches[i]).filter(Boolean);
      const calls = runsOf[0]?.tf.calls.map((c) => c.call) ?? [];
      const summary = [...new Set(calls)].map(
        (c) =>
          `${c}${calls.filter((x) => x === c).length > 1 ? ` x${calls.filter((x) => x === c).length}` : ""}`,
      );
      lines.push("");
      lines.push(`launch ${i + 1}: ${summary.join(", ") || "(no calls)"}`);
      lines.push(
        `  ${"phase".padEnd(52)} ${"wall ms".padStart(7)} ${"spread".padStart(9)} ${"CPU ms".padStart(7)}`,
      );
      const labels = [];
      for (const r of runsOf) for (const [label] of r.phases) if (!labels.includes(label)) labels.push(label);
      for (const label of labels) {
        const w = runsOf.map((r) => r.phases.find((p) => p[0] === label)?.[1]);
        const c = runsOf.map((r) => r.phases.find((p) => p[0] === label)?.[2]);
        lines.push(`  ${label.padEnd(52)} ${fmt(median(w))} ${spread(w).padStart(9)} ${fmt(median(c))}`);
      }
    }
    const gaps = v.traced.map((r) => {
      const ls = r.launches;
      let g = 0;
      for (let i = 1; i < ls.length; i++) g += ls[i].tf.mtls - ls[i - 1].tf.exited;
      return g;
    });
    lines.push(`between launches (Terraform's graph walks): ${fmt(median(gaps), 0)} ms wall`);
    if (v.grind) {
      lines.push("");
      lines.push("instructions per launch (callgrind), millions; node -e 0 beside them:");
      const cats = CATEGORIES.map(([c]) => c);
      lines.push(
        `  ${"".padEnd(66)} ${v.grind.map((_, i) => `launch ${i + 1}`.padStart(9)).join(" ")} ${"node -e 0".padStart(9)}`,
      );
      const row = (c) =>
        `  ${c.padEnd(66)} ${v.grind.map((g) => fmt(g.cats.get(c) / 1e6, 9)).join(" ")} ${fmt(node.grind?.cats.get(c) / 1e6, 9)}`;
      for (const c of cats) lines.push(row(c));
      lines.push(
        `  ${"total".padEnd(66)} ${v.grind.map((g) => fmt(g.total / 1e6, 9)).join(" ")} ${fmt(node.grind?.total / 1e6, 9)}`,
      );
      for (const [c] of INCLUSIVE) lines.push(row(c));
    }
    if (v.strace) {
      lines.push("");
      lines.push(
        "strace, per launch: exec to exit_group, files opened, TCP connections, accepted connections",
      );
      v.strace.forEach((p, i) => {
        const opens = [...p.opens].map(([k, n]) => `${n} ${k}`).join(", ");
        lines.push(
          `  launch ${i + 1}: ${fmt(p.exit - p.start, 0)} ms; ${opens}; ${p.connects} TCP connect; ${p.accepts} accept`,
        );
      });
    }
    if (timeline && v.traced.length > 0) {
      const last = v.traced.at(-1);
      for (const [i, l] of last.launches.entries()) {
        lines.push("");
        lines.push(`timeline of launch ${i + 1} (last traced run): ms since node's start, CPU ms, mark`);
        const t0 = l.proc.timeOrigin;
        for (const [what, t] of [
          ["terraform: client certificate", l.tf.mtls],
          ["terraform: starting plugin", l.tf.starting],
          ["terraform: handshake read", l.tf.handshakeRead],
          ...l.tf.calls.map((c) => [`terraform: ${c.call}`, c.t]),
          ["terraform: Close", l.tf.close],
          ["terraform: exit seen", l.tf.exited],
        ])
          if (t !== undefined) l.proc.marks.push({ what, t, cpu: Number.NaN, tf: true });
        for (const m of l.proc.marks.sort((a, b) => a.t - b.t)) {
          if (/^fs (open|l?stat|exists)/.test(m.what)) continue;
          lines.push(`  ${fmt(m.t - t0, 8)} ${fmt(m.cpu, 7)}  ${m.what}${m.phase ? ` ${m.phase}` : ""}`);
        }
      }
    }
  }
  // The difference per instance, between two instance counts of one build.
  const builds = [...new Set(variants.map((v) => v.build))];
  for (const b of builds) {
    const vs = variants.filter((v) => v.build === b).sort((x, y) => x.n - y.n);
    if (vs.length < 2) continue;
    const [a, z] = [vs[0], vs.at(-1)];
    const per = (f) => (f(z) - f(a)) / (z.n - a.n);
    const m = (v, k) => median(v.quiet.map((r) => r[k]));
    const fl = (v, k) => median(floor.get(v.n)[k]);
    lines.push("");
    lines.push(`per instance, ${b} (${a.n} against ${z.n} instances):`);
    const f1 = (x) => fmt(x, 0).trim();
    const slope = {
      wall: per((v) => m(v, "ms")),
      floorWall: per((v) => fl(v, "ms")),
      cpu: per((v) => m(v, "cpuMs")),
      floorCpu: per((v) => fl(v, "cpu")),
      provider: per((v) => m(v, "providerCpu")),
      backend: per((v) => m(v, "backendCpu")),
    };
    lines.push(
      `  wall ${f1(slope.wall)} ms (terraform_data ${f1(slope.floorWall)} ms); CPU of terraform and its providers ${f1(slope.cpu)} ms (terraform_data ${f1(slope.floorCpu)} ms): the provider processes ${f1(slope.provider)} ms, terraform ${f1(slope.cpu - slope.provider)} ms; the fake backend ${f1(slope.backend)} ms`,
    );
    // Per RPC of the busiest launch: wall and CPU per instance.
    const rows = new Map();
    for (const v of [a, z]) {
      const last = v.traced.map((r) => r.launches.at(-1));
      const labels = new Set(last.flatMap((l) => l.phases.map((p) => p[0])));
      for (const label of labels) {
        const key = label.replace(/ \(\d+\)$/, "");
        const w = median(last.map((l) => l.phases.find((p) => p[0] === label)?.[1]));
        const c = median(last.map((l) => l.phases.find((p) => p[0] === label)?.[2]));
        const row = rows.get(key) ?? {};
        row[v.n] = [w, c];
        rows.set(key, row);
      }
    }
    lines.push(`  the last launch's phases, per instance (wall, CPU):`);
    for (const [key, row] of rows) {
      const [wa, ca] = row[a.n] ?? [0, 0];
      const [wz, cz] = row[z.n] ?? [0, 0];
      const dw = (wz - wa) / (z.n - a.n);
      const dc = (cz - ca) / (z.n - a.n);
      if (Math.abs(dw) < 0.05 && Math.abs(dc) < 0.05) continue;
      lines.push(`    ${key.trim().padEnd(50)} ${fmt(dw)} ${fmt(dc)}`);
    }
  }
  process.stdout.write(`${lines.join("\n")}\n`);
}

// ---------------------------------------------------------------------------------------------

async function main() {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "gpurental-bench-launches-"));
  let backend;
  try {
    backend = await startBackend(tmp);
    backendPid = backend.child.pid;
    const machine = await backend.control("POST", "/machines", {
      disk_gb: 100 * 120,
      public_ip: "203.0.113.99",
      cuda_version: "12.4",
    });
    const offer = await backend.control("POST", "/offers", {
      machine_id: machine.id,
      gpu_model: "RTX 4090",
      price_per_hour_micro: 1_000_000,
      free_units: 120,
    });
    const builds = [...(npm ? [["npm", "npm"]] : []), ...(seaArg ? [["sea", path.resolve(seaArg)]] : [])];
    const variants = [];
    for (const [build, install] of builds) {
      for (const n of counts) {
        const name = `${build}-${n}`;
        const token = await session(backend, `bench-${name}`);
        const v = makeVariant(tmp, name, config(backend, token, offer.id, n), install);
        v.build = build;
        v.n = n;
        variants.push(v);
      }
    }
    const floors = new Map();
    for (const n of counts) {
      const main = `resource "terraform_data" "bench" {\n  count = ${n}\n  input = "bench-\${count.index}"\n}\n`;
      floors.set(n, makeVariant(tmp, `terraform_data-${n}`, main, undefined));
    }
    for (const v of [...variants, ...floors.values()]) {
      await terraform(v, ["init", "-input=false", "-no-color"]);
      await terraform(v, ["apply", "-auto-approve", "-input=false", "-no-color"]);
      // Untimed: writes the code caches, as the first plan on a machine does.
      await terraform(v, PLAN);
    }
    const node = { ms: [], cpu: [] };
    const floor = new Map(counts.map((n) => [n, { ms: [], cpu: [] }]));
    for (let r = 0; r < runs; r++) {
      const t = await run(process.execPath, ["-e", "0"], { env: { PATH: process.env.PATH } });
      node.ms.push(t.ms);
      node.cpu.push(t.cpuMs);
      const order = variants.map((_, i) => variants[(i + r) % variants.length]);
      for (const v of order) {
        v.quiet.push(await quietPlan(v, r));
        v.traced.push(await tracedPlan(v));
      }
      for (const [n, fv] of floors) {
        const x = await terraform(fv, PLAN);
        floor.get(n).ms.push(x.ms);
        floor.get(n).cpu.push(x.cpuMs);
      }
      process.stderr.write(`run ${r + 1}/${runs} done\n`);
    }
    for (const v of variants) {
      if (straceOut) v.strace = await stracePlan(v);
      if (callgrind) {
        process.stderr.write(`${v.name}: a plan under callgrind\n`);
        v.grind = await grindPlan(v);
      }
    }
    if (callgrind) node.grind = await grindNode();
    report(variants, node, floor);
    if (cpuProf) process.stdout.write(`\nCPU profiles: ${path.resolve(cpuProf)}/<variant>\n`);
  } finally {
    if (backend) {
      backend.child.kill("SIGTERM");
      await new Promise((r) => backend.child.once("exit", r));
    }
    if (keep) process.stderr.write(`kept ${tmp}\n`);
    else fs.rmSync(tmp, { recursive: true, force: true });
  }
}

main().catch((err) => {
  process.stderr.write(`bench/launches: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exitCode = 1;
});
