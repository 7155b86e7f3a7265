import { execFile } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { delimiter, dirname, join } from "node:path";
import type { FakeBackend } from "../../fake-backend";
import { version } from "../../version";
import { standaloneExecutable } from "../host";
import { writeShellEnv } from "../shell-env";
import { writeHclExample } from "./example";
import type { DemoOptions, DemoResult, DeployedContext } from "./options";
import { DemoError, formatYuan, lastLines, liveCounts, progressRelay, reporter } from "./output";
import { ChildRunner, quietEnv, terraformBinary, terraformVersion } from "./runner";
import { openWorkDir } from "./workdir";

// `gpurental demo --hcl`: the demo for people who never touch TypeScript. The embedded fake backend
// with the demo seed, the provider installed into a private filesystem mirror (the standalone
// executable installs itself: it is the provider too), examples/hcl written into the work folder,
// then plain `terraform init`, `apply`, the outputs and the spend, and `terraform destroy`. Nothing
// here needs Node.js tooling: the standalone command runs it with terraform alone on PATH. The work
// folder, the interruptions and the clean-up are those of the CDK demo (demo.ts).

/** Runs the HCL demo; resolves when it is over, rejects with a {@link DemoError} on the first failed step. */
export async function runHclDemo(options: DemoOptions = {}): Promise<DemoResult> {
  const out = options.out ?? process.stdout;
  const report = reporter(out);
  const verbose = options.verbose ?? false;
  const timeoutMs = options.stepTimeoutMs ?? 10 * 60_000;
  const work = openWorkDir(options.workDir, options.tempDir);
  const workDir = work.dir;
  const keepFolder = work.kept;
  const log = join(workDir, "terraform.log");
  const configDir = join(workDir, "hcl");
  const statePath = join(configDir, "terraform.tfstate");
  const seeLog = () => (keepFolder ? `see ${log}` : "see the end of terraform's output above");
  const runner = new ChildRunner();
  let backend: FakeBackend | undefined;
  let orgId: string | undefined;
  let succeeded = false;

  report.line(`gpurental ${version} demo: examples/hcl with terraform against the embedded fake backend`);
  report.line(
    `Work folder: ${workDir} (Terraform state: ${statePath}); ${keepFolder ? "kept afterwards (--work-dir)" : "removed when the demo ends"}.`,
  );
  report.line();
  const checkpoint = () => {
    if (options.signal?.aborted) throw new DemoError("interrupted");
  };
  try {
    let step = report.step("looking for the terraform CLI");
    const tf = terraformBinary();
    step.done(`terraform ${await terraformVersion(tf)}`);

    checkpoint();
    step = report.step("starting the fake backend");
    backend = await startDemoBackend(options);
    const creds = backend.credentials;
    if (!creds) throw new DemoError("the fake backend started without its demo seed");
    orgId = creds.org_id;
    const envFile = join(workDir, "fake-backend.env");
    writeShellEnv(envFile, backend.url, creds);
    step.done(
      `fake backend up at ${backend.url} (demo organization, balance ${formatYuan(backend.balance(creds.org_id))})`,
    );

    checkpoint();
    step = report.step("installing the provider into a local mirror");
    const { installProvider } = await import("../provider/provider");
    const standalone = standaloneExecutable();
    let installed: ReturnType<typeof installProvider>;
    try {
      installed = installProvider({
        dir: join(workDir, "mirror"),
        version,
        ...(standalone ? { executable: standalone.file } : { bundle: options.providerBundle }),
      });
    } catch (err) {
      throw new DemoError(
        `${err instanceof Error ? err.message : String(err)}${standalone ? "" : " (the demo needs the built package: npm run build)"}`,
      );
    }
    const cliConfigFile = join(workDir, "terraform.rc");
    writeFileSync(cliConfigFile, installed.cliConfig);
    step.done(
      `provider ${version} installed (${standalone ? "this executable" : "the package's"}, ${installed.hash.slice(0, 15)}…)`,
    );

    checkpoint();
    step = report.step("writing examples/hcl into the work folder");
    writeHclExample(configDir);
    step.done(`examples/hcl ready in ${configDir}`);

    const tmpForChildren = join(workDir, "tmp");
    mkdirSync(tmpForChildren, { recursive: true });
    const env = quietEnv({
      GPURENTAL_BASE_URL: backend.url,
      GPURENTAL_TOKEN: creds.admin_session_token,
      GPURENTAL_ORG_ID: creds.org_id,
      TF_VAR_ssh_key_id: creds.ssh_key_id,
      TF_CLI_CONFIG_FILE: cliConfigFile,
      TF_IN_AUTOMATION: "1",
      TF_INPUT: "0",
      TMPDIR: tmpForChildren,
      GPURENTAL_PROVIDER_CODE_CACHE_DIR: join(workDir, "provider-code-cache"),
      GPURENTAL_PROVIDER_RESIDENT: "off",
      NO_COLOR: "1",
      // The npm package's provider runs `node` from PATH: this Node.js first. The standalone
      // provider needs none.
      ...(standalone
        ? {}
        : { PATH: [dirname(process.execPath), process.env.PATH].filter(Boolean).join(delimiter) }),
    });
    const terraform = (args: string[], onLine: (line: string) => void, signal = options.signal) =>
      runner.run(
        { command: tf, argv: args, cwd: configDir, env, log },
        { verbose, out, timeoutMs, signal },
        onLine,
      );
    const relay = progressRelay(out, verbose, "");
    const ok = async (what: string, args: string[], signal = options.signal) => {
      const code = await terraform(args, relay, signal);
      if (code !== 0) throw new DemoError(`terraform ${what} failed (exit code ${code}); ${seeLog()}`);
    };

    checkpoint();
    step = report.step("terraform init (from the local mirror)");
    await ok("init", ["init", "-input=false", "-no-color"]);
    step.done("initialized");

    checkpoint();
    step = report.step("terraform apply");
    await ok("apply", ["apply", "-auto-approve", "-input=false", "-no-color"]);
    step.done("applied");

    const outputs = await terraformOutputs(tf, configDir, env);
    const instanceId = String(outputs.instance_id ?? "");
    const statusAfterDeploy = backend.instance(instanceId)?.status;
    if (!statusAfterDeploy)
      throw new DemoError(`the fake backend has no instance ${instanceId || "(no id in outputs)"}`);
    if (statusAfterDeploy !== "running")
      throw new DemoError(`instance ${instanceId} is ${statusAfterDeploy}, not running; ${seeLog()}`);
    report.line(`  ✓ instance ${instanceId} is running`);
    const spendOf = (fake: FakeBackend) =>
      fake
        .ledger({ orgId: creds.org_id })
        .filter((row) => row.kind !== "top_up")
        .reduce((sum, row) => sum + row.amount_micro, 0);
    const spendMicro = spendOf(backend);

    const deployed: DeployedContext = { backend, outputs, orgId: creds.org_id, statePath };
    await options.onDeployed?.(deployed);

    const offer = (outputs.offer ?? {}) as Record<string, unknown>;
    const rows: Array<[string, unknown]> = [
      ["Instance", instanceId],
      ["Status", outputs.instance_status],
      [
        "GPU",
        `${String(offer.gpu_model ?? "?")} at ${formatYuan(Number(offer.price_per_hour_micro ?? 0))}/hour`,
      ],
      [
        "Offer",
        `${String(offer.id ?? "?")} (chosen by offer_filter when the instance was created, then kept)`,
      ],
      ["SSH", outputs.ssh_command],
      ["CI API key", "its secret is in the Terraform state: terraform output -raw ci_api_key_secret"],
      [
        "Spend so far",
        `${formatYuan(spendMicro)} (fake backend ledger: GPU time is billed per whole second)`,
      ],
    ];
    report.line();
    for (const [name, value] of rows) report.line(`  ${name.padEnd(13)} ${String(value ?? "")}`);
    report.line();

    if (options.keep) {
      report.line("Kept running (--keep). In another shell:");
      report.line(`  . ${envFile}      # GPURENTAL_BASE_URL, GPURENTAL_TOKEN, ... of the demo admin`);
      report.line(`  export TF_CLI_CONFIG_FILE=${cliConfigFile}`);
      report.line(`  cd ${configDir} && terraform plan`);
      report.line(
        `Press Ctrl-C to destroy the instance and the API key with terraform and stop the fake backend${keepFolder ? "" : `, which removes ${workDir}`} (a second Ctrl-C stops at once; the backend's data lives in memory and goes with it).`,
      );
      await new Promise<void>((done) => {
        if (!options.signal || options.signal.aborted) return done();
        options.signal.addEventListener("abort", () => done(), { once: true });
      });
      report.line();
    } else {
      checkpoint();
    }

    step = report.step("terraform destroy");
    await ok(
      "destroy",
      ["destroy", "-auto-approve", "-input=false", "-no-color"],
      options.keep ? options.hurry : options.signal,
    );
    const live = liveCounts(backend, creds.org_id);
    if (live.instances > 0 || live.apiKeys > 0)
      throw new DemoError(
        `after destroy the fake backend still has ${live.instances} instance(s) and ${live.apiKeys} API key(s); ${seeLog()}`,
      );
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
      if (keepFolder) report.line(`  terraform's full output: ${log}`);
      else {
        report.line("  The end of terraform's output (run with --work-dir <dir> to keep all of it):");
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
 * The configuration's non-sensitive outputs. `terraform output -json` prints sensitive values in
 * clear text, so it runs apart from the logged children: its output goes neither to the log nor,
 * with --verbose, to the terminal, and only what is not sensitive is kept.
 */
function terraformOutputs(tf: string, cwd: string, env: NodeJS.ProcessEnv): Promise<Record<string, unknown>> {
  return new Promise((done, fail) => {
    execFile(tf, ["output", "-json", "-no-color"], { cwd, env, timeout: 60_000 }, (err, stdout) => {
      if (err) return fail(new DemoError(`terraform output failed: ${err.message.split("\n")[0]}`));
      try {
        const parsed = JSON.parse(stdout) as Record<string, { value?: unknown; sensitive?: boolean }>;
        done(
          Object.fromEntries(
            Object.entries(parsed)
              .filter(([, o]) => !o.sensitive)
              .map(([name, o]) => [name, o.value]),
          ),
        );
      } catch {
        fail(new DemoError("terraform output -json printed no JSON"));
      }
    });
  });
}
