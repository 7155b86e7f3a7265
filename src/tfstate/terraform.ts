import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { delimiter, isAbsolute, join } from "node:path";
import { parseDuration } from "../framework/timeouts";
import { UserFacingError } from "../user-facing";

// Running the Terraform CLI to read what only it can read: a working directory's state through its
// backend (`terraform state pull`, local or remote, e.g. pg) and a saved plan file (`terraform show
// -json`). The binary is found like everywhere else in gpurental: $TERRAFORM_BINARY_NAME, else
// `terraform`, else `tofu` on PATH. A backend that never answers (unreachable, a lock held) would
// hold the command for ever: each run has a time limit, after which terraform and everything it
// started (its process group: the providers, a backend's helper) are stopped.

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

/** The environment variable that sets the time limit of one Terraform CLI run (a duration: `30m`). */
export const TERRAFORM_TIMEOUT_ENV = "GPURENTAL_TERRAFORM_TIMEOUT";

/** The time limit of one Terraform CLI run by default: generous, for a slow remote backend. */
export const DEFAULT_TERRAFORM_TIMEOUT_MS = 10 * 60_000;

/** How long terraform is given to stop after SIGTERM before its process group is killed. */
const STOP_GRACE_MS = 5_000;

/** The time limit of a run: $GPURENTAL_TERRAFORM_TIMEOUT, else the default; throws naming a bad value. */
export function terraformTimeout(env: NodeJS.ProcessEnv): number {
  const raw = env[TERRAFORM_TIMEOUT_ENV];
  if (raw === undefined || raw === "") return DEFAULT_TERRAFORM_TIMEOUT_MS;
  const ms = parseDuration(raw);
  if (!ms) {
    throw new TerraformCliError(
      `${TERRAFORM_TIMEOUT_ENV} must be a duration of at most 480h, such as 10m or 1h30m, got '${raw}'`,
    );
  }
  return ms;
}

