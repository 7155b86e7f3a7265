#!/usr/bin/env node

// Installs the repository's tools (tools/package.json, locked by tools/package-lock.json) into
// tools/node_modules, for whatever needs them: the Node.js 22 and 24 runs of .ci/run, the release's
// executables (scripts/release/release.js), CDK Terrain's CLI (src/cli/cdk.ts in a clone, the
// cdktn suites) and Jest's global setup. `node tools/install.js` by hand; nothing else is needed
// after `npm ci` at the root, since every caller calls ensureTools() first.
//
// - No bin links (`--no-bin-links`, and tools/.npmrc for an `npm ci` by hand): the tools are run by
//   their paths below, so nothing puts a `node` or a `cdktn` on anybody's PATH.
// - Idempotent: a stamp in tools/node_modules holds the SHA-256 of the manifest and the lock file,
//   written after a successful `npm ci` (which empties node_modules first, stamp included). While
//   it matches and the binaries are there, ensureTools() only reads two small files.
// - Quiet: npm's output is shown only when the install fails. Its warnings are about the tools'
//   own engines, which the Node.js that runs npm need not meet: cdktn-cli needs Node.js 22.19 and
//   runs under the Node.js 24 or 22 installed beside it (test/package/engines.test.ts checks that
//   every tool supports both).
// - One install at a time: Jest's workers, a release and a demo may ask at once. The first takes a
//   lock folder (tools/.install.lock, with its pid, taken over when that process is gone); the others
//   wait for it and find the stamp. npm's temp files go in that folder and leave with it.
// - The network: the npm registry only, as for `npm ci` at the root (npm's cache is used first).
const { spawnSync } = require("node:child_process");
const { createHash } = require("node:crypto");
const fs = require("node:fs");
const path = require("node:path");

/** This folder: the tools' manifest, lock file and node_modules. */
const TOOLS_DIR = __dirname;
const MODULES = path.join(TOOLS_DIR, "node_modules");
const STAMP = path.join(MODULES, ".gpurental-tools.sha256");
const LOCK = path.join(TOOLS_DIR, ".install.lock");
/** How long to wait for another process's install before giving up. */
const WAIT_MS = 15 * 60_000;

/** The Node.js lines the tools carry (tools/package.json's node-v22 and node-v24). */
const NODE_LINES = ["22", "24"];

/** The `node` binary of a Node.js line the tools carry. */
function nodeBinary(line) {
  if (!NODE_LINES.includes(String(line))) {
    throw new Error(`the tools carry Node.js ${NODE_LINES.join(" and ")}, not ${line}`);
  }
  return path.join(MODULES, `node-v${line}`, "bin", "node");
}

/** The folder of a tool package (e.g. "cdktn-cli"). */
function toolDir(name) {
  return path.join(MODULES, name);
}

/** What the stamp must say for the install to be the manifest's and the lock file's. */
function wantedStamp() {
  const hash = createHash("sha256");
  for (const file of ["package.json", "package-lock.json"])
    hash.update(fs.readFileSync(path.join(TOOLS_DIR, file)));
  return hash.digest("hex");
}

/** Whether tools/node_modules is the lock file's, complete. */
function isInstalled() {
  try {
    if (fs.readFileSync(STAMP, "utf8").trim() !== wantedStamp()) return false;
  } catch {
    return false;
  }
  return NODE_LINES.every((line) => fs.existsSync(nodeBinary(line)));
}

function sleep(ms) {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === "EPERM";
  }
}

/** Takes the install lock, waiting for another holder; false when the tools got installed meanwhile. */
function takeLock() {
  const until = Date.now() + WAIT_MS;
  for (;;) {
    try {
      fs.mkdirSync(LOCK);
      fs.writeFileSync(path.join(LOCK, "pid"), String(process.pid));
      return true;
    } catch (err) {
      if (err.code !== "EEXIST") throw err;
    }
    if (isInstalled()) return false;
    let holder = Number.NaN;
    try {
      holder = Number(fs.readFileSync(path.join(LOCK, "pid"), "utf8"));
    } catch {
      // Taken a moment ago, pid not written yet: wait as for a live holder.
    }
    if (Number.isInteger(holder) && holder > 0 && !alive(holder)) {
      fs.rmSync(LOCK, { recursive: true, force: true });
      continue;
    }
    if (Date.now() > until) {
      throw new Error(
        `tools/install.js: another install (${LOCK}) did not end within ${WAIT_MS / 60_000} minutes`,
      );
    }
    sleep(200);
  }
}

/**
 * Installs the tools unless tools/node_modules already is the lock file's; quiet but for one line
 * to `log`, when given, as an install starts. Throws with npm's output when the install fails.
 */
function ensureTools({ log } = {}) {
  if (isInstalled()) return;
  if (!takeLock()) return;
  try {
    if (isInstalled()) return;
    log?.("installing the repository's tools (tools/package.json: Node.js 22 and 24, cdktn-cli)");
    const tmp = path.join(LOCK, "tmp");
    fs.mkdirSync(tmp);
    const result = spawnSync(
      "npm",
      ["ci", "--prefix", TOOLS_DIR, "--no-bin-links", "--no-audit", "--no-fund", "--loglevel=error"],
      {
        cwd: TOOLS_DIR,
        encoding: "utf8",
        stdio: ["ignore", "pipe", "pipe"],
        env: { ...process.env, TMPDIR: tmp, npm_config_update_notifier: "false" },
      },
    );
    if (result.error) throw new Error(`tools/install.js: cannot run npm: ${result.error.message}`);
    if (result.status !== 0) {
      throw new Error(
        `tools/install.js: \`npm ci\` in ${TOOLS_DIR} failed (exit ${result.status}):\n${result.stdout}${result.stderr}`,
      );
    }
    fs.writeFileSync(STAMP, `${wantedStamp()}\n`);
    if (!isInstalled())
      throw new Error(`tools/install.js: \`npm ci\` in ${TOOLS_DIR} left no Node.js binaries`);
  } finally {
    fs.rmSync(LOCK, { recursive: true, force: true });
  }
}

module.exports = { TOOLS_DIR, NODE_LINES, ensureTools, isInstalled, nodeBinary, toolDir };

if (require.main === module) {
  try {
    ensureTools({ log: (line) => process.stdout.write(`${line}\n`) });
  } catch (err) {
    process.stderr.write(`${err.message}\n`);
    process.exit(1);
  }
}
