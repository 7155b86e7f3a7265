import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { delimiter, dirname, join, resolve } from "node:path";
import { type Command, Option } from "commander";
import { terminalText } from "../../display";
import type { FakeBackend } from "../../fake-backend";
import { version } from "../../version";
import { CDKS, type Cdk, cdkCommand, withCdkPath } from "../cdk";
import { portOf } from "../flags";
import { standaloneExecutable } from "../host";
import { printErr } from "../io";
import { writeShellEnv } from "../shell-env";
import { runHclDemo, startDemoBackend } from "./hcl";
import type { DemoOptions, DemoResult } from "./options";
import { DemoError, formatYuan, lastLines, liveCounts, progressRelay, reporter } from "./output";
import { ChildRunner, checkTerminalModule, dependencyDirs, quietEnv, terraformVersion } from "./runner";
import { openWorkDir, packageRoot, prepareApp } from "./workdir";

export type { DemoOptions, DemoResult, DeployedContext } from "./options";
export { DemoError } from "./output";
export { checkTerminalModule, terraformVersion } from "./runner";

// `gpurental demo` shows the whole product in one command: the embedded fake backend with the demo
// seed, the provider installed into a private filesystem mirror, the CDKTF example app deployed with
// cdktf and the real terraform CLI, its outputs and the spend so far, then everything destroyed.
// Everything it writes goes into one work folder (a temp folder by default) with its own Terraform
// CLI config, CDKTF home, state file, temp folder and provider code cache, so the user's
// ~/.terraformrc, plugin cache, $HOME and temp directory are neither read nor changed; a temp work
// folder is removed on every way out (end, failure, Ctrl-C, SIGTERM, --keep ended), a --work-dir
// never. The fake backend runs in this process; terraform, the provider and cdktf run as children
// in their own process group, which is killed on any failure or interruption so that nothing is
// left running. What was deployed is destroyed at the end (after Ctrl-C too with --keep), and when
// an interruption cuts that short the demo says what the fake backend still held when it stopped.

/** The stack name of the example app (examples/cdktf-app/main.ts). */
export const DEMO_STACK = "gpu-workstation";

