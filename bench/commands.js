#!/usr/bin/env node
// Whole-command benchmark: real `terraform apply` (create N instances), `terraform plan` with no
// changes, and `terraform destroy`, with N `gpurental_instance` against the standalone fake
// backend (immediate transitions), interleaved round by round with the same commands on N
// built-in `terraform_data` (Terraform's own floor for N resources), on this build against a second
// fake backend serving HTTPS with a private CA (`https`), and, with --base, on a second
// build of the provider, so that a change is judged side by side in one run. It prints the
// medians and, last, the provider's overhead per command (gpurental minus terraform_data) as a
// multiple of `node -e 0`, measured in the same run.
//
// This build runs twice: as a person at a terminal runs it (`gpurental`: no CI variables, no
// TF_IN_AUTOMATION, so on Linux its launches are sessions of the resident provider process), and
// as automation runs it (`ci`: TF_IN_AUTOMATION=1, a provider process per launch). The base build
// runs both ways too (`base`, `base-ci`), whatever its defaults are, and each ratio printed is a
// variant of this build over the same variant of the base (`ci/base-ci`).
//
// Everything lives in one temp directory, removed at the end: the mirrors, the CLI configuration,
// HOME, the working directories and the code caches. Nothing is written into $HOME.
//
// Usage: npm run bench:commands -- [--n 25] [--rounds 5] [--base <dir>] [--only plan,apply,destroy]
//                                  [--cpu-prof <dir>] [--keep]
//   --base <dir>      a second build: a checkout with dist/provider-bundle/ built (e.g. a worktree of
//                     an older commit after `npm run build`), or such a provider-bundle directory
//   --only <cmds>     time only these commands (apply and destroy still run, untimed, as needed;
//                     with plan alone, the instances are created once and each round is a plan)
//   --cpu-prof <dir>  write a V8 CPU profile of every provider process there (one round by default)
//                     (GPURENTAL_PROVIDER_CPU_PROF, which the launcher honours); for looking at
//                     where the time goes, not for timing (a build without it writes none); a
//                     resident provider process, started before the profiled round, writes none
//   --keep            leave the temp directory in place and print where it is
//   --pg-journal      also time the automation variant with its deploy journal in PostgreSQL
//                     (`ci-pg`: GPURENTAL_JOURNAL_URL, a private server started for the run, as
//                     test/e2e/postgres.ts starts one), and compare it with `ci` (the file journal)
//   --sea <zip>       also time a release archive's standalone executable (`npm run release`,
//                     release/terraform-provider-gpurental_<v>_linux_amd64.zip), as a person runs
//                     it (`sea`) and in automation (`sea-ci`); its processes note no CPU time of
//                     their own, so the provider-alone table counts only its resident process
//   --sea-plain <zip> the same for a release built with `--form sea` (`plain`, `plain-ci`): the
//                     plain SEA beside the compact executable that `--sea` times
//   --sea-base <zip>  the same for a release built from another commit (`sea-base`, `sea-base-ci`),
//                     to judge a change of the standalone executable against `sea` in one run
//
// On Linux with gcc, each command runs under bench/reaper.c: the processes it leaves behind (the
// provider process a command's launches share in automation, with the release's executable) are
// waited for, so their CPU time counts with the command's, while its wall time ends when the
// command itself exits.
//
// A resident provider process's CPU time, read from /proc before and after each command, is
// counted with the command's and the provider's. Last, it prints the fake backend's CPU time per
// command: it runs on the same cores, so it is part of every gpurental wall time, but it is the
// benchmark's server, not the provider.
"use strict";

const { spawn } = require("node:child_process");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { childCpuMs, pidCpuMs, residentCpuMs, residentPids, TICK_MS } = require("./proc-cpu");

const root = path.resolve(__dirname, "..");
const COMMANDS = ["apply", "plan", "destroy"];

function arg(name, fallback) {
  const i = process.argv.indexOf(name);
  return i === -1 ? fallback : process.argv[i + 1];
}

