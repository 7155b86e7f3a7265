import { execFile } from "node:child_process";
import { join } from "node:path";
import { writeShellEnv } from "../shell-env";
import { writeHclExample } from "./example";
import { type DemoContext, type Deployment, runDemoFlow } from "./flow";
import type { DemoOptions, DemoResult } from "./options";
import { DemoError, formatYuan } from "./output";

export { startDemoBackend } from "./setup";

// `gpurental demo --hcl`: the demo for people who never touch TypeScript. The flow every demo
// follows (flow.ts) with examples/hcl written into the work folder, then plain `terraform init`,
// `apply`, the outputs and the spend, and `terraform destroy`. Nothing here needs Node.js tooling:
// the standalone command runs it with terraform alone on PATH, installing itself as the provider.

/** Runs the HCL demo; resolves when it is over, rejects with a {@link DemoError} on the first failed step. */
export async function runHclDemo(options: DemoOptions = {}): Promise<DemoResult> {
  return runDemoFlow(options, {
    title: "examples/hcl with terraform",
    tool: "terraform",
    stack: "",
    statePath: (workDir) => join(configDirOf(workDir), "terraform.tfstate"),
    provider: "command",
    runningTime: false,
    saveCredentials: ({ envFile, backend, creds }) => writeShellEnv(envFile, backend.url, creds),
    prepare: prepareHcl,
  });
}

/** Where examples/hcl is written, in the work folder. */
const configDirOf = (workDir: string) => join(workDir, "hcl");

/** Writes examples/hcl into the work folder and says how to apply and destroy it with terraform. */
async function prepareHcl(context: DemoContext): Promise<Deployment> {
  const { report, workDir } = context;
  const configDir = configDirOf(workDir);
  const step = report.step("writing examples/hcl into the work folder");
  writeHclExample(configDir);
  step.done(`examples/hcl ready in ${configDir}`);

  const env = context.childEnv({ TF_VAR_ssh_key_id: context.creds.ssh_key_id, TF_INPUT: "0" });
  const terraform = (...argv: string[]) => ({ command: context.terraform, argv, cwd: configDir, env });

  return {
    async deploy() {
      let step = report.step("terraform init (from the local mirror)");
      await context.run("init", terraform("init", "-input=false", "-no-color"));
      step.done("initialized");

      context.checkpoint();
      step = report.step("terraform apply");
      await context.run("apply", terraform("apply", "-auto-approve", "-input=false", "-no-color"));
      step.done("applied");
    },
    outputs: () => terraformOutputs(context.terraform, configDir, env),
    rows(outputs) {
      const offer = (outputs.offer ?? {}) as Record<string, unknown>;
      return [
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
      ];
    },
    kept: () => [
      "Kept running (--keep). In another shell:",
      `  . ${context.envFile}      # GPURENTAL_BASE_URL, GPURENTAL_TOKEN, ... of the demo admin`,
      `  export TF_CLI_CONFIG_FILE=${context.cliConfigFile}`,
      `  cd ${configDir} && terraform plan`,
    ],
    destroyStep: "terraform destroy",
    destroy: (signal) =>
      context.run("destroy", terraform("destroy", "-auto-approve", "-input=false", "-no-color"), signal),
  };
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
