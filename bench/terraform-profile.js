#!/usr/bin/env node
// Where Terraform's own CPU goes in one command. Runs the command under `perf record` (task-clock
// samples, every process it starts included) a few times and prints, per run on average:
//   - CPU per process name (`terraform`, `node`, the launchers);
//   - Terraform's samples by kind (garbage collection, maps, cty, Unicode normalisation, crypto,
//     gRPC, the kernel on its behalf, ...) and by function.
// Release builds of Terraform carry no ELF symbols, but every Go binary keeps its function table
// (.gopclntab) for its own stack traces; this script reads the function names from there, so no Go
// toolchain is needed. Samples are leaf functions only (self time), which is what the kinds sum.
//
// Usage: node bench/terraform-profile.js [--runs 3] [--top 25] [--cwd <dir>] -- <command...>
//   e.g. in a working directory with N instances applied, TF_IN_AUTOMATION=1 and the rest of the
//   command's environment set:  node bench/terraform-profile.js --runs 3 -- terraform plan -no-color
// Compare two runs (1 and 25 instances, or gpurental and terraform_data) to get what each
// instance or each provider adds. Linux with `perf` only.
"use strict";

const { execFileSync, spawnSync } = require("node:child_process");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");

const argv = process.argv.slice(2);
const dash = argv.indexOf("--");
if (dash === -1 || dash === argv.length - 1) {
  process.stderr.write(
    "usage: node bench/terraform-profile.js [--runs 3] [--top 25] [--cwd <dir>] -- <command...>\n",
  );
  process.exit(2);
}
const opts = argv.slice(0, dash);
const command = argv.slice(dash + 1);
const opt = (name, fallback) => {
  const i = opts.indexOf(name);
  return i === -1 ? fallback : opts[i + 1];
};
const runs = Number(opt("--runs", "3"));
const top = Number(opt("--top", "25"));
const cwd = opt("--cwd", process.cwd());
/** One sample every 100 µs of CPU time. */
const PERIOD_NS = 100_000;

/** The function table of a Go ELF binary: sorted entry addresses and their names. */
function goFunctions(file) {
  const elf = fs.readFileSync(file);
  if (elf.readUInt32BE(0) !== 0x7f454c46 || elf[4] !== 2) throw new Error(`${file} is not a 64-bit ELF file`);
  const shoff = Number(elf.readBigUInt64LE(0x28));
  const shentsize = elf.readUInt16LE(0x3a);
  const shnum = elf.readUInt16LE(0x3c);
  const shstrndx = elf.readUInt16LE(0x3e);
  const section = (i) => {
    const at = shoff + i * shentsize;
    return { name: elf.readUInt32LE(at), offset: Number(elf.readBigUInt64LE(at + 0x18)) };
  };
  const names = section(shstrndx).offset;
  let header;
  for (let i = 0; i < shnum; i++) {
    const s = section(i);
    const end = elf.indexOf(0, names + s.name);
    if (elf.toString("latin1", names + s.name, end) === ".gopclntab") header = s.offset;
  }
  if (header === undefined) throw new Error(`${file} has no .gopclntab: not a Go binary`);
  // Go 1.20 and later (magic 0xfffffff1): nfunc, nfiles, textStart, then the tables' offsets.
  if (elf.readUInt32LE(header) !== 0xfffffff1)
    throw new Error(`${file}: a Go function table older than Go 1.20`);
  const field = (k) => Number(elf.readBigUInt64LE(header + 8 + 8 * k));
  const nfunc = field(0);
  const textStart = field(2);
  const funcNames = header + field(3);
  const functab = header + field(7);
  const entries = new Array(nfunc);
  const fnames = new Array(nfunc);
  for (let i = 0; i < nfunc; i++) {
    const entry = elf.readUInt32LE(functab + 8 * i);
    const func = functab + elf.readUInt32LE(functab + 8 * i + 4);
    const nameAt = funcNames + elf.readInt32LE(func + 4);
    entries[i] = textStart + entry;
    fnames[i] = elf.toString("utf8", nameAt, elf.indexOf(0, nameAt));
  }
  return (address) => {
    let lo = 0;
    let hi = nfunc - 1;
    if (address < entries[0]) return "?";
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (entries[mid] <= address) lo = mid;
      else hi = mid - 1;
    }
    return fnames[lo];
  };
}

