import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import semver from "semver";
import { CDKTN_MIN_NODE, cdktfCommand, cdktnCommand, cdktnNode, withCdkPath } from "./cdk";

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
      expect(cli.command).toMatch(/node-v2[24]\/bin\/node$/);
      expect(withCdkPath(cli, { PATH: "/usr/bin" }).PATH).toBe(`${dirname(cli.command)}${delimiter}/usr/bin`);
    }
  });

  it("takes the Node named by GPURENTAL_CDKTN_NODE", () => {
    expect(cdktnNode(ROOT, { GPURENTAL_CDKTN_NODE: "/opt/node24/bin/node" })).toBe("/opt/node24/bin/node");
  });

  it("says which Node cdktn-cli needs when there is none, or that cdktn-cli is missing", () => {
    const empty = mkdtempSync(join(tmpdir(), "gpurental-cdk-test-"));
    try {
      writeFileSync(join(empty, "package.json"), "{}");
      expect(() => cdktnCommand(empty, {})).toThrow("cdktn-cli is not installed in");
      if (!semver.gte(process.versions.node, CDKTN_MIN_NODE)) {
        expect(() => cdktnNode(empty, {})).toThrow(
          `cdktn-cli needs Node.js ${CDKTN_MIN_NODE} or later and this is ${process.version}`,
        );
      }
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });
});
