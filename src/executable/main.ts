import { readFileSync } from "node:fs";
import { join } from "node:path";
import { terminalText } from "../display";
import { type Logger, logger, redactText } from "../log";
import { checkMagicCookie, clientCertificate, HandshakeError, negotiateProtocol } from "../plugin/handshake";
import { type ServeOptions, type ServiceSource, serveProvider } from "../plugin/server";
import type { ProviderService } from "../plugin/tfplugin6";
import { inAutomation, ResidentSettingError, residentSettings } from "../resident/resident";
import type { AttachOptions } from "../resident/resident-client";
import { version } from "../version";

// The entry point of the terraform-provider-gpurental executable (bundled to dist/provider-bundle/provider.js).
// Only the transport is loaded before the handshake; the provider itself (resources, API client,
// schemas) is loaded by `loadProvider` once the handshake line is out.

/** The loaded provider's settling of its deploy journals; unset until the provider is loaded. */
let settleRun: SettleRun | undefined;
type SettleRun = typeof import("./provider-impl").settleRun;

/** Loads the gpurental provider service (from provider-impl.js beside the production bundle). */
export async function loadProvider(): Promise<ProviderService> {
  const impl = await import("./provider-impl");
  settleRun = impl.settleRun;
  return impl.createService();
}

/**
 * Terraform ended a run (`runId`; without one, the process's) normally: what it saved is no longer
 * the journal's to adopt (src/journal/settle.ts).
 */
function settleJournals(settle: SettleRun | undefined, log: Logger, runId?: string): void {
  settle?.(runId, (message) => log.warn("could not settle the deploy journal", { message }));
}

const USAGE = `Usage: terraform-provider-gpurental [--debug] [--version]

Terraform starts this executable itself. Options for running it by hand:
  --debug    serve without Terraform and print the TF_REATTACH_PROVIDERS value to use
  --version  print the version
`;

let crashLoggingInstalled = false;

// Without these, Node prints an uncaught error's stack as raw text on stderr: Terraform shows it
// verbatim, unredacted and outside hclog. Route both through the logger, which masks credentials.
function installCrashLogging(): void {
  if (crashLoggingInstalled) return;
  crashLoggingInstalled = true;
  process.on("uncaughtException", (err) => {
    logger.error("uncaught exception; the provider stops", {
      error: err,
      stack: err instanceof Error ? (err.stack ?? "") : "",
    });
    // The process state is unknown after an uncaught exception: stop, as Node would.
    process.exit(1);
  });
  process.on("unhandledRejection", (reason) => {
    // A promise nobody awaited failed; the RPC that owned it has already answered, so carry on.
    logger.error("unhandled promise rejection", {
      error: reason,
      stack: reason instanceof Error ? (reason.stack ?? "") : "",
    });
  });
}

/**
 * Runs a provider executable: parses argv (`--debug`, `--version`, `--help`), serves `source`, and
 * turns a failed handshake into a message on stderr and exit code 1. Test providers reuse it.
 */
export async function runProvider(
  source: ServiceSource,
  argv: readonly string[] = process.argv.slice(2),
  opts: ServeOptions & { resident?: () => AttachOptions } = {},
): Promise<void> {
  if (argv.includes("--version")) {
    process.stdout.write(`terraform-provider-gpurental ${version}\n`);
    return;
  }
  if (argv.includes("--help") || argv.includes("-h")) {
    process.stdout.write(USAGE);
    return;
  }
  const unknown = argv.filter((a) => a !== "--debug");
  if (unknown.length > 0) {
    process.stderr.write(
      `terraform-provider-gpurental: unknown argument ${terminalText(unknown[0]!)}\n\n${USAGE}`,
    );
    process.exitCode = 2;
    return;
  }
  installCrashLogging();
  try {
    if (!argv.includes("--debug") && opts.resident && (await attached(opts.resident, opts.env))) return;
    await serveProvider(source, { debug: argv.includes("--debug"), ...opts });
  } catch (err) {
    if (err instanceof HandshakeError || err instanceof ResidentSettingError) {
      // They quote the environment's values (PLUGIN_PROTOCOL_VERSIONS, GPURENTAL_PROVIDER_*).
      process.stderr.write(`${terminalText(err.message, { multiline: true })}\n`);
      process.exitCode = 1;
      return;
    }
    logger.error("cannot start the provider", { error: err });
    process.stderr.write(
      `terraform-provider-gpurental: ${terminalText(redactText(err instanceof Error ? err.message : String(err)), { multiline: true })}\n`,
    );
    process.exitCode = 1;
  }
}

/**
 * Whether this launch is served by the resident process (GPURENTAL_PROVIDER_RESIDENT, on by
 * default outside automation on Linux; see src/resident/resident.ts). A launch that is no Terraform launch
 * fails the handshake checks first, as it would without the mode; a setting that cannot be used
 * is an error, never a silent fallback.
 */
