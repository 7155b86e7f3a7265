"use strict";
// The compact form of a linux executable for the release (src/executable/compact/README.md):
// the launcher compiled from src/executable/compact/launcher.c, then the executable compressed
// with xz (SHA-256 check, the architecture's branch filter), then a 104-byte trailer.
// Deterministic for one toolchain: the compilers, liblzma and xz are recorded in the release notes.
const { execFileSync, spawnSync } = require("node:child_process");
const { createHash } = require("node:crypto");
const fs = require("node:fs");
const path = require("node:path");

const SOURCE_DIR = path.join(__dirname, "..", "..", "src", "executable", "compact");
/** The launcher's sources, compiled together. */
const SOURCES = ["launcher.c", "command-session.c", "private-dir.c", "print.c"].map((f) =>
  path.join(SOURCE_DIR, f),
);
/** The npm provider's launcher's sources (node-launcher.c), compiled together. */
const NODE_LAUNCHER_SOURCES = ["node-launcher.c", "command-session.c", "private-dir.c", "print.c"].map((f) =>
  path.join(SOURCE_DIR, f),
);
/**
 * Static: a launcher runs before any library is known to be there, and glibc's symbol versions then
 * cannot tie it to the build machine's glibc. No build id, no symbols, no paths.
 */
const CFLAGS = [
  "-std=gnu11",
  "-O2",
  "-Wall",
  "-Wextra",
  "-Werror",
  "-static",
  "-s",
  "-Wl,--build-id=none",
  `-ffile-prefix-map=${SOURCE_DIR}=.`,
];
const MAGIC = "gpurental-rt-v1\n";
const TRAILER_SIZE = 104;
/** xz settings; the platform's branch filter goes between them and LZMA2. */
const XZ_ARGS = ["--format=xz", "--check=sha256", "--threads=1"];
/** Preset 9 with a 128 MiB dictionary saves 2.5 % more, for 10 s more per platform, 1.3 GB to
 * compress and 128 MB at every unpack (9 MB here). */
const LZMA2 = "--lzma2=preset=6";
/**
 * The platforms released in the compact form, each with its C compiler, xz's branch filter for
 * its machine code, the Debian package of its static liblzma, and the emulator that can run it
 * on an x86-64 build machine (Debian's qemu-user-static), if any.
 */
const COMPACT_PLATFORMS = {
  linux_amd64: {
    cc: "gcc",
    filter: "--x86",
    liblzma: "liblzma-dev:amd64",
    packages: "gcc libc6-dev liblzma-dev",
  },
  linux_arm64: {
    cc: "aarch64-linux-gnu-gcc",
    filter: "--arm64",
    liblzma: "liblzma-dev:arm64",
    packages:
      "gcc-aarch64-linux-gnu libc6-dev-arm64-cross, and liblzma-dev:arm64 after dpkg --add-architecture arm64",
    emulator: "qemu-aarch64-static",
  },
};

class ToolError extends Error {}

function tool(command, args, what) {
  const r = spawnSync(command, args, { encoding: "utf8", maxBuffer: 1 << 20 });
  if (r.error) throw new ToolError(`cannot run ${command} (${what}): ${r.error.message}`);
  if (r.status !== 0)
    throw new ToolError(`${command} ${args.join(" ")} failed (${what}): ${String(r.stderr).trim()}`);
  return r.stdout;
}

/** The toolchain's versions for these platforms, for the release notes: one line each. */
function toolchain(platforms) {
  const first = (s) => s.split("\n")[0].trim();
  const lines = [];
  for (const platform of platforms) {
    const { cc, liblzma } = COMPACT_PLATFORMS[platform];
    // `dpkg-query -W` prints "<package>\t<version>".
    const lzma = spawnSync("dpkg-query", ["-W", liblzma], { encoding: "utf8" });
    const lzmaVersion = lzma.status === 0 ? lzma.stdout.trim().split("\t").pop() : "version unknown";
    lines.push(
      `${platform}: ${first(tool(cc, ["--version"], "the launcher's C compiler"))}, ${liblzma} ${lzmaVersion}`,
    );
  }
  lines.push(first(tool("xz", ["--version"], "compresses the runtime")));
  return lines;
}

/** Compiles the launcher for a platform into workDir (once per release). */
function compileLauncher(workDir, platform = "linux_amd64") {
  const { cc, packages } = COMPACT_PLATFORMS[platform];
  const out = path.join(workDir, `compact-launcher-${platform}`);
  if (fs.existsSync(out)) return fs.readFileSync(out);
  tool(
    cc,
    [...CFLAGS, "-o", out, ...SOURCES, "-llzma"],
    `compiles the ${platform} launcher; needs ${cc} and its static liblzma (Debian: ${packages}), or build the plain form with --form sea`,
  );
  return fs.readFileSync(out);
}

