#!/usr/bin/env node
"use strict";
// Derives the CDK Terrain flavour of the constructs (src/cdktn/constructs, not committed) from their
// one source, src/constructs: the same files with the CDK library's import changed from "cdktf" to
// "cdktn", cdktf's bindings (src/bindings/cdktf) swapped for CDK Terrain's own (src/bindings/cdktn),
// and the other relative imports of shared modules moved one folder up.
// The build and the type check run this first, so the derived files are always compiled and
// checked against cdktn's own types; see docs/design/cdk-terrain.md.
const { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } = require("node:fs");
const { join } = require("node:path");
const ts = require("typescript");

const root = join(__dirname, "..", "..");
const source = join(root, "src", "constructs");
const target = join(root, "src", "cdktn", "constructs");

const HEADER =
  "// Derived from src/constructs by scripts/generate/derive-cdktn.js when the package builds; edit the source there.\n";

/** Rewrites one file's import specifiers; throws when one names a module the CDK Terrain flavour cannot use. */
function derive(name, text) {
  const { importedFiles } = ts.preProcessFile(text, true, true);
  let out = "";
  let at = 0;
  for (const imported of importedFiles) {
    const spec = imported.fileName;
    let next = spec;
    if (spec === "cdktf") next = "cdktn";
    else if (spec.startsWith("cdktf/") || spec.startsWith("@cdktf/")) {
      throw new Error(`src/constructs/${name} imports ${spec}, which has no CDK Terrain counterpart`);
    } else if (spec === "../bindings/cdktf" || spec.startsWith("../bindings/cdktf/")) {
      next = `../../bindings/cdktn${spec.slice("../bindings/cdktf".length)}`;
    } else if (spec.startsWith("../")) {
      next = `../${spec}`;
    }
    // pos is the opening quote's offset.
    const start = imported.pos + 1;
    if (text.slice(start, start + spec.length) !== spec) {
      throw new Error(`src/constructs/${name}: cannot place the import of ${spec}`);
    }
    out += text.slice(at, start) + next;
    at = start + spec.length;
  }
  return HEADER + out + text.slice(at);
}

function main() {
  const wanted = new Map();
  for (const entry of readdirSync(source)) {
    if (!entry.endsWith(".ts") || entry.endsWith(".test.ts")) continue;
    wanted.set(entry, derive(entry, readFileSync(join(source, entry), "utf8")));
  }
  mkdirSync(target, { recursive: true });
  for (const entry of readdirSync(target)) {
    if (!wanted.has(entry)) rmSync(join(target, entry), { recursive: true, force: true });
  }
  for (const [entry, text] of wanted) {
    const file = join(target, entry);
    // Unchanged files keep their time, so an incremental check or build has nothing to redo.
    if (existsSync(file) && readFileSync(file, "utf8") === text) continue;
    writeFileSync(file, text);
  }
}

if (require.main === module) main();
module.exports = { derive };