async function attached(
  resident: () => AttachOptions,
  env: NodeJS.ProcessEnv = process.env,
): Promise<boolean> {
  checkMagicCookie(env);
  negotiateProtocol(env);
  clientCertificate(env);
  const settings = residentSettings(env, { automated: () => inAutomation(env), platform: process.platform });
  if (!settings.enabled) {
    logger.child("resident").debug("the resident provider process is off", { reason: settings.reason });
    return false;
  }
  const { attachResident } = await import("../resident/resident-client");
  return attachResident({ ...resident(), explicit: settings.mode === "on" });
}

/**
 * The GetProviderSchema answer the production build encodes beside this bundle
 * (provider-schema.pb, scripts/build/bundle-provider.js), or undefined where there is none (tsc output,
 * tests), and the provider then builds it.
 */
export function preEncodedSchema(dir: string = __dirname): Buffer | undefined {
  try {
    return readFileSync(join(dir, "provider-schema.pb"));
  } catch {
    return undefined;
  }
}

/** How main runs where the files beside the bundle are not there (the standalone executable). */
export interface MainOptions {
  /** Reads the pre-encoded schema answer; default: provider-schema.pb beside this bundle. */
  readSchema?: () => Buffer | undefined;
  /** How the resident process is started; default: node on this script. */
  command?: { node: string; script: string };
}

/** Runs the gpurental provider; called by bin/terraform-provider-gpurental and src/executable/sea.ts. */
export function main(argv: readonly string[] = process.argv.slice(2), opts: MainOptions = {}): Promise<void> {
  let schema: Buffer | undefined | null = null;
  const schemaResponse = () => {
    if (schema === null) schema = (opts.readSchema ?? preEncodedSchema)();
    return schema;
  };
  if (argv[0] === "--resident" && argv.length === 2) return runResident(argv[1] as string, schemaResponse);
  // The command's provider process, started by the compact executable's launcher in automation
  // (src/executable/compact/command-session.c): the resident machinery for one terraform process.
  if (argv[0] === "--resident" && argv.length === 4 && argv[2] === "--owner") {
    const owner = Number(argv[3]);
    // 1 too: terraform as a container's first process.
    if (Number.isSafeInteger(owner) && owner >= 1)
      return runResident(argv[1] as string, schemaResponse, owner);
  }
  return runProvider(loadProvider, argv, {
    schemaResponse,
    onShutdown: (log) => settleJournals(settleRun, log),
    resident: () => ({
      env: process.env,
      bundleDir: __dirname,
      command: opts.command ?? { node: process.execPath, script: process.argv[1] ?? "" },
      stdout: (text) => void process.stdout.write(text),
      stderr: (text) => void process.stderr.write(text),
      exit: (code) => process.exit(code),
    }),
  });
}

/**
 * Runs the resident provider process (started by a launch, see src/resident/resident-client.ts),
 * or, with `owner`, the provider process of that terraform command alone.
 */
async function runResident(
  socket: string,
  schemaResponse: () => Buffer | undefined,
  owner?: number,
): Promise<void> {
  installCrashLogging();
  const { runResidentDaemon, AlreadyServing } = await import("../resident/resident-daemon");
  try {
    // Loaded once, when a session first needs a provider or as the first session ends, whichever
    // comes first: a command's first launch only reads the schema, so the process answers it
    // without waiting for the provider to load, and loads it while Terraform moves on to its next
    // launch. Every session builds its own provider from it.
    let impl: Promise<typeof import("./provider-impl")> | undefined;
    let settleRun: SettleRun | undefined;
    const loadImpl = () => {
      impl ??= import("./provider-impl").then((loaded) => {
        settleRun = loaded.settleRun;
        return loaded;
      });
      return impl;
    };
    const daemon = await runResidentDaemon({
      socket,
      owner,
      schemaResponse,
      createService: async (session) => (await loadImpl()).createService(session),
      prepare: () => void loadImpl().catch(() => {}),
      // A session that never made a provider has no deploy journal to settle.
      onShutdown: (runId, log) => settleJournals(settleRun, log, runId),
      loadGrpcServer: () => import("../plugin/grpc-server"),
    });
    // Ended by a signal (kill, a system shutting down), it leaves no socket behind: its sessions
    // end as their launches would see a killed process end, and its control socket and empty log
    // go, as at the idle exit. (SIGKILL leaves them; the next resident process removes those.)
    for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const) {
      process.once(signal, () => {
        logger.child("resident").debug("ended by a signal", { signal });
        daemon.close();
        process.exit(0);
      });
    }
  } catch (err) {
    if (err instanceof AlreadyServing) return;
    logger.error("the resident provider process cannot start", { error: err });
    process.exitCode = 1;
  }
}