const N = Number(arg("--n", "25"));
const cpuProf = arg("--cpu-prof", undefined);
const rounds = Number(arg("--rounds", cpuProf ? "1" : "5"));
const only = new Set(arg("--only", COMMANDS.join(",")).split(","));
const keep = process.argv.includes("--keep");
const pgJournal = process.argv.includes("--pg-journal");

/** A private PostgreSQL for --pg-journal (test/e2e/postgres.ts, bundled into the run's temp directory). */
async function startJournalDatabase(tmp) {
  const out = path.join(tmp, "postgres.js");
  require("esbuild").buildSync({
    entryPoints: [path.join(root, "test", "e2e", "postgres.ts")],
    bundle: true,
    platform: "node",
    format: "cjs",
    outfile: out,
    logLevel: "warning",
  });
  const { findPostgres, startPostgres } = require(out);
  const install = findPostgres();
  if (!install.binDir) fail(`--pg-journal: ${install.missing}`);
  return startPostgres(install);
}
const baseArg = arg("--base", undefined);
const seaArg = arg("--sea", undefined);
const plainArg = arg("--sea-plain", undefined);
const seaBaseArg = arg("--sea-base", undefined);
/** The release archives to time, each as a person runs it and in automation. */
const seaZips = [
  [seaArg, "sea", "--sea"],
  [plainArg, "plain", "--sea-plain"],
  [seaBaseArg, "sea-base", "--sea-base"],
].filter(([zip]) => zip !== undefined);

if (!Number.isInteger(rounds) || rounds < 1) fail("--rounds must be a positive integer");
// The service allows 25 live instances per organization.
if (!Number.isInteger(N) || N < 1 || N > 25) fail("--n must be an integer from 1 to 25");
for (const c of only) if (!COMMANDS.includes(c)) fail(`--only: unknown command ${c}`);

function fail(message) {
  process.stderr.write(`bench/commands: ${message}\n`);
  process.exit(2);
}

/** The directory holding provider.js and provider-launcher.js of a build (a checkout or the directory). */
function bundleDir(dir) {
  const abs = path.resolve(dir);
  for (const candidate of [path.join(abs, "dist", "provider-bundle"), abs]) {
    if (
      fs.existsSync(path.join(candidate, "provider.js")) &&
      fs.existsSync(path.join(candidate, "provider-launcher.js"))
    ) {
      return candidate;
    }
  }
  fail(`${dir} holds no built provider (dist/provider-bundle/provider.js): run \`npm run build\` there`);
}

function findTerraform() {
  const names = process.env.TERRAFORM_BINARY_NAME
    ? [process.env.TERRAFORM_BINARY_NAME]
    : ["terraform", "tofu"];
  for (const name of names) {
    if (path.isAbsolute(name) && fs.existsSync(name)) return name;
    for (const dir of (process.env.PATH ?? "").split(path.delimiter)) {
      if (dir && fs.existsSync(path.join(dir, name))) return path.join(dir, name);
    }
  }
  fail(`none of ${names.join(", ")} was found on PATH (set TERRAFORM_BINARY_NAME)`);
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

/**
 * bench/reaper.c compiled once (Linux, with gcc): commands run under it, so the CPU time of a
 * process a command leaves behind (the provider process its launches share, in automation, which
 * outlives the launch that started it) is counted with the command's. Undefined without gcc: such
 * a process's CPU time is then left out, and the report says so.
 */
const reaper = (() => {
  if (process.platform !== "linux") return undefined;
  const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "gpurental-bench-reaper-")), "reaper");
  const r = require("node:child_process").spawnSync(
    "gcc",
    ["-O2", "-o", out, path.join(__dirname, "reaper.c")],
    {
      encoding: "utf8",
    },
  );
  if (r.status === 0) return out;
  console.error(
    "bench: gcc could not build bench/reaper.c: processes a command leaves behind are not counted",
  );
  return undefined;
})();

