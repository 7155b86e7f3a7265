import { statSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import type { CommandHost } from "../cli/host";
import { failureText, LOAD_BUNDLE_KEY, loadBundleSource, startCpuProfile } from "./code-cache-loader";
import { programOf, startedFile } from "./self";

/** Mirrors BUNDLE_SOURCE_KEY of src/journal/pg/bridge.ts (not imported: this entry stays small). */
const BUNDLE_SOURCE_KEY = Symbol.for("gpurental.provider.bundleSource");

// The entry point of the standalone provider executable: a Node.js single executable application
// (SEA) built by scripts/release/release.js. It needs no Node.js on the machine. The executable carries
// the production build of the provider as assets: provider.js (up to the handshake),
// provider-transport.js and provider-impl.js (loaded when needed, as in the npm package: a
// process that only answers GetProviderSchema never parses the provider itself) and the
// pre-encoded GetProviderSchema answer. This small entry loads them through the launcher, so the
// V8 code cache works as it does for the npm-installed provider: made at the first run on the
// user's machine, in the per-user cache directory. (SEA's own useCodeCache would put a cache into
// the executable, but V8's cache differs between two builds of the same source, and the release
// archives must be byte-reproducible.) The resident process is the executable itself, started
// with `--resident <socket>`.
//
// The same executable is the `gpurental` command (docs/design/standalone-command.md): started under
// any name but terraform-provider-* (gpurental, as the command's archive names it), it runs the
// command's bundle, gpurental.js, which the npm package's bin/gpurental runs too.

/** The part of node:sea this entry uses (Node 20.12+; @types/node 20 does not declare it). */
interface SeaModule {
  isSea(): boolean;
  getAsset(key: string, encoding?: string): ArrayBuffer | string;
}

/**
 * The SEA assets: the production bundle's parts, the pre-encoded schema answer, the command's
 * bundle and the files of the HCL example it writes and runs (by their paths in the repository).
 */
export const SEA_ASSETS = {
  bundles: ["provider.js", "provider-transport.js", "provider-impl.js"],
  /** Run in a worker thread from its source (src/journal/pg/bridge.ts), not loaded as a module. */
  worker: "provider-journal-pg.js",
  schema: "provider-schema.pb",
  command: "gpurental.js",
  examples: ["examples/hcl/main.tf", "examples/hcl/variables.tf", "examples/hcl/outputs.tf"],
} as const;

/** What the command's bundle exports to this entry (src/cli/main.ts). */
interface CommandBundle {
  runCommand(argv: string[], host: CommandHost): Promise<void>;
}

/**
 * Turns the code cache and the resident process off when the runtime has no file. The compact
 * executable's launcher runs this runtime from a file in a private cache directory, or, where it
 * has none, from memory (src/executable/compact/README.md): there is no file then, so there is no
 * code cache and no resident process (which is started from the executable's file).
 */
function checkRuntimeFile(): void {
  try {
    statSync(process.execPath);
  } catch {
    process.env.GPURENTAL_PROVIDER_CODE_CACHE = "off";
    process.env.GPURENTAL_PROVIDER_RESIDENT = "off";
  }
}

function run(): void {
  const sea = require("node:sea") as SeaModule;
  startCpuProfile();
  checkRuntimeFile();
  // Each part is named as a file beside the executable, for the code cache and stack traces;
  // nothing is read there. The parts load each other through LOAD_BUNDLE_KEY by that name.
  const load = (file: string) => {
    const name = basename(file);
    if (!(SEA_ASSETS.bundles as readonly string[]).includes(name) && name !== SEA_ASSETS.worker)
      throw new Error(`the executable carries no ${name}`);
    return loadBundleSource(sea.getAsset(name, "utf8") as string, file);
  };
  (globalThis as Record<symbol, unknown>)[LOAD_BUNDLE_KEY] = load;
  (globalThis as Record<symbol, unknown>)[BUNDLE_SOURCE_KEY] = (name: string) => {
    if (name !== SEA_ASSETS.worker) throw new Error(`the executable carries no ${name}`);
    return sea.getAsset(name, "utf8") as string;
  };
  if (programOf(process.argv0) === "command") {
    const examples: readonly string[] = SEA_ASSETS.examples;
    const command = loadBundleSource(
      sea.getAsset(SEA_ASSETS.command, "utf8") as string,
      join(dirname(process.execPath), SEA_ASSETS.command),
    ) as unknown as CommandBundle;
    void command.runCommand(process.argv, {
      standalone: {
        file: startedFile(process.argv0, process.execPath),
        asset: (name) =>
          examples.includes(name) ? Buffer.from(sea.getAsset(name) as ArrayBuffer) : undefined,
      },
    });
    return;
  }
  const readSchema = () => Buffer.from(sea.getAsset(SEA_ASSETS.schema) as ArrayBuffer);
  // In a SEA, process.argv[1] is the executable again; the arguments follow it.
  load(join(dirname(process.execPath), "provider.js"))
    .main(process.argv.slice(2), { readSchema, command: { node: process.execPath, script: "" } })
    .catch((err: unknown) => {
      process.stderr.write(`terraform-provider-gpurental: ${failureText(err)}\n`);
      process.exitCode = 1;
    });
}

run();
