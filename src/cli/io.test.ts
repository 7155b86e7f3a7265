import { Writable } from "node:stream";
import { OutputGuard } from "./io";

// The command's outputs when they fail under it: a reader that stopped reading (EPIPE) and a full
// disk (ENOSPC). Nothing throws, nothing more is written to a failed output, and the end of the
// command says what it must. The built command under a closed pipe and /dev/full:
// test/e2e/commands/output-streams.e2e.test.ts.

/** A stream that takes `ok` writes, then fails every write with `code`. */
function failingAfter(ok: number, code: string): Writable & { written: string[] } {
  const written: string[] = [];
  const w = new Writable({
    decodeStrings: false,
    write(chunk: string, _enc, cb) {
      if (written.length < ok) {
        written.push(chunk);
        cb();
      } else {
        cb(Object.assign(new Error(`${code}: failed, write`), { code }));
      }
    },
  });
  return Object.assign(w, { written });
}

const tick = () => new Promise((r) => setImmediate(r));

test("a closed stdout is a quiet end: nothing thrown, nothing more written, the work's exit code", async () => {
  const out = failingAfter(1, "EPIPE");
  const err = failingAfter(100, "EPIPE");
  const g = new OutputGuard(out, err);
  g.write(g.stdout, "the report\n");
  g.write(g.stdout, "more\n");
  await tick();
  expect(out.written).toEqual(["the report\n"]);
  expect(g.stdout.failure?.code).toBe("EPIPE");
  expect(g.verdict()).toEqual({});
});

test("a closed stdout while the command goes on (a removal's progress) is told at the end, exit code unchanged", async () => {
  const out = failingAfter(0, "EPIPE");
  const err = failingAfter(100, "EPIPE");
  const g = new OutputGuard(out, err);
  g.write(g.stdout, "Destroying i-1\n");
  await tick();
  for (const line of ["Destroyed i-1\n", "Destroying i-2\n", "Destroyed i-2\n"]) g.write(g.stdout, line);
  await tick();
  expect(g.verdict()).toEqual({
    message:
      "gpurental: standard output was closed (EPIPE) while the command went on; it ran to its end, but 3 later writes were not shown.\n",
  });
});

test("a full disk under stdout is one line naming the output and the reason, and exit code 1", async () => {
  const out = failingAfter(0, "ENOSPC");
  const err = failingAfter(100, "EPIPE");
  const g = new OutputGuard(out, err);
  g.write(g.stdout, "the report\n");
  g.write(g.stdout, "more\n");
  await tick();
  expect(g.verdict()).toEqual({
    message:
      "gpurental: standard output could not be written: no space left on device (ENOSPC). The output is incomplete; the command itself ran to its end.\n",
    exitCode: 1,
  });
  // The line goes to stderr, which still works.
  g.write(g.stderr, g.verdict().message!);
  await tick();
  expect(err.written).toEqual([g.verdict().message]);
});

test("stderr failing is told nowhere; only a failure other than EPIPE changes the exit code", async () => {
  for (const [code, verdict] of [
    ["EPIPE", {}],
    ["EIO", { exitCode: 1 }],
  ] as const) {
    const out = failingAfter(100, "EPIPE");
    const err = failingAfter(0, code);
    const g = new OutputGuard(out, err);
    g.write(g.stderr, "error: something\n");
    g.write(g.stdout, "the report\n");
    await tick();
    expect(out.written).toEqual(["the report\n"]);
    expect(g.verdict()).toEqual(verdict);
  }
});

test("an error event of the stream itself (a write made past the guard, e.g. the help) crashes nothing", async () => {
  const out = failingAfter(0, "EPIPE");
  const g = new OutputGuard(out, failingAfter(100, "EPIPE"));
  out.write("help text");
  await tick();
  expect(g.stdout.failure?.code).toBe("EPIPE");
  g.write(g.stdout, "after\n");
  expect(g.stdout.dropped).toBe(1);
});

test("delivered says whether what was written so far reached the output", async () => {
  const fine = failingAfter(100, "EPIPE");
  const ok = new OutputGuard(fine, failingAfter(100, "EPIPE"));
  ok.write(ok.stdout, "import blocks\n");
  await expect(ok.delivered(ok.stdout)).resolves.toBe(true);

  const closed = failingAfter(0, "EPIPE");
  const g = new OutputGuard(closed, failingAfter(100, "EPIPE"));
  g.write(g.stdout, "import blocks\n");
  await expect(g.delivered(g.stdout)).resolves.toBe(false);
  await expect(g.delivered(g.stdout)).resolves.toBe(false);
});
