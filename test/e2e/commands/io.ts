import { join } from "node:path";
import type { CommandIO } from "../../../src/cli/io";
import { runProcess } from "../../../src/testing/child-process";
import type { RunResult } from "../harness";

// In-process IO for the report commands (strays, plan-report), so a test sees what a person would
// and scripts the terminal, and a runner for the built `gpurental` binary for the exit codes as a
// shell sees them.

/** A CommandIO that collects output and answers questions from a script. */
export interface TestIO extends CommandIO {
  out: string;
  err: string;
  questions: string[];
}

/** Builds a TestIO; `answers` are given to `ask` in order (undefined: end of input). */
export function testIO(
  env: NodeJS.ProcessEnv,
  cwd: string,
  opts: { interactive?: boolean; answers?: (string | undefined)[]; stdin?: string } = {},
): TestIO {
  const answers = [...(opts.answers ?? [])];
  const io: TestIO = {
    out: "",
    err: "",
    questions: [],
    stdout: (t) => {
      io.out += t;
    },
    stderr: (t) => {
      io.err += t;
    },
    env,
    cwd,
    interactive: opts.interactive ?? false,
    readStdin: async () => opts.stdin ?? "",
    ask: async (q) => {
      io.questions.push(q);
      return answers.shift();
    },
    now: () => Date.now(),
  };
  return io;
}

const BIN = join(__dirname, "..", "..", "..", "bin", "gpurental");

/** Runs the built `gpurental` binary (dist/, made by `npm run build`) with exactly `env`. */
export function runBinary(args: readonly string[], env: NodeJS.ProcessEnv, cwd: string): Promise<RunResult> {
  return runProcess(process.execPath, [BIN, ...args], { cwd, env });
}
