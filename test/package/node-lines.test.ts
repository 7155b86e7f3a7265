import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { CDKTN_MIN_NODE, nodeTooOld } from "../../src/cli/cdk";
import { ensureTools, nodeBinary } from "../../tools/install";
import { olderNode } from "./old-node";

// The README's CDK Terrain recipe starts with a line that checks the running Node.js and says in
// one line how to get a supported one: the same words as `gpurental demo --cdk cdktn`. The line is
// read from the README and run as written, under this Node.js and under the Node.js 24 of the
// repository's tools.

const ROOT = join(__dirname, "..", "..");
const readme = readFileSync(join(ROOT, "README.md"), "utf8");

/** The first line of the block after the `recipe-cdktn` marker. */
function checkLine(): string {
  const at = readme.indexOf("<!-- recipe-cdktn:");
  expect(at).toBeGreaterThan(-1);
  const block = /```sh\n([\s\S]*?)```/.exec(readme.slice(at))?.[1] ?? "";
  return block.split("\n")[0] ?? "";
}

function runUnder(nodeDir: string) {
  return spawnSync("sh", ["-c", checkLine()], {
    encoding: "utf8",
    env: { PATH: [nodeDir, "/usr/bin", "/bin"].join(":") },
  });
}

test("the recipe's first line checks the Node.js before anything is installed", () => {
  expect(checkLine()).toMatch(/^node -e '/);
  const block = readme.slice(readme.indexOf("<!-- recipe-cdktn:"));
  expect(block.indexOf("node -e")).toBeLessThan(block.indexOf("npm install"));
});

test("under a Node.js too old for cdktn-cli (20 here) it stops with the demo's one line", () => {
  const old = olderNode(CDKTN_MIN_NODE);
  if (!old) {
    console.log("no Node.js older than 22.19 on this machine: the refusal is not run here");
    return;
  }
  const r = runUnder(dirname(old.file));
  expect(r.status).toBe(1);
  expect(r.stdout).toBe("");
  expect(r.stderr).toBe(`${nodeTooOld("CDK Terrain (cdktn-cli 0.24)", CDKTN_MIN_NODE, old.version)}\n`);
});

test("under Node.js 24 it lets the recipe go on, silently", () => {
  ensureTools();
  const r = runUnder(dirname(nodeBinary("24")));
  expect({ status: r.status, out: r.stdout, err: r.stderr }).toEqual({ status: 0, out: "", err: "" });
});