function run(file, args, opts) {
  return new Promise((resolve, reject) => {
    const cpu0 = childCpuMs();
    const t0 = process.hrtime.bigint();
    const child = reaper
      ? spawn(reaper, [file, ...args], { ...opts, stdio: ["ignore", "pipe", "pipe", "pipe"] })
      : spawn(file, args, { ...opts, stdio: ["ignore", "pipe", "pipe"] });
    // The command's own end (bench/reaper.c writes on descriptor 3 when it exits).
    let ended;
    child.stdio[3]?.once("data", () => {
      ended = process.hrtime.bigint();
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => {
      out += d;
    });
    child.stderr.on("data", (d) => {
      err += d;
    });
    child.on("error", reject);
    child.on("close", (code) =>
      resolve({
        code,
        ms: Number((ended ?? process.hrtime.bigint()) - t0) / 1e6,
        cpuMs: childCpuMs() - cpu0,
        stdout: out,
        stderr: err,
      }),
    );
  });
}

/** Starts the standalone fake backend (this checkout's) and returns its URL and demo credentials. */
async function startBackend(tmp, tls = false) {
  const dir = path.join(tmp, tls ? "backend-https" : "backend-http");
  fs.mkdirSync(dir, { recursive: true });
  const credentials = path.join(dir, "credentials.json");
  const child = spawn(
    process.execPath,
    [
      path.join(root, "bin", "gpurental"),
      "fake-backend",
      "--port",
      "0",
      "--seed",
      "demo",
      "--transitions",
      "immediate",
      "--quiet",
      "--credentials",
      credentials,
      // The CA is written beside the credentials (gpurental-fake-ca.pem).
      ...(tls ? ["--tls"] : []),
    ],
    { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, NODE_OPTIONS: "" } },
  );
  const url = await new Promise((resolve, reject) => {
    let out = "";
    let err = "";
    child.stderr.on("data", (d) => {
      err += d;
    });
    child.stdout.on("data", (d) => {
      out += d;
      const m = /listening on (\S+)/.exec(out);
      if (m && out.includes("credentials written") && (!tls || out.includes("CA certificate written")))
        resolve(m[1]);
    });
    child.on("exit", (code) => reject(new Error(`the fake backend exited (${code}): ${err}`)));
  });
  const creds = JSON.parse(fs.readFileSync(credentials, "utf8"));
  if (!tls) return { child, url, creds };
  const caFile = path.join(dir, "gpurental-fake-ca.pem");
  const { Agent } = require("undici");
  const ca = [...require("node:tls").rootCertificates, fs.readFileSync(caFile, "utf8")];
  return { child, url, creds, caFile, dispatcher: new Agent({ connect: { ca } }) };
}

