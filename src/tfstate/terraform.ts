import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { delimiter, isAbsolute, join } from "node:path";
import { UserFacingError } from "../user-facing";

// Running the Terraform CLI to read what only it can read: a working directory's state through its
// backend (`terraform state pull`, local or remote, e.g. pg) and a saved plan file (`terraform show
// -json`). The binary is found like everywhere else in gpurental: $TERRAFORM_BINARY_NAME, else
// `terraform`, else `tofu` on PATH.

/** Raised when the Terraform CLI is missing or a command of it fails; the message says which and where. */
export class TerraformCliError extends UserFacingError {
  constructor(message: string) {
    super(message);
    this.name = "TerraformCliError";
  }
}

/** Finds the CLI: $TERRAFORM_BINARY_NAME, else `terraform`, else `tofu` on PATH. */
export function findTerraformBinary(env: NodeJS.ProcessEnv): string {
  const candidates = env.TERRAFORM_BINARY_NAME ? [env.TERRAFORM_BINARY_NAME] : ["terraform", "tofu"];
  for (const name of candidates) {
    if (isAbsolute(name)) {
      if (existsSync(name)) return name;
      continue;
    }
    for (const dir of (env.PATH ?? "").split(delimiter)) {
      if (dir && existsSync(join(dir, name))) return join(dir, name);
    }
  }
  throw new TerraformCliError(
    `Reading this source needs the Terraform CLI, and none of ${candidates.join(", ")} was found${env.TERRAFORM_BINARY_NAME ? "" : " on PATH"} (set TERRAFORM_BINARY_NAME to the binary to use).`,
  );
}

/** What one CLI command printed. */
export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the Terraform CLI in `cwd` with `env` (TF_IN_AUTOMATION and TF_INPUT=0 added) and collects its output. */
export function runTerraform(
  args: readonly string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
): Promise<CliResult> {
  const binary = findTerraformBinary(env);
  return new Promise((resolve, reject) => {
    const child = spawn(binary, [...args], {
      cwd,
      env: { ...env, TF_IN_AUTOMATION: "1", TF_INPUT: "0" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on("data", (c: Buffer) => out.push(c));
    child.stderr.on("data", (c: Buffer) => err.push(c));
    child.on("error", (e) =>
      reject(new TerraformCliError(`cannot run ${binary} ${args.join(" ")} in ${cwd}: ${e.message}`)),
    );
    child.on("close", (code) =>
      resolve({
        code,
        stdout: Buffer.concat(out).toString("utf8"),
        stderr: Buffer.concat(err).toString("utf8"),
      }),
    );
  });
}

/** ANSI colour sequences, which Terraform prints in errors of commands without -no-color. */
const ANSI = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, "g");

/** The first lines of Terraform's error output, without colours and box drawing, for an error message. */
export function terraformErrorText(stderr: string, maxLines = 8): string {
  const lines = stderr
    .split("\n")
    .map((l) =>
      l
        .replace(ANSI, "")
        .replace(/^[│╷╵]\s?/u, "")
        .trimEnd(),
    )
    .filter((l) => l.trim() !== "");
  return lines.slice(0, maxLines).join("\n  ");
}

/** Runs a command that must succeed; throws a TerraformCliError naming the command, the directory and Terraform's words. */
export async function terraformOk(
  args: readonly string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
  hint = "",
): Promise<string> {
  const r = await runTerraform(args, cwd, env);
  if (r.code !== 0) {
    throw new TerraformCliError(
      `\`terraform ${args.join(" ")}\` in ${cwd} failed (exit ${r.code}):\n  ${terraformErrorText(r.stderr) || "(no output)"}${hint ? `\n${hint}` : ""}`,
    );
  }
  return r.stdout;
}
