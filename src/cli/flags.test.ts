import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Command } from "commander";
import { runCommandInProcess } from "../testing/command-run";
import { buildProgram } from "./main";

// No flag or argument of the `gpurental` command means anything by an empty value: each is refused
// before the command does anything, naming what was typed, with exit code 1. Read as given, an
// empty directory is the current one (`example hcl ""` would write there) and an empty host every
// interface (the fake backend's demo credentials and control API on the network).

const work = mkdtempSync(join(tmpdir(), "gpurental-cli-flags-"));
const cwd = process.cwd();
beforeAll(() => process.chdir(work));
afterAll(() => {
  process.chdir(cwd);
  rmSync(work, { recursive: true, force: true });
});

const run = runCommandInProcess;

test.each([
  [["provider", "resident", "status", "--dir", ""], "--dir"],
  [["provider", "resident", "stop", "--dir", ""], "--dir"],
  [["provider", "install", "--dir", ""], "--dir"],
  [["provider", "install", "--source", "registry.terraform.io/x/gpurental", ""], "--source"],
  [["provider", "install", "--version", ""], "--version"],
  [["demo", "--work-dir", ""], "--work-dir"],
  [["fake-backend", "--host", ""], "--host"],
  [["fake-backend", "--state-file", ""], "--state-file"],
  [["fake-backend", "--seed", "demo", "--credentials", ""], "--credentials"],
  [["fake-backend", "--tls-name", "a.example", "--tls-name", ""], "--tls-name"],
  [["fake-backend", "--tls-cert", "", "--tls-key", "k.pem"], "--tls-cert"],
  [["journal", "import", "--journal-dir", ""], "--journal-dir"],
  [["journal", "export", "--journal-dir", ""], "--journal-dir"],
  [["strays", ".", "--output-import", ""], "--output-import"],
  [["strays", ".", "--base-url", ""], "--base-url"],
  [["plan-report", "plan.json", "--token-file", ""], "--token-file"],
])("%j is refused naming %s", async (args, flag) => {
  const { printed, code } = await run(args);
  expect(code).toBe(1);
  // A flag whose own parser refuses it (fake-backend's --host) says so in commander's words.
  expect(printed).toMatch(
    new RegExp(
      `^error: (option '${flag} <\\w+>' argument '' is invalid\\. )?${flag} must not be empty[:\\n]`,
    ),
  );
  expect(readdirSync(work)).toEqual([]);
});

test.each([
  [["example", "hcl", ""], "<dir>"],
  [["journal", "import", ""], "<dir>"],
  [["journal", "export", ""], "<dir>"],
  [["strays", "./a", ""], "<sources>"],
  [["plan-report", ""], "<plan>"],
])("%j is refused naming the argument %s", async (args, name) => {
  const { printed, code } = await run(args);
  expect(code).toBe(1);
  expect(printed).toMatch(new RegExp(`^error: the argument ${name} must not be empty\\n`));
  // Nothing written where the command runs.
  expect(existsSync(join(work, "main.tf"))).toBe(false);
  expect(readdirSync(work)).toEqual([]);
});

// Exit code 1 is a failed command, bad flags and arguments included (src/cli/README.md); 2 means
// something only to strays (strays found) and plan-report (a gate tripped), whose callers gate on
// it, so no refusal of a flag may take it.
describe("a bad flag or argument exits 1, on every command", () => {
  /** Every command that runs an action, as the words that name it. */
  async function commandPaths(): Promise<string[][]> {
    const paths: string[][] = [];
    const walk = (cmd: Command, path: string[]) => {
      for (const sub of cmd.commands) {
        if (sub.commands.length > 0) walk(sub, [...path, sub.name()]);
        else paths.push([...path, sub.name()]);
      }
    };
    walk(await buildProgram(), []);
    return paths;
  }

  test("an unknown flag", async () => {
    const paths = await commandPaths();
    expect(paths.length).toBeGreaterThanOrEqual(9);
    for (const path of paths) {
      const { printed, code } = await run([...path, "--bogus"]);
      expect({ path, code }).toEqual({ path, code: 1 });
      expect(printed).toContain("error: unknown option '--bogus'");
    }
  });

  test.each([
    [["demo", "--port", "99999"], "--port must be a number from 0 to 65535"],
    [["demo", "--cdk", "x"], "'--cdk <cdk>' argument 'x' is invalid"],
    [["fake-backend", "--port", "99999"], "--port must be an integer from 0 to 65535"],
    [["fake-backend", "--seed", "x"], "'--seed <seed>' argument 'x' is invalid"],
    [["example", "x", "dir"], 'unknown example "x"'],
    [["example"], "missing required argument 'name'"],
    [["strays", ".", "--wait-timeout", "x"], "--wait-timeout"],
    [["plan-report", "plan.json", "--max-burn-per-hour", "x"], "--max-burn-per-hour"],
    [["plan-report", "plan.json", "--fail-on", "x"], "--fail-on"],
    [["provider", "resident"], "Usage: gpurental provider resident"],
    [["nonesuch"], "unknown command 'nonesuch'"],
  ])("%j", async (args, message) => {
    const { printed, code } = await run(args);
    expect(code).toBe(1);
    expect(printed).toContain(message);
    expect(readdirSync(work)).toEqual([]);
  });
});