async function control(backend, method, route, body) {
  const { fetch } = require("undici");
  const res = await fetch(`${backend.url}/_control${route}`, {
    dispatcher: backend.dispatcher,
    method,
    headers: { "x-control-token": backend.creds.control_token, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} /_control${route}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

/** A machine and an offer with room for every instance of every build at once. */
async function makeRoom(backend, builds) {
  const units = N * builds + 4;
  const machine = await control(backend, "POST", "/machines", {
    disk_gb: 100 * units,
    public_ip: "203.0.113.99",
    cuda_version: "12.4",
  });
  const offer = await control(backend, "POST", "/offers", {
    machine_id: machine.id,
    gpu_model: "RTX 4090",
    price_per_hour_micro: 1_000_000,
    free_units: units,
  });
  return offer.id;
}

/**
 * A session in an organization of its own: the service allows 25 live instances per organization,
 * and the builds' instances exist at the same time.
 */
async function orgSession(backend, name) {
  const org = await control(backend, "POST", "/orgs", { name, balance_micro: 100_000 * 1_000_000 });
  const user = await control(backend, "POST", "/users", { email: `${name}@bench.example` });
  await control(backend, "POST", "/memberships", { org_id: org.id, user_id: user.id, role: "admin" });
  return (await control(backend, "POST", "/sessions", { user_id: user.id, org_id: org.id })).token;
}

function gpurentalConfig(backend, token, offerId, templateId) {
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
  count       = ${N}
  offer_id    = ${JSON.stringify(offerId)}
  template_id = ${JSON.stringify(templateId)}
  disk_gb     = 20
  label       = "bench-\${count.index}"
}
`;
}

function terraformDataConfig() {
  return `resource "terraform_data" "bench" {
  count = ${N}
  input = "bench-\${count.index}"
}
`;
}

/** One variant: a working directory with its own CLI configuration and mirror. */
function makeVariant(tmp, name, config, bundle) {
  const dir = path.join(tmp, name);
  const work = path.join(dir, "work");
  const home = path.join(dir, "home");
  fs.mkdirSync(work, { recursive: true });
  fs.mkdirSync(home, { recursive: true });
  const cliConfig = path.join(dir, "cli.tfrc");
  if (typeof bundle === "object" && bundle.seaZip) {
    // A filesystem mirror in the packed layout: the release's zip as Terraform downloads it.
    const mirror = path.join(dir, "mirror");
    const pkgDir = path.join(mirror, "registry.terraform.io", "gpurental", "gpurental");
    fs.mkdirSync(pkgDir, { recursive: true });
    fs.copyFileSync(bundle.seaZip, path.join(pkgDir, path.basename(bundle.seaZip)));
    const { mirrorCliConfig } = require(path.join(root, "dist", "cli", "provider", "provider.js"));
    fs.writeFileSync(cliConfig, mirrorCliConfig(mirror, ["registry.terraform.io/gpurental/gpurental"]));
  } else if (bundle) {
    // This checkout's installer lays out the mirror; the build's own files go into it.
    const { installProvider } = require(path.join(root, "dist", "cli", "provider", "provider.js"));
    const install = installProvider({
      dir: path.join(dir, "mirror"),
      sources: ["registry.terraform.io/gpurental/gpurental"],
      bundle: path.join(bundle, "provider.js"),
    });
    fs.writeFileSync(cliConfig, install.cliConfig);
    // The same script, which also notes each provider process's CPU time at exit, so that the
    // provider's own share is told from Terraform's (written before init, which hashes it). Where
    // the npm provider's launcher runs it, the script is beside the launcher (NODE_SCRIPT).
    const beside = path.join(install.packageDir, "provider-node.js");
    const script = fs.existsSync(beside) ? beside : install.executable;
    fs.writeFileSync(script, benchExecutable(fs.readFileSync(script, "utf8")));
  } else {
    fs.writeFileSync(cliConfig, "");
  }
  fs.writeFileSync(path.join(work, "main.tf"), config);
  const env = {
    PATH: process.env.PATH,
    HOME: home,
    TMPDIR: process.env.TMPDIR ?? os.tmpdir(),
    TF_CLI_CONFIG_FILE: cliConfig,
    CHECKPOINT_DISABLE: "1",
    TF_INPUT: "0",
    GPURENTAL_PROVIDER_CODE_CACHE_DIR: path.join(dir, "code-cache"),
    // Where a build whose default is the resident provider process keeps it: this variant's own.
    GPURENTAL_PROVIDER_RESIDENT_DIR: path.join(dir, "run"),
  };
  return {
    name,
    work,
    env,
    times: { apply: [], plan: [], destroy: [] },
    cpu: { apply: [], plan: [], destroy: [] },
    providerCpu: { apply: [], plan: [], destroy: [] },
    backendCpu: { apply: [], plan: [], destroy: [] },
  };
}

// Named GPURENTAL_PROVIDER_* so that it reaches the provider process a command's launches share in
// automation, which starts with only such variables (src/executable/compact/command-session.c).
// The resident process gets it too, but notes nothing: it outlives the command, and its CPU time
// is read from /proc around each command instead (residentCpuMs).
const CPU_LOG = "GPURENTAL_PROVIDER_BENCH_CPU_LOG";

function benchExecutable(original) {
  const [shebang, ...rest] = original.split("\n");
  const hook = [
    `const cpuLog = process.env.${CPU_LOG};`,
    'const resident = process.argv.includes("--resident") && !process.argv.includes("--owner");',
    "if (cpuLog && !resident) {",
    '  process.on("exit", () => {',
    "    const u = process.cpuUsage();",
    '    require("node:fs").appendFileSync(cpuLog, String((u.user + u.system) / 1000) + "\\n");',
    "  });",
    "}",
  ];
  return [shebang, ...hook, ...rest].join("\n");
}

/** The CPU time the provider processes of one command noted, in ms. */
function providerCpuMs(file) {
  if (!fs.existsSync(file)) return 0;
  const total = fs
    .readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .reduce((sum, line) => sum + Number(line), 0);
  fs.rmSync(file);
  return total;
}

const ARGS = {
  apply: ["apply", "-auto-approve", "-input=false", "-no-color"],
  plan: ["plan", "-input=false", "-no-color", "-detailed-exitcode"],
  destroy: ["destroy", "-auto-approve", "-input=false", "-no-color"],
};

async function tf(terraform, v, command, backend, profile = false) {
  const env = { ...v.env };
  // Terraform passes its environment on to the provider processes, and the launcher profiles.
  if (profile && v.name !== "terraform_data")
    env.GPURENTAL_PROVIDER_CPU_PROF = path.join(path.resolve(cpuProf), v.name, command);
  const cpuLog = path.join(v.work, "..", "provider-cpu.log");
  env[CPU_LOG] = cpuLog;
  const residentDir = v.env.GPURENTAL_PROVIDER_RESIDENT_DIR;
  const resident0 = residentCpuMs(residentDir);
  // The HTTPS variant has a backend of its own.
  backend = v.backend ?? backend;
  const backend0 = pidCpuMs(backend.child.pid);
  const r = await run(terraform, ARGS[command], { cwd: v.work, env });
  // The resident process is no child of Terraform: its share is read from /proc.
  const residentMs = residentCpuMs(residentDir) - resident0;
  // The fake backend is no child of Terraform either; its share is shown apart, not counted.
  r.backendCpuMs = pidCpuMs(backend.child.pid) - backend0;
  r.providerCpuMs = providerCpuMs(cpuLog) + residentMs;
  r.cpuMs += residentMs;
  const expected = 0; // plan -detailed-exitcode: 0 means no changes, which is what is measured
  if (r.code !== expected) {
    throw new Error(
      `${v.name}: terraform ${command} exited ${r.code}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`,
    );
  }
  return r;
}

async function timeNode() {
  return run(process.execPath, ["-e", "0"], { env: { PATH: process.env.PATH } });
}

function fmtS(ms) {
  return `${(ms / 1000).toFixed(2)} s`;
}

async function main() {
  const terraform = findTerraform();
  const current = bundleDir(root);
  const base = baseArg ? bundleDir(baseArg) : undefined;
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "gpurental-bench-commands-"));
  let backend;
  let httpsBackend;
  let journalDb;
  try {
    backend = await startBackend(tmp);
    const templateId = "00000000-0000-4000-8000-000000000051"; // the demo seed's SSH template
    const offerId = await makeRoom(backend, 2 + (pgJournal ? 1 : 0) + (base ? 2 : 0) + 2 * seaZips.length);
    /** A variant of `build` with an organization of its own; in automation, TF_IN_AUTOMATION=1. */
    const variant = async (name, build, automation, on = backend, offer = offerId) => {
      const token = await orgSession(on, `bench-${name}`);
      const v = makeVariant(tmp, name, gpurentalConfig(on, token, offer, templateId), build);
      // Terraform's own variable for automation: the provider's default is then a process per launch.
      if (automation) v.env.TF_IN_AUTOMATION = "1";
      return v;
    };
    const variants = [
      makeVariant(tmp, "terraform_data", terraformDataConfig()),
      await variant("gpurental", current, false),
      await variant("ci", current, true),
    ];
    if (pgJournal) {
      journalDb = await startJournalDatabase(tmp);
      const ciPg = await variant("ci-pg", current, true);
      ciPg.env.GPURENTAL_JOURNAL_URL = journalDb.connStr();
      variants.push(ciPg);
    }
    // The same build, as a person runs it, against the fake backend over HTTPS with a private CA:
    // what TLS costs a command (the handshake, reading the system's CAs once per process).
    httpsBackend = await startBackend(tmp, true);
    const https = await variant("https", current, false, httpsBackend, await makeRoom(httpsBackend, 1));
    https.env.GPURENTAL_CA_CERT_FILE = httpsBackend.caFile;
    https.backend = httpsBackend;
    variants.push(https);
    for (const [zipArg, prefix, flag] of seaZips) {
      const seaZip = path.resolve(zipArg);
      if (!/_linux_amd64\.zip$/.test(seaZip) || !fs.existsSync(seaZip))
        fail(`${flag}: ${zipArg} is not a release's linux_amd64 zip (npm run release)`);
      variants.push(
        await variant(prefix, { seaZip }, false),
        await variant(`${prefix}-ci`, { seaZip }, true),
      );
    }
    // The base build as a person runs it and, beside `ci`, in automation, where CI runs it.
    if (base) variants.push(await variant("base", base, false), await variant("base-ci", base, true));
    for (const v of variants) {
      const r = await run(terraform, ["init", "-input=false", "-no-color"], { cwd: v.work, env: v.env });
      if (r.code !== 0) throw new Error(`${v.name}: terraform init failed\n${r.stdout}\n${r.stderr}`);
    }
    // Untimed: one whole cycle per variant writes the code caches and warms the file system.
    for (const v of variants) for (const c of COMMANDS) await tf(terraform, v, c, backend);
    // This build's default, where a person runs it, is the resident provider process (Linux).
    if (
      process.platform === "linux" &&
      residentPids(variants[1].env.GPURENTAL_PROVIDER_RESIDENT_DIR).length !== 1
    )
      throw new Error("this build started no resident provider process where a person runs it");
    const ci = variants.find((v) => v.name === "ci");
    if (residentPids(ci.env.GPURENTAL_PROVIDER_RESIDENT_DIR).length !== 0)
      throw new Error("this build started a resident provider process under TF_IN_AUTOMATION");
    // A round is apply, plan, destroy; when only plan is timed, the instances are created once and
    // the rounds are plans alone.
    const planOnly = !only.has("apply") && !only.has("destroy");
    const cycle = planOnly ? ["plan"] : COMMANDS;
    if (planOnly) for (const v of variants) await tf(terraform, v, "apply", backend);
    const node = { times: [], cpu: [] };
    for (let round = 0; round < rounds; round++) {
      // Rotated order, so no variant always runs right after another.
      const order = variants.map((_, i) => variants[(i + round) % variants.length]);
      for (const c of cycle) {
        const n = await timeNode();
        node.times.push(n.ms);
        node.cpu.push(n.cpuMs);
        for (const v of order) {
          const r = await tf(terraform, v, c, backend, cpuProf !== undefined && only.has(c));
          if (only.has(c)) {
            v.times[c].push(r.ms);
            v.cpu[c].push(r.cpuMs);
            v.providerCpu[c].push(r.providerCpuMs);
            v.backendCpu[c].push(r.backendCpuMs);
          }
        }
      }
      process.stderr.write(`round ${round + 1}/${rounds} done\n`);
    }
    if (planOnly) for (const v of variants) await tf(terraform, v, "destroy", backend);
    report(variants, node, base);
    if (seaZips.length > 0) await launchToHandshake(variants);
    if (cpuProf) process.stdout.write(`CPU profiles of the provider processes: ${path.resolve(cpuProf)}\n`);
  } finally {
    for (const pid of residentPids(tmp)) {
      try {
        process.kill(pid, "SIGTERM");
      } catch {
        // gone already
      }
    }
    for (const b of [backend, httpsBackend]) {
      if (!b) continue;
      b.child.kill("SIGTERM");
      await new Promise((r) => b.child.once("exit", r));
      await b.dispatcher?.close();
    }
    await journalDb?.stop();
    if (keep) process.stderr.write(`kept ${tmp}\n`);
    else fs.rmSync(tmp, { recursive: true, force: true });
  }
}

