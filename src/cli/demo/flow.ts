import { existsSync } from "node:fs";
import { join } from "node:path";
import { terminalText } from "../../display";
import type { DemoCredentials, FakeBackend } from "../../fake-backend";
import { version } from "../../version";
import type { DemoOptions, DemoResult } from "./options";
import {
  DemoError,
  formatYuan,
  lastLines,
  liveCounts,
  progressRelay,
  type Reporter,
  reporter,
} from "./output";
import { ChildRunner, terraformBinary, terraformVersion } from "./runner";
import { childEnvironment, installMirror, type ProviderSource, startDemoBackend } from "./setup";
import { openWorkDir } from "./workdir";

// The flow every demo follows: check for terraform, start the embedded fake backend with the demo
// seed, install the provider into a private filesystem mirror, let the demo set up and deploy its
// configuration, show its outputs and the spend so far, wait with --keep, destroy, and check that
// the fake backend holds nothing live. Everything it writes goes into one work folder (a temp folder
// by default) with its own Terraform CLI config, state, temp folder and provider code cache, so the
// user's ~/.terraformrc, plugin cache, $HOME and temp directory are neither read nor changed; a temp
// work folder is removed on every way out (end, failure, Ctrl-C, SIGTERM, --keep ended), a
// --work-dir never. The fake backend runs in this process; the children (terraform, the provider,
// the CDK CLI) run in their own process group, which is killed on any failure or interruption so
// that nothing is left running. What was deployed is destroyed at the end (after Ctrl-C too with
// --keep), and when an interruption cuts that short the demo says what the fake backend still held
// when it stopped.

/** A demo as {@link runDemoFlow} runs it: what it is called, and what it does its own way. */
export interface DemoKind {
  /** What the first line says is deployed ("examples/hcl with terraform"). */
  title: string;
  /** The program the demo drives, as its messages name it (cdktf, cdktn, terraform); logged to `<tool>.log`. */
  tool: string;
  /** The name that starts each line of the tool's output (cdktf's stack), or "". */
  stack: string;
  /** The Terraform state file, in the work folder. */
  statePath(workDir: string): string;
  /** Where the provider installed into the mirror comes from. */
  provider: ProviderSource;
  /** Whether the spend row says how long the instance has been running. */
  runningTime: boolean;
  /** Writes what the demo keeps of the demo admin's credentials, once the fake backend is up. */
  saveCredentials(context: BackendContext): void;
  /** Sets the configuration up in the work folder (its own steps) and says how to deploy it. */
  prepare(context: DemoContext): Promise<Deployment>;
}

/** The work folder and the running fake backend with its demo seed. */
export interface BackendContext {
  workDir: string;
  /** The Terraform state file. */
  statePath: string;
  /** Where the demo admin's shell environment is written (`. <file>`), when the demo writes it. */
  envFile: string;
  backend: FakeBackend;
  creds: DemoCredentials;
}

/** What a demo's own steps get from the flow. */
export interface DemoContext extends BackendContext {
  options: DemoOptions;
  report: Reporter;
  /** The terraform CLI. */
  terraform: string;
  /** The Terraform CLI config that points at the mirror. */
  cliConfigFile: string;
  /** Ends the demo when it has been interrupted: called between steps. */
  checkpoint(): void;
  /** The children's environment: the fake backend, the mirror, the work folder's temp folder, and `extra`. */
  childEnv(extra: Record<string, string>): NodeJS.ProcessEnv;
  /**
   * Runs a child in its process group, its output logged and its progress relayed; a non-zero exit
   * fails the demo, naming `what` it did. `signal` (the demo's by default) cuts it short.
   */
  run(
    what: string,
    child: { command: string; argv: string[]; cwd: string; env: NodeJS.ProcessEnv },
    signal?: AbortSignal,
  ): Promise<void>;
}

