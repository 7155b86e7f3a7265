import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { UNSAFE_CHARACTERS } from "../../display";
import { ChildRunner } from "./runner";

// --verbose relays a child's whole output: escaped line by line, whatever the child wrote and however
// its writes were cut, while the log keeps the bytes as they came.

let dir: string;
let runner: ChildRunner;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "gpurental-runner-"));
  runner = new ChildRunner();
});
afterEach(() => {
  runner.dispose();
  rmSync(dir, { recursive: true, force: true });
});

async function runVerbose(script: string): Promise<{ shown: string; lines: string[]; log: string }> {
  const out = new PassThrough();
  let shown = "";
  out.on("data", (c: Buffer) => {
    shown += c.toString("utf8");
  });
  const lines: string[] = [];
  const log = join(dir, "run.log");
  const code = await runner.run(
    { command: process.execPath, argv: ["-e", script], cwd: dir, env: { PATH: process.env.PATH }, log },
    { verbose: true, out, timeoutMs: 30_000 },
    (line) => lines.push(line),
  );
  expect(code).toBe(0);
  return { shown, lines, log: readFileSync(log, "utf8") };
}

test("a child's control sequences reach the terminal escaped, and the log as they were", async () => {
  const evil = "\u001b]0;PWNED\u0007\u001b[2J\u009b2J\u202e";
  const { shown, lines, log } = await runVerbose(
    `process.stdout.write(${JSON.stringify(`plan ${evil}\r\nlast ${evil}`)}); process.stderr.write("Error: refused\\n\\tat main.go:12\\n");`,
  );
  expect(shown.replace(/[\n\t]/g, "")).not.toMatch(new RegExp(`[${UNSAFE_CHARACTERS}]`));
  expect(shown).toContain("plan \\x1b]0;PWNED\\x07\\x1b[2J\\x9b2J\\u202e\n");
  expect(shown).toContain("last \\x1b]0;PWNED");
  expect(shown).toContain("Error: refused\n");
  // A tab (a Go stack trace's) is no command: kept.
  expect(shown).toContain("\tat main.go:12\n");
  expect(lines).toContain("Error: refused");
  expect(log).toContain(evil);
});

test("a character and an escape sequence split across writes are neither cut nor let through", async () => {
  // "é" is two bytes in UTF-8 and ESC [ 2 J four: each is written in two halves, apart in time.
  const { shown, lines } = await runVerbose(
    [
      `const b = Buffer.from("caf\\u00e9 \\u001b[2J done\\n", "utf8");`,
      "process.stdout.write(b.subarray(0, 4));",
      "setTimeout(() => { process.stdout.write(b.subarray(4, 8)); setTimeout(() => process.stdout.write(b.subarray(8)), 50); }, 50);",
    ].join("\n"),
  );
  expect(lines).toEqual(["caf\u00e9 \u001b[2J done"]);
  expect(shown).toBe("caf\u00e9 \\x1b[2J done\n");
});
