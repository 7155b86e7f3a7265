#!/usr/bin/env node
// Builds what the provider executable loads at start-up:
//   1. src/plugin/proto/descriptor.json, the parsed form of our .proto files, so that the provider
//      never parses .proto text at launch (protobufjs/light reads the JSON directly);
//   2. dist/provider.js, one esbuild bundle of src/plugin/main.ts and everything it imports, so
//      that start-up reads one file instead of resolving and compiling hundreds of modules.
// Usage: node scripts/bundle-provider.js [--descriptor-only] [--entry <ts> --outfile <js>]
"use strict";

const fs = require("node:fs");
const path = require("node:path");

const root = path.resolve(__dirname, "..");
const protoDir = path.join(root, "src", "plugin", "proto");
const PROTO_FILES = ["tfplugin6.proto", "grpc_controller.proto", "health.proto"];

/** Parses our .proto files (snake_case names kept) into protobufjs JSON. */
function buildDescriptor() {
  const protobuf = require("protobufjs");
  const rootNs = new protobuf.Root();
  for (const file of PROTO_FILES) {
    const source = fs.readFileSync(path.join(protoDir, file), "utf8");
    protobuf.parse(source, rootNs, { keepCase: true, alternateCommentMode: false });
  }
  rootNs.resolveAll();
  return rootNs.toJSON({ keepComments: false });
}

/** The descriptor as the committed file holds it. */
function descriptorText() {
  return `${JSON.stringify(buildDescriptor(), null, 1)}\n`;
}

function writeDescriptor() {
  const out = path.join(protoDir, "descriptor.json");
  fs.writeFileSync(out, descriptorText());
  return out;
}

async function bundle(entry, outfile) {
  const esbuild = require("esbuild");
  await esbuild.build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: "node",
    target: "node20",
    format: "cjs",
    // Whitespace and syntax only: identifiers stay readable in stack traces.
    minifyWhitespace: true,
    minifySyntax: true,
    keepNames: true,
    sourcemap: "linked",
    sourcesContent: false,
    legalComments: "none",
    logLevel: "warning",
  });
  return outfile;
}

async function main(argv) {
  const arg = (name) => {
    const i = argv.indexOf(name);
    return i === -1 ? undefined : argv[i + 1];
  };
  writeDescriptor();
  if (argv.includes("--descriptor-only")) return;
  const entry = path.resolve(root, arg("--entry") ?? "src/plugin/main.ts");
  const outfile = path.resolve(root, arg("--outfile") ?? "dist/provider.js");
  await bundle(entry, outfile);
  process.stderr.write(`bundled ${path.relative(root, outfile)}\n`);
}

module.exports = { buildDescriptor, descriptorText, bundle, PROTO_FILES };

if (require.main === module) {
  main(process.argv.slice(2)).catch((err) => {
    process.stderr.write(`bundle-provider: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exitCode = 1;
  });
}
