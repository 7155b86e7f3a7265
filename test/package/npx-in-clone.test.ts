import { execFile } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { version } from "../../src/version";

// The README's form of the command, `npx --no -- gpurental ...`, run inside this clone: npm finds
// `gpurental` among the bins of the clone's own package.json and installs the clone into its npx
// cache as a link to run it, even with --no. The command works as written, `--help` included (the
// form without `--` hands --help to npm), and removes that cache entry when it ends.

jest.setTimeout(120_000);

const run = promisify(execFile);
const ROOT = join(__dirname, "..", "..");
let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "gpurental-npx-"));
  for (const sub of ["home", "tmp"]) mkdirSync(join(dir, sub));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const npx = (args: string[]) =>
  run("npx", args, {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      HOME: join(dir, "home"),
      TMPDIR: join(dir, "tmp"),
      npm_config_cache: join(dir, "cache"),
      npm_config_offline: "true",
      npm_config_update_notifier: "false",
    },
  });

test("`npx --no -- gpurental` works as the README writes it, and leaves no npx cache entry behind", async () => {
  expect((await npx(["--no", "--", "gpurental", "--version"])).stdout.trim()).toBe(version);
  const help = (await npx(["--no", "--", "gpurental", "--help"])).stdout;
  expect(help).toContain("Usage: gpurental [options] [command]");
  expect(help).toContain("demo [options]");
  const npxDir = join(dir, "cache", "_npx");
  expect(existsSync(npxDir) ? readdirSync(npxDir) : []).toEqual([]);
  expect(readdirSync(join(dir, "home"))).toEqual([]);
});
