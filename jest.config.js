const { availableParallelism } = require("node:os");

/** @type {import('jest').Config} */
module.exports = {
  // The slow suites mostly wait on their child processes (terraform, the provider, cdktf, the
  // fake backend's clock): one worker more than there are cores keeps the cores busy (on this
  // 2-core machine 3 workers ran the whole set in 210 s, 2 in 246 s, 1 in 432 s).
  maxWorkers: availableParallelism() + 1,
  // Node's, holding back the provider's hclog lines on stderr unless a test fails (see the file).
  testEnvironment: "<rootDir>/test/jest/environment.ts",
  // Each file is compiled on its own, without type checking (`npm run typecheck` does that once):
  // ts-jest reads that from `isolatedModules` in tsconfig.json.
  transform: {
    "^.+\\.ts$": ["ts-jest", { tsconfig: "tsconfig.json" }],
  },
  testMatch: ["<rootDir>/src/**/*.test.ts", "<rootDir>/test/**/*.test.ts"],
  testPathIgnorePatterns: ["/node_modules/", "/dist/", "/cdktf.out/"],
  // Stryker's sandboxes (npm run mutate) are copies of the project: not tests or modules of this run.
  modulePathIgnorePatterns: ["<rootDir>/dist/", "<rootDir>/.stryker-tmp/"],
  testTimeout: 30000,
  setupFilesAfterEnv: ["<rootDir>/test/cdktf/setup.ts"],
  // Suites that run dist/ never judge a stale build (rebuilt first when a source is newer); then each
  // run works in a temp directory of its own and fails when tests leave anything there.
  globalSetup: "<rootDir>/test/jest/global-setup.ts",
  globalTeardown: "<rootDir>/test/jest/global-teardown.ts",
  // Jest's transform cache would otherwise sit in the temp directory (jest_<uid>) for good.
  cacheDirectory: "<rootDir>/node_modules/.cache/jest",
  // The longest suites first, also on a fresh clone (see the file).
  testSequencer: "<rootDir>/test/jest/sequencer.js",
};