/** A configuration set up and ready to deploy. */
export interface Deployment {
  /** Deploys it, as one step or more (a checkpoint before each but the first). */
  deploy(): Promise<void>;
  /** Its non-sensitive outputs. */
  outputs(): Promise<Record<string, unknown>>;
  /** The rows of the results table between the instance's status and the spend so far. */
  rows(outputs: Record<string, unknown>): Array<[string, unknown]>;
  /** With --keep: how to reach what is running, shown before the demo waits. */
  kept(): string[];
  /** The destroy step as shown. */
  destroyStep: string;
  /** Destroys it; `signal` cuts it short. */
  destroy(signal: AbortSignal | undefined): Promise<void>;
}

/** Runs a demo; resolves when it is over, rejects with a {@link DemoError} on the first failed step. */
export async function runDemoFlow(options: DemoOptions, kind: DemoKind): Promise<DemoResult> {
  const out = options.out ?? process.stdout;
  const report = reporter(out);
  const verbose = options.verbose ?? false;
  const timeoutMs = options.stepTimeoutMs ?? 10 * 60_000;
  const work = openWorkDir(options.workDir, options.tempDir);
  const workDir = work.dir;
  const keepFolder = work.kept;
  const { tool } = kind;
  const log = join(workDir, `${tool}.log`);
  const statePath = kind.statePath(workDir);
  // Where to read the tool's whole output once the demo is over: only a kept folder still has it.
  const seeLog = () => (keepFolder ? `see ${log}` : `see the end of ${tool}'s output above`);
  const runner = new ChildRunner();
  let backend: FakeBackend | undefined;
  let orgId: string | undefined;
  let succeeded = false;

  report.line(`gpurental ${version} demo: ${kind.title} against the embedded fake backend`);
  report.line(
    `Work folder: ${workDir} (Terraform state: ${statePath}); ${keepFolder ? "kept afterwards (--work-dir)" : "removed when the demo ends"}.`,
  );
  report.line();
  // Between steps, an interruption ends the demo at once (a running child is killed on it anyway).
  const checkpoint = () => {
    if (options.signal?.aborted) throw new DemoError("interrupted");
  };
  try {
    // terraform first: without it nothing else is worth starting.
    let step = report.step("looking for the terraform CLI");
    const terraform = terraformBinary();
    step.done(`terraform ${await terraformVersion(terraform)}`);

    checkpoint();
    step = report.step("starting the fake backend");
    backend = await startDemoBackend(options);
    const creds = backend.credentials;
    if (!creds) throw new DemoError("the fake backend started without its demo seed");
    orgId = creds.org_id;
    const envFile = join(workDir, "fake-backend.env");
    kind.saveCredentials({ workDir, statePath, envFile, backend, creds });
    step.done(
      `fake backend up at ${backend.url} (demo organization, balance ${formatYuan(backend.balance(creds.org_id))})`,
    );

    checkpoint();
    step = report.step("installing the provider into a local mirror");
    const mirror = await installMirror(workDir, kind.provider, options.providerBundle);
    step.done(mirror.detail);

    // Progress lines as they come, and an error with the lines that explain it, and no more.
    const relay = progressRelay(out, verbose, kind.stack);
    const context: DemoContext = {
      workDir,
      statePath,
      envFile,
      backend,
      creds,
      options,
      report,
      terraform,
      cliConfigFile: mirror.cliConfigFile,
      checkpoint,
      childEnv: (extra) => childEnvironment(workDir, context.backend, creds, mirror, extra),
      async run(what, child, signal = options.signal) {
        const code = await runner.run({ ...child, log }, { verbose, out, timeoutMs, signal }, relay);
        if (code !== 0) throw new DemoError(`${tool} ${what} failed (exit code ${code}); ${seeLog()}`);
      },
    };

    checkpoint();
    const deployment = await kind.prepare(context);
    checkpoint();
    await deployment.deploy();

    const outputs = await deployment.outputs();
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
    const spendMicro = spendOf(backend, creds.org_id);
    const runningFor = kind.runningTime ? runningTime(backend, instanceId) : "";

    await options.onDeployed?.({ backend, outputs, orgId: creds.org_id, statePath });

    const rows: Array<[string, unknown]> = [
      ["Instance", instanceId],
      ["Status", outputs.instance_status],
      ...deployment.rows(outputs),
      [
        "Spend so far",
        `${formatYuan(spendMicro)} (fake backend ledger: GPU time is billed per whole second${runningFor})`,
      ],
    ];
    showTable(report, rows);

    if (options.keep) {
      for (const line of deployment.kept()) report.line(line);
      report.line(
        `Press Ctrl-C to destroy the instance and the API key with ${tool} and stop the fake backend${keepFolder ? "" : `, which removes ${workDir}`} (a second Ctrl-C stops at once; the backend's data lives in memory and goes with it).`,
      );
      await untilAborted(options.signal);
      report.line();
    } else {
      checkpoint();
    }

    step = report.step(deployment.destroyStep);
    // The signal that ended the --keep wait has done its job; only a hurry cuts the destroy short.
    await deployment.destroy(options.keep ? options.hurry : options.signal);
    const live = liveCounts(backend, creds.org_id);
    if (live.instances > 0 || live.apiKeys > 0) {
      throw new DemoError(
        `after destroy the fake backend still has ${live.instances} instance(s) and ${live.apiKeys} API key(s); ${seeLog()}`,
      );
    }
    step.done(
      `destroyed: no instance and no API key left in the fake backend; the demo spent ${formatYuan(spendOf(backend, creds.org_id))}`,
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
    showLog(report, tool, log, keepFolder);
    throw err;
  } finally {
    runner.dispose();
    if (backend) await stopBackend(report, backend, orgId);
    if (!keepFolder) {
      work.remove();
      report.line(`  ✓ work folder ${workDir} removed`);
    } else {
      report.line(`  Work folder kept: ${workDir}`);
    }
    if (succeeded) report.line(`Done in ${report.total()}.`);
  }
}

/** What the organization has spent (GPU time and storage, not its top-ups), in micro-yuan. */
function spendOf(backend: FakeBackend, orgId: string): number {
  return backend
    .ledger({ orgId })
    .filter((row) => row.kind !== "top_up")
    .reduce((sum, row) => sum + row.amount_micro, 0);
}

/** ", running for 12.3s" since the instance started, or "" when it has not. */
function runningTime(backend: FakeBackend, instanceId: string): string {
  const startedAt = backend.instance(instanceId)?.started_at ?? null;
  return startedAt === null
    ? ""
    : `, running for ${((backend.clock.now().getTime() - startedAt) / 1000).toFixed(1)}s`;
}

/** The results table, between blank lines. */
function showTable(report: Reporter, rows: Array<[string, unknown]>): void {
  report.line();
  for (const [name, value] of rows) report.line(`  ${name.padEnd(13)} ${terminalText(String(value ?? ""))}`);
  report.line();
}

/** Resolves once `signal` has aborted; at once without one. */
function untilAborted(signal: AbortSignal | undefined): Promise<void> {
  return new Promise<void>((done) => {
    if (!signal || signal.aborted) return done();
    signal.addEventListener("abort", () => done(), { once: true });
  });
}

/** After a failure: where the tool's whole output is, or, when the folder goes with it, its end. */
function showLog(report: Reporter, tool: string, log: string, keepFolder: boolean): void {
  if (!existsSync(log)) return;
  if (keepFolder) report.line(`  ${tool}'s full output: ${log}`);
  else {
    // The folder goes with the log: show its end now (--work-dir keeps the whole of it).
    report.line(`  The end of ${tool}'s output (run with --work-dir <dir> to keep all of it):`);
    for (const line of lastLines(log, 30)) report.line(`    ${line}`);
  }
}

/** Stops the fake backend, saying what of the demo organization it still held. */
async function stopBackend(report: Reporter, backend: FakeBackend, orgId: string | undefined): Promise<void> {
  const left = orgId ? liveCounts(backend, orgId) : { instances: 0, apiKeys: 0 };
  await backend.close();
  report.line(
    left.instances + left.apiKeys === 0
      ? "  ✓ fake backend stopped"
      : `  ✓ fake backend stopped with ${left.instances} instance(s) and ${left.apiKeys} API key(s) not destroyed; they existed only in this process, so nothing is left running or billing`,
  );
}
