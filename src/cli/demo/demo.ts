import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import { delimiter, join, resolve } from "node:path";
import { type Command, Option } from "commander";
import { CDKS, type Cdk, type CdkCommand, cdkCommand, withCdkPath } from "../cdk";
import { portOf } from "../flags";
import { standaloneExecutable } from "../host";
import { printErr } from "../io";
import { writeShellEnv } from "../shell-env";
import { type DemoContext, type Deployment, runDemoFlow } from "./flow";
import { runHclDemo } from "./hcl";
import type { DemoOptions, DemoResult } from "./options";
import { DemoError, formatYuan } from "./output";
import { checkTerminalModule, dependencyDirs } from "./runner";
import { packageRoot, prepareApp } from "./workdir";

export type { DemoOptions, DemoResult, DeployedContext } from "./options";
export { DemoError } from "./output";
export { checkTerminalModule, terraformVersion } from "./runner";

// `gpurental demo` shows the whole product in one command: the flow every demo follows (flow.ts)
// with the CDKTF example app (with --cdk cdktn, the CDK Terrain one) bundled into the work folder
// and deployed with its CDK CLI and the real terraform CLI. The CDK CLI gets a home of its own in
// the work folder (CDKTF_HOME) and no plugin cache, and the demo admin's full credentials are kept
// there (credentials.json, readable by the user alone).

/** The stack name of the example app (examples/cdktf-app/main.ts). */
export const DEMO_STACK = "gpu-workstation";

/** The demo admin's full credentials, in the work folder. */
const CREDENTIALS_FILE = "credentials.json";

/** Runs the demo; resolves when it is over, rejects with a {@link DemoError} on the first failed step. */
export async function runDemo(options: DemoOptions = {}): Promise<DemoResult> {
  const root = packageRoot();
  const cdk = options.cdk ?? "cdktf";
  // First: a CDK that cannot run here says so before anything is started or written.
  let cli: CdkCommand;
  try {
    cli = cdkCommand(cdk, root);
  } catch (err) {
    throw new DemoError(err instanceof Error ? err.message : String(err));
  }
  return runDemoFlow(options, {
    title: `the ${cdk === "cdktf" ? "CDKTF" : "CDK Terrain"} example app`,
    tool: cdk,
    stack: DEMO_STACK,
    statePath: (workDir) => join(workDir, `terraform.${DEMO_STACK}.tfstate`),
    provider: "package",
    runningTime: true,
    saveCredentials({ workDir, creds }) {
      const credentialsFile = join(workDir, CREDENTIALS_FILE);
      writeFileSync(credentialsFile, `${JSON.stringify(creds, null, 2)}\n`, { mode: 0o600 });
      // The mode above only applies to a new file; a reused --work-dir may hold a wider one.
      chmodSync(credentialsFile, 0o600);
    },
    prepare: (context) => prepareCdkApp(context, cdk, cli, root),
  });
}

/** Sets the example app up in `<workDir>/app` and says how to deploy and destroy it with the CDK CLI. */
async function prepareCdkApp(
  context: DemoContext,
  cdk: Cdk,
  cli: CdkCommand,
  root: string,
): Promise<Deployment> {
  const { workDir, statePath, report, creds } = context;
  const appName = `${cdk}-app`;
  const step = report.step(`bundling the example app (examples/${appName})`);
  const appDir = join(workDir, "app");
  await prepareApp(root, appName, appDir);
  step.done("example app ready");

  // cdktf-cli runs under this process's Node.js: <cdktf-cli>/bundle/bin/cdktf.
  if (cdk === "cdktf") checkTerminalModule(resolve(cli.argv[0] ?? "", "..", "..", ".."));
  const env = context.childEnv({
    GPURENTAL_SSH_KEY_ID: creds.ssh_key_id,
    GPURENTAL_CDKTF_STATE: statePath,
    CDKTF_HOME: join(workDir, "cdktf-home"),
    CDKTF_DISABLE_PLUGIN_CACHE_ENV: "1",
    DISABLE_VERSION_CHECK: "true",
    CI: "1",
    FORCE_COLOR: "0",
    // The bundled app leaves the CDK, constructs and zod to be required from this package's
    // dependencies: in a clone its node_modules, in a project the folder npm put them in.
    NODE_PATH: dependencyDirs(root).join(delimiter),
  });
  const cdkRun = (argv: string[]) => ({
    command: cli.command,
    argv: [...cli.argv, ...argv],
    cwd: appDir,
    env: withCdkPath(cli, env),
  });
  const outputsFile = join(workDir, "outputs.json");

  return {
    async deploy() {
      const step = report.step(`deploying with ${cdk} and terraform (synth, init, plan, apply)`);
      await context.run(
        "deploy",
        cdkRun([
          "deploy",
          DEMO_STACK,
          "--auto-approve",
          "--skip-provider-lock",
          "--outputs-file",
          outputsFile,
        ]),
      );
      step.done("deployed");
    },
    async outputs() {
      const stacks = JSON.parse(readFileSync(outputsFile, "utf8")) as Record<string, unknown>;
      return (stacks[DEMO_STACK] ?? {}) as Record<string, unknown>;
    },
    rows: (outputs) => [
      [
        "GPU",
        `${String(outputs.offer_gpu_model ?? "?")} at ${formatYuan(Number(outputs.price_per_hour_micro ?? 0))}/hour`,
      ],
      [
        "Offer",
        `${String(outputs.offer_id ?? "?")} (chosen by the instance's offer filter when it was created, then kept)`,
      ],
      ["SSH", outputs.ssh_command],
      [
        "Jupyter",
        outputs.jupyter_address
          ? `${String(outputs.jupyter_address)} (token: the access token)`
          : "(not reported yet)",
      ],
      [
        "CI API key",
        `${String(outputs.ci_key_prefix ?? "?")}… (secret kept in the Terraform state, not shown)`,
      ],
    ],
    kept() {
      writeShellEnv(context.envFile, context.backend.url, creds);
      return [
        "Kept running (--keep). Reach the fake backend with the demo admin's session:",
        `  . ${context.envFile}      # GPURENTAL_BASE_URL, GPURENTAL_TOKEN, GPURENTAL_ORG_ID, ...`,
        `The stack's state is ${statePath}; the full credentials are in ${join(workDir, CREDENTIALS_FILE)}.`,
      ];
    },
    destroyStep: `destroying with ${cdk} and terraform`,
    destroy: (signal) =>
      context.run(
        "destroy",
        // The configuration synthesized for the deploy is the one to destroy: no second synth.
        cdkRun(["destroy", DEMO_STACK, "--auto-approve", "--skip-synth", "--skip-provider-lock"]),
        signal,
      ),
  };
}

