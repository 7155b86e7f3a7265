import { createInterface } from "node:readline";

// What a report command touches outside itself, in one object, so the same code runs from the
// `gpurental` binary and, in tests, in process with captured output and a scripted terminal.

/** The outside world of a command. */
export interface CommandIO {
  stdout(text: string): void;
  stderr(text: string): void;
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** Whether standard input is a terminal a person can answer a question on. */
  interactive: boolean;
  /** The whole of standard input. */
  readStdin(): Promise<string>;
  /** Asks a question on stderr and reads one line of standard input; undefined at end of input. */
  ask(question: string): Promise<string | undefined>;
  /** Now, in ms. */
  now(): number;
}

/** The IO of the running process. */
export function processIO(): CommandIO {
  return {
    stdout: (t) => process.stdout.write(t),
    stderr: (t) => process.stderr.write(t),
    env: process.env,
    cwd: process.cwd(),
    interactive: process.stdin.isTTY === true,
    readStdin: async () => {
      const chunks: Buffer[] = [];
      for await (const c of process.stdin) chunks.push(Buffer.from(c as Buffer));
      return Buffer.concat(chunks).toString("utf8");
    },
    ask: (question) =>
      new Promise((resolve) => {
        const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
        let answered = false;
        rl.question(question, (answer) => {
          answered = true;
          rl.close();
          resolve(answer);
        });
        rl.on("close", () => {
          if (!answered) resolve(undefined);
        });
      }),
    now: () => Date.now(),
  };
}

/** Whether the environment says it is a CI job (CI=true, as every common CI system sets it). */
export function inCi(env: NodeJS.ProcessEnv): boolean {
  const v = (env.CI ?? "").toLowerCase();
  return v !== "" && v !== "false" && v !== "0";
}