const KINDS = [
  [
    "garbage collection",
    /^runtime\.(scan|findObject|grey|gc|markroot|wbBuf|bulkBarrier|sweep|\(\*mspan\)|typePointers|\(\*spanSet\)|\(\*gcWork\)|\(\*sweepLocked\)|deductAssistCredit|heapBits|bgsweep)|^gcWriteBarrier/,
  ],
  [
    "allocation",
    /^runtime\.(mallocgc|memclrNoHeapPointers|newobject|growslice|makeslice|makemap|nextFreeFast|\(\*mcache\)|\(\*mheap\)|\(\*pageAlloc\)|\(\*mcentral\)|newarray|rawstring)/,
  ],
  ["maps and hashing", /^runtime\.(map|evacuate|strhash|memhash|growWork)|^aeshash|^memeqbody|^cmpbody/],
  ["cty values", /^github\.com\/zclconf\/go-cty\//],
  ["Unicode normalisation", /^golang\.org\/x\/text\//],
  ["crypto", /^(crypto\/|math\/big\.|vendor\/golang\.org\/x\/crypto)/],
  ["gRPC, HTTP/2, protobuf", /^(google\.golang\.org\/(grpc|protobuf)|golang\.org\/x\/net\/http2|net\/http)/],
  ["JSON", /^encoding\/json/],
  ["msgpack", /^github\.com\/vmihailenco\/msgpack/],
  ["HCL", /^github\.com\/hashicorp\/hcl/],
  ["Terraform's own packages", /^github\.com\/hashicorp\/terraform\//],
  ["other runtime", /^runtime\.|^memmove|^indexbytebody/],
];
const kindOf = (name) => KINDS.find(([, re]) => re.test(name))?.[0] ?? "other";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "terraform-profile-"));
const byProcess = new Map();
const byKind = new Map();
const byFunction = new Map();
const add = (map, key, n) => map.set(key, (map.get(key) ?? 0) + n);
let symbolise;
try {
  for (let run = 0; run < runs; run++) {
    const data = path.join(tmp, `run-${run}.data`);
    const rec = spawnSync(
      "perf",
      ["record", "-q", "-e", "task-clock", "-c", String(PERIOD_NS), "-o", data, "--", ...command],
      { cwd, stdio: ["ignore", "ignore", "inherit"] },
    );
    if (rec.error || rec.status !== 0)
      throw new Error(`perf record failed: ${rec.error?.message ?? `exit ${rec.status}`}`);
    const script = execFileSync("perf", ["script", "-i", data, "-F", "comm,ip,dso"], {
      encoding: "utf8",
      maxBuffer: 1 << 28,
      stdio: ["ignore", "pipe", "ignore"],
    });
    for (const line of script.split("\n")) {
      const m = /^\s*(.+?)\s+([0-9a-f]+)\s+\((.*)\)\s*$/.exec(line);
      if (!m) continue;
      const [, comm, ip, dso] = m;
      add(byProcess, comm, 1);
      if (comm !== "terraform") continue;
      let name;
      if (dso === "[kernel.kallsyms]") name = "[the kernel]";
      else if (path.basename(dso) === "terraform" || path.basename(dso) === "tofu") {
        symbolise ??= goFunctions(dso);
        name = symbolise(Number.parseInt(ip, 16));
      } else name = `[${path.basename(dso)}]`;
      add(byFunction, name, 1);
      add(byKind, name === "[the kernel]" ? "the kernel" : kindOf(name), 1);
    }
  }
} finally {
  fs.rmSync(tmp, { recursive: true, force: true });
}

const ms = (samples) => ((samples * PERIOD_NS) / 1e6 / runs).toFixed(1).padStart(7);
const table = (title, map, limit) => {
  process.stdout.write(`\n${title} (ms of CPU per run, ${runs} runs)\n`);
  for (const [key, n] of [...map].sort((a, b) => b[1] - a[1]).slice(0, limit))
    process.stdout.write(`${ms(n)}  ${key}\n`);
};
process.stdout.write(`${command.join(" ")}\n`);
table("CPU by process name", byProcess, 20);
table("terraform by kind", byKind, KINDS.length + 2);
table("terraform by function", byFunction, top);
