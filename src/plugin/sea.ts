import { statSync } from "node:fs";
import { dirname, join } from "node:path";
import { LOAD_BUNDLE_KEY, loadBundleSource, startCpuProfile } from "./launcher";

// The entry point of the standalone provider executable: a Node single executable application
// (SEA) built by scripts/release.js. It needs no Node.js on the machine. The executable carries
// two assets: the provider as one bundle (src/plugin/main.ts, nothing split off) and the
// pre-encoded GetProviderSchema answer. This small entry loads the bundle through the launcher,
// so the V8 code cache works as it does for the npm-installed provider: made at the first run on
// the user's machine, in the per-user cache directory. (SEA's own useCodeCache would put the
// cache into the executable, but V8's cache differs between two builds of the same source, and
// the release archives must be byte-reproducible.) The resident process is the executable itself,
// started with `--resident <socket>`.

/** The part of node:sea this entry uses (Node 20.12+; @types/node 20 does not declare it). */
interface SeaModule {
  isSea(): boolean;
  getAsset(key: string, encoding?: string): ArrayBuffer | string;
}

/** The SEA assets: the provider bundle and the pre-encoded schema answer. */
export const SEA_ASSETS = { bundle: "provider.js", schema: "provider-schema.pb" } as const;

function run(): void {
  const sea = require("node:sea") as SeaModule;
  startCpuProfile();
  const source = sea.getAsset(SEA_ASSETS.bundle, "utf8") as string;
  const self = statSync(process.execPath);
  // Named as a file beside the executable, for the code cache and stack traces; nothing is read there.
  const file = join(dirname(process.execPath), SEA_ASSETS.bundle);
  (globalThis as Record<symbol, unknown>)[LOAD_BUNDLE_KEY] = undefined;
  const readSchema = () => Buffer.from(sea.getAsset(SEA_ASSETS.schema) as ArrayBuffer);
  // In a SEA, process.argv[1] is the executable again; the arguments follow it.
  loadBundleSource(source, file, self)
    .main(process.argv.slice(2), { readSchema, command: { node: process.execPath, script: "" } })
    .catch((err: unknown) => {
      process.stderr.write(
        `terraform-provider-gpurental: ${err instanceof Error ? err.stack : String(err)}\n`,
      );
      process.exitCode = 1;
    });
}

run();
