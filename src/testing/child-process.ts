// A child process whose output a test collects: started with `startProcess` (the process, its
// output so far, its exit) or run to its end with `runProcess`.
import { type ChildProcess, spawn } from "node:child_process";

/** How the process is started. */
export interface ProcessOptions {
  cwd?: string;
  /** Its whole environment; without one, this process's. */
  env?: NodeJS.ProcessEnv;
  /**
   * Written to its stdin, which is then closed (a process that exits without reading it is no
   * error); without it, stdin is /dev/null.
   */
  input?: string;
  /** It leads a process group of its own (detached): a signal to `-pid` reaches all it started. */
  processGroup?: boolean;
  /** Killed with SIGKILL (its whole group with `processGroup`) when not ended after this long. */
  timeoutMs?: number;
}

/** How the process ended. */
export interface ProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** How the process ended and all it wrote. */
export interface ProcessResult extends ProcessExit {
  stdout: string;
  stderr: string;
  /** stdout and stderr together, in the order they arrived. */
  output: string;
}

/** A started process. */
export interface StartedProcess {
  child: ChildProcess;
  /** What it wrote on stdout so far. */
  stdout(): string;
  /** What it wrote on stderr so far. */
  stderr(): string;
  /** What it wrote on both so far, in the order it arrived. */
  output(): string;
  /**
   * Its exit, while its output may still be arriving (also from a process it left running, which
   * holds its stdout or stderr); rejects when it cannot be started.
   */
  exited: Promise<ProcessExit>;
  /** Its exit once its stdout and stderr are closed, with all it wrote; rejects when it cannot be started. */
  result: Promise<ProcessResult>;
}

/** Starts `command` with `args`; stdout and stderr are collected as UTF-8 text. */
export function startProcess(
  command: string,
  args: readonly string[],
  opts: ProcessOptions = {},
): StartedProcess {
  const child = spawn(command, [...args], {
    cwd: opts.cwd,
    env: opts.env,
    detached: opts.processGroup ?? false,
    stdio: [opts.input === undefined ? "ignore" : "pipe", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  let output = "";
  child.stdout?.setEncoding("utf8").on("data", (text: string) => {
    stdout += text;
    output += text;
  });
  child.stderr?.setEncoding("utf8").on("data", (text: string) => {
    stderr += text;
    output += text;
  });
  if (opts.input !== undefined && child.stdin) {
    child.stdin.on("error", () => {});
    child.stdin.end(opts.input);
  }
  const timer =
    opts.timeoutMs === undefined
      ? undefined
      : setTimeout(() => {
          try {
            if (opts.processGroup && child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
            else child.kill("SIGKILL");
          } catch {
            // already gone
          }
        }, opts.timeoutMs);
  const exited = new Promise<ProcessExit>((resolve, reject) => {
    child.on("error", reject);
    child.on("exit", (code, signal) => resolve({ code, signal }));
  });
  const result = new Promise<ProcessResult>((resolve, reject) => {
    child.on("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, output });
    });
  });
  // Marked as handled: a test may await only one of the two, or neither.
  exited.catch(() => {});
  result.catch(() => {});
  return { child, stdout: () => stdout, stderr: () => stderr, output: () => output, exited, result };
}

/** Runs `command` with `args` to its end: its exit once its output is closed, with all it wrote. */
export function runProcess(
  command: string,
  args: readonly string[],
  opts: ProcessOptions = {},
): Promise<ProcessResult> {
  return startProcess(command, args, opts).result;
}
