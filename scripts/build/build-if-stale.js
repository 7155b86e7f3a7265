#!/usr/bin/env node
"use strict";
// Runs `npm run build` unless dist/ is newer than every source file, so that `npm run demo` on a
// fresh clone builds once (npm ci builds nothing: the package has no install script, so that
// installing it in a project builds nothing either), and after an edit never runs stale code.
const { spawnSync } = require("node:child_process");
const { existsSync, readdirSync, statSync } = require("node:fs");
const { join } = require("node:path");

const root = join(__dirname, "..", "..");
// The pre-encoded schema is the last file the build writes.
const marker = join(root, "dist", "provider-bundle", "provider-schema.pb");

function newest(dir) {
  let latest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    latest = Math.max(latest, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs);
  }
  return latest;
}

const inputs = [
  join(root, "src"),
  join(root, "examples", "cdktf-app"),
  join(root, "examples", "cdktn-app"),
  join(root, "package.json"),
  join(root, "tsconfig.build.json"),
];
const sourceTime = Math.max(
  ...inputs.map((p) => (statSync(p).isDirectory() ? newest(p) : statSync(p).mtimeMs)),
);
if (existsSync(marker) && statSync(marker).mtimeMs >= sourceTime) process.exit(0);
const npm = process.platform === "win32" ? "npm.cmd" : "npm";
const result = spawnSync(npm, ["run", "build", "--silent"], { cwd: root, stdio: "inherit" });
process.exit(result.status ?? 1);
