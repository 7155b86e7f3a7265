import type { Circus } from "@jest/types";
import HeldLogsEnvironment, { isHclogText } from "./environment";

// The environment every suite runs in holds back hclog lines and prints them only for a failed
// test. Here one is made by hand, over a stderr whose writes this test collects, and driven with
// the events Jest's runner sends it.

const line = (message: string) =>
  `{"@level":"warn","@message":"${message}","@module":"gpurental.api","@timestamp":"2026-11-28T20:05:45.485000Z"}\n`;

describe("which writes are held", () => {
  it.each([
    ["one hclog line", line("connection failed"), true],
    ["two in one write", `${line("a")}${line("b")}`, true],
    ["a line without its newline", line("a").trimEnd(), false],
    ["a suite's plain line", "test/e2e/examples-ci.e2e.test.ts skipped: no PostgreSQL\n", false],
    ["an hclog line with plain text after it", `${line("a")}plain\n`, false],
    ["JSON that is not hclog", '{"level":"warn","msg":"x"}\n', false],
  ])("%s", (_name, text, held) => {
    expect(isHclogText(text)).toBe(held);
  });
});

/** A test entry as the runner's events carry it, in a describe block. */
function testEntry(name: string, errors: unknown[] = []): Circus.TestEntry {
  const root = { name: "ROOT_DESCRIBE_BLOCK_NAME", parent: undefined };
  return { name, errors, parent: { name: "the client", parent: root } } as unknown as Circus.TestEntry;
}

const state = (unhandledErrors: unknown[] = []) => ({ unhandledErrors }) as unknown as Circus.State;

async function withEnvironment(
  run: (env: HeldLogsEnvironment, write: (text: string) => void) => void,
): Promise<string[]> {
  const written: string[] = [];
  const outer = process.stderr.write;
  process.stderr.write = ((chunk: string | Uint8Array) => {
    written.push(String(chunk));
    return true;
  }) as typeof process.stderr.write;
  try {
    const env = new HeldLogsEnvironment(
      {
        globalConfig: {},
        projectConfig: { testEnvironmentOptions: {}, globals: {}, fakeTimers: {} },
      } as unknown as ConstructorParameters<typeof HeldLogsEnvironment>[0],
      {} as ConstructorParameters<typeof HeldLogsEnvironment>[1],
    );
    await env.setup();
    const stderr = env.global.process.stderr as NodeJS.WriteStream;
    run(env, (text) => stderr.write(text));
    await env.teardown();
    // Torn down, stderr is the one it found.
    expect(stderr.write).toBe(process.stderr.write);
  } finally {
    process.stderr.write = outer;
  }
  return written;
}

it("drops the log lines of a test that passes and passes other output through", async () => {
  const written = await withEnvironment((env, write) => {
    const passing = testEntry("retries once");
    env.handleTestEvent({ name: "test_start", test: passing } as Circus.Event, state());
    write(line("connection failed"));
    write("a plain line\n");
    env.handleTestEvent({ name: "test_done", test: passing } as Circus.Event, state());
  });
  expect(written).toEqual(["a plain line\n"]);
});

it("prints the log lines of a failed test under its name, and the hooks' when a test failed", async () => {
  const written = await withEnvironment((env, write) => {
    write(line("in beforeAll"));
    const passing = testEntry("retries once");
    env.handleTestEvent({ name: "test_start", test: passing } as Circus.Event, state());
    write(line("of the passing test"));
    env.handleTestEvent({ name: "test_done", test: passing } as Circus.Event, state());
    const failing = testEntry("gives up", []);
    env.handleTestEvent({ name: "test_start", test: failing } as Circus.Event, state());
    write(line("gave up reaching the API"));
    failing.errors.push(new Error("expected 1 attempt") as unknown as Circus.TestError);
    env.handleTestEvent({ name: "test_done", test: failing } as Circus.Event, state());
  });
  const text = written.join("");
  expect(text).toContain('Log lines of the failed test "the client gives up"');
  expect(text).toContain(line("gave up reaching the API"));
  expect(text).toContain("Log lines outside its tests (its hooks)");
  expect(text).toContain(line("in beforeAll"));
  expect(text).not.toContain("of the passing test");
});

it("prints the hooks' log lines when an afterAll hook failed", async () => {
  const written = await withEnvironment((env, write) => {
    write(line("in afterAll"));
    env.handleTestEvent({ name: "run_finish" } as Circus.Event, state([new Error("afterAll failed")]));
  });
  expect(written.join("")).toContain(line("in afterAll"));
});
