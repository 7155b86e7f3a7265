#!/usr/bin/env node
"use strict";
// `node scripts/testing/planted-bugs.js [n...]`: plants each bug below, one at a time, in a throwaway git
// worktree of HEAD (committed code only) and runs the test files that must catch it; prints which
// were caught. A bug is caught when one of those files fails, and so `npm test` fails. The bugs
// are the ones a first mutation study found the suite missed (docs/mutation-testing.md); a bug
// whose code moved fails here with the file and text it no longer finds.
const { spawnSync } = require("node:child_process");
const {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} = require("node:fs");
const { tmpdir } = require("node:os");
const { join } = require("node:path");

const root = join(__dirname, "..", "..");

/** Each bug: where it is planted (`from` must occur once), and the tests that catch it. */
const BUGS = [
  {
    bug: "INVALID_STATE no longer points at desired_status",
    file: "src/provider/refusals.ts",
    from: 'INVALID_STATE: {\n    attribute: "desired_status",',
    to: "INVALID_STATE: {",
    tests: [
      "src/provider/refusals-catalogue.test.ts",
      "src/provider/refusals-explanations.test.ts",
      "src/provider/refusals-diagnostics.test.ts",
    ],
  },
  {
    bug: "504 no longer retried (removed from the statuses after which a read is sent again)",
    file: "src/api/retry-policy.ts",
    from: "new Set([500, 502, 504])",
    to: "new Set([500, 502])",
    tests: ["src/api/retry-policy.test.ts"],
  },
  {
    bug: "500 taken as a refusal, so a deploy answered 500 is sent again",
    file: "src/api/retry-policy.ts",
    from: "new Set([429, 503])",
    to: "new Set([429, 500, 503])",
    tests: ["src/api/retry-policy.test.ts"],
  },
  {
    bug: "a log field named secret written unmasked",
    file: "src/log.ts",
    from: "...(redactValue(extra) as object) });",
    to: "...(redactValue(extra) as object), secret: extra.secret });",
    tests: ["src/log.test.ts"],
  },
  {
    bug: "session tokens (gps_) no longer redacted",
    file: "src/api/redact.ts",
    from: "/\\bgp[rs]_[0-9a-fA-F]{8,}/g",
    to: "/\\bgpr_[0-9a-fA-F]{8,}/g",
    tests: ["src/api/redact.test.ts"],
  },
  {
    bug: "the secret of gpurental_api_key no longer sensitive (committed schema and docs regenerated)",
    file: "src/resources/api-key/resource.ts",
    from: "      computed: true,\n      sensitive: true,\n      description:\n        \"The key's secret",
    to: "      computed: true,\n      sensitive: false,\n      description:\n        \"The key's secret",
    regenerate: true,
    tests: ["test/cdktf/schema.test.ts"],
  },
  {
    bug: "computed attributes not marked sensitive in the schema sent to Terraform (schema and docs regenerated)",
    file: "src/framework/schema.ts",
    from: "        sensitive: a.sensitive,\n",
    to: "        sensitive: a.sensitive && !a.computed,\n",
    regenerate: true,
    tests: ["src/framework/schema.test.ts", "test/cdktf/schema.test.ts"],
  },
  {
    bug: "the fake backend's instance limit off by one",
    file: "src/fake-backend/deploy-checks.ts",
    from: "if (live >= INSTANCE_LIMIT) {",
    to: "if (live > INSTANCE_LIMIT) {",
    tests: ["test/contract/limits.test.ts"],
  },
  {
    bug: "the provider no longer checks the client certificate",
    file: "src/plugin/grpc-server.ts",
    from: 'if (!peer?.raw.equals(expected) || connection.alpnProtocol !== "h2") {',
    to: 'if (connection.alpnProtocol !== "h2") {',
    tests: ["src/plugin/server.test.ts"],
  },
];

function run(cmd, args, cwd) {
  const r = spawnSync(cmd, args, { cwd, stdio: "inherit", env: { ...process.env, CI: "true" } });
  return r.status;
}

const picked = process.argv.slice(2).map(Number);
const results = [];
for (const [i, b] of BUGS.entries()) {
  if (picked.length > 0 && !picked.includes(i + 1)) continue;
  process.stdout.write(`\n== planted bug ${i + 1}: ${b.bug} (${b.file})\n`);
  const dir = mkdtempSync(join(tmpdir(), "gpurental-planted-"));
  try {
    if (run("git", ["worktree", "add", "--quiet", "--detach", dir, "HEAD"], root) !== 0)
      throw new Error("git worktree add failed");
    // The packages are this checkout's; the caches (where the schema and docs scripts are bundled,
    // and find the checkout they write to) are the worktree's own.
    mkdirSync(join(dir, "node_modules", ".cache"), { recursive: true });
    for (const name of readdirSync(join(root, "node_modules")))
      if (name !== ".cache") symlinkSync(join(root, "node_modules", name), join(dir, "node_modules", name));
    const path = join(dir, b.file);
    const text = readFileSync(path, "utf8");
    if (text.split(b.from).length !== 2)
      throw new Error(`${b.file} no longer holds ${JSON.stringify(b.from)} once`);
    writeFileSync(path, text.replace(b.from, b.to));
    if (b.regenerate && (run("npm", ["run", "schema"], dir) !== 0 || run("npm", ["run", "docs"], dir) !== 0))
      throw new Error("regenerating the schema and docs failed");
    const status = run(join(root, "node_modules", ".bin", "jest"), ["--ci", ...b.tests], dir);
    results.push([i + 1, status === 0 ? "MISSED" : "caught", b.bug, b.tests.join(" ")]);
  } finally {
    run("git", ["worktree", "remove", "--force", dir], root);
    rmSync(dir, { recursive: true, force: true });
  }
}
process.stdout.write("\n");
for (const r of results) process.stdout.write(`${r.join("  ")}\n`);
process.exitCode = results.some((r) => r[1] === "MISSED") ? 1 : 0;
