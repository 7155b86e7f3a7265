/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: "node",
  transform: {
    "^.+\\.ts$": ["ts-jest", { tsconfig: "tsconfig.json", isolatedModules: true }],
  },
  testMatch: ["<rootDir>/src/**/*.test.ts", "<rootDir>/test/**/*.test.ts"],
  testPathIgnorePatterns: ["/node_modules/", "/dist/", "/cdktf.out/"],
  modulePathIgnorePatterns: ["<rootDir>/dist/"],
  testTimeout: 30000,
  setupFilesAfterEnv: ["<rootDir>/test/cdktf/setup.ts"],
  // Suites that run dist/ never judge a stale build: rebuilt first when a source is newer.
  globalSetup: "<rootDir>/test/build-if-stale.setup.js",
};