/**
 * Compiles the npm provider's launcher (node-launcher.c) for a platform to `out`, with `cc` (default:
 * the platform's compiler on an x86-64 build machine). It needs no liblzma, only a static libc.
 */
function compileNodeLauncher(out, platform, cc = COMPACT_PLATFORMS[platform].cc) {
  tool(
    cc,
    [...CFLAGS, "-o", out, ...NODE_LAUNCHER_SOURCES],
    `compiles the npm provider's ${platform} launcher`,
  );
}

/** The compact form of `executable` (a file) for a platform: launcher, xz stream, trailer. */
function compactExecutable(executable, workDir, platform = "linux_amd64") {
  const launcher = compileLauncher(workDir, platform);
  const runtime = fs.readFileSync(executable);
  const id = createHash("sha256").update(runtime).digest("hex");
  let stream;
  try {
    const { filter } = COMPACT_PLATFORMS[platform];
    stream = execFileSync("xz", [...XZ_ARGS, filter, LZMA2, "--stdout", "--", executable], {
      maxBuffer: runtime.length + (1 << 20),
      stdio: ["ignore", "pipe", "pipe"],
    });
  } catch (err) {
    throw new ToolError(
      `xz failed (compresses the runtime; Debian's xz-utils, or build the plain form with --form sea): ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  const trailer = Buffer.alloc(TRAILER_SIZE);
  trailer.write(MAGIC, 0, "latin1");
  trailer.writeBigUInt64LE(BigInt(launcher.length), 16);
  trailer.writeBigUInt64LE(BigInt(stream.length), 24);
  trailer.writeBigUInt64LE(BigInt(runtime.length), 32);
  trailer.write(id, 40, "latin1");
  return Buffer.concat([launcher, stream, trailer]);
}

/**
 * What this machine lacks to build a platform's compact form, as Debian packages, or undefined:
 * its C compiler, and the static liblzma that compiler finds.
 */
function missingToolchain(platform) {
  const { cc, packages } = COMPACT_PLATFORMS[platform];
  const found = spawnSync(cc, ["-print-file-name=liblzma.a"], { encoding: "utf8" });
  if (found.error || !path.isAbsolute(found.stdout.trim()))
    return `${cc} and its static liblzma (Debian: ${packages})`;
  if (spawnSync("xz", ["--version"]).error) return "xz (Debian: xz-utils)";
  return undefined;
}

/** The emulator that runs a platform's executables here, or undefined (none set or installed). */
function emulatorFor(platform) {
  const emulator = COMPACT_PLATFORMS[platform]?.emulator;
  if (!emulator) return undefined;
  // Its absolute path: the runs below give the executable an empty PATH.
  const found = spawnSync("sh", ["-c", 'command -v "$1"', "sh", emulator], { encoding: "utf8" });
  return found.status === 0 && found.stdout.trim().startsWith("/") ? found.stdout.trim() : undefined;
}

/**
 * Runs a compact executable of another architecture under its emulator, as far as an emulator
 * can: the launcher unpacks the runtime into a directory of workDir, which must then be the
 * executable `sea` byte for byte (its execve of a foreign runtime then fails: the emulator does not
 * follow it), and the unpacked runtime answers `--version` under the emulator. Returns that answer.
 */
function runEmulated(platform, compactFile, sea, workDir) {
  const emulator = emulatorFor(platform);
  if (!emulator) return undefined;
  const runtimeDir = path.join(workDir, `runtime-${platform}`);
  const env = {
    PATH: "/nonexistent",
    GPURENTAL_PROVIDER_CODE_CACHE: "off",
    GPURENTAL_RUNTIME_DIR: runtimeDir,
  };
  spawnSync(emulator, [compactFile, "--version"], { encoding: "utf8", env });
  const unpacked = fs.existsSync(runtimeDir)
    ? fs
        .readdirSync(runtimeDir)
        .filter((f) => f.startsWith("terraform-provider-gpurental-") && !f.endsWith(".stamp"))
    : [];
  if (unpacked.length !== 1 || !fs.readFileSync(path.join(runtimeDir, unpacked[0])).equals(sea))
    throw new ToolError(`the ${platform} launcher did not unpack its runtime under ${emulator}`);
  const ran = spawnSync(emulator, [path.join(runtimeDir, unpacked[0]), "--version"], {
    encoding: "utf8",
    env,
  });
  if (ran.status !== 0)
    throw new ToolError(`the ${platform} runtime does not run under ${emulator}: ${ran.stderr}`);
  return `${ran.stdout.trim()}, under ${path.basename(emulator)}`;
}

module.exports = {
  missingToolchain,
  runEmulated,
  compactExecutable,
  compileLauncher,
  compileNodeLauncher,
  toolchain,
  ToolError,
  COMPACT_PLATFORMS,
  TRAILER_SIZE,
  MAGIC,
};
