import { createInterface } from "node:readline";
import { terminalText } from "../display";

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

/**
 * What the command prints, as it reaches the terminal: its own words with the values from outside
 * in them (flags, paths, file contents, the API's answers, the system's messages), every control
 * character but line feeds and tabs, and every bidirectional override, shown escaped
 * (src/display.ts). Values are escaped and bounded where they are put in; this is the last net.
 */
export function shown(text: string): string {
  return terminalText(text, { multiline: true, maxLength: Number.POSITIVE_INFINITY });
}

/** Writes to standard output through {@link shown}. */
export function printOut(text: string): void {
  process.stdout.write(shown(text));
}

/** Writes to standard error through {@link shown}. */
export function printErr(text: string): void {
  process.stderr.write(shown(text));
}

/** The IO of the running process. */
export function processIO(): CommandIO {
  return {
    stdout: printOut,
    stderr: printErr,
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
