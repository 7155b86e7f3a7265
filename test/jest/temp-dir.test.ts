import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setup, sharedDir, teardown } from "./temp-dir";

// The run's temp directory: what the tests leave in it is named and fails the run; cdktf's own
// leftovers and the global setup's shared folder are cleared; the directory goes either way. Runs
// the hooks in a scratch parent so the real run's directory is left alone (process.env here is
// Jest's copy, restored after each test).

describe("the test run's temp directory", () => {
  const saved = { TMPDIR: process.env.TMPDIR, RUN: process.env.GPURENTAL_TEST_RUN_TMPDIR };
  let parent: string;

  beforeEach(() => {
    parent = mkdtempSync(join(tmpdir(), "temp-dir-test-"));
  });
  afterEach(() => {
    process.env.TMPDIR = saved.TMPDIR;
    process.env.GPURENTAL_TEST_RUN_TMPDIR = saved.RUN;
    rmSync(parent, { recursive: true, force: true });
  });

  it("clears cdktf's folders and the shared folder, and passes when nothing else is left", () => {
    setup(parent);
    const dir = process.env.TMPDIR!;
    expect(dir.startsWith(join(parent, "gpurental-jest-"))).toBe(true);
    expect(statSync(dir).mode & 0o7777).toBe(statSync(parent).mode & 0o7777);
    mkdirSync(join(dir, "cdktf.outdir.abc123"));
    expect(sharedDir()).toBe(join(dir, "jest-shared"));
    writeFileSync(join(sharedDir()!, "shared.json"), "{}");
    teardown();
    expect(readdirSync(parent)).toEqual([]);
  });

  it("names what the tests left, fails, and still removes the directory", () => {
    setup(parent);
    const dir = process.env.TMPDIR!;
    writeFileSync(join(dir, "plugin0123.sock"), "");
    mkdirSync(join(dir, "gpurental-e2e-x1"));
    expect(() => teardown()).toThrow(
      "the tests left 2 entries in their temp directory: gpurental-e2e-x1, plugin0123.sock",
    );
    expect(existsSync(dir)).toBe(false);
  });
});
