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
  /**
   * Resolves once what was written to stdout so far has been handed on: true when all of it was,
   * false when the output failed (a closed pipe, a full disk). For what must be delivered before
   * the command acts on it.
   */
  stdoutDelivered(): Promise<boolean>;
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

// What the command prints may find its output gone: a reader that stopped reading (`| head -c 5`,
// `| true`: EPIPE), a full disk (`> /dev/full`: ENOSPC). Either is an 'error' event on the stream,
// which, unhandled, ends the process with a stack trace wherever it is, a removal loop of `strays
// --destroy` included. Once for the command, each output gets a handler; after its first failure
// nothing more is written to it, and the command goes on to its end:
// - EPIPE on standard output is a quiet end, as a well-behaved command's under a pipe: the exit
//   code is the work's own. Only when the command printed more after the pipe closed (progress of
//   a removal) does one line on stderr say that it went on and what was not shown.
// - any other failure of standard output (ENOSPC, EIO) is one line on stderr at the end, naming the
//   output and the reason, and exit code 1 (the commands' failure code): the output is incomplete.
// - standard error failing cannot be told anywhere: it is written no more, and any failure but
//   EPIPE makes the exit code 1 too.

/** A stream the command writes to, as far as the guard needs one. */
export interface OutputStream {
  write(chunk: string, callback: (err?: Error | null) => void): boolean;
  on(event: "error", listener: (err: Error) => void): unknown;
}

/** One output of the command and what became of it. */
interface Output {
  /** "standard output" or "standard error". */
  name: string;
  stream: OutputStream;
  /** The first write failure; nothing is written after it. */
  failure?: NodeJS.ErrnoException;
  /** Writes not made, or lost, after the failure. */
  dropped: number;
}

/** A write failure in words: "no space left on device (ENOSPC)". */
function writeReason(err: NodeJS.ErrnoException): string {
  const words: Record<string, string> = {
    EPIPE: "the reader closed it",
    ENOSPC: "no space left on device",
    EDQUOT: "disk quota exceeded",
    EFBIG: "the file is too large",
    EIO: "an input/output error",
    EBADF: "it is not open",
    EACCES: "permission denied",
    ERR_STREAM_DESTROYED: "it was closed",
  };
  const code = typeof err.code === "string" ? err.code : undefined;
  const text =
    (code && words[code]) || err.message.replace(/^[A-Z][A-Z0-9_]*: /, "").replace(/, [a-z]+$/, "");
  return code ? `${text} (${code})` : text;
}

/**
 * The outputs of a command, guarded: writes that never throw, never crash the process, and stop
 * once an output failed; what to tell about it, and the exit code it calls for, at the end.
 */
export class OutputGuard {
  readonly stdout: Output;
  readonly stderr: Output;

  constructor(stdout: OutputStream, stderr: OutputStream) {
    this.stdout = { name: "standard output", stream: stdout, dropped: 0 };
    this.stderr = { name: "standard error", stream: stderr, dropped: 0 };
    for (const o of [this.stdout, this.stderr]) o.stream.on("error", (err) => this.failed(o, err));
  }

  private failed(o: Output, err: Error): void {
    if (o.failure) {
      // A write made before the failure was known, lost with it.
      if (err !== o.failure) o.dropped++;
      return;
    }
    o.failure = err as NodeJS.ErrnoException;
  }

  /** Writes `text` to an output, unless it has failed (then it is counted as not written). */
  write(o: Output, text: string): void {
    if (o.failure) {
      o.dropped++;
      return;
    }
    try {
      o.stream.write(text, (err) => {
        if (err) this.failed(o, err);
      });
    } catch (err) {
      this.failed(o, err as Error);
    }
  }

  /** Resolves once the writes made to `o` so far are done: true when none of them failed. */
  delivered(o: Output): Promise<boolean> {
    if (o.failure) return Promise.resolve(false);
    return new Promise((resolve) => {
      try {
        o.stream.write("", (err) => {
          if (err) this.failed(o, err);
          resolve(o.failure === undefined);
        });
      } catch (err) {
        this.failed(o, err as Error);
        resolve(false);
      }
    });
  }

  /** What the end of the command says about its outputs (one line for stderr, or none), and the exit code it calls for. */
  verdict(): { message?: string; exitCode?: number } {
    const out = this.stdout.failure;
    const err = this.stderr.failure;
    const broken = (f: NodeJS.ErrnoException | undefined) => f !== undefined && f.code !== "EPIPE";
    const exitCode = broken(out) || broken(err) ? 1 : undefined;
    let message: string | undefined;
    if (out && !err) {
      if (out.code !== "EPIPE") {
        message = `gpurental: ${this.stdout.name} could not be written: ${writeReason(out)}. The output is incomplete; the command itself ran to its end.\n`;
      } else if (this.stdout.dropped > 0) {
        message = `gpurental: ${this.stdout.name} was closed (EPIPE) while the command went on; it ran to its end, but ${this.stdout.dropped} later write${this.stdout.dropped === 1 ? " was" : "s were"} not shown.\n`;
      }
    }
    return { ...(message ? { message } : {}), ...(exitCode !== undefined ? { exitCode } : {}) };
  }
}

let guard: OutputGuard | undefined;

/**
 * Guards the process's stdout and stderr for the command, once: a failure of either never crashes
 * the process, and is told on stderr with its exit code when the process exits (see above).
 */
export function guardOutput(): OutputGuard {
  if (guard) return guard;
  const g = new OutputGuard(process.stdout, process.stderr);
  guard = g;
  process.on("exit", () => {
    const { message, exitCode } = g.verdict();
    if (message) g.write(g.stderr, message);
    if (exitCode !== undefined) process.exitCode = exitCode;
  });
  return g;
}

/** Writes to standard output through {@link shown}. */
export function printOut(text: string): void {
  const g = guardOutput();
  g.write(g.stdout, shown(text));
}

/** Writes to standard error through {@link shown}. */
export function printErr(text: string): void {
  const g = guardOutput();
  g.write(g.stderr, shown(text));
}

/** The IO of the running process. */
export function processIO(): CommandIO {
  guardOutput();
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
    stdoutDelivered: () => {
      const g = guardOutput();
      return g.delivered(g.stdout);
    },
  };
}

/** Whether the environment says it is a CI job (CI=true, as every common CI system sets it). */
export function inCi(env: NodeJS.ProcessEnv): boolean {
  const v = (env.CI ?? "").toLowerCase();
  return v !== "" && v !== "false" && v !== "0";
}