/** Runs the demo; resolves when it is over, rejects with a {@link DemoError} on the first failed step. */
export async function runDemo(options: DemoOptions = {}): Promise<DemoResult> {
  const out = options.out ?? process.stdout;
  const report = reporter(out);
  const verbose = options.verbose ?? false;
  const timeoutMs = options.stepTimeoutMs ?? 10 * 60_000;
  const root = packageRoot();
  const cdk = options.cdk ?? "cdktf";
  const appName = `${cdk}-app`;
  // First: a CDK that cannot run here says so before anything is started or written.
  let cli: ReturnType<typeof cdkCommand>;
  try {
    cli = cdkCommand(cdk, root);
  } catch (err) {
    throw new DemoError(err instanceof Error ? err.message : String(err));
  }
  const work = openWorkDir(options.workDir, options.tempDir);
  const workDir = work.dir;
  const keepFolder = work.kept;
  const log = join(workDir, `${cdk}.log`);
  const statePath = join(workDir, `terraform.${DEMO_STACK}.tfstate`);
  // Where to read cdktf's whole output once the demo is over: only a kept folder still has it.
  const seeLog = () => (keepFolder ? `see ${log}` : `see the end of ${cdk}'s output above`);
  const runner = new ChildRunner();
  let backend: FakeBackend | undefined;
  let orgId: string | undefined;
  let succeeded = false;

  report.line(
    `gpurental ${version} demo: the ${cdk === "cdktf" ? "CDKTF" : "CDK Terrain"} example app against the embedded fake backend`,
  );
  report.line(
    `Work folder: ${workDir} (Terraform state: ${statePath}); ${keepFolder ? "kept afterwards (--work-dir)" : "removed when the demo ends"}.`,
  );
  report.line();
  // Between steps, an interruption ends the demo at once (cdktf's children are killed on it anyway).
  const checkpoint = () => {
    if (options.signal?.aborted) throw new DemoError("interrupted");
  };
  try {
    // terraform first: without it nothing else is worth starting.
    let step = report.step("looking for the terraform CLI");
    const tfVersion = await terraformVersion();
    step.done(`terraform ${tfVersion}`);

    checkpoint();
    step = report.step("starting the fake backend");
    backend = await startDemoBackend(options);
    const creds = backend.credentials;
    if (!creds) throw new DemoError("the fake backend started without its demo seed");
    orgId = creds.org_id;
    const credentialsFile = join(workDir, "credentials.json");
    writeFileSync(credentialsFile, `${JSON.stringify(creds, null, 2)}\n`, { mode: 0o600 });
    // The mode above only applies to a new file; a reused --work-dir may hold a wider one.
    chmodSync(credentialsFile, 0o600);
    step.done(
      `fake backend up at ${backend.url} (demo organization, balance ${formatYuan(backend.balance(creds.org_id))})`,
    );

    checkpoint();
    step = report.step("installing the provider into a local mirror");
    const { installProvider } = await import("../provider/provider");
    let installed: ReturnType<typeof installProvider>;
    try {
      installed = installProvider({ dir: join(workDir, "mirror"), version, bundle: options.providerBundle });
    } catch (err) {
      throw new DemoError(
        `${err instanceof Error ? err.message : String(err)} (the demo needs the built package: npm run build)`,
      );
    }
    const cliConfigFile = join(workDir, "terraform.rc");
    writeFileSync(cliConfigFile, installed.cliConfig);
    step.done(`provider ${version} installed (${installed.hash.slice(0, 15)}…)`);

    checkpoint();
    step = report.step(`bundling the example app (examples/${appName})`);
    const appDir = join(workDir, "app");
    await prepareApp(root, appName, appDir);
    step.done("example app ready");

    // cdktf-cli runs under this process's Node.js: <cdktf-cli>/bundle/bin/cdktf.
    if (cdk === "cdktf") checkTerminalModule(resolve(cli.argv[0] ?? "", "..", "..", ".."));
    const tmpForChildren = join(workDir, "tmp");
    mkdirSync(tmpForChildren, { recursive: true });
    const env = quietEnv({
      GPURENTAL_BASE_URL: backend.url,
      GPURENTAL_TOKEN: creds.admin_session_token,
      GPURENTAL_ORG_ID: creds.org_id,
      GPURENTAL_SSH_KEY_ID: creds.ssh_key_id,
      GPURENTAL_CDKTF_STATE: statePath,
      TF_CLI_CONFIG_FILE: cliConfigFile,
      TF_IN_AUTOMATION: "1",
      CDKTF_HOME: join(workDir, "cdktf-home"),
      CDKTF_DISABLE_PLUGIN_CACHE_ENV: "1",
      // The children's temp files (the provider's socket among them, left behind if it is killed)
      // and the provider's code cache stay in the work folder, and go with it.
      TMPDIR: tmpForChildren,
      GPURENTAL_PROVIDER_CODE_CACHE_DIR: join(workDir, "provider-code-cache"),
      // One command after another and then gone: no provider process that outlives the demo.
      GPURENTAL_PROVIDER_RESIDENT: "off",
      DISABLE_VERSION_CHECK: "true",
      CI: "1",
      FORCE_COLOR: "0",
      NO_COLOR: "1",
      // The provider executable runs `node` from PATH: the demo's own Node.js comes first, so
      // that the provider runs on the Node.js the demo was started with (npm scripts put a
      // project's node_modules/.bin first, which may hold another `node`).
      PATH: [dirname(process.execPath), process.env.PATH].filter(Boolean).join(delimiter),
      // The bundled app leaves the CDK, constructs and zod to be required from this package's
      // dependencies: in a clone its node_modules, in a project the folder npm put them in.
      NODE_PATH: dependencyDirs(root).join(delimiter),
    });
    const cdktf = (argv: string[], onLine: (line: string) => void, signal = options.signal) =>
      runner.run(
        { command: cli.command, argv: [...cli.argv, ...argv], cwd: appDir, env: withCdkPath(cli, env), log },
        { verbose, out, timeoutMs, signal },
        onLine,
      );
    // Progress lines as they come, and an error with the lines that explain it, and no more.
    const relay = progressRelay(out, verbose, DEMO_STACK);

    checkpoint();
    step = report.step(`deploying with ${cdk} and terraform (synth, init, plan, apply)`);
    const outputsFile = join(workDir, "outputs.json");
    const deployCode = await cdktf(
      ["deploy", DEMO_STACK, "--auto-approve", "--skip-provider-lock", "--outputs-file", outputsFile],
      relay,
    );
    if (deployCode !== 0) throw new DemoError(`${cdk} deploy failed (exit code ${deployCode}); ${seeLog()}`);
    step.done("deployed");

    const outputs = ((JSON.parse(readFileSync(outputsFile, "utf8")) as Record<string, unknown>)[DEMO_STACK] ??
      {}) as Record<string, unknown>;
    const instanceId = String(outputs.instance_id ?? "");
    // The backend's readers return live records: keep the status as it is now.
    const statusAfterDeploy = backend.instance(instanceId)?.status;
    if (!statusAfterDeploy) {
      throw new DemoError(`the fake backend has no instance ${instanceId || "(no id in outputs)"}`);
    }
    if (statusAfterDeploy !== "running") {
      throw new DemoError(`instance ${instanceId} is ${statusAfterDeploy}, not running; ${seeLog()}`);
    }
    report.line(`  ✓ instance ${instanceId} is running`);
    const spendOf = (fake: FakeBackend) =>
      fake
        .ledger({ orgId: creds.org_id })
        .filter((row) => row.kind !== "top_up")
        .reduce((sum, row) => sum + row.amount_micro, 0);
    const spendMicro = spendOf(backend);
    const startedAt = backend.instance(instanceId)?.started_at ?? null;
    const runningFor =
      startedAt === null
        ? ""
        : `, running for ${((backend.clock.now().getTime() - startedAt) / 1000).toFixed(1)}s`;

    await options.onDeployed?.({ backend, outputs, orgId: creds.org_id, statePath });

    const price = Number(outputs.price_per_hour_micro ?? 0);
    const rows: Array<[string, unknown]> = [
      ["Instance", instanceId],
      ["Status", outputs.instance_status],
      ["GPU", `${String(outputs.offer_gpu_model ?? "?")} at ${formatYuan(price)}/hour`],
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
      [
        "Spend so far",
        `${formatYuan(spendMicro)} (fake backend ledger: GPU time is billed per whole second${runningFor})`,
      ],
    ];
    report.line();
    for (const [name, value] of rows)
      report.line(`  ${name.padEnd(13)} ${terminalText(String(value ?? ""))}`);
    report.line();

    if (options.keep) {
      const envFile = join(workDir, "fake-backend.env");
      writeShellEnv(envFile, backend.url, creds);
      report.line("Kept running (--keep). Reach the fake backend with the demo admin's session:");
      report.line(`  . ${envFile}      # GPURENTAL_BASE_URL, GPURENTAL_TOKEN, GPURENTAL_ORG_ID, ...`);
      report.line(`The stack's state is ${statePath}; the full credentials are in ${credentialsFile}.`);
      report.line(
        `Press Ctrl-C to destroy the instance and the API key with ${cdk} and stop the fake backend${keepFolder ? "" : `, which removes ${workDir}`} (a second Ctrl-C stops at once; the backend's data lives in memory and goes with it).`,
      );
      await new Promise<void>((done) => {
        if (!options.signal || options.signal.aborted) return done();
        options.signal.addEventListener("abort", () => done(), { once: true });
      });
      report.line();
    } else {
      checkpoint();
    }

    step = report.step(`destroying with ${cdk} and terraform`);
    const destroyCode = await cdktf(
      // The configuration synthesized for the deploy is the one to destroy: no second synth.
      ["destroy", DEMO_STACK, "--auto-approve", "--skip-synth", "--skip-provider-lock"],
      relay,
      // The signal that ended the --keep wait has done its job; only a hurry cuts the destroy short.
      options.keep ? options.hurry : options.signal,
    );
    if (destroyCode !== 0)
      throw new DemoError(`${cdk} destroy failed (exit code ${destroyCode}); ${seeLog()}`);
    const live = liveCounts(backend, creds.org_id);
    if (live.instances > 0 || live.apiKeys > 0) {
      throw new DemoError(
        `after destroy the fake backend still has ${live.instances} instance(s) and ${live.apiKeys} API key(s); ${seeLog()}`,
      );
    }
    step.done(
      `destroyed: no instance and no API key left in the fake backend; the demo spent ${formatYuan(spendOf(backend))}`,
    );
    succeeded = true;
    return {
      outputs,
      statusAfterDeploy,
      spendMicro,
      liveInstancesAtEnd: live.instances,
      liveApiKeysAtEnd: live.apiKeys,
      workDir,
    };
  } catch (err) {
    if (existsSync(log)) {
      if (keepFolder) report.line(`  ${cdk}'s full output: ${log}`);
      else {
        // The folder goes with the log: show its end now (--work-dir keeps the whole of it).
        report.line(`  The end of ${cdk}'s output (run with --work-dir <dir> to keep all of it):`);
        for (const line of lastLines(log, 30)) report.line(`    ${line}`);
      }
    }
    throw err;
  } finally {
    runner.dispose();
    if (backend) {
      const left = orgId ? liveCounts(backend, orgId) : { instances: 0, apiKeys: 0 };
      await backend.close();
      report.line(
        left.instances + left.apiKeys === 0
          ? "  ✓ fake backend stopped"
          : `  ✓ fake backend stopped with ${left.instances} instance(s) and ${left.apiKeys} API key(s) not destroyed; they existed only in this process, so nothing is left running or billing`,
      );
    }
    if (!keepFolder) {
      work.remove();
      report.line(`  ✓ work folder ${workDir} removed`);
    } else {
      report.line(`  Work folder kept: ${workDir}`);
    }
    if (succeeded) report.line(`Done in ${report.total()}.`);
  }
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
          process.exitCode = 2;
          return;
        }
        const port = portOf(opts.port);
        if (port === undefined) {
          printErr(`gpurental demo: --port must be a number from 0 to 65535, got "${opts.port}"\n`);
          process.exitCode = 2;
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
