import { execFileSync, spawnSync } from "node:child_process";
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { COMPACT_PLATFORMS, compileNodeLauncher } from "../../../scripts/release/compact-executable";
import { MAGIC_COOKIE_KEY, MAGIC_COOKIE_VALUE } from "../../plugin/handshake";
import { type Launch, launch as launchIn } from "./testing/launch";

// The npm provider's launcher (node-launcher.c) in front of a stand-in for the Node.js script
// (testing/probe.c, installed as provider-node.js): that it runs the script beside its own real
// file in its own place, and what it says when it cannot. That a command's launches in automation
// become sessions of one process is proved with the real CLI (test/e2e/resources/command-process).

jest.setTimeout(60_000);

const work = mkdtempSync(join(tmpdir(), "gpurental-node-launcher-"));
const pkg = join(work, "pkg");
const exe = join(pkg, "terraform-provider-gpurental_v9.9.9");

const linux = process.platform === "linux" ? test : test.skip;

beforeAll(() => {
  if (process.platform !== "linux") return;
  mkdirSync(pkg);
  compileNodeLauncher(exe, process.arch === "arm64" ? "linux_arm64" : "linux_amd64");
  const probe = join(work, "probe");
  execFileSync("gcc", ["-O2", "-static", "-o", probe, join(__dirname, "testing", "probe.c")]);
  copyFileSync(probe, join(pkg, "provider-node.js"));
});

afterAll(() => rmSync(work, { recursive: true, force: true }));

/** A launch of the launcher with no PATH, the probe's variable and the test's directory. */
function launch(file: string, args: string[], env: NodeJS.ProcessEnv = {}, cwd = work): Promise<Launch> {
  return launchIn(file, args, { PATH: "/nonexistent", PROBE: "seen", ...env }, cwd);
}

linux(
  "runs provider-node.js beside it in its own place: pid, arguments, environment, stdin, exit code",
  async () => {
    const r = await launch(exe, ["--version", "two words"]);
    expect(r.err).toBe("");
    expect(r.out).toBe(
      `pid=${r.pid}\nexe=${join(pkg, "provider-node.js")}\narg=--version\narg=two words\nenv=seen\nstdin=from stdin\n`,
    );
    expect(r.code).toBe(7);
  },
);

linux("started through a symbolic link, runs the script beside the file it links to", async () => {
  const elsewhere = join(work, "links");
  mkdirSync(elsewhere);
  const link = join(elsewhere, "terraform-provider-gpurental_v9.9.9");
  symlinkSync(exe, link);
  const r = await launch(link, []);
  expect(r.out).toContain(`exe=${join(pkg, "provider-node.js")}\n`);
  expect(r.code).toBe(7);
});

linux(
  "in automation, where no command session can be made (a relative directory), runs the script itself",
  async () => {
    const cwd = join(work, "cwd");
    mkdirSync(cwd);
    const r = await launch(
      exe,
      [],
      {
        [MAGIC_COOKIE_KEY]: MAGIC_COOKIE_VALUE,
        TF_IN_AUTOMATION: "1",
        GPURENTAL_PROVIDER_RESIDENT_DIR: "relative/run",
      },
      cwd,
    );
    expect(r.out).toContain(`pid=${r.pid}\n`);
    expect(r.code).toBe(7);
    // Nothing was made where the relative directory would have been.
    expect(readdirSync(cwd)).toEqual([]);
  },
);

linux(
  "without the script beside it, one line naming the file and why, also on stdout for Terraform",
  async () => {
    const lone = join(work, "lone");
    mkdirSync(lone);
    const copy = join(lone, "terraform-provider-gpurental_v9.9.9");
    copyFileSync(exe, copy);
    const line = `terraform-provider-gpurental_v9.9.9: ${join(lone, "provider-node.js")}: No such file or directory\n`;
    const alone = await launch(copy, []);
    expect(alone).toMatchObject({ code: 1, err: line, out: "" });
    // Terraform shows a plugin's first stdout line that is not a handshake.
    const started = await launch(copy, [], { [MAGIC_COOKIE_KEY]: MAGIC_COOKIE_VALUE });
    expect(started).toMatchObject({ code: 1, err: line, out: line });
  },
);

