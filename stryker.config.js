// Mutation testing (`npm run mutate`, not part of `npm test`) of the code where a surviving mutant
// means a leaked secret, a lost or duplicated instance, or a wrong refusal. Scores and the
// survivors left standing are recorded in docs/development.md, "Mutation testing".
//
// `npm run mutate` (scripts/mutate.js) runs each group below on its own and prints the score of
// every file; `npm run mutate -- <group>...` runs only those groups. Each group names the fast unit and contract test files that test its code
// (jest.mutate.config.js runs those, never a terraform, cdktf or dist/ suite), and each mutant runs
// only the tests among them that reach it (coverageAnalysis perTest).

/** Each group: the files (or line ranges) it mutates and the test files that test them. */
const GROUPS = {
  // Credential redaction and log masking: the target is no survivor at all.
  redaction: {
    mutate: ["src/api/redact.ts", "src/plugin/log.ts", "src/plugin/masked-service.ts"],
    tests: [
      "src/api/redact.test.ts",
      "src/api/client.credentials.test.ts",
      "src/plugin/log.test.ts",
      "src/plugin/masked-service.test.ts",
      "src/cli/strays.test.ts",
    ],
  },
  // Refusal mapping: codes to attributes, explanations from the carried fields, other errors.
  refusals: {
    mutate: ["src/resources/refusals.ts"],
    tests: ["src/resources/refusals.test.ts"],
  },
  // The plan-time deploy checks (also what offer selection judges each market offer by).
  "plan-checks": {
    mutate: ["src/resources/plan-checks.ts"],
    tests: ["src/resources/plan-checks.test.ts", "src/resources/offer-selection.test.ts"],
  },
  // The fake backend's billing: the hourly burn and the balance rule (deploy and start), billing
  // segments opened and closed by status, accrual into hourly ledger rows, top-ups, and the
  // balance events (auto-stop at ¥0, auto-destroy after 24 h at or below -¥35). The engine is one
  // large class: these ranges must follow it when it changes (or it is split by concern).
  "fake-billing": {
    mutate: [
      "src/fake-backend/engine.ts:400-431", // setBalance, topUp
      "src/fake-backend/engine.ts:743-769", // hourly burn, the balance rule
      "src/fake-backend/engine.ts:872-874", // deploy: the balance rule (7.2 row 13)
      "src/fake-backend/engine.ts:981-985", // start: the balance rule
      "src/fake-backend/engine.ts:1143-1165", // billing segments opened and closed by status
      "src/fake-backend/engine.ts:1263-1468", // accrual, ledger rows, balance events, auto-stop/-destroy
    ],
    tests: [
      "src/fake-backend/engine.test.ts",
      "test/contract/billing.test.ts",
      "test/contract/limits.test.ts",
    ],
  },
  // The fake backend's limits: request bodies (contract 8) and the deploy checks of 7.2 with the
  // instance limit and the reservation.
  "fake-limits": {
    // validation.ts's zod schemas are built at module load, so each of their mutants would run
    // every test of the group (about 25 s each here, 300 of them); the limits they hold are
    // pinned by the table tests of test/contract/limits.test.ts and robustness.test.ts.
    ignoreStatic: true,
    mutate: [
      "src/fake-backend/validation.ts",
      "src/fake-backend/engine.ts:778-901", // deploy: checks 1-15 and the reservation
    ],
    tests: [
      "test/contract/limits.test.ts",
      "test/contract/deploy-checks.test.ts",
      "test/contract/robustness.test.ts",
    ],
  },
  // The retry and resend classification (being reworked into src/api/retry-policy.ts).
  retry: {
    mutate: [
      "src/api/client.ts:182-217", // safety of a call and the status sets
      "src/api/client.ts:664-785", // the attempt loop: retry, resend or ambiguous
      "src/api/retry.ts",
    ],
    tests: ["src/api/client.test.ts", "src/api/client.fake-backend.test.ts", "src/api/retry.test.ts"],
  },
  // The schema's sensitive and write-only flags, as sent to Terraform.
  schema: {
    mutate: ["src/framework/schema.ts"],
    tests: ["src/framework/schema.test.ts", "src/framework/service.test.ts"],
  },
  // The deploy reconciliation: every deploy and key creation journaled before it is sent, a lost
  // answer looked for (never resent), and what an interrupted apply created adopted or revoked.
  reconciliation: {
    mutate: [
      "src/api/reconcile.ts",
      "src/journal/lost-requests.ts",
      "src/resources/instance-deploy.ts",
      "src/resources/api-key-journal.ts",
    ],
    tests: [
      "src/resources/deploy-journal.test.ts",
      "src/resources/instance-ops.test.ts",
      "src/journal/store.test.ts",
      "src/api/client.fake-backend.test.ts",
    ],
  },
};

const selected = (process.env.MUTATE ?? "")
  .split(",")
  .map((g) => g.trim())
  .filter(Boolean);
for (const g of selected) {
  if (!(g in GROUPS))
    throw new Error(`MUTATE: unknown group ${g}; groups: ${Object.keys(GROUPS).join(", ")}`);
}
const groups = (selected.length > 0 ? selected : Object.keys(GROUPS)).map((g) => GROUPS[g]);
// Runs of different groups keep their own reports and sandboxes, so two can run side by side.
const runName = selected.length > 0 ? selected.join("+") : "all";
// Read by jest.mutate.config.js in the test runner processes, which inherit the environment.
process.env.GPURENTAL_MUTATION_TESTS = JSON.stringify([...new Set(groups.flatMap((g) => g.tests))]);

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
module.exports = {
  packageManager: "npm",
  testRunner: "jest",
  jest: { projectType: "custom", configFile: "jest.mutate.config.js", enableFindRelatedTests: true },
  checkers: ["typescript"],
  tsconfigFile: "tsconfig.json",
  coverageAnalysis: "perTest",
  mutate: groups.flatMap((g) => g.mutate),
  // The machine is small and shared: one test runner, one type checker.
  concurrency: 1,
  timeoutMS: 15_000,
  // Mutants in code that runs once at module load (the catalogue of refusals, the patterns) run
  // every test of their group: they are the mapping itself, so they are not ignored, except in a
  // group that says why (scripts/mutate.js runs each group on its own).
  ignoreStatic: groups.every((g) => g.ignoreStatic === true),
  reporters: ["clear-text", "progress", "html", "json"],
  clearTextReporter: { allowColor: false, logTests: false, reportScoreTable: true, reportMutants: true },
  htmlReporter: { fileName: `reports/mutation/${runName}.html` },
  jsonReporter: { fileName: `reports/mutation/${runName}.json` },
  // A later run of the same groups re-tests only the mutants whose code or tests changed.
  incremental: true,
  incrementalFile: `reports/mutation/${runName}.incremental.json`,
  ignorePatterns: ["dist", "cdktf.out", "coverage", "reports", "examples", "docs", "bench", ".stryker-tmp"],
  tempDirName: `.stryker-tmp/${runName}`,
  cleanTempDir: "always",
};