/**
 * With --sea: launch to handshake (and to the schema answer) of the two executables Terraform
 * installed, bench/startup.js on each, one after the other: today's provider (node on the
 * bundle, the Node.js on PATH) and the release's standalone executable.
 */
async function launchToHandshake(variants) {
  const lines = ["", "launch to handshake, a provider process of its own (bench/startup.js --runs 21):"];
  for (const name of ["gpurental", ...seaZips.map(([, prefix]) => prefix)]) {
    const v = variants.find((x) => x.name === name);
    const pkg = path.join(
      v.work,
      ".terraform",
      "providers",
      "registry.terraform.io",
      "gpurental",
      "gpurental",
    );
    const [version] = fs.readdirSync(pkg);
    const [platform] = fs.readdirSync(path.join(pkg, version));
    const exe = path.join(pkg, version, platform, `terraform-provider-gpurental_v${version}`);
    const r = await run(
      process.execPath,
      [path.join(__dirname, "startup.js"), "--runs", "21", "--bin", exe],
      {
        // The variant's HOME: a compact executable's runtime is already unpacked there.
        env: { ...process.env, HOME: v.env.HOME, XDG_CACHE_HOME: "", GPURENTAL_PROVIDER_RESIDENT: "off" },
      },
    );
    if (r.code !== 0) throw new Error(`bench/startup.js --bin ${exe} failed:\n${r.stderr}`);
    const pick = (label) =>
      (r.stdout.split("\n").find((l) => l.startsWith(label)) ?? "").replace(/\s+/g, " ").trim();
    lines.push(`  ${name.padEnd(9)} ${pick("provider (spawn to handshake)")}`);
    lines.push(`  ${"".padEnd(9)} ${pick("provider (spawn to schema answer)")}`);
  }
  process.stdout.write(`${lines.join("\n")}\n`);
}

