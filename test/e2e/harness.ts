import { type ChildProcess, execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, isAbsolute, join } from "node:path";
import { buildProvider, bundle } from "../../scripts/build/bundle-provider";
import { type InstallResult, installProvider } from "../../src/cli/provider/provider";
import { type ProcessResult, startProcess } from "../../src/testing/child-process";
import { HARNESS_SOURCES, type SharedProvider, sameSources, sharedProvider } from "./shared-provider";

// Runs the real terraform (or tofu) CLI against a provider installed into a filesystem mirror: the
// mirror the Jest run shares (shared-provider.ts) or, for a provider of the test's own, a private
// one. Everything else lives in one temp directory per harness: the CLI config, the working
// directory, HOME and terraform's temp files, so no test writes into the user's home or reaches a
// registry.

/** Finds the CLI: $TERRAFORM_BINARY_NAME, else `terraform`, else `tofu` on PATH; throws a clear error. */
export function findTerraform(env: NodeJS.ProcessEnv = process.env): string {
  const candidates = env.TERRAFORM_BINARY_NAME ? [env.TERRAFORM_BINARY_NAME] : ["terraform", "tofu"];
  for (const name of candidates) {
    const found = isAbsolute(name) ? (existsSync(name) ? name : undefined) : onPath(name, env);
    if (found) return found;
  }
  throw new Error(
    `End-to-end tests need the Terraform CLI: none of ${candidates.join(", ")} was found ` +
      `${env.TERRAFORM_BINARY_NAME ? "" : "on PATH "}(set TERRAFORM_BINARY_NAME to the binary to use).`,
  );
}

function onPath(name: string, env: NodeJS.ProcessEnv): string | undefined {
  for (const dir of (env.PATH ?? "").split(delimiter)) {
    if (dir && existsSync(join(dir, name))) return join(dir, name);
  }
  return undefined;
}

/**
 * The provider files to install: the shared build's; else the production layout built from the
 * sources (scripts/build/bundle-provider.js); else, for a test's own provider, its entry bundled whole.
 */
async function providerBuild(
  dir: string,
  entry: string | undefined,
  shared: SharedProvider | undefined,
): Promise<{ bundle: string; launcher?: string }> {
  if (entry === undefined) return { bundle: shared?.bundle ?? join(await buildProvider(dir), "provider.js") };
  return {
    bundle: await bundle(entry, join(dir, "provider.js")),
    launcher: await bundle(
      join(SRC, "executable", "code-cache-loader.ts"),
      join(dir, "provider-launcher.js"),
    ),
  };
}

const SRC = join(__dirname, "..", "..", "src");

/** Subcommands whose flags come after a further subcommand (or that have no -no-color). */
const NO_COLOR_FLAGLESS = new Set(["state", "providers", "workspace", "version", "fmt"]);

/** The result of one CLI command. */
export type RunResult = ProcessResult;

/** Options of TerraformHarness.create. */
export interface HarnessOptions {
  /**
   * A TypeScript or JavaScript module exporting `main(argv)` (like src/executable/main.ts) that is
   * bundled into the provider installed for the test; defaults to the real provider.
   */
  providerEntry?: string;
  /** Provider source addresses to install; defaults to gpurental/gpurental and example.com/test/gpurental (HARNESS_SOURCES). */
  sources?: string[];
  /** Extra environment for every command (and so for the provider processes). */
  env?: NodeJS.ProcessEnv;
}

/** A temp directory with a provider mirror, a CLI config and a working directory for terraform. */
export class TerraformHarness {
  private constructor(
    /** The temp root holding everything. */
    readonly root: string,
    /** The working directory terraform runs in. */
    readonly workDir: string,
    /** What installProvider wrote. */
    readonly install: InstallResult,
    /** The CLI binary. */
    readonly terraform: string,
    /** The environment every command gets. */
    readonly env: NodeJS.ProcessEnv,
  ) {}

