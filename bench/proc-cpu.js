"use strict";
// CPU time as Linux's /proc counts it, for bench/commands.js: the waited-for children of this
// process (Terraform and, through it, its provider processes), one process by pid (the fake
// backend), and the resident provider processes serving a directory's sockets. Off Linux, TICK_MS
// is undefined and the figures are NaN or 0, which the report leaves out.
const { spawnSync } = require("node:child_process");
const fs = require("node:fs");
const path = require("node:path");

// CPU time of waited-for children and their own waited-for children (Terraform waits for its
// provider processes): fields 16 and 17 of /proc/self/stat, in clock ticks. Linux only.
const TICK_MS = (() => {
  if (process.platform !== "linux") return undefined;
  const r = spawnSync("getconf", ["CLK_TCK"], { encoding: "utf8" });
  const hz = Number(r.stdout);
  return r.status === 0 && hz > 0 ? 1000 / hz : undefined;
})();
function childCpuMs() {
  if (TICK_MS === undefined) return Number.NaN;
  const stat = fs.readFileSync("/proc/self/stat", "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[13]) + Number(fields[14])) * TICK_MS;
}

/** CPU time so far of one process (Linux /proc); 0 once it has exited. */
function pidCpuMs(pid) {
  if (TICK_MS === undefined) return 0;
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
  } catch {
    return 0; // exited meanwhile
  }
}

/** CPU time so far of the resident provider processes serving sockets in `dir` (Linux /proc). */
function residentCpuMs(dir) {
  if (!dir) return 0;
  let total = 0;
  for (const pid of residentPids(dir)) total += pidCpuMs(pid);
  return total;
}

function residentPids(dir) {
  const pids = [];
  for (const name of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const args = fs.readFileSync(`/proc/${name}/cmdline`, "utf8").split("\0");
      const i = args.indexOf("--resident");
      if (i !== -1 && (args[i + 1] ?? "").startsWith(`${dir}${path.sep}`)) pids.push(Number(name));
    } catch {
      // exited meanwhile
    }
  }
  return pids;
}

module.exports = { TICK_MS, childCpuMs, pidCpuMs, residentCpuMs, residentPids };
