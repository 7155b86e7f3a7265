// The Jest configuration of mutation runs (stryker.config.js): the unit and contract test files
// the selected groups name (GPURENTAL_MUTATION_TESTS, set by stryker.config.js), never a suite that
// runs terraform, cdktf, a built dist/ or child processes of its own.
const base = require("./jest.config");

const tests = JSON.parse(process.env.GPURENTAL_MUTATION_TESTS ?? "[]");
if (tests.length === 0)
  throw new Error("jest.mutate.config.js is run by `npm run mutate` (stryker.config.js)");

/** @type {import('jest').Config} */
module.exports = {
  ...base,
  testMatch: tests.map((t) => `<rootDir>/${t}`),
  // No cdktf matchers and no dist/ build here.
  setupFilesAfterEnv: [],
  globalSetup: undefined,
  globalTeardown: undefined,
};
