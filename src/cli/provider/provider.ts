import { createHash } from "node:crypto";
import {
  chmodSync,
  existsSync,
  linkSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { homedir } from "node:os";
import { dirname, join, relative, resolve, sep } from "node:path";
import type { Command } from "commander";
import { version as packageVersion } from "../../version";
import { standaloneExecutable } from "../host";
import { printOut } from "../io";

// `gpurental provider install` puts the provider into an unpacked filesystem mirror:
//   <mirror>/<host>/gpurental/gpurental/<version>/<os>_<arch>/terraform-provider-gpurental_v<version>
// next to the bundle it runs. Terraform hashes every file of that directory into the lock file
// (h1:), so the files must not depend on where the mirror or the package lives: the executable
// finds its bundle relative to itself and names no absolute path. The standalone executable of a
// release installs itself instead: it is the provider too, and needs no Node.js to run.

/** The provider type and namespace. */
export const PROVIDER_NAMESPACE = "gpurental";
/** The provider type. */
export const PROVIDER_TYPE = "gpurental";

/** The hosts installed by default: Terraform's and OpenTofu's default registries for `gpurental/gpurental`. */
export const DEFAULT_SOURCES: readonly string[] = [
  "registry.terraform.io/gpurental/gpurental",
  "registry.opentofu.org/gpurental/gpurental",
];

/** ~/.terraform.d/plugins: a mirror Terraform searches without any CLI configuration. */
export function defaultMirrorDir(): string {
  return join(homedir(), ".terraform.d", "plugins");
}

/** Options of installProvider. */
export interface InstallOptions {
  /** The mirror directory; defaults to ~/.terraform.d/plugins (Terraform's implied local mirror). */
  dir?: string;
  /** The version to install as; defaults to the package version. */
  version?: string;
  /** Provider source addresses to install under; bare `ns/type` means registry.terraform.io. */
  sources?: readonly string[];
  /** The bundle to install; defaults to this package's dist/provider-bundle/provider.js (built by `npm run bundle`). */
  bundle?: string;
  /** The launcher next to it; defaults to provider-launcher.js beside the bundle. */
  launcher?: string;
  /**
   * A standalone provider executable (a release's) to install instead of the bundle: the package
   * directory then holds that file alone, named as Terraform expects.
   */
  executable?: string;
}

/** What installProvider wrote. */
export interface InstallResult {
  /** The mirror directory (absolute). */
  mirrorDir: string;
  /** The package directory of the first source (absolute). */
  packageDir: string;
  /** All package directories written, one per source. */
  packageDirs: string[];
  /** The executable in packageDir. */
  executable: string;
  /** The h1: hash Terraform records in the lock file for this package. */
  hash: string;
  /** A CLI configuration (for TF_CLI_CONFIG_FILE or ~/.terraformrc) that installs from the mirror. */
  cliConfig: string;
  /** The normalized source addresses installed. */
  sources: string[];
}

/** Normalizes a provider source address to host/namespace/type (a bare ns/type means registry.terraform.io). */
export function normalizeSource(source: string): string {
  const parts = source.trim().toLowerCase().split("/");
  if (parts.length === 2) parts.unshift("registry.terraform.io");
  if (parts.length !== 3 || parts.some((p) => !/^[a-z0-9][a-z0-9._-]*$/.test(p))) {
    throw new Error(`invalid provider source address "${source}": expected [hostname/]namespace/type`);
  }
  if (parts[2] !== PROVIDER_TYPE) {
    throw new Error(
      `provider source "${source}" must end in /${PROVIDER_TYPE}: the executable is terraform-provider-${PROVIDER_TYPE}`,
    );
  }
  return parts.join("/");
}

/** Terraform's platform name for this machine, e.g. linux_amd64 or darwin_arm64. */
export function terraformPlatform(platform: string = process.platform, arch: string = process.arch): string {
  const os = platform === "win32" ? "windows" : platform;
  const cpu =
    ({ x64: "amd64", ia32: "386", arm64: "arm64", arm: "arm" } as Record<string, string>)[arch] ?? arch;
  return `${os}_${cpu}`;
}

/** The Node.js script beside the executable: the provider that node runs. */
export const NODE_SCRIPT = "provider-node.js";

/** The npm provider's launchers in C (src/executable/compact/node-launcher.c), by file name. */
const NODE_LAUNCHER = /^node-launcher-linux_(amd64|arm64)$/;

/**
 * The executable Terraform runs: a POSIX shell script, the same on every platform (so is the lock
 * file's hash of the package), that hands the launch to the launcher in C for this machine where
 * the package has one (Linux), which runs the Node.js script or, in automation, makes the launch a
 * session of its command's one provider process; elsewhere node runs the script. No absolute path
 * inside.
 */
export function executableText(): string {
  return [
    "#!/bin/sh",
    "# terraform-provider-gpurental: Terraform runs this file. On Linux it hands the launch to the",
    "# launcher in C beside it for this machine (in automation, one provider process serves all the",
    "# launches of a terraform command); elsewhere, or without it, node runs provider-node.js beside",
    "# it, and node must be on PATH. The same file on every platform, and so is the package's hash.",
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the shell's own expansion
    "case $0 in */*) d=${0%/*} ;; *) d=. ;; esac",
    // Linux names its machine in /proc (kernel.arch, Linux 6.1 on), which spares a process.
    'if [ -r /proc/sys/kernel/arch ]; then read -r m </proc/sys/kernel/arch && m="Linux $m"; else m=$(uname -sm); fi',
    "case $m in",
    '"Linux x86_64") l=node-launcher-linux_amd64 ;;',
    '"Linux aarch64") l=node-launcher-linux_arm64 ;;',
    "*) l= ;;",
    "esac",
    'if [ -n "$l" ] && [ -x "$d/$l" ]; then exec "$d/$l" "$@"; fi',
    `exec node "$d/${NODE_SCRIPT}" "$@"`,
    "",
  ].join("\n");
}

/** The Node.js script: node on the bundle beside it, with no absolute path inside. */
export function nodeScriptText(): string {
  return [
    "#!/usr/bin/env node",
    '"use strict";',
    "// The gpurental provider, run by node (terraform-provider-gpurental_v<version> beside it says how).",
    'require("./provider-launcher.js").launch(require("node:path").join(__dirname, "provider.js"));',
    "",
  ].join("\n");
}

function packageRoot(): string {
  let dir = __dirname;
  while (!existsSync(join(dir, "package.json"))) {
    const up = dirname(dir);
    if (up === dir) throw new Error("cannot find the gpurental package root");
    dir = up;
  }
  return dir;
}

/** The h1: hash of a package directory, as Terraform's lock file records it (Go dirhash Hash1). */
export function packageHash(dir: string): string {
  const files: string[] = [];
  const walk = (d: string) => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, entry.name);
      if (entry.isDirectory()) walk(p);
      else files.push(relative(dir, p).split(sep).join("/"));
    }
  };
  walk(dir);
  files.sort();
  let summary = "";
  for (const f of files) {
    summary += `${createHash("sha256")
      .update(readFileSync(join(dir, f)))
      .digest("hex")}  ${f}\n`;
  }
  return `h1:${createHash("sha256").update(summary).digest("base64")}`;
}

