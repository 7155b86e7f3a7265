import { execFileSync, spawnSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import {
  chmodSync,
  closeSync,
  existsSync,
  lchownSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  COMPACT_PLATFORMS,
  compactExecutable,
  MAGIC,
  TRAILER_SIZE,
} from "../../../scripts/release/compact-executable";
import { layOut, TRUST_CASES } from "./testing/directory-trust";
import { type Launch, launch as launchProbe } from "./testing/launch";

// The compact executable's launcher (launcher.c) around a stand-in runtime (testing/probe.c, with
// 3 MB of noise after it so that the stream spans several reads): where it unpacks, that it runs
// the runtime in its own place, and what it refuses.

jest.setTimeout(60_000);

const work = mkdtempSync(join(tmpdir(), "gpurental-compact-"));
let exe = "";
let runtime: Buffer;
let name = "";
let n = 0;

beforeAll(() => {
  const probe = join(work, "probe");
  execFileSync("gcc", ["-O2", "-static", "-o", probe, join(__dirname, "testing", "probe.c")]);
  runtime = Buffer.concat([readFileSync(probe), randomBytes(3 << 20)]);
  writeFileSync(join(work, "runtime"), runtime, { mode: 0o755 });
  exe = join(work, "terraform-provider-gpurental_v9.9.9");
  writeFileSync(exe, compactExecutable(join(work, "runtime"), work), { mode: 0o755 });
  name = `terraform-provider-gpurental-${createHash("sha256").update(runtime).digest("hex").slice(0, 32)}`;
});

afterAll(() => rmSync(work, { recursive: true, force: true }));

/** A new empty directory under the test's own. */
function fresh(mode = 0o700): string {
  const dir = join(work, `d${++n}`);
  mkdirSync(dir, { mode });
  chmodSync(dir, mode);
  return dir;
}

/** A launch of the compact executable with the probe's arguments, and the probe's lines by key. */
async function launch(
  file: string,
  env: NodeJS.ProcessEnv,
): Promise<Launch & { lines: Record<string, string[]> }> {
  const r = await launchProbe(file, ["one two", "--three"], { PROBE: "passed", ...env });
  const lines: Record<string, string[]> = {};
  for (const line of r.out.split("\n").filter(Boolean)) {
    const [key, ...rest] = line.split("=");
    lines[key as string] = [...(lines[key as string] ?? []), rest.join("=")];
  }
  return { ...r, lines };
}

describe("the compact executable", () => {
  it("unpacks its runtime once into the user's cache and runs it in its own place", async () => {
    const home = fresh(0o755);
    const first = await launch(exe, { HOME: home });
    expect(first.err).toBe("");
    expect(first.code).toBe(7);
    const dir = join(home, ".cache", "gpurental", "runtime");
    // The same process (Terraform watches that pid), with the arguments, environment and stdin.
    expect(first.lines).toEqual({
      pid: [String(first.pid)],
      exe: [join(dir, name)],
      arg: ["one two", "--three"],
      env: ["passed"],
      stdin: ["from stdin"],
    });
    expect(readFileSync(join(dir, name)).equals(runtime)).toBe(true);
    expect(statSync(join(dir, name)).mode & 0o777).toBe(0o500);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    // Beside the runtime, only the lock that one unpack at a time holds and the stamp of the
    // verified runtime.
    expect(readdirSync(dir).sort()).toEqual([".lock", name, `${name}.stamp`]);

    const before = statSync(join(dir, name));
    const second = await launch(exe, { HOME: home });
    expect(second.code).toBe(7);
    const after = statSync(join(dir, name));
    expect([after.ino, after.mtimeMs]).toEqual([before.ino, before.mtimeMs]);
  });

  it("prefers an absolute XDG_CACHE_HOME, and ignores a relative one", async () => {
    const home = fresh();
    const xdg = fresh();
    expect((await launch(exe, { HOME: home, XDG_CACHE_HOME: xdg })).lines.exe).toEqual([
      join(xdg, "gpurental", "runtime", name),
    ]);
    expect((await launch(exe, { HOME: home, XDG_CACHE_HOME: "cache" })).lines.exe).toEqual([
      join(home, ".cache", "gpurental", "runtime", name),
    ]);
  });

  it("never runs from a directory that others can write to, nor a runtime that is not whole", async () => {
    const shared = fresh(0o777);
    const tmp = fresh();
    const r = await launch(exe, { HOME: shared, TMPDIR: tmp });
    expect(r.code).toBe(7);
    const uid = process.getuid?.() ?? 0;
    expect(r.lines.exe).toEqual([join(tmp, `gpurental-runtime-${uid}`, name)]);
    // Nothing is made there either.
    expect(readdirSync(shared)).toEqual([]);

    // A runtime cut short (a crash mid-write on another system) is unpacked again.
    const home = fresh();
    const dir = join(home, "rt");
    mkdirSync(dir, { mode: 0o700 });
    writeFileSync(join(dir, name), runtime.subarray(0, 1000), { mode: 0o500 });
    const again = await launch(exe, { GPURENTAL_RUNTIME_DIR: dir });
    expect(again.code).toBe(7);
    expect(readFileSync(join(dir, name)).equals(runtime)).toBe(true);
  });

  it("uses GPURENTAL_RUNTIME_DIR or fails naming it, never another place", async () => {
    const relative = await launch(exe, { GPURENTAL_RUNTIME_DIR: "rt", HOME: fresh() });
    expect(relative.code).toBe(1);
    expect(relative.err).toBe(
      'terraform-provider-gpurental_v9.9.9: GPURENTAL_RUNTIME_DIR must be an absolute path, not "rt"\n',
    );
    const shared = fresh(0o777);
    const refused = await launch(exe, { GPURENTAL_RUNTIME_DIR: join(shared, "rt"), HOME: fresh() });
    expect(refused.code).toBe(1);
    expect(refused.err).toContain(`GPURENTAL_RUNTIME_DIR: ${shared} can be written by other users`);
    expect(refused.out).toBe("");
    // Started by Terraform, it says so on stdout too, which Terraform shows (its stderr it does not).
    const underTerraform = await launch(exe, {
      GPURENTAL_RUNTIME_DIR: "rt",
      TF_PLUGIN_MAGIC_COOKIE: "d602bf8f470bc67ca7faa0386276bbdd4330efaf76d1a219cb4d6991ca9872b2",
    });
    expect(underTerraform.out).toBe(
      'terraform-provider-gpurental_v9.9.9: GPURENTAL_RUNTIME_DIR must be an absolute path, not "rt"\n',
    );
    const own = join(fresh(), "rt");
    expect((await launch(exe, { GPURENTAL_RUNTIME_DIR: own })).lines.exe).toEqual([join(own, name)]);
  });

  it("writes what could drive a terminal escaped, on stderr and on the stdout Terraform shows", async () => {
    const r = await launch(exe, {
      GPURENTAL_RUNTIME_DIR: "rt\x1b]0;title\x07\u009b2J\u202e\u2028\x7f\u00e9",
      TF_PLUGIN_MAGIC_COOKIE: "d602bf8f470bc67ca7faa0386276bbdd4330efaf76d1a219cb4d6991ca9872b2",
    });
    const line =
      'terraform-provider-gpurental_v9.9.9: GPURENTAL_RUNTIME_DIR must be an absolute path, not "rt\\x1b]0;title\\x07\\x9b2J\\u202e\\u2028\\x7f\u00e9"\n';
    expect({ code: r.code, err: r.err, out: r.out }).toEqual({ code: 1, err: line, out: line });
  });

  it.each(TRUST_CASES)("keeps the directory trust rule (directory-trust.json): $name", async (c) => {
    const dir = layOut(fresh(), c);
    const r = await launch(exe, { GPURENTAL_RUNTIME_DIR: dir, HOME: fresh() });
    // A trusted directory runs the runtime from there; any other is refused, naming the setting.
    expect(r.code).toBe(c.trusted ? 7 : 1);
    // The runtime sees its real path (/proc/self/exe), links resolved.
    if (c.trusted) expect(r.lines.exe).toEqual([join(realpathSync(dir), name)]);
    else expect(r.err).toContain("GPURENTAL_RUNTIME_DIR");
  });

  it("runs from memory, saying so, where no private directory can be had", async () => {
    const r = await launch(exe, { TMPDIR: fresh(0o777) });
    expect(r.code).toBe(7);
    expect(r.err).toContain("no private directory to unpack the runtime into");
    expect(r.err).toContain("running it from memory. Set GPURENTAL_RUNTIME_DIR");
    expect(r.lines.exe?.[0]).toMatch(/^\/memfd:terraform-provider-gpurental/);
    expect(r.lines.pid).toEqual([String(r.pid)]);
  });

  it("refuses a damaged file and leaves nothing behind", async () => {
    const whole = readFileSync(exe);
    const trailer = whole.subarray(whole.length - TRAILER_SIZE);
    expect(trailer.subarray(0, 16).toString("latin1")).toBe(MAGIC);
    const offset = Number(trailer.readBigUInt64LE(16));
    const length = Number(trailer.readBigUInt64LE(24));

    const flipped = Buffer.from(whole);
    const at = offset + Math.floor(length / 2);
    flipped[at] = (flipped[at] as number) ^ 0xff;
    const cut = Buffer.concat([whole.subarray(0, offset + 1000), trailer]);
    const noTrailer = whole.subarray(0, whole.length - TRAILER_SIZE);
    const cases: [Buffer, string][] = [
      [flipped, "cannot unpack into"],
      [cut, "trailer points outside the file"],
      [noTrailer, "its runtime is missing (no trailer)"],
    ];
    for (const [bytes, message] of cases) {
      const file = join(fresh(), "terraform-provider-gpurental_v9.9.9");
      writeFileSync(file, bytes, { mode: 0o755 });
      const dir = join(fresh(), "rt");
      const r = await launch(file, { GPURENTAL_RUNTIME_DIR: dir });
      expect({ code: r.code, out: r.out }).toEqual({ code: 1, out: "" });
      expect(r.err).toContain(message);
      expect(r.err).toMatch(/damaged; install the provider again/);
      expect(existsSync(dir) ? readdirSync(dir).filter((f) => f !== ".lock") : []).toEqual([]);
    }
  });

  it("names itself as it was started in what it says: gpurental when it is the command", async () => {
    // The command's archive holds the same file named gpurental (docs/design/standalone-command.md).
    const dir = fresh();
    const command = join(dir, "gpurental");
    writeFileSync(command, readFileSync(exe), { mode: 0o755 });
    const relative = await launch(command, { GPURENTAL_RUNTIME_DIR: "rt", HOME: fresh() });
    expect({ code: relative.code, err: relative.err }).toEqual({
      code: 1,
      err: 'gpurental: GPURENTAL_RUNTIME_DIR must be an absolute path, not "rt"\n',
    });
    const memory = await launch(command, { TMPDIR: fresh(0o777) });
    expect(memory.code).toBe(7);
    expect(memory.err).toMatch(/^gpurental: no private directory to unpack the runtime into \(/);
    // Runs of one file under both names share one unpacked runtime, whose name stays the provider's.
    const rt = join(fresh(), "rt");
    expect((await launch(command, { GPURENTAL_RUNTIME_DIR: rt })).lines.exe).toEqual([join(rt, name)]);
    chmodSync(join(rt, name), 0o700);
    const fd = openSync(join(rt, name), "r+");
    writeSync(fd, Buffer.from([9, 9, 9, 9]), 0, 4, Math.floor(runtime.length / 2));
    closeSync(fd);
    chmodSync(join(rt, name), 0o500);
    expect((await launch(command, { GPURENTAL_RUNTIME_DIR: rt })).err).toBe(
      `gpurental: ${join(rt, name)} is not the runtime that was shipped (its SHA-256 differs from its name): unpacking it again\n`,
    );
    // A damaged command says to install the command again, not the provider.
    const whole = readFileSync(exe);
    const damaged = join(fresh(), "gpurental");
    writeFileSync(damaged, whole.subarray(0, whole.length - TRAILER_SIZE), { mode: 0o755 });
    expect((await launch(damaged, { GPURENTAL_RUNTIME_DIR: join(fresh(), "rt") })).err).toBe(
      "gpurental: its runtime is missing (no trailer): the file is damaged; install the gpurental command again\n",
    );
    // Started through a link, it is named as the link: what the user typed.
    const link = join(fresh(), "gpr");
    symlinkSync(command, link);
    expect((await launch(link, { GPURENTAL_RUNTIME_DIR: "rt" })).err).toBe(
      'gpr: GPURENTAL_RUNTIME_DIR must be an absolute path, not "rt"\n',
    );
  });

  describe("runs only the runtime that was shipped", () => {
    /** A runtime unpacked by a first launch, and its directory. */
    async function unpacked(): Promise<string> {
      const dir = join(fresh(), "rt");
      expect((await launch(exe, { GPURENTAL_RUNTIME_DIR: dir })).code).toBe(7);
      return dir;
    }

    /** Writes `bytes` over the runtime as its owner could, keeping its size. */
    function overwrite(dir: string, at: number, bytes: Buffer): void {
      const file = join(dir, name);
      chmodSync(file, 0o700);
      const fd = openSync(file, "r+");
      writeSync(fd, bytes, 0, bytes.length, at);
      closeSync(fd);
      chmodSync(file, 0o500);
    }

    it("unpacks again a runtime whose 4 middle bytes changed, and says so", async () => {
      const dir = await unpacked();
      overwrite(dir, Math.floor(runtime.length / 2), Buffer.from([1, 2, 3, 4]));
      const r = await launch(exe, { GPURENTAL_RUNTIME_DIR: dir });
      expect(r.code).toBe(7);
      expect(r.err).toBe(
        `terraform-provider-gpurental_v9.9.9: ${join(dir, name)} is not the runtime that was shipped (its SHA-256 differs from its name): unpacking it again\n`,
      );
      expect(readFileSync(join(dir, name)).equals(runtime)).toBe(true);
    });

    it("unpacks again a runtime replaced by another file of the same size", async () => {
      const dir = await unpacked();
      const other = join(dir, ".other");
      // A program of the same size that would exit 0 if it ran.
      writeFileSync(
        other,
        Buffer.concat([readFileSync("/bin/true"), Buffer.alloc(runtime.length)]).subarray(0, runtime.length),
        { mode: 0o500 },
      );
      renameSync(other, join(dir, name));
      const r = await launch(exe, { GPURENTAL_RUNTIME_DIR: dir });
      expect(r.code).toBe(7);
      expect(r.err).toContain("is not the runtime that was shipped");
      expect(readFileSync(join(dir, name)).equals(runtime)).toBe(true);
    });

    it("verifies a runtime without a stamp once, keeps it and stamps it", async () => {
      const dir = await unpacked();
      rmSync(join(dir, `${name}.stamp`));
      const before = statSync(join(dir, name));
      const r = await launch(exe, { GPURENTAL_RUNTIME_DIR: dir });
      expect([r.code, r.err]).toEqual([7, ""]);
      expect(statSync(join(dir, name)).ino).toBe(before.ino);
      expect(readFileSync(join(dir, `${name}.stamp`), "utf8")).toMatch(
        new RegExp(
          `^gpurental-stamp-v1 \\d+ ${before.ino} ${runtime.length} \\d+\\.\\d{9} \\d+\\.\\d{9}\\n$`,
        ),
      );
    });

    it("trusts a matching stamp without reading the runtime: what the rule cannot catch", async () => {
      const dir = await unpacked();
      // Whoever can write the private directory can also write a stamp that describes their own
      // file: the rule catches damage and replacement, not the user's own rights (see
      // docs/design/runtime-integrity.md). A stamp made for another file is trusted as it is.
      const other = join(dir, ".other");
      writeFileSync(
        other,
        Buffer.concat([readFileSync("/bin/true"), Buffer.alloc(runtime.length)]).subarray(0, runtime.length),
        { mode: 0o500 },
      );
      renameSync(other, join(dir, name));
      const st = statSync(join(dir, name), { bigint: true });
      const time = (ns: bigint) => `${ns / 1_000_000_000n}.${String(ns % 1_000_000_000n).padStart(9, "0")}`;
      writeFileSync(
        join(dir, `${name}.stamp`),
        `gpurental-stamp-v1 ${st.dev} ${st.ino} ${st.size} ${time(st.mtimeNs)} ${time(st.ctimeNs)}\n`,
      );
      const r = await launch(exe, { GPURENTAL_RUNTIME_DIR: dir });
      expect([r.code, r.err]).toEqual([0, ""]);
    });
  });

  describe("never unpacks where a symbolic link leads", () => {
    it("refuses $TMPDIR/gpurental-runtime-<uid> when it is a link, even to the user's own directory", async () => {
      const tmp = fresh();
      const victim = fresh();
      const uid = process.getuid?.() ?? 0;
      symlinkSync(victim, join(tmp, `gpurental-runtime-${uid}`));
      const r = await launch(exe, { TMPDIR: tmp });
      expect(r.code).toBe(7);
      expect(r.err).toContain(
        `${join(tmp, `gpurental-runtime-${uid}`)} is a symbolic link: the runtime's directory must be a real directory`,
      );
      expect(r.lines.exe?.[0]).toMatch(/^\/memfd:/);
      expect(readdirSync(victim)).toEqual([]);
    });

    it("refuses GPURENTAL_RUNTIME_DIR when it is a link", async () => {
      const link = join(fresh(), "rt");
      symlinkSync(fresh(), link);
      for (const given of [link, `${link}/`]) {
        const r = await launch(exe, { GPURENTAL_RUNTIME_DIR: given });
        expect(r.code).toBe(1);
        expect(r.err).toContain(`${given} is a symbolic link`);
      }
    });

    it("follows a link of the user's own above the directory, and its target is checked", async () => {
      const real = fresh();
      const link = join(fresh(), "cache");
      symlinkSync(real, link);
      const r = await launch(exe, { GPURENTAL_RUNTIME_DIR: join(link, "rt") });
      expect(r.code).toBe(7);
      expect(readdirSync(join(real, "rt"))).toContain(name);
    });

    const root = process.getuid?.() === 0;
    (root ? it : it.skip)(
      "refuses a link of another user's above the directory, creating nothing (needs root)",
      async () => {
        const target = fresh();
        const link = join(fresh(), "cache");
        symlinkSync(target, link);
        lchownSync(link, 65534, 65534);
        const r = await launch(exe, { GPURENTAL_RUNTIME_DIR: join(link, "rt") });
        expect(r.code).toBe(1);
        expect(r.err).toContain(`${link} is a symbolic link of another user's`);
        expect(readdirSync(target)).toEqual([]);
      },
    );
  });

  it("gives every one of many first launches at once the same runtime", async () => {
    const dir = join(fresh(), "rt");
    const runs = await Promise.all(
      Array.from({ length: 8 }, () => launch(exe, { GPURENTAL_RUNTIME_DIR: dir })),
    );
    expect(runs.map((r) => r.code)).toEqual(Array(8).fill(7));
    // None ran a runtime that another then replaced ("(deleted)"), and one unpack was enough.
    expect(new Set(runs.map((r) => r.lines.exe?.[0]))).toEqual(new Set([join(dir, name)]));
    expect(readdirSync(dir).sort()).toEqual([".lock", name, `${name}.stamp`]);
  });

  it("removes runtimes of other versions unpacked a month ago, and temp files of dead unpacks", async () => {
    const dir = join(fresh(), "rt");
    mkdirSync(dir, { mode: 0o700 });
    const old = "terraform-provider-gpurental-00000000000000000000000000000000";
    const recent = "terraform-provider-gpurental-11111111111111111111111111111111";
    const deadTemp = ".unpack-0000000000000000-12345";
    const liveTemp = ".unpack-1111111111111111-12346";
    const days = (d: number) => new Date(Date.now() - d * 86_400_000);
    for (const [file, age] of [
      [old, 31],
      [recent, 29],
      [deadTemp, 2],
      [liveTemp, 0],
      ["unrelated", 400],
    ] as const) {
      writeFileSync(join(dir, file), "x");
      utimesSync(join(dir, file), days(age), days(age));
    }
    expect((await launch(exe, { GPURENTAL_RUNTIME_DIR: dir })).code).toBe(7);
    expect(readdirSync(dir).sort()).toEqual(
      [".lock", liveTemp, name, `${name}.stamp`, recent, "unrelated"].sort(),
    );
  });

  // The linux_arm64 launcher, cross-compiled, under qemu-user. The stand-in runtime stays x86-64:
  // the emulator hands the launcher's execve to this machine's kernel, which runs it natively.
  const emulator = COMPACT_PLATFORMS.linux_arm64?.emulator ?? "";
  const cross = ["aarch64-linux-gnu-gcc", emulator].every(
    (tool) => spawnSync("sh", ["-c", 'command -v "$1"', "sh", tool]).status === 0,
  );
  if (!cross && process.env.GPURENTAL_REQUIRE_CROSS === "1")
    throw new Error("GPURENTAL_REQUIRE_CROSS=1 but aarch64-linux-gnu-gcc or qemu-aarch64-static is missing");
  (cross ? it : it.skip)(
    "works the same built for linux_arm64 (needs gcc-aarch64-linux-gnu, liblzma-dev:arm64, qemu-user-static)",
    async () => {
      const armDir = fresh();
      const arm = join(armDir, "terraform-provider-gpurental_v9.9.9");
      writeFileSync(arm, compactExecutable(join(work, "runtime"), armDir, "linux_arm64"), { mode: 0o755 });
      expect(readFileSync(arm).subarray(0, 20).readUInt16LE(18)).toBe(183); // EM_AARCH64
      const wrapper = join(armDir, "run");
      writeFileSync(wrapper, `#!/bin/sh\nexec ${emulator} ${arm} "$@"\n`, { mode: 0o755 });
      const dir = join(fresh(), "rt");
      const r = await launch(wrapper, { GPURENTAL_RUNTIME_DIR: dir });
      expect(r.err).toBe("");
      expect(r.code).toBe(7);
      expect(r.lines).toEqual({
        pid: [String(r.pid)],
        exe: [join(dir, name)],
        arg: ["one two", "--three"],
        env: ["passed"],
        stdin: ["from stdin"],
      });
      expect(readFileSync(join(dir, name)).equals(runtime)).toBe(true);
    },
  );

  it("is built only with its toolchain: the release names what a machine lacks", () => {
    const script = `process.stdout.write(String(require(${JSON.stringify(join(__dirname, "..", "..", "..", "scripts", "release", "compact-executable.js"))}).missingToolchain(process.argv[1])))`;
    const lacks = (platform: string, PATH: string) =>
      spawnSync(process.execPath, ["-e", script, platform], { encoding: "utf8", env: { PATH } }).stdout;
    expect(lacks("linux_arm64", "/nonexistent")).toBe(
      "aarch64-linux-gnu-gcc and its static liblzma (Debian: gcc-aarch64-linux-gnu libc6-dev-arm64-cross, and liblzma-dev:arm64 after dpkg --add-architecture arm64)",
    );
    expect(lacks("linux_amd64", "/nonexistent")).toBe(
      "gcc and its static liblzma (Debian: gcc libc6-dev liblzma-dev)",
    );
    expect(lacks("linux_amd64", process.env.PATH ?? "")).toBe("undefined");
  });

  // Without /proc (some chroots and sandboxes) it finds itself by the path it was started by. Hiding
  // /proc takes a mount namespace, which needs root (as in CI).
  const root = process.getuid?.() === 0 && spawnSync("unshare", ["--mount", "true"]).status === 0;
  (root ? it : it.skip)(
    "finds itself without /proc, by the path it was started by (needs root)",
    async () => {
      const dir = join(fresh(), "rt");
      const hidden = join(fresh(), "no-proc");
      writeFileSync(hidden, `#!/bin/sh\nmount -t tmpfs none /proc && exec ${JSON.stringify(exe)} "$@"\n`, {
        mode: 0o755,
      });
      const wrapper = join(fresh(), "run");
      writeFileSync(wrapper, `#!/bin/sh\nexec unshare --mount --propagation private ${hidden} "$@"\n`, {
        mode: 0o755,
      });
      const r = await launch(wrapper, { GPURENTAL_RUNTIME_DIR: dir, PATH: process.env.PATH });
      expect(r.err).toBe("");
      expect(r.code).toBe(7);
      // The probe cannot read its own path either; its arguments show it ran.
      expect(r.lines.arg).toEqual(["one two", "--three"]);
      expect(readFileSync(join(dir, name)).equals(runtime)).toBe(true);
    },
  );
});
