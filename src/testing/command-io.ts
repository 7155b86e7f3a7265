import type { CommandIO } from "../cli/io";

// In-process IO for the report commands (strays, plan-report, journal), so a test sees what a
// person would and scripts the terminal.

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
  opts: {
    interactive?: boolean;
    answers?: (string | undefined)[];
    stdin?: string;
    /** Standard output is gone (a closed pipe): what is written to it is not delivered. */
    stdoutClosed?: boolean;
  } = {},
): TestIO {
  const answers = [...(opts.answers ?? [])];
  const io: TestIO = {
    out: "",
    err: "",
    questions: [],
    stdout: (t) => {
      if (!opts.stdoutClosed) io.out += t;
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
    stdoutDelivered: async () => !opts.stdoutClosed,
  };
  return io;
}
