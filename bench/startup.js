#!/usr/bin/env node
// Start-up benchmark: median time from spawning the provider executable (as Terraform does: exec
// of bin/terraform-provider-gpurental with the go-plugin environment and AutoMTLS on) until its
// handshake line arrives on stdout, next to the time `node -e 0` takes to run and exit.
// Terraform starts the provider 2-5 times per command, so this number is paid several times.
//
// The provider runs with a code cache of its own in a fresh directory, written the way Terraform's
// first launch writes it: at exit, after serving GetProviderSchema and Shutdown. A cache written by
// a process killed right after its handshake holds fewer functions and loads a few ms faster than
// any Terraform will see, so that is not the one measured.
//
// Last, the CPU time (user + system) of the whole schema life of a process, launch to exit: the
// figure that adds up in automation, where Terraform starts a process per launch. Wall times on a
// loaded machine wait for the other work; CPU time does not. Read from the kernel's count of
// waited-for children (/proc/self/stat; Linux only, in 10 ms ticks, so it is a mean over the runs).
//
// With --base, a second executable (another build's bin/terraform-provider-gpurental) is timed in
// the same run, interleaved run by run, each with a code cache of its own: on this shared machine
// only figures from one run compare.
//
// Usage: npm run build && node bench/startup.js [--runs N] [--bin path] [--base path]
"use strict";

const { spawn, spawnSync } = require("node:child_process");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");

const root = path.resolve(__dirname, "..");

function arg(name, fallback) {
  const i = process.argv.indexOf(name);
  return i === -1 ? fallback : process.argv[i + 1];
}

const runs = Number(arg("--runs", "31"));
const bin = path.resolve(arg("--bin", path.join(root, "bin", "terraform-provider-gpurental")));
const baseArg = arg("--base", undefined);
const base = baseArg === undefined ? undefined : path.resolve(baseArg);

function clientCert() {
  // Stands in for the certificate Terraform passes; made the way the server makes its own.
  const { generateServerCertificate } = require(path.join(root, "dist", "plugin", "cert.js"));
  return generateServerCertificate();
}

function timeNode() {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const child = spawn(process.execPath, ["-e", "0"], { stdio: "ignore" });
    child.on("error", reject);
    child.on("exit", () => resolve(Number(process.hrtime.bigint() - t0) / 1e6));
  });
}

function timeProvider(env, exe = bin) {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const child = spawn(exe, [], { env, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    let done = false;
    child.on("error", reject);
    child.stderr.on("data", (d) => {
      err += d;
    });
    child.stdout.on("data", (d) => {
      out += d;
      if (!done && out.includes("\n")) {
        done = true;
        const ms = Number(process.hrtime.bigint() - t0) / 1e6;
        if (!/^1\|6\|(tcp|unix)\|[^|]+\|grpc\|[A-Za-z0-9+/]{50,}\n/.test(out)) {
          reject(new Error(`unexpected handshake: ${out}`));
        }
        child.kill("SIGTERM"); // ends it the way Shutdown does
        child.on("exit", () => resolve(ms));
      }
    });
    child.on("exit", (code) => {
      if (!done) reject(new Error(`provider exited (${code}) before the handshake: ${err}`));
    });
  });
}

// Launch to the GetProviderSchema answer over mTLS, then Shutdown: the whole life of the first
// provider process of every Terraform command, which asks for nothing else. It includes loading
// the gRPC server after the handshake; the production build answers from its pre-encoded schema
// without loading the provider itself.
function timeSchema(env, certs, exe = bin) {
  const { connect, tlsCredentials, parseHandshake } = require(
    path.join(root, "dist", "plugin", "testing", "grpc-client.js"),
  );
  const { derToPem } = require(path.join(root, "dist", "plugin", "cert.js"));
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const child = spawn(exe, [], { env, stdio: ["ignore", "pipe", "ignore"] });
    let out = "";
    child.on("error", reject);
    child.stdout.on("data", async (d) => {
      out += d;
      if (!out.includes("\n") || child.started) return;
      child.started = true;
      const hs = parseHandshake(out);
      const creds = tlsCredentials(derToPem(Buffer.from(hs.cert, "base64")), certs);
      const provider = connect(hs.address, "tfplugin6.Provider", creds);
      try {
        await provider.call("GetProviderSchema");
        const ms = Number(process.hrtime.bigint() - t0) / 1e6;
        const controller = connect(hs.address, "plugin.GRPCController", creds);
        await controller.call("Shutdown").catch(() => {});
        child.on("exit", () => resolve(ms));
        provider.close();
        controller.close();
      } catch (err) {
        child.kill("SIGKILL");
        reject(err);
      }
    });
  });
}