/** Registers the `demo` command. */
export function register(program: Command): void {
  program
    .command("demo")
    .description(
      "Deploy the CDKTF example app (or with --hcl examples/hcl) against the embedded fake backend with the real terraform CLI, show its outputs, then destroy it",
    )
    .addOption(
      new Option(
        "--cdk <cdk>",
        "the CDK to run the example app with: cdktf (CDK for Terraform) or cdktn (CDK Terrain)",
      )
        .choices(CDKS)
        .default("cdktf"),
    )
    .addOption(
      new Option(
        "--hcl",
        "run examples/hcl with plain terraform instead of a CDK app (needs nothing but terraform)",
      ).conflicts("cdk"),
    )
    .option("--port <port>", "port of the fake backend (0 picks a free one)", "0")
    .option("--keep", "leave the instance and the fake backend running until Ctrl-C, then destroy them")
    .option("--verbose", "show cdktf's and terraform's full output")
    .option(
      "--work-dir <dir>",
      "keep the mirror, synth output, state and logs in this folder (by default a temp folder, removed at the end)",
    )
    .action(
      async (opts: {
        cdk: Cdk;
        hcl?: boolean;
        port: string;
        keep?: boolean;
        verbose?: boolean;
        workDir?: string;
      }) => {
        if (!opts.hcl && standaloneExecutable()) {
          printErr(
            "gpurental demo: the CDK demos run from the npm package, with Node.js; this executable runs the plain Terraform one: gpurental demo --hcl\n",
          );
          process.exitCode = 1;
          return;
        }
        const port = portOf(opts.port);
        if (port === undefined) {
          printErr(`gpurental demo: --port must be a number from 0 to 65535, got "${opts.port}"\n`);
          process.exitCode = 1;
          return;
        }
        // The first Ctrl-C stops the demo (after --keep: destroys, then stops); a later one, or
        // SIGTERM, stops at once. A Ctrl-C delivered twice within a moment (to the process and
        // through a wrapper such as npm) counts once.
        const controller = new AbortController();
        const hurry = new AbortController();
        let firstAt = 0;
        const onInterrupt = () => {
          if (!controller.signal.aborted) {
            firstAt = Date.now();
            controller.abort();
          } else if (Date.now() - firstAt > 500) {
            hurry.abort();
          }
        };
        const onTerminate = () => {
          controller.abort();
          hurry.abort();
        };
        process.on("SIGINT", onInterrupt);
        process.on("SIGTERM", onTerminate);
        try {
          await (opts.hcl ? runHclDemo : runDemo)({
            cdk: opts.cdk,
            port,
            keep: opts.keep ?? false,
            verbose: opts.verbose ?? false,
            workDir: opts.workDir,
            signal: controller.signal,
            hurry: hurry.signal,
          });
          process.exitCode = 0;
        } catch (err) {
          const message = err instanceof Error ? err.message : String(err);
          printErr(`gpurental demo: ${controller.signal.aborted ? "interrupted" : message}\n`);
          process.exitCode = controller.signal.aborted ? 130 : 1;
        } finally {
          process.removeListener("SIGINT", onInterrupt);
          process.removeListener("SIGTERM", onTerminate);
        }
      },
    );
}
