// The provider executable as Terraform runs it, for the tests that start it as a separate process:
// the bundles built from source into a test's directory, the same two-line executable the package
// installs, and a started process whose output the test reads.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { bundle } from "../../scripts/build/bundle-provider";
import { derToPem } from "../plugin/cert";
import { connect, type ParsedHandshake, tlsCredentials } from "../plugin/testing/grpc-client";
import { type StartedProcess, startProcess } from "./child-process";

/** Builds provider.js and provider-launcher.js into `dir`; returns the executable (run.js) and the bundle. */
export async function buildExecutable(dir: string): Promise<{ executable: string; bundleFile: string }> {
  const executableDir = join(__dirname, "..", "executable");
  const bundleFile = await bundle(join(executableDir, "main.ts"), join(dir, "provider.js"));
  const launcher = await bundle(
    join(executableDir, "code-cache-loader.ts"),
    join(dir, "provider-launcher.js"),
  );
  const executable = join(dir, "run.js");
  // The same two lines as the installed executable.
  writeFileSync(
    executable,
    `require(${JSON.stringify(launcher)}).launch(${JSON.stringify(bundleFile)}, process.argv.slice(2));\n`,
  );
  return { executable, bundleFile };
}

/** A started provider process. */
export type Started = StartedProcess;

/** Starts `executable` with exactly `env` (nothing of the test's own environment). */
export function startExecutable(executable: string, env: NodeJS.ProcessEnv, args: string[] = []): Started {
  return startProcess(process.execPath, [executable, ...args], { env });
}

/** Waits for the handshake line; throws with the process's stderr if it exits first or takes over `ms`. */
export async function handshakeLine(s: Started, ms = 30_000): Promise<string> {
  const deadline = Date.now() + ms;
  while (!s.stdout().includes("\n")) {
    if (s.child.exitCode !== null) throw new Error(`exited before the handshake; stderr: ${s.stderr()}`);
    if (Date.now() > deadline) throw new Error(`no handshake; stderr: ${s.stderr()}`);
    await new Promise((r) => setTimeout(r, 10));
  }
  return s.stdout();
}

/**
 * What Terraform does with a launch it asks for the schema only, over mTLS as `host`: the call,
 * which must list gpurental_instance, then Shutdown.
 */
export async function schemaAndShutdown(
  hs: ParsedHandshake,
  host: { certPem: string; keyPem: string },
): Promise<void> {
  const creds = tlsCredentials(derToPem(Buffer.from(hs.cert, "base64")), host);
  const provider = connect(hs.address, "tfplugin6.Provider", creds);
  const res = await provider.call("GetProviderSchema");
  if (!Object.keys(res.resource_schemas as object).includes("gpurental_instance"))
    throw new Error("GetProviderSchema answered without gpurental_instance");
  provider.close();
  const controller = connect(hs.address, "plugin.GRPCController", creds);
  await controller.call("Shutdown");
  controller.close();
}