  /** Installs the provider (or finds the run's shared mirror), writes the CLI config and makes the folders. */
  static async create(opts: HarnessOptions = {}): Promise<TerraformHarness> {
    const terraform = findTerraform();
    const root = mkdtempSync(join(tmpdir(), "gpurental-e2e-"));
    const sources = opts.sources ?? HARNESS_SOURCES;
    // The shipped provider comes from the run's shared build and mirror (shared-provider.ts) when
    // there is one; a provider of the test's own, or other sources, get a mirror of their own.
    const shared = opts.providerEntry ? undefined : sharedProvider();
    const install =
      shared && sameSources(sources, shared.install)
        ? shared.install
        : installProvider({
            dir: join(root, "mirror"),
            ...(await providerBuild(join(root, "build"), opts.providerEntry, shared)),
            sources,
          });
    const cliConfig = join(root, "cli.tfrc");
    writeFileSync(cliConfig, install.cliConfig);
    const workDir = join(root, "work");
    const home = join(root, "home");
    // terraform's and the provider's temp files (a killed provider leaves its socket) go with the root.
    const tmp = join(root, "tmp");
    mkdirSync(workDir, { recursive: true });
    mkdirSync(home, { recursive: true });
    mkdirSync(tmp, { recursive: true });
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOME: home,
      TMPDIR: tmp,
      TF_CLI_CONFIG_FILE: cliConfig,
      CHECKPOINT_DISABLE: "1",
      TF_IN_AUTOMATION: "1",
      TF_INPUT: "0",
      GPURENTAL_PROVIDER_CODE_CACHE_DIR:
        install === shared?.install ? shared.codeCacheDir : join(root, "code-cache"),
      // A provider process per launch, as in CI; the resident suites turn the mode on.
      GPURENTAL_PROVIDER_RESIDENT: "off",
      ...opts.env,
    };
    for (const k of Object.keys(env)) if (env[k] === undefined) delete env[k];
    return new TerraformHarness(root, workDir, install, terraform, env);
  }

  /**
   * Another working directory (`<root>/<name>`, created empty) that shares this harness's mirror,
   * CLI configuration and environment: a second CI runner of the same pipeline. Its environment is
   * a copy, so settings made on one afterwards stay on that one.
   */
  workingDir(name: string): TerraformHarness {
    if (!/^[a-z0-9][a-z0-9_-]*$/.test(name) || ["build", "mirror", "home", "work"].includes(name)) {
      throw new Error(`workingDir: "${name}" is not a free directory name`);
    }
    const dir = join(this.root, name);
    mkdirSync(dir);
    return new TerraformHarness(this.root, dir, this.install, this.terraform, { ...this.env });
  }

  /** Writes files (e.g. main.tf) into the working directory. */
  write(files: Record<string, string>): void {
    for (const [name, text] of Object.entries(files)) writeFileSync(join(this.workDir, name), text);
  }

  /**
   * Starts a command without waiting; for tests that signal it. With `processGroup`, the command
   * leads its own process group, so `interrupt()` can signal it and its providers together, as a
   * terminal's Ctrl-C does.
   */
  spawn(
    args: readonly string[],
    env: NodeJS.ProcessEnv = {},
    opts: { processGroup?: boolean } = {},
  ): ChildProcess & { result: Promise<RunResult>; interrupt(): void } {
    const { child, result } = startProcess(this.terraform, args, {
      cwd: this.workDir,
      env: { ...this.env, ...env },
      processGroup: opts.processGroup,
    });
    const interrupt = () => {
      if (opts.processGroup) process.kill(-child.pid!, "SIGINT");
      else child.kill("SIGINT");
    };
    return Object.assign(child, { result, interrupt });
  }

  /** Runs `terraform <args>` (with -no-color added after a subcommand that takes it) and waits for it. */
  run(args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<RunResult> {
    const [sub, ...rest] = args;
    const colorless = sub !== undefined && !NO_COLOR_FLAGLESS.has(sub);
    return this.spawn(colorless ? [sub, "-no-color", ...rest] : args, env).result;
  }

  /** Like run, but throws with the output when the command fails. */
  async ok(args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<RunResult> {
    const r = await this.run(args, env);
    if (r.code !== 0) {
      throw new Error(
        `terraform ${args.join(" ")} exited ${r.code}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`,
      );
    }
    return r;
  }

  /** `terraform show -json` of the state, parsed. */
  async state(): Promise<{ values?: { root_module?: { resources?: StateResource[] } } }> {
    return JSON.parse((await this.ok(["show", "-json"])).stdout);
  }

  /** The CLI's version line, e.g. "Terraform v1.11.4". */
  version(): string {
    return execFileSync(this.terraform, ["version"], { env: this.env }).toString().split("\n")[0] ?? "";
  }

  /** Removes the temp directory. */
  cleanup(): void {
    rmSync(this.root, { recursive: true, force: true });
  }
}

/** A resource in `terraform show -json` output. */
export interface StateResource {
  address: string;
  type: string;
  name: string;
  values: Record<string, unknown>;
  sensitive_values?: Record<string, unknown>;
}
