"use strict";
// The compact form of a linux executable for the release (src/executable/compact/README.md):
// the launcher compiled from src/executable/compact/launcher.c, then the executable compressed
// with xz (SHA-256 check, x86 filter), then a 104-byte trailer. Deterministic for one toolchain:
// gcc, glibc's and liblzma's static libraries and xz are recorded in the release notes.
const { execFileSync, spawnSync } = require("node:child_process");
const { createHash } = require("node:crypto");
const fs = require("node:fs");
const path = require("node:path");

const SOURCE = path.join(__dirname, "..", "src", "executable", "compact", "launcher.c");
const MAGIC = "gpurental-rt-v1\n";
const TRAILER_SIZE = 104;
/** xz settings: the x86 branch filter. Preset 9 with a 128 MiB dictionary saves 2.5 % more, for
 * 10 s more per platform, 1.3 GB to compress and 128 MB at every unpack (9 MB here). */
const XZ_ARGS = ["--format=xz", "--check=sha256", "--x86", "--lzma2=preset=6", "--threads=1"];
/** Platforms whose compact form this machine's toolchain builds. */
const COMPACT_PLATFORMS = { linux_amd64: { arch: "x64" } };

class ToolError extends Error {}

function tool(command, args, what) {
  const r = spawnSync(command, args, { encoding: "utf8", maxBuffer: 1 << 20 });
  if (r.error) throw new ToolError(`cannot run ${command} (${what}): ${r.error.message}`);
  if (r.status !== 0)
    throw new ToolError(`${command} ${args.join(" ")} failed (${what}): ${String(r.stderr).trim()}`);
  return r.stdout;
}

/** The toolchain's versions, for the release notes. */
function toolchain() {
  const first = (s) => s.split("\n")[0].trim();
  // `dpkg-query -W` prints "<package>\t<version>".
  const lzma = spawnSync("dpkg-query", ["-W", "liblzma-dev"], { encoding: "utf8" });
  return {
    gcc: first(tool("gcc", ["--version"], "the launcher's C compiler")),
    xz: first(tool("xz", ["--version"], "compresses the runtime")),
    liblzma:
      lzma.status === 0 ? `liblzma-dev ${lzma.stdout.trim().split("\t").pop()}` : "liblzma (version unknown)",
  };
}

/** Compiles the launcher into workDir (once per release). */
function compileLauncher(workDir) {
  const out = path.join(workDir, "compact-launcher");
  if (fs.existsSync(out)) return fs.readFileSync(out);
  // Static: the launcher runs before any library is known to be there, and glibc's symbol
  // versions then cannot tie it to the build machine's glibc. No build id, no symbols, no paths.
  tool(
    "gcc",
    [
      "-std=gnu11",
      "-O2",
      "-Wall",
      "-Wextra",
      "-Werror",
      "-static",
      "-s",
      "-Wl,--build-id=none",
      `-ffile-prefix-map=${path.dirname(SOURCE)}=.`,
      "-o",
      out,
      SOURCE,
      "-llzma",
    ],
    "compiles the launcher; needs gcc and the static liblzma of Debian's liblzma-dev, or build the plain form with --form sea",
  );
  return fs.readFileSync(out);
}

/** The compact form of `executable` (a file): launcher, xz stream, trailer. */
function compactExecutable(executable, workDir) {
  const launcher = compileLauncher(workDir);
  const runtime = fs.readFileSync(executable);
  const id = createHash("sha256").update(runtime).digest("hex");
  let stream;
  try {
    stream = execFileSync("xz", [...XZ_ARGS, "--stdout", "--", executable], {
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

module.exports = {
  compactExecutable,
  compileLauncher,
  toolchain,
  ToolError,
  COMPACT_PLATFORMS,
  TRAILER_SIZE,
  MAGIC,
};
