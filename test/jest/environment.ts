// Jest's test environment: Node's, with the provider's log lines held back unless a test fails.
// Code under test logs hclog JSON lines to stderr (src/log.ts: the API client's failed attempts,
// refusals and retries at warn, the journal, the key cleanup), and Jest passes stderr straight to
// the terminal: a whole run printed some forty such lines between the results, each of them a
// test going as planned. Here the lines a test writes are kept and printed under its name only
// when it fails; those written outside a test (beforeAll, afterAll) are printed at the end of the
// file when one of its tests failed or a hook did.
//
// Only whole hclog lines are held; any other stderr output (a suite's one line saying why it is
// skipped, Node's warnings) passes through. A test that spies on process.stderr.write (the
// logger's own tests, src/testing/key-journal.ts) replaces this wrapper for its duration and so
// sees every line first. Child processes (terraform, the provider) write to their own stderr,
// which the tests read or collect: nothing of theirs comes through here.
import type { Circus } from "@jest/types";
import { TestEnvironment } from "jest-environment-node";

/** A record as src/log.ts writes it: `{"@level":"warn","@message":...}`, one per line. */
const HCLOG_LINE = /^\{"@level":"(trace|debug|info|warn|error)","@message":/;

/** Whether `text` is nothing but hclog lines, each ended by a newline. */
export function isHclogText(text: string): boolean {
  if (!text.endsWith("\n")) return false;
  return text
    .slice(0, -1)
    .split("\n")
    .every((line) => HCLOG_LINE.test(line));
}

/** A test's name as Jest reports it: its describe blocks' names, then its own. */
function fullName(test: Circus.TestEntry): string {
  const names = [test.name];
  for (let block = test.parent; block?.parent; block = block.parent) names.unshift(block.name);
  return names.join(" ");
}

type Write = NodeJS.WriteStream["write"];

/** Node's environment, holding back hclog lines on stderr until a test fails. */
export default class HeldLogsEnvironment extends TestEnvironment {
  private heldInTest: string[] = [];
  private heldOutside: string[] = [];
  private inTest = false;
  private failed = false;
  private original?: Write;

  override async setup(): Promise<void> {
    await super.setup();
    const stderr = this.global.process.stderr as NodeJS.WriteStream;
    const original = stderr.write;
    this.original = original;
    const hold = (text: string) => (this.inTest ? this.heldInTest : this.heldOutside).push(text);
    stderr.write = function (this: NodeJS.WriteStream, chunk: unknown, ...rest: unknown[]): boolean {
      const text =
        typeof chunk === "string"
          ? chunk
          : chunk instanceof Uint8Array
            ? Buffer.from(chunk).toString()
            : undefined;
      if (text === undefined || !isHclogText(text))
        return (original as (...args: unknown[]) => boolean).call(this, chunk, ...rest);
      hold(text);
      const callback = rest.find((r) => typeof r === "function") as (() => void) | undefined;
      if (callback) process.nextTick(callback);
      return true;
    } as Write;
  }

  override async teardown(): Promise<void> {
    if (this.failed && this.heldOutside.length > 0)
      this.print("outside its tests (its hooks)", this.heldOutside);
    if (this.original) (this.global.process.stderr as NodeJS.WriteStream).write = this.original;
    await super.teardown();
  }

  handleTestEvent(event: Circus.Event, state: Circus.State): void {
    if (event.name === "test_start") {
      this.inTest = true;
      this.heldInTest = [];
    } else if (event.name === "test_done") {
      this.inTest = false;
      if (event.test.errors.length > 0) {
        this.failed = true;
        if (this.heldInTest.length > 0)
          this.print(`of the failed test "${fullName(event.test)}"`, this.heldInTest);
      }
      this.heldInTest = [];
    } else if (event.name === "run_finish" && state.unhandledErrors.length > 0) {
      this.failed = true;
    }
  }

  private print(whose: string, lines: string[]): void {
    this.original?.call(
      this.global.process.stderr,
      `\nLog lines ${whose}, held back while it ran (test/jest/environment.ts):\n${lines.join("")}\n`,
    );
  }
}
