import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { buildProvider } from "../../scripts/build/bundle-provider";
import { type InstallResult, installProvider, normalizeSource } from "../../src/cli/provider/provider";

// One provider build and one filesystem mirror for every suite of a Jest run. Jest's global setup
// builds the provider from the sources once (the production layout of scripts/build/bundle-provider.js:
// the handshake, transport and provider bundles and the pre-encoded schema answer), installs it
// into a mirror under the run's temp directory and names the folder in an environment variable
// that the workers inherit. TerraformHarness then points every suite's CLI configuration at that
// mirror and shares one provider code cache, instead of bundling, installing and warming a cache
// per suite. Without the variable (a harness used outside such a run) each harness builds its own.

/** The variable naming the shared provider's folder. */
const SHARED_PROVIDER_DIR = "GPURENTAL_TEST_SHARED_PROVIDER";

/** The sources a harness installs unless told otherwise. */
export const HARNESS_SOURCES: readonly string[] = ["gpurental/gpurental", "example.com/test/gpurental"];

/** The run's provider build and mirror. */
export interface SharedProvider {
  /** provider.js of the build (the other bundles beside it), for installs into other mirrors. */
  bundle: string;
  /** The mirror holding HARNESS_SOURCES. */
  install: InstallResult;
  /** The provider's code cache, shared by every process started from this mirror. */
  codeCacheDir: string;
}

/** Builds the provider into `dir`, installs it into a mirror beside it and publishes the folder. */
export async function buildSharedProvider(dir: string): Promise<SharedProvider> {
  const build = join(dir, "build");
  await buildProvider(build);
  const shared: SharedProvider = {
    bundle: join(build, "provider.js"),
    install: installProvider({
      dir: join(dir, "mirror"),
      bundle: join(build, "provider.js"),
      sources: HARNESS_SOURCES,
    }),
    codeCacheDir: join(dir, "code-cache"),
  };
  writeFileSync(join(dir, "shared.json"), JSON.stringify(shared));
  process.env[SHARED_PROVIDER_DIR] = dir;
  return shared;
}

/** The run's shared provider, or undefined when the global setup built none. */
export function sharedProvider(): SharedProvider | undefined {
  const dir = process.env[SHARED_PROVIDER_DIR];
  if (!dir || !existsSync(join(dir, "shared.json"))) return undefined;
  return JSON.parse(readFileSync(join(dir, "shared.json"), "utf8")) as SharedProvider;
}

/** Whether `sources` are the ones the shared mirror holds (in any order or spelling). */
export function sameSources(sources: readonly string[], install: InstallResult): boolean {
  const wanted = [...new Set(sources.map(normalizeSource))].sort();
  return JSON.stringify(wanted) === JSON.stringify([...install.sources].sort());
}