/** A duration as set: 600000 -> "10m", 90000 -> "90s", 1500 -> "1500ms". */
function durationText(ms: number): string {
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000}h`;
  if (ms % 60_000 === 0) return `${ms / 60_000}m`;
  if (ms % 1000 === 0) return `${ms / 1000}s`;
  return `${ms}ms`;
}

/** Sends a signal to a child's whole process group (it leads one); a group already gone is fine. */
function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // Already gone.
  }
}

/** Options of {@link runTerraform}. */
export interface RunOptions {
  /** The time limit (default: {@link terraformTimeout} of the environment). */
  timeoutMs?: number;
  /** How long a stopped run is given after SIGTERM before SIGKILL (default 5 s). */
  graceMs?: number;
  /**
   * Ends this process as an interrupt would have, once the run is stopped and its failure has been
   * handled (default: the signal raised again, when nothing else listens for it).
   */
  raise?: (signal: NodeJS.Signals) => void;
}

/** What one CLI command printed. */
export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs the Terraform CLI in `cwd` with `env` (TF_IN_AUTOMATION and TF_INPUT=0 added) and collects
 * its output. It runs in a process group of its own, stopped whole (SIGTERM, then SIGKILL) when the
 * time limit passes, when this process is interrupted, or when it exits first.
 */
export function runTerraform(
  args: readonly string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
  opts: RunOptions = {},
): Promise<CliResult> {
  const binary = findTerraformBinary(env);
  const timeoutMs = opts.timeoutMs ?? terraformTimeout(env);
  const graceMs = opts.graceMs ?? STOP_GRACE_MS;
  return new Promise((resolve, reject) => {
    const child = spawn(binary, [...args], {
      cwd,
      env: { ...env, TF_IN_AUTOMATION: "1", TF_INPUT: "0" },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on("data", (c: Buffer) => out.push(c));
    child.stderr.on("data", (c: Buffer) => err.push(c));

    // Its own process group does not hear the terminal's Ctrl-C: an interrupt or a termination of
    // this process is passed on to it, as Terraform takes a Ctrl-C (it stops what it does and
    // exits), and waited for as long as a stop at the time limit is; a second one stops it at
    // once. Then the run fails, and once what awaited it has cleaned up after itself (a saved
    // plan's temporary copy), this process ends as the signal would have ended it.
    const SIGNALS: NodeJS.Signals[] = ["SIGINT", "SIGTERM", "SIGHUP"];
    const raise =
      opts.raise ??
      ((signal: NodeJS.Signals) => {
        if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
      });
    const interruptedBy = (signal: NodeJS.Signals) =>
      new TerraformCliError(`\`terraform ${args.join(" ")}\` in ${cwd} was interrupted (${signal})`);

    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    let killer: NodeJS.Timeout | undefined;
    /** Why the run is being stopped, and the signal to raise once it has failed. */
    let stopping: { error: TerraformCliError; raise?: NodeJS.Signals } | undefined;

    /** Ends a stopped run: what is left of its group (a provider, a helper) goes, and it fails. */
    const finish = () => {
      if (settled || !stopping) return;
      const { error, raise: signal } = stopping;
      signalGroup(child, "SIGKILL");
      settle();
      reject(error);
      if (signal) setImmediate(() => raise(signal));
    };
    /** Stops the run with `signal` to its group, and ends it when it exits or after the grace. */
    const stop = (error: TerraformCliError, signal: NodeJS.Signals, raiseAfter?: NodeJS.Signals) => {
      stopping = { error, ...(raiseAfter ? { raise: raiseAfter } : {}) };
      clearTimeout(timer);
      signalGroup(child, signal);
      // Terraform itself may be gone already, its group still holding the output open.
      if (child.exitCode !== null || child.signalCode !== null) return finish();
      child.once("exit", finish);
      killer = setTimeout(finish, graceMs);
    };
    const onSignal = (signal: NodeJS.Signals) => {
      if (stopping?.raise) {
        // A second interrupt: at once.
        finish();
      } else if (stopping) {
        // Interrupted while stopped at the time limit: the interrupt is what ends the command.
        stopping = { error: interruptedBy(signal), raise: signal };
        signalGroup(child, signal);
      } else {
        stop(interruptedBy(signal), signal, signal);
      }
    };
    const onExit = () => signalGroup(child, "SIGKILL");
    for (const s of SIGNALS) process.on(s, onSignal);
    process.on("exit", onExit);

    const settle = () => {
      settled = true;
      clearTimeout(timer);
      clearTimeout(killer);
      for (const s of SIGNALS) process.removeListener(s, onSignal);
      process.removeListener("exit", onExit);
    };

    timer = setTimeout(() => {
      if (settled || stopping) return;
      stop(
        new TerraformCliError(
          `\`terraform ${args.join(" ")}\` in ${cwd} did not finish within ${durationText(timeoutMs)} and was stopped: a backend that does not answer (unreachable, or a state lock that is never released) holds it. Set ${TERRAFORM_TIMEOUT_ENV} (e.g. 30m) for a slower one.`,
        ),
        "SIGTERM",
      );
    }, timeoutMs);

    child.on("error", (e) => {
      if (settled) return;
      settle();
      reject(new TerraformCliError(`cannot run ${binary} ${args.join(" ")} in ${cwd}: ${e.message}`));
    });
    child.on("close", (code) => {
      if (settled) return;
      // A stopped run fails, even when terraform exited before the stop was seen.
      if (stopping) return finish();
      settle();
      resolve({
        code,
        stdout: Buffer.concat(out).toString("utf8"),
        stderr: Buffer.concat(err).toString("utf8"),
      });
    });
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
  opts: RunOptions = {},
): Promise<string> {
  const r = await runTerraform(args, cwd, env, opts);
  if (r.code !== 0) {
    throw new TerraformCliError(
      `\`terraform ${args.join(" ")}\` in ${cwd} failed (exit ${r.code}):\n  ${terraformErrorText(r.stderr) || "(no output)"}${hint ? `\n${hint}` : ""}`,
    );
  }
  return r.stdout;
}
