// Mutation testing (`npm run mutate`, not part of `npm test`) of the code where a surviving mutant
// means a leaked secret, a lost or duplicated instance, or a wrong refusal. Scores and the
// survivors left standing are recorded in docs/development.md, "Mutation testing".
//
// `MUTATE=<group>[,<group>] npm run mutate` mutates only those groups; `npm run mutate -- --mutate
// <file>` one file. Each mutant runs only the tests that cover it (coverageAnalysis perTest), taken
// from the fast unit and contract files of jest.mutate.config.js; the e2e suites never run here.

/** The files, or line ranges of files, each group mutates. */
const GROUPS = {
  // Credential redaction and log masking: the target is no survivor at all.
  redaction: ["src/api/redact.ts", "src/plugin/log.ts", "src/plugin/masked-service.ts"],
  // Refusal mapping (codes to attributes and explanations) and the plan-time deploy checks.
  refusals: ["src/resources/refusals.ts", "src/resources/plan-checks.ts"],
  // The fake backend's limits (request bodies, the deploy checks of contract 7.2 and the instance
  // limit) and billing (burn, balance rule, accrual, ledger, auto-stop and auto-destroy). The
  // engine is one large class: these ranges are its limits and billing parts and must follow it
  // when it changes (or it is split by concern).
  "fake-limits-billing": [
    "src/fake-backend/validation.ts",
    "src/fake-backend/engine.ts:400-431", // setBalance, topUp
    "src/fake-backend/engine.ts:743-769", // hourly burn, the balance rule
    "src/fake-backend/engine.ts:778-901", // deploy: checks 1-15 and the reservation
    "src/fake-backend/engine.ts:981-985", // start: the balance rule
    "src/fake-backend/engine.ts:1143-1165", // billing segments opened and closed by status
    "src/fake-backend/engine.ts:1263-1468", // accrual, ledger rows, balance events, auto-stop/-destroy
    "src/fake-backend/engine.ts:1524-1548", // settle: time advanced hour by hour while billing
  ],
  // The retry and resend classification (being reworked into src/api/retry-policy.ts).
  retry: [
    "src/api/client.ts:182-217", // safety of a call and the status sets
    "src/api/client.ts:664-785", // the attempt loop: retry, resend or ambiguous
    "src/api/retry.ts",
  ],
  // The schema's sensitive and write-only flags, as sent to Terraform.
  schema: ["src/framework/schema.ts"],
  // The deploy reconciliation: every deploy and key creation journaled before it is sent, a lost
  // answer looked for (never resent), and what an interrupted apply created adopted or revoked.
  reconciliation: [
    "src/api/reconcile.ts",
    "src/journal/lost-requests.ts",
    "src/resources/instance-deploy.ts",
    "src/resources/api-key-journal.ts",
  ],
};

const selected = (process.env.MUTATE ?? "")
  .split(",")
  .map((g) => g.trim())
  .filter(Boolean);
for (const g of selected) {
  if (!(g in GROUPS))
    throw new Error(`MUTATE: unknown group ${g}; groups: ${Object.keys(GROUPS).join(", ")}`);
}

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
module.exports = {
  packageManager: "npm",
  testRunner: "jest",
  jest: { projectType: "custom", configFile: "jest.mutate.config.js", enableFindRelatedTests: true },
  checkers: ["typescript"],
  tsconfigFile: "tsconfig.json",
  coverageAnalysis: "perTest",
  mutate: (selected.length > 0 ? selected : Object.keys(GROUPS)).flatMap((g) => GROUPS[g]),
  // The machine is small and shared: one test runner, one type checker.
  concurrency: 1,
  timeoutMS: 15_000,
  // Mutants in code that runs once at module load (the catalogue of refusals, the patterns) are
  // still run, each with the whole set of tests: correctness over speed here.
  ignoreStatic: false,
  reporters: ["clear-text", "progress", "html", "json"],
  clearTextReporter: { allowColor: false, logTests: false, reportScoreTable: true, reportMutants: true },
  htmlReporter: { fileName: "reports/mutation/index.html" },
  jsonReporter: { fileName: "reports/mutation/mutation.json" },
  ignorePatterns: ["dist", "cdktf.out", "coverage", "reports", "examples", "docs", "bench"],
  tempDirName: ".stryker-tmp",
  cleanTempDir: "always",
};
