#!/usr/bin/env node
"use strict";
// Runs before `npm pack` and `npm publish` (the package's prepack, after the build): a package is
// made only with the npm provider's launcher in C for every Linux platform of the release. The build
// leaves out a launcher it cannot compile (no cross compiler or static libc on the machine) and says
// so, and the package still works without it, but its provider then starts Node.js at every launch
// in automation instead of once per command: a package packed on such a machine would quietly
// give every CI user the slower provider. GPURENTAL_PACK_WITHOUT_LAUNCHERS=1 packs one anyway, for
// a local try.
//
// `npm publish <file.tgz>` runs no script of this package; publish from the repository, or pack
// here first.
//
// Usage: node scripts/build/check-pack.js [--dir <provider bundle directory>]
const { existsSync, readFileSync } = require("node:fs");
const { join, resolve } = require("node:path");
const { COMPACT_PLATFORMS } = require("../release/compact-executable");

const ESCAPE = "GPURENTAL_PACK_WITHOUT_LAUNCHERS";
/** ELF's e_machine of each platform's code, as the build checks it. */
const ELF_MACHINES = { linux_amd64: 0x3e, linux_arm64: 0xb7 };

const at = process.argv.indexOf("--dir");
const dir = resolve(
  at === -1 ? join(__dirname, "..", "..", "dist", "provider-bundle") : process.argv[at + 1],
);

/** What is wrong with a platform's launcher in `dir`, or undefined. */
function problem(platform) {
  const file = join(dir, `node-launcher-${platform}`);
  if (!existsSync(file)) return `node-launcher-${platform} is missing`;
  const head = readFileSync(file).subarray(0, 20);
  if (head.length < 20 || head.readUInt32BE(0) !== 0x7f454c46)
    return `node-launcher-${platform} is not an ELF file`;
  if (head.readUInt16LE(18) !== ELF_MACHINES[platform])
    return `node-launcher-${platform} is built for another machine`;
  return undefined;
}

// npm runs prepack for `npm pack` and `npm publish`, and also when it installs the package from
// a git repository, where a machine without the cross compiler must still get a working package.
const making = ["pack", "publish"].includes(process.env.npm_command ?? "pack");

const problems = Object.keys(COMPACT_PLATFORMS)
  .map(problem)
  .filter((p) => p !== undefined);
if (problems.length > 0) {
  const what = `${problems.join("; ")} in ${dir}`;
  if (process.env[ESCAPE] === "1" || !making) {
    process.stderr.write(
      `check-pack: packing anyway (${making ? `${ESCAPE}=1` : `npm ${process.env.npm_command}`}): ${what}\n`,
    );
  } else {
    process.stderr.write(
      `check-pack: ${what}. Without it the npm provider starts Node.js at every launch in automation. ` +
        `Build on a machine with the C compilers the release uses (docs/releasing.md, "The npm package"), or set ${ESCAPE}=1 to pack a package for local use.\n`,
    );
    process.exit(1);
  }
}
