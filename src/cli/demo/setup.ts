/**
 * What every demo sets up before its own steps: the fake backend with the demo seed, the provider
 * in a private filesystem mirror, and the environment its children run in.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { delimiter, dirname, join } from "node:path";
import type { DemoCredentials, FakeBackend } from "../../fake-backend";
import { version } from "../../version";
import { standaloneExecutable } from "../host";
import type { DemoOptions } from "./options";
import { DemoError } from "./output";
import { quietEnv } from "./runner";

/** Starts the fake backend with the demo seed, turning a port in use into a message. */
export async function startDemoBackend(options: DemoOptions): Promise<FakeBackend> {
  const { startFakeBackend } = await import("../../fake-backend");
  try {
    return await startFakeBackend({
      port: options.port ?? 0,
      seed: "demo",
      transitions: options.transitions ?? "realistic",
      tickMs: 1000,
    });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EADDRINUSE") {
      throw new DemoError(
        `port ${options.port} is already in use; pick another with --port <port>, or --port 0 for any free port`,
      );
    }
    throw err;
  }
}

/**
 * Where a demo's provider comes from: `package`, the package's bundle; `command`, this command when
 * it is the standalone executable (it is the provider too), else the package's bundle, the install
 * step then saying which.
 */
export type ProviderSource = "package" | "command";

/** The provider installed into the work folder's mirror. */
export interface InstalledMirror {
  /** The Terraform CLI config that points at the mirror. */
  cliConfigFile: string;
  /** Whether the provider is this standalone executable (which needs no `node` on PATH). */
  standalone: boolean;
  /** The install step's detail. */
  detail: string;
}

/** Installs the provider into `<workDir>/mirror` and writes the CLI config that points at it. */
export async function installMirror(
  workDir: string,
  source: ProviderSource,
  providerBundle: string | undefined,
): Promise<InstalledMirror> {
  const { installProvider } = await import("../provider/provider");
  const standalone = source === "command" ? standaloneExecutable() : undefined;
  let installed: ReturnType<typeof installProvider>;
  try {
    installed = installProvider({
      dir: join(workDir, "mirror"),
      version,
      ...(standalone ? { executable: standalone.file } : { bundle: providerBundle }),
    });
  } catch (err) {
    throw new DemoError(
      `${err instanceof Error ? err.message : String(err)}${standalone ? "" : " (the demo needs the built package: npm run build)"}`,
    );
  }
  const cliConfigFile = join(workDir, "terraform.rc");
  writeFileSync(cliConfigFile, installed.cliConfig);
  const whose = source === "command" ? `${standalone ? "this executable" : "the package's"}, ` : "";
  return {
    cliConfigFile,
    standalone: standalone !== undefined,
    detail: `provider ${version} installed (${whose}${installed.hash.slice(0, 15)}…)`,
  };
}

/**
 * The environment of a demo's children: quiet (none of the user's Terraform settings), pointed at
 * the fake backend as the demo admin and at the mirror, with `extra` on top.
 */
export function childEnvironment(
  workDir: string,
  backend: FakeBackend,
  creds: DemoCredentials,
  mirror: InstalledMirror,
  extra: Record<string, string>,
): NodeJS.ProcessEnv {
  const tmpForChildren = join(workDir, "tmp");
  mkdirSync(tmpForChildren, { recursive: true });
  return quietEnv({
    GPURENTAL_BASE_URL: backend.url,
    GPURENTAL_TOKEN: creds.admin_session_token,
    GPURENTAL_ORG_ID: creds.org_id,
    TF_CLI_CONFIG_FILE: mirror.cliConfigFile,
    TF_IN_AUTOMATION: "1",
    // The children's temp files (the provider's socket among them, left behind if it is killed)
    // and the provider's code cache stay in the work folder, and go with it.
    TMPDIR: tmpForChildren,
    GPURENTAL_PROVIDER_CODE_CACHE_DIR: join(workDir, "provider-code-cache"),
    // One command after another and then gone: no provider process that outlives the demo.
    GPURENTAL_PROVIDER_RESIDENT: "off",
    NO_COLOR: "1",
    // The package's provider runs `node` from PATH: the demo's own Node.js comes first, so that the
    // provider runs on the Node.js the demo was started with (npm scripts put a project's
    // node_modules/.bin first, which may hold another `node`). The standalone provider needs none.
    ...(mirror.standalone
      ? {}
      : { PATH: [dirname(process.execPath), process.env.PATH].filter(Boolean).join(delimiter) }),
    ...extra,
  });
}