// The linux_arm64 launcher, cross-compiled, under qemu-user: the stand-in script stays x86-64, and
// the emulator hands the launcher's execve to this machine's kernel, which runs it natively.
/** A tool's absolute path on PATH, or "" (the launches below run with no PATH). */
const found = (tool: string) =>
  spawnSync("sh", ["-c", 'command -v "$1"', "sh", tool], { encoding: "utf8" }).stdout.trim();
const emulator = found(COMPACT_PLATFORMS.linux_arm64?.emulator ?? "qemu-aarch64-static");
const cross = process.platform === "linux" && emulator !== "" && found("aarch64-linux-gnu-gcc") !== "";
if (!cross && process.env.GPURENTAL_REQUIRE_CROSS === "1")
  throw new Error("GPURENTAL_REQUIRE_CROSS=1 but aarch64-linux-gnu-gcc or qemu-aarch64-static is missing");
(cross ? test : test.skip)(
  "works the same built for linux_arm64 (needs gcc-aarch64-linux-gnu, qemu-user-static)",
  async () => {
    const armDir = join(work, "arm64");
    mkdirSync(armDir);
    const arm = join(armDir, "terraform-provider-gpurental_v9.9.9");
    compileNodeLauncher(arm, "linux_arm64");
    expect(readFileSync(arm).readUInt16LE(18)).toBe(183); // EM_AARCH64
    copyFileSync(join(pkg, "provider-node.js"), join(armDir, "provider-node.js"));
    const wrapper = join(work, "run-arm64");
    writeFileSync(wrapper, `#!/bin/sh\nexec ${emulator} ${arm} "$@"\n`, { mode: 0o755 });
    const r = await launch(wrapper, ["--version"]);
    expect(r.err).toBe("");
    expect(r.out).toBe(
      `pid=${r.pid}\nexe=${join(armDir, "provider-node.js")}\narg=--version\nenv=seen\nstdin=from stdin\n`,
    );
    expect(r.code).toBe(7);
  },
);

// Without /proc (some chroots and sandboxes) it finds itself by the path it was started by. Hiding
// /proc takes a mount namespace, which needs root (as in CI).
const root =
  process.platform === "linux" &&
  process.getuid?.() === 0 &&
  spawnSync("unshare", ["--mount", "true"]).status === 0;
(root ? test : test.skip)(
  "finds the script without /proc, by the path it was started by (needs root)",
  async () => {
    const hidden = join(work, "no-proc");
    writeFileSync(hidden, `#!/bin/sh\nmount -t tmpfs none /proc && exec ${JSON.stringify(exe)} "$@"\n`, {
      mode: 0o755,
    });
    const wrapper = join(work, "run-no-proc");
    writeFileSync(wrapper, `#!/bin/sh\nexec unshare --mount --propagation private ${hidden} "$@"\n`, {
      mode: 0o755,
    });
    const r = await launch(wrapper, ["--version"], { PATH: process.env.PATH });
    expect(r.err).toBe("");
    expect(r.code).toBe(7);
    // The probe cannot read its own path either; its arguments show it ran.
    expect(r.out).toContain("arg=--version\n");
  },
);

linux("names a directory holding terminal controls or bytes that are not UTF-8 escaped", async () => {
  // A real directory whose name is no UTF-8 (fs takes it as bytes), reached through a link.
  const bad = Buffer.concat([
    Buffer.from(join(work, "bad-")),
    Buffer.from([0xff, 0x1b]),
    Buffer.from("]0;t\x07"),
  ]);
  mkdirSync(bad);
  const inside = Buffer.concat([bad, Buffer.from("/terraform-provider-gpurental_v9.9.9")]);
  copyFileSync(exe, inside);
  const link = join(work, "bad-link");
  symlinkSync(inside, link);
  const r = await launch(link, [], { [MAGIC_COOKIE_KEY]: MAGIC_COOKIE_VALUE });
  const line = `bad-link: ${join(work, "bad-")}\\xff\\x1b]0;t\\x07/provider-node.js: No such file or directory\n`;
  expect({ code: r.code, err: r.err, out: r.out }).toEqual({ code: 1, err: line, out: line });
});
