// Jest's global setup and teardown: every run gets a temp directory of its own (TMPDIR, inherited
// by the workers and every program the tests start), and the teardown names whatever the tests
// left in it, fails the run if anything is there, and removes it. The exceptions: cdktf's Testing
// helpers create cdktf.outdir.* folders they never remove, which are cleared; and the folder the
// global setup fills for all suites (sharedDir: the provider build and mirror),
// which goes with the directory.
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** The variable that carries the run's temp directory from the setup to the teardown. */
const RUN_TMPDIR = "GPURENTAL_TEST_RUN_TMPDIR";

/** Left by cdktf's Testing.app()/Testing.synth(); nothing of ours. */
const THIRD_PARTY = /^cdktf\.outdir\./;

/** The folder of the run's temp directory that the global setup makes for every suite. */
const SHARED = "jest-shared";

/** The run's shared folder (made by setup), or undefined outside a run. */
export function sharedDir(): string | undefined {
  const dir = process.env[RUN_TMPDIR];
  return dir ? join(dir, SHARED) : undefined;
}

/** Global setup: a fresh temp directory for this run, in `parent` (the temp directory by default). */
export function setup(parent: string = tmpdir()): void {
  const dir = mkdtempSync(join(parent, "gpurental-jest-"));
  // As open as the temp directory it stands for (/tmp: everyone, sticky): servers that tests start
  // under another user (PostgreSQL refuses to run as root) must reach their folders in it.
  chmodSync(dir, statSync(parent).mode & 0o7777);
  process.env[RUN_TMPDIR] = dir;
  process.env.TMPDIR = dir;
  mkdirSync(join(dir, SHARED));
}

/** Global teardown: fails, naming them, when the tests left anything but cdktf's folders and the shared one. */
export function teardown(): void {
  const dir = process.env[RUN_TMPDIR];
  if (!dir) return;
  let left: string[] = [];
  try {
    left = readdirSync(dir).filter((name) => name !== SHARED && !THIRD_PARTY.test(name));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  if (left.length > 0) {
    throw new Error(
      `the tests left ${left.length} entr${left.length === 1 ? "y" : "ies"} in their temp directory: ${left.sort().join(", ")}. Tests must remove every temp file and folder they create (run one suite alone to find which).`,
    );
  }
}