function report(variants, node, base) {
  const [floor, ...providers] = variants;
  const timed = COMMANDS.filter((c) => only.has(c));
  const lines = [];
  lines.push(`${N} resources, ${rounds} interleaved round${rounds === 1 ? "" : "s"}, medians`);
  lines.push(`gpurental = ${bundleDir(root)}`);
  if (base) lines.push(`base      = ${base}`);
  const section = (what, key, unit) => {
    const n = median(node[key]);
    lines.push("");
    lines.push(`${what}; node -e 0: ${n.toFixed(1)} ms (${node[key].length} runs)`);
    const head = ["command", ...variants.map((v) => v.name)];
    const rows = timed.map((c) => [`terraform ${c}`, ...variants.map((v) => fmtS(median(v[key][c])))]);
    lines.push(...table([head, ...rows]));
    lines.push(`provider overhead (minus terraform_data), ms and multiple of node -e 0${unit}:`);
    const oHead = ["command", ...providers.map((v) => v.name), ...ratioHeads(providers)];
    const oRows = timed.map((c) => {
      const f = median(floor[key][c]);
      const o = providers.map((v) => median(v[key][c]) - f);
      const cells = o.map((x) => `${x.toFixed(0)} ms ${(x / n).toFixed(1).padStart(5)}x`);
      cells.push(...ratios(o, providers));
      return [`terraform ${c}`, ...cells];
    });
    lines.push(...table([oHead, ...oRows]));
  };
  section("wall time", "times", "");
  // The same build and launch mode over HTTPS (a private CA) and over HTTP, in the same rounds.
  const http = variants.find((v) => v.name === "gpurental");
  const https = variants.find((v) => v.name === "https");
  if (http && https) {
    lines.push("");
    lines.push("HTTPS against HTTP (same build, same rounds), wall time:");
    for (const c of timed) {
      const a = median(http.times[c]);
      const b = median(https.times[c]);
      lines.push(
        `  terraform ${c}: ${fmtS(b)} over HTTPS, ${fmtS(a)} over HTTP (${b - a >= 0 ? "+" : ""}${(b - a).toFixed(0)} ms)`,
      );
    }
  }
  // The deploy journal in PostgreSQL against the file journal, both in automation.
  const ci = variants.find((v) => v.name === "ci");
  const ciPg = variants.find((v) => v.name === "ci-pg");
  if (ci && ciPg) {
    lines.push("");
    lines.push("The journal in PostgreSQL (ci-pg) against the file journal (ci), same rounds:");
    for (const c of timed) {
      const keys = [
        ["wall", "times"],
        ...(TICK_MS !== undefined ? [["CPU of terraform and providers", "cpu"]] : []),
        ["CPU of the provider processes", "providerCpu"],
      ];
      for (const [what, key] of keys) {
        const a = median(ci[key][c]);
        const b = median(ciPg[key][c]);
        lines.push(
          `  terraform ${c}, ${what}: ${b.toFixed(0)} ms against ${a.toFixed(0)} ms (${b >= a ? "+" : ""}${(((b - a) / a) * 100).toFixed(1)}%)`,
        );
      }
    }
  }
  // Steadier than wall time on a busy machine: it counts only the work done, not the waiting.
  if (TICK_MS !== undefined)
    section("CPU time of terraform and its providers (user + system)", "cpu", " (its CPU time)");
  // The provider's own work alone: what each of its processes used, as it noted at exit.
  lines.push("");
  lines.push("CPU time of the provider processes alone (each notes its own at exit), summed per command:");
  const pHead = ["command", ...providers.map((v) => v.name), ...ratioHeads(providers)];
  const pRows = timed.map((c) => {
    const m = providers.map((v) => median(v.providerCpu[c]));
    const cells = m.map((x) => `${x.toFixed(0)} ms`);
    cells.push(...ratios(m, providers));
    return [`terraform ${c}`, ...cells];
  });
  lines.push(...table([pHead, ...pRows]));
  // What the commands cost the fake backend, on the same cores: part of the wall times above.
  lines.push("");
  lines.push("CPU time of the fake backend answering each command (not counted above):");
  const bHead = ["command", ...variants.map((v) => v.name)];
  const bRows = timed.map((c) => [
    `terraform ${c}`,
    ...variants.map((v) => `${median(v.backendCpu[c]).toFixed(0)} ms`),
  ]);
  lines.push(...table([bHead, ...bRows]));
  process.stdout.write(`${lines.join("\n")}\n`);
}

/**
 * The ratios printed: each variant of this build over the same variant of the older build (--base
 * for the npm provider, --sea-base for a release), run alike (as a person runs it, in automation).
 */
const RATIO_PAIRS = [
  ["gpurental", "base"],
  ["ci", "base-ci"],
  ["sea", "sea-base"],
  ["sea-ci", "sea-base-ci"],
];
function ratioPairs(providers) {
  const at = (name) => providers.findIndex((v) => v.name === name);
  return RATIO_PAIRS.map(([a, b]) => [at(a), at(b), `${a}/${b}`]).filter(([i, j]) => i >= 0 && j >= 0);
}
function ratioHeads(providers) {
  return ratioPairs(providers).map(([, , head]) => head);
}
function ratios(figures, providers) {
  // A release's processes note no CPU time of their own: 0 over 0 is no figure.
  return ratioPairs(providers).map(([i, j]) => (figures[j] > 0 ? (figures[i] / figures[j]).toFixed(2) : "-"));
}

function table(rows) {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  return rows.map((r) =>
    r.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join("  "),
  );
}

main().catch((err) => {
  process.stderr.write(`bench/commands: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exitCode = 1;
});
