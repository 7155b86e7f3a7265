import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import semver from "semver";
import {
  CDKTN_MIN_NODE,
  cdktfCommand,
  cdktnCommand,
  cdktnNode,
  cloneTools,
  nodeTooOld,
  withCdkPath,
} from "./cdk";

const ROOT = join(__dirname, "..", "..");

describe("the CDKs' command lines", () => {
  it("runs cdktf-cli under this process's Node, with PATH as it is", () => {
    const cli = cdktfCommand(ROOT);
    expect(cli.command).toBe(process.execPath);
    expect(cli.argv[0]).toMatch(/cdktf-cli\/bundle\/bin\/cdktf$/);
    expect(withCdkPath(cli, { PATH: "/usr/bin" })).toEqual({ PATH: "/usr/bin" });
  });

  it("runs cdktn-cli under a Node 22.19 or later, first on PATH for the app it runs", () => {
    const cli = cdktnCommand(ROOT, {});
    expect(cli.argv[0]).toMatch(/cdktn-cli\/bin\/cdktn$/);
    if (semver.gte(process.versions.node, CDKTN_MIN_NODE)) {
      expect(cli.command).toBe(process.execPath);
    } else {
      expect(cli.command).toBe(join(ROOT, "tools", "node_modules", "node-v24", "bin", "node"));
      expect(withCdkPath(cli, { PATH: "/usr/bin" }).PATH).toBe(`${dirname(cli.command)}${delimiter}/usr/bin`);
    }
  });

  it("in a clone, takes cdktn-cli and its Node.js from the repository's tools, installed by then", () => {
    const tools = join(ROOT, "tools", "node_modules");
    expect(cloneTools(ROOT)).toBe(tools);
    const cli = cdktnCommand(ROOT, { GPURENTAL_CDKTN_NODE: process.execPath });
    expect(cli.argv).toEqual([join(tools, "cdktn-cli", "bin", "cdktn")]);
    expect(existsSync(cli.argv[0]!)).toBe(true);
    const node = join(tools, "node-v24", "bin", "node");
    expect(spawnSync(node, ["--version"], { encoding: "utf8" }).stdout).toMatch(/^v24\./);
    // Not on anybody's PATH: the tools are installed without bin links.
    expect(existsSync(join(tools, ".bin"))).toBe(false);
    expect(existsSync(join(ROOT, "node_modules", ".bin", "node"))).toBe(false);
  });

  it.each([
    [
      "v20.20.2",
      "CDK Terrain (cdktn-cli 0.24) needs Node.js 22.19 or later, and this is Node.js 20.20.2, past its end of life (2026-04-30): install Node.js 24 or 22 (https://nodejs.org/en/download, or: nvm install 24)",
    ],
    [
      "v22.11.0",
      "CDK Terrain (cdktn-cli 0.24) needs Node.js 22.19 or later, and this is Node.js 22.11.0: install Node.js 24 or 22 (https://nodejs.org/en/download, or: nvm install 24)",
    ],
  ])("says in one line how to get a Node.js new enough, on %s", (running, line) => {
    expect(nodeTooOld("CDK Terrain (cdktn-cli 0.24)", CDKTN_MIN_NODE, running)).toBe(line);
  });

  it("takes the Node named by GPURENTAL_CDKTN_NODE", () => {
    expect(cdktnNode(ROOT, { GPURENTAL_CDKTN_NODE: "/opt/node24/bin/node" })).toBe("/opt/node24/bin/node");
  });

  it("says which Node cdktn-cli needs when there is none, or that cdktn-cli is missing", () => {
    const empty = mkdtempSync(join(tmpdir(), "gpurental-cdk-test-"));
    try {
      writeFileSync(join(empty, "package.json"), "{}");
      // A project (no tools folder) with a Node.js cdktn-cli runs under, named or this one: the
      // missing CLI is what is said.
      expect(cloneTools(empty)).toBeUndefined();
      expect(() => cdktnCommand(empty, { GPURENTAL_CDKTN_NODE: process.execPath })).toThrow(
        "cdktn-cli is not installed in",
      );
      if (!semver.gte(process.versions.node, CDKTN_MIN_NODE)) {
        // The Node.js comes first: installing cdktn-cli would not help on this one.
        const message = `CDK Terrain (cdktn-cli 0.24) needs Node.js 22.19 or later, and this is Node.js ${process.versions.node}`;
        expect(() => cdktnCommand(empty, {})).toThrow(message);
        expect(() => cdktnNode(empty, {})).toThrow(message);
      }
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });
});
