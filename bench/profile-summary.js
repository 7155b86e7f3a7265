#!/usr/bin/env node
// Summarises V8 CPU profiles (.cpuprofile, e.g. from `bench/commands.js --cpu-prof <dir>`): per
// process, the time profiled, garbage collection and idle time, then the functions with the most
// self time and the most inclusive time, across all the profiles given (files or directories).
//
// With --maps, self time is also summed per source file (through the bundles' source maps), which
// tells the provider's own code from zod, undici, protobufjs and grpc-js inside one bundle.
//
// Usage: node bench/profile-summary.js <file-or-dir>... [--top 25] [--match <regexp>] [--maps <dir>]
//   --match  list only functions whose name or file matches (e.g. --match 'fromDynamic|encode')
//   --maps   a directory with the bundles' .js.map files (e.g. dist/provider-bundle)
"use strict";

const fs = require("node:fs");
const path = require("node:path");

const args = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = args.indexOf(name);
  if (i === -1) return fallback;
  const v = args[i + 1];
  args.splice(i, 2);
  return v;
};
const top = Number(opt("--top", "25"));
const match = opt("--match", undefined);
const filter = match ? new RegExp(match) : undefined;
const mapsDir = opt("--maps", undefined);

const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
/** Per generated line, the [column, source index] segments of a source map, sorted by column. */
function readMap(file) {
  const map = JSON.parse(fs.readFileSync(file, "utf8"));
  const lines = [];
  let src = 0;
  for (const line of map.mappings.split(";")) {
    const segs = [];
    let col = 0;
    for (const seg of line.split(",")) {
      if (!seg) continue;
      const vals = [];
      let shift = 0;
      let value = 0;
      for (const ch of seg) {
        const d = B64.indexOf(ch);
        value += (d & 31) << shift;
        if (d & 32) shift += 5;
        else {
          vals.push(value & 1 ? -(value >>> 1) : value >>> 1);
          value = 0;
          shift = 0;
        }
      }
      col += vals[0];
      if (vals.length > 1) src += vals[1];
      segs.push([col, src]);
    }
    lines.push(segs);
  }
  return { lines, sources: map.sources.map((s) => s.replace(/^(\.\.\/)+/, "")) };
}
const maps = new Map();
function sourceOf(url, line, column) {
  if (!mapsDir || !url) return undefined;
  const base = path.basename(url);
  if (!maps.has(base)) {
    const f = path.join(mapsDir, `${base}.map`);
    maps.set(base, fs.existsSync(f) ? readMap(f) : null);
  }
  const m = maps.get(base);
  const segs = m?.lines[line];
  if (!segs) return undefined;
  let found;
  for (const [col, src] of segs) {
    if (col > column) break;
    found = src;
  }
  return found === undefined ? undefined : m.sources[found];
}
const bySource = new Map();

function files(p) {
  if (fs.statSync(p).isDirectory()) return fs.readdirSync(p).flatMap((f) => files(path.join(p, f)));
  return p.endsWith(".cpuprofile") ? [p] : [];
}

const selfMs = new Map();
const totalMs = new Map();
const perProcess = [];

for (const file of args.flatMap(files).sort()) {
  const profile = JSON.parse(fs.readFileSync(file, "utf8"));
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const key = (n) => {
    const f = n.callFrame;
    if (!f.url) return f.functionName || "(anonymous)";
    return `${f.functionName || "(anonymous)"}  ${path.basename(f.url)}:${f.lineNumber + 1}`;
  };
  let gc = 0;
  let idle = 0;
  let all = 0;
  profile.samples.forEach((id, i) => {
    const dt = (profile.timeDeltas[i + 1] ?? 0) / 1000;
    all += dt;
    const node = byId.get(id);
    const k = key(node);
    if (k === "(garbage collector)") gc += dt;
    if (k === "(idle)") idle += dt;
    selfMs.set(k, (selfMs.get(k) ?? 0) + dt);
    const f = node.callFrame;
    const src =
      sourceOf(f.url, f.lineNumber, f.columnNumber) ??
      (f.url ? path.basename(f.url).replace(/\.js$/, "").replace(/:.*/, "") : k.replace(/ .*/, ""));
    bySource.set(src, (bySource.get(src) ?? 0) + dt);
    const seen = new Set();
    for (let n = id; n !== undefined; n = parent.get(n)) {
      const kk = key(byId.get(n));
      if (seen.has(kk)) continue;
      seen.add(kk);
      totalMs.set(kk, (totalMs.get(kk) ?? 0) + dt);
    }
  });
  perProcess.push({ file: path.relative(process.cwd(), file), all, gc, idle });
}

const ms = (x) => `${x.toFixed(1).padStart(8)} ms`;
let out = "process                                              profiled      busy        gc\n";
for (const p of perProcess) {
  out += `${p.file.padEnd(48).slice(-48)} ${ms(p.all)} ${ms(p.all - p.idle)} ${ms(p.gc)}\n`;
}
const sum = (k) => perProcess.reduce((a, p) => a + p[k], 0);
out += `${"all".padEnd(48)} ${ms(sum("all"))} ${ms(sum("all") - sum("idle"))} ${ms(sum("gc"))}\n`;
const list = (title, map) => {
  out += `\n${title}\n`;
  const rows = [...map]
    .filter(([k]) => k !== "(idle)" && k !== "(root)" && (!filter || filter.test(k)))
    .sort((a, b) => b[1] - a[1])
    .slice(0, top);
  for (const [k, v] of rows) out += `${ms(v)}  ${k}\n`;
};
if (mapsDir) list("self time per source file", bySource);
list("self time", selfMs);
list("inclusive time", totalMs);
process.stdout.write(out);
