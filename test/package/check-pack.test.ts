import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

// scripts/build/check-pack.js, which `npm pack` and `npm publish` run after the build (prepack):
// no package without the npm provider's launcher for each Linux platform of the release.

const ROOT = join(__dirname, "..", "..");
const SCRIPT = join(ROOT, "scripts", "build", "check-pack.js");

/** The first 20 bytes of an ELF file for `machine`: what the check reads. */
function elfHead(machine: number): Buffer {
  const head = Buffer.alloc(64);
  head.writeUInt32BE(0x7f454c46, 0);
  head.writeUInt16LE(machine, 18);
  return head;
}

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "check-pack-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function check(env: NodeJS.ProcessEnv = {}) {
  const { GPURENTAL_PACK_WITHOUT_LAUNCHERS: _, npm_command: __, ...rest } = process.env;
  return spawnSync(process.execPath, [SCRIPT, "--dir", dir], { encoding: "utf8", env: { ...rest, ...env } });
}

test("packs when both launchers are there, each for its machine", () => {
  writeFileSync(join(dir, "node-launcher-linux_amd64"), elfHead(0x3e));
  writeFileSync(join(dir, "node-launcher-linux_arm64"), elfHead(0xb7));
  const r = check();
  expect(r.stderr).toBe("");
  expect(r.status).toBe(0);
});

test("refuses a package without a launcher, naming it and the way out", () => {
  writeFileSync(join(dir, "node-launcher-linux_amd64"), elfHead(0x3e));
  const r = check();
  expect(r.status).toBe(1);
  expect(r.stderr).toContain(`node-launcher-linux_arm64 is missing in ${dir}`);
  expect(r.stderr).toContain("starts Node.js at every launch in automation");
  expect(r.stderr).toContain("GPURENTAL_PACK_WITHOUT_LAUNCHERS=1");
});

test("refuses a launcher built for another machine, or not a program", () => {
  writeFileSync(join(dir, "node-launcher-linux_amd64"), elfHead(0xb7));
  writeFileSync(join(dir, "node-launcher-linux_arm64"), "#!/bin/sh\n");
  const r = check();
  expect(r.status).toBe(1);
  expect(r.stderr).toContain("node-launcher-linux_amd64 is built for another machine");
  expect(r.stderr).toContain("node-launcher-linux_arm64 is not an ELF file");
});

test("packs without them when asked to, and says so", () => {
  const r = check({ GPURENTAL_PACK_WITHOUT_LAUNCHERS: "1" });
  expect(r.status).toBe(0);
  expect(r.stderr).toContain("packing anyway (GPURENTAL_PACK_WITHOUT_LAUNCHERS=1)");
  expect(r.stderr).toContain("node-launcher-linux_amd64 is missing");
});

test("an install from a git repository, which npm packs too, is not refused", () => {
  const r = check({ npm_command: "install" });
  expect(r.status).toBe(0);
  expect(r.stderr).toContain("packing anyway (npm install)");
  expect(check({ npm_command: "publish" }).status).toBe(1);
});

test("npm pack and npm publish run it after the build", () => {
  const { scripts } = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
    scripts: Record<string, string>;
  };
  expect(scripts.prepack).toBe("node scripts/build/build-if-stale.js && node scripts/build/check-pack.js");
});

// This checkout's build: with both launchers where the machine has the cross compiler (CI, where
// .ci/run installs it, requires it).
const cross =
  process.platform === "linux" &&
  spawnSync("sh", ["-c", "command -v aarch64-linux-gnu-gcc"], { encoding: "utf8" }).stdout.trim() !== "";
if (!cross && process.env.GPURENTAL_REQUIRE_CROSS === "1")
  throw new Error("GPURENTAL_REQUIRE_CROSS=1 but aarch64-linux-gnu-gcc is missing");
(cross ? test : test.skip)("this checkout's build packs: it has both launchers", () => {
  const r = spawnSync(process.execPath, [SCRIPT], { encoding: "utf8", env: { PATH: process.env.PATH } });
  expect(r.stderr).toBe("");
  expect(r.status).toBe(0);
});