/** The CLI configuration that installs the given sources from `mirrorDir` and everything else from registries. */
export function mirrorCliConfig(mirrorDir: string, sources: readonly string[]): string {
  const list = sources.map((s) => JSON.stringify(s)).join(", ");
  return `provider_installation {
  filesystem_mirror {
    path    = ${JSON.stringify(mirrorDir)}
    include = [${list}]
  }
  direct {
    exclude = [${list}]
  }
}
`;
}

/**
 * mkdir -p, one level at a time. Node 20's `mkdirSync(dir, { recursive: true })` never returns for
 * some paths where mkdir answers ENOENT although the parent exists (e.g. under /proc); here that
 * ENOENT is an error naming the path.
 */
function makeDirs(dir: string): void {
  const missing: string[] = [];
  for (let d = dir; !existsSync(d); d = dirname(d)) {
    if (dirname(d) === d) break;
    missing.unshift(d);
  }
  for (const d of missing) {
    try {
      mkdirSync(d);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
  }
}

/** Files above this size are hard-linked between the package directories of one install. */
const LINK_ABOVE = 1 << 20;

function linked(from: string, to: string): boolean {
  try {
    linkSync(from, to);
    return true;
  } catch {
    return false;
  }
}

type PackageFile = [name: string, data: Buffer | string, mode: number];

/** The npm package's provider: the script Terraform runs and the bundle files beside it. */
function bundleContents(opts: InstallOptions, version: string): PackageFile[] {
  const bundle = resolve(opts.bundle ?? join(packageRoot(), "dist", "provider-bundle", "provider.js"));
  const launcher = resolve(opts.launcher ?? join(dirname(bundle), "provider-launcher.js"));
  for (const f of [bundle, launcher]) {
    if (!existsSync(f)) throw new Error(`${f} is missing: run \`npm run bundle\` first`);
  }
  // The same files on every platform: the launchers in C of every platform the build made one for
  // (src/executable/compact/node-launcher.c), used on Linux only, travel everywhere.
  const contents: PackageFile[] = [
    [`terraform-provider-${PROVIDER_TYPE}_v${version}`, executableText(), 0o755],
    [NODE_SCRIPT, nodeScriptText(), 0o755],
    ["provider.js", readFileSync(bundle), 0o644],
    ["provider-launcher.js", readFileSync(launcher), 0o644],
  ];
  for (const name of readdirSync(dirname(bundle))
    .filter((f) => NODE_LAUNCHER.test(f))
    .sort())
    contents.push([name, readFileSync(join(dirname(bundle), name)), 0o755]);
  // The production build splits off what is loaded after the handshake, the gRPC server and the
  // provider itself, and pre-encodes the schema answer (scripts/build/bundle-provider.js).
  // The PostgreSQL journal's client (provider-journal-pg.js) runs in a worker thread of its own.
  for (const part of [
    "provider-transport.js",
    "provider-impl.js",
    "provider-schema.pb",
    "provider-journal-pg.js",
  ]) {
    const file = join(dirname(bundle), part);
    if (existsSync(file)) contents.push([part, readFileSync(file), 0o644]);
  }
  return contents;
}

/** A standalone executable, alone in the package directory under the name Terraform looks for. */
function standaloneContents(executable: string, version: string): PackageFile[] {
  let data: Buffer;
  try {
    data = readFileSync(executable);
  } catch (err) {
    throw new Error(
      `cannot read the provider executable ${executable}: ${(err as NodeJS.ErrnoException).code ?? err}`,
    );
  }
  const exe = process.platform === "win32" ? ".exe" : "";
  return [[`terraform-provider-${PROVIDER_TYPE}_v${version}${exe}`, data, 0o755]];
}

/** Installs the provider into a filesystem mirror and returns where, with the lock hash and CLI config. */
export function installProvider(opts: InstallOptions = {}): InstallResult {
  if (opts.dir !== undefined && opts.dir.trim() === "") {
    throw new Error("the mirror directory (--dir) must not be empty");
  }
  const mirrorDir = resolve(opts.dir ?? defaultMirrorDir());
  if (existsSync(mirrorDir) && !statSync(mirrorDir).isDirectory()) {
    throw new Error(`the mirror directory (--dir) ${mirrorDir} is a file, not a directory`);
  }
  const version = opts.version ?? packageVersion;
  if (!/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/.test(version)) {
    throw new Error(`invalid version "${version}": expected a semantic version like 1.2.3`);
  }
  const contents = opts.executable
    ? standaloneContents(opts.executable, version)
    : bundleContents(opts, version);
  const sources = [...new Set((opts.sources ?? DEFAULT_SOURCES).map(normalizeSource))];
  const packageDirs: string[] = [];
  for (const source of sources) {
    const packageDir = join(mirrorDir, ...source.split("/"), version, terraformPlatform());
    try {
      // Start clean: a stale file left from an older install would change the hash.
      rmSync(packageDir, { recursive: true, force: true });
      makeDirs(packageDir);
      for (const [name, data, mode] of contents) {
        const file = join(packageDir, name);
        // The standalone executable is tens of MB: the first source's copy is linked, not copied again.
        const first = packageDirs[0] && join(packageDirs[0], name);
        if (first && Buffer.isBuffer(data) && data.length > LINK_ABOVE && linked(first, file)) continue;
        writeFileSync(file, data, { mode });
        chmodSync(file, mode);
      }
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      throw new Error(
        `cannot write the provider into the mirror directory (--dir) ${mirrorDir}: ${e.code ?? e.message}${e.path ? ` at ${e.path}` : ""}`,
      );
    }
    packageDirs.push(packageDir);
  }
  const packageDir = packageDirs[0]!;
  return {
    mirrorDir,
    packageDir,
    packageDirs,
    executable: join(packageDir, contents[0]![0]),
    hash: packageHash(packageDir),
    cliConfig: mirrorCliConfig(mirrorDir, sources),
    sources,
  };
}

/** Registers `gpurental provider install`. */
export function register(program: Command): void {
  // `install --version <v>` must reach the subcommand instead of printing the program's version:
  // with positional options, program options are only those written before the subcommand.
  program.enablePositionalOptions();
  const provider = program
    .command("provider")
    .description("Install the Terraform provider; list or stop its resident processes");
  provider
    .command("install")
    .description(
      "Install terraform-provider-gpurental into a local filesystem mirror so that `terraform init` finds it offline",
    )
    .option(
      "--dir <mirror>",
      "mirror directory (default: ~/.terraform.d/plugins, searched by Terraform without any CLI config)",
    )
    .option("--version <version>", "version to install as", packageVersion)
    .option(
      "--source <address...>",
      "provider source addresses to install under (default: registry.terraform.io/gpurental/gpurental and registry.opentofu.org/gpurental/gpurental)",
    )
    .action((options: { dir?: string; version: string; source?: string[] }) => {
      const result = installProvider({
        dir: options.dir,
        version: options.version,
        sources: options.source,
        executable: standaloneExecutable()?.file,
      });
      const implied = options.dir === undefined;
      printOut(
        `Installed terraform-provider-gpurental ${options.version} (${terraformPlatform()}) for ${result.sources.join(", ")}\n` +
          `  mirror:  ${result.mirrorDir}\n` +
          `  package: ${result.packageDir}\n` +
          `  lock:    ${result.hash}\n\n` +
          (implied
            ? "Terraform searches this directory by itself when the CLI configuration has no provider_installation\nblock. If yours has one, add this filesystem_mirror to it:\n\n"
            : "Point Terraform at the mirror with this CLI configuration (e.g. in a file named by TF_CLI_CONFIG_FILE):\n\n") +
          result.cliConfig,
      );
    });

  const resident = provider
    .command("resident")
    .description(
      "The resident provider processes of this user (GPURENTAL_PROVIDER_RESIDENT; on by default outside automation on Linux): list them, or stop them",
    );
  const dirOption = [
    "--dir <dir>",
    "their directory (default: GPURENTAL_PROVIDER_RESIDENT_DIR, else gpurental-provider-run-<uid> in the temp directory)",
  ] as const;
  resident
    .command("status")
    .description(
      "List the resident provider processes and those of running commands: pid, sessions, idle exit",
    )
    .option(...dirOption)
    .action(async (options: { dir?: string }) => {
      const { chosenDir, formatStatus, residentStatus } = await import("./resident");
      const dir = chosenDir(options.dir);
      printOut(formatStatus(dir, await residentStatus(dir)));
    });
  resident
    .command("stop")
    .description(
      "Stop the resident provider processes: each takes no new session and exits once the commands it serves end",
    )
    .option(...dirOption)
    .action(async (options: { dir?: string }) => {
      const { chosenDir, formatStop, stopResident } = await import("./resident");
      const dir = chosenDir(options.dir);
      const results = await stopResident(dir);
      printOut(formatStop(dir, results));
      if (results.some((r) => !("pid" in r) && !("removed" in r))) process.exitCode = 1;
    });
}
