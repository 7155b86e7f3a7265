// The Jest configuration of mutation runs (stryker.config.js): the fast unit and contract test
// files of the mutated modules, nothing that runs terraform, cdktf, a built dist/ or a child
// process of its own. Stryker runs only the tests that cover each mutant.
const base = require("./jest.config");

/** @type {import('jest').Config} */
module.exports = {
  ...base,
  testMatch: [
    "<rootDir>/src/api/*.test.ts",
    "<rootDir>/src/plugin/log.test.ts",
    "<rootDir>/src/plugin/masked-service.test.ts",
    "<rootDir>/src/resources/*.test.ts",
    "<rootDir>/src/framework/*.test.ts",
    "<rootDir>/src/fake-backend/*.test.ts",
    "<rootDir>/src/journal/*.test.ts",
    "<rootDir>/src/plan-report/*.test.ts",
    "<rootDir>/src/cli/strays.test.ts",
    "<rootDir>/test/contract/*.test.ts",
  ],
  testPathIgnorePatterns: [
    ...base.testPathIgnorePatterns,
    // Child processes killed mid-write and a bundled CLI: minutes per mutant, and they test the
    // state file and the command line, not the mutated logic.
    "/test/contract/persistence\\.test\\.ts$",
    "/test/contract/cli\\.test\\.ts$",
  ],
  // No cdktf matchers and no dist/ build here.
  setupFilesAfterEnv: [],
  globalSetup: undefined,
};
