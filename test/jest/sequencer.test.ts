import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

// The run's order (sequencer.js): the longest suites first, from Jest's cache of the last run when
// it has one and from the committed estimates on a fresh clone; the rest by size.

const LongestFirst = require("./sequencer.js") as {
  new (): {
    sort(tests: FakeTest[]): FakeTest[];
    cacheResults(tests: FakeTest[], results: unknown): void;
  };
  ESTIMATES: Record<string, number>;
};

const ROOT = join(__dirname, "..", "..");

interface FakeTest {
  path: string;
  duration?: number;
  context: { config: Record<string, unknown>; hasteFS: { getSize(path: string): number } };
}

describe("the test sequencer", () => {
  let cacheDirectory: string;
  let tests: (files: [string, number][]) => FakeTest[];

  beforeEach(() => {
    cacheDirectory = mkdtempSync(join(tmpdir(), "sequencer-test-"));
    const context = {
      config: { rootDir: ROOT, cacheDirectory, id: "sequencer-test", cache: false, haste: {} },
      hasteFS: { getSize: (p: string) => sizes.get(p) ?? 0 },
    };
    const sizes = new Map<string, number>();
    tests = (files) =>
      files.map(([file, size]) => {
        sizes.set(join(ROOT, file), size);
        return { path: join(ROOT, file), context };
      });
  });
  afterEach(() => rmSync(cacheDirectory, { recursive: true, force: true }));

  const names = (sorted: FakeTest[]) => sorted.map((t) => t.path.slice(ROOT.length + 1));

  it("estimates only files that exist", () => {
    for (const file of Object.keys(LongestFirst.ESTIMATES))
      expect([file, existsSync(join(ROOT, file))]).toEqual([file, true]);
  });

  it("starts the estimated longest suites first on a fresh clone, then the rest by size", () => {
    const sorted = new LongestFirst().sort(
      tests([
        ["src/api/small.test.ts", 10],
        ["test/e2e/resources/lifecycle.e2e.test.ts", 5],
        ["src/api/big.test.ts", 900],
        ["test/cdktf/demo.e2e.test.ts", 1],
      ]),
    );
    expect(names(sorted)).toEqual([
      "test/cdktf/demo.e2e.test.ts",
      "test/e2e/resources/lifecycle.e2e.test.ts",
      "src/api/big.test.ts",
      "src/api/small.test.ts",
    ]);
  });

  it("prefers the durations of the last run, and a file that failed then goes first", () => {
    const sequencer = new LongestFirst();
    const files = tests([
      ["test/cdktf/demo.e2e.test.ts", 1],
      ["test/e2e/resources/lifecycle.e2e.test.ts", 1],
      ["src/api/small.test.ts", 1],
      ["src/api/big.test.ts", 1],
    ]);
    const result = (path: string, seconds: number, failing = 0) => ({
      testFilePath: join(ROOT, path),
      numFailingTests: failing,
      perfStats: { runtime: seconds * 1000 },
    });
    sequencer.cacheResults(files, {
      testResults: [
        result("test/cdktf/demo.e2e.test.ts", 20),
        result("test/e2e/resources/lifecycle.e2e.test.ts", 90),
        result("src/api/small.test.ts", 1, 1),
      ],
    });
    expect(names(sequencer.sort(files))).toEqual([
      "src/api/small.test.ts",
      "test/e2e/resources/lifecycle.e2e.test.ts",
      "test/cdktf/demo.e2e.test.ts",
      "src/api/big.test.ts",
    ]);
  });
});