/** The kernel's clock tick in ms (Linux); undefined elsewhere. */
const TICK_MS = (() => {
  if (process.platform !== "linux") return undefined;
  const r = spawnSync("getconf", ["CLK_TCK"], { encoding: "utf8" });
  const hz = Number(r.stdout);
  return r.status === 0 && hz > 0 ? 1000 / hz : undefined;
})();

/** CPU time (user + system) of this process's waited-for children so far, in ms; NaN off Linux. */
function childCpuMs() {
  if (TICK_MS === undefined) return Number.NaN;
  const stat = fs.readFileSync("/proc/self/stat", "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // cutime and cstime: fields 16 and 17 of stat.
  return (Number(fields[13]) + Number(fields[14])) * TICK_MS;
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

async function main() {
  const env = {
    ...process.env,
    TF_PLUGIN_MAGIC_COOKIE: "d602bf8f470bc67ca7faa0386276bbdd4330efaf76d1a219cb4d6991ca9872b2",
    PLUGIN_PROTOCOL_VERSIONS: "5,6",
    PLUGIN_MIN_PORT: "10000",
    PLUGIN_MAX_PORT: "25000",
    // A provider process's own start-up, not a session of the resident one (unless asked for).
    GPURENTAL_PROVIDER_RESIDENT: process.env.GPURENTAL_PROVIDER_RESIDENT ?? "off",
  };
  const certs = clientCert();
  env.PLUGIN_CLIENT_CERT = certs.certPem;
  const builds = [{ name: "this build", exe: bin }];
  if (base) builds.push({ name: "base", exe: base });
  const dirs = [];
  try {
    for (const b of builds) {
      const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), "gpurental-bench-cache-"));
      dirs.push(cacheDir);
      b.env = { ...env, GPURENTAL_PROVIDER_CODE_CACHE_DIR: cacheDir };
    }
    await measure(builds, certs);
  } finally {
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  }
}

async function measure(builds, certs) {
  // Untimed: the first schema run writes the code cache as Terraform's first launch would; the
  // others warm the file system cache.
  for (const b of builds) {
    await timeSchema(b.env, certs, b.exe);
    await timeProvider(b.env, b.exe);
    Object.assign(b, { provider: [], schema: [], cpuMs: 0 });
  }
  await timeNode();
  const node = [];
  for (let i = 0; i < runs; i++) {
    node.push(await timeNode());
    for (const b of builds) {
      b.provider.push(await timeProvider(b.env, b.exe));
      const cpu0 = childCpuMs();
      b.schema.push(await timeSchema(b.env, certs, b.exe));
      b.cpuMs += childCpuMs() - cpu0;
    }
  }
  const n = median(node);
  const fmt = (x) => `${x.toFixed(1)} ms`;
  let out =
    `runs:                               ${runs} each, interleaved${builds.length > 1 ? " (this build, base)" : ""}\n` +
    `node -e 0 (spawn to exit), median:  ${fmt(n)}  (min ${fmt(Math.min(...node))})\n`;
  for (const b of builds) {
    const p = median(b.provider);
    if (builds.length > 1) out += `${b.name}:\n`;
    out +=
      `provider (spawn to handshake):      ${fmt(p)}  (min ${fmt(Math.min(...b.provider))})\n` +
      `ratio:                              ${(p / n).toFixed(2)}x  (target 1.30x)\n` +
      `provider (spawn to schema answer):  ${fmt(median(b.schema))}  (min ${fmt(Math.min(...b.schema))}; mTLS)\n` +
      `provider CPU, launch to exit:       ${fmt(b.cpuMs / runs)}  (user + system, mean; schema life)\n`;
  }
  if (builds.length > 1) {
    const [a, b] = builds;
    out +=
      `this build / base, schema answer:   ${(median(a.schema) / median(b.schema)).toFixed(2)}x (medians)\n` +
      `this build / base, CPU:             ${(a.cpuMs / b.cpuMs).toFixed(2)}x\n`;
  }
  process.stdout.write(out);
}

main().catch((err) => {
  process.stderr.write(`bench/startup: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exitCode = 1;
});
