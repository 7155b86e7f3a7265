// Mutation testing (`npm run mutate`, not part of `npm test`) of the code where a surviving mutant
// means a leaked secret, a lost or duplicated instance, or a wrong refusal. Scores and the
// survivors left standing are recorded in docs/mutation-testing.md.
//
// `npm run mutate` (scripts/testing/mutate.js) runs each group below on its own and prints the score of
// every file; `npm run mutate -- <group>...` runs only those groups. Each group names the fast unit and contract test files that test its code
// (jest.mutate.config.js runs those, never a terraform, cdktf or dist/ suite), and each mutant runs
// only the tests among them that reach it (coverageAnalysis perTest).

const { readFileSync } = require("node:fs");

/**
 * The lines of `file` from the first line holding `from` to the next line holding `to`, as a
 * Stryker range (`file:first-last`). Ranges follow the code as it moves; a marker that is gone
 * stops the run instead of mutating the wrong lines.
 */
function between(file, from, to) {
  const lines = readFileSync(`${__dirname}/${file}`, "utf8").split("\n");
  const first = lines.findIndex((l) => l.includes(from));
  const last = first < 0 ? -1 : lines.findIndex((l, i) => i > first && l.includes(to));
  if (first < 0 || last < 0)
    throw new Error(`stryker.config.js: ${file} no longer has ${first < 0 ? from : to}; update the range`);
  return `${file}:${first + 1}-${last + 1}`;
}

/** Each group: the files (or line ranges) it mutates and the test files that test them. */
const GROUPS = {
  // Credential redaction and log masking: the target is no survivor at all.
  redaction: {
    mutate: ["src/api/redact.ts", "src/log.ts", "src/executable/masked-service.ts"],
    tests: [
      "src/api/redact.test.ts",
      "src/api/client.credentials.test.ts",
      "src/log.test.ts",
      "src/executable/masked-service.test.ts",
      "src/cli/account/strays.test.ts",
    ],
  },
  // Refusal mapping: codes to attributes, explanations from the carried fields, other errors.
  refusals: {
    // The catalogue's titles and attributes, the hints and the operations' words are built at
    // module load, so each of their mutants would run the whole file; the table tests of
    // refusals-catalogue.test.ts ("the catalogue, code by code") and refusals-explanations.test.ts
    // (the operations' words) pin every one.
    ignoreStatic: true,
    mutate: ["src/provider/refusals.ts"],
    tests: [
      "src/provider/refusals-catalogue.test.ts",
      "src/provider/refusals-explanations.test.ts",
      "src/provider/refusals-diagnostics.test.ts",
    ],
  },
  // The plan-time deploy checks (also what offer selection judges each market offer by).
  "plan-checks": {
    mutate: ["src/market/plan-checks.ts"],
    tests: ["src/market/plan-checks.test.ts", "src/market/offer-selection.test.ts"],
  },
  // The fake backend's money: the hourly burn and the balance rule (deploy and start), billing
  // segments opened by status, accrual into hourly ledger rows, top-ups, and the balance events
  // (auto-stop at ¥0, auto-destroy after 24 h at or below -¥35).
  "fake-billing": {
    mutate: ["src/fake-backend/billing.ts"],
    tests: [
      "src/fake-backend/billing.test.ts",
      "src/fake-backend/engine.test.ts",
      "test/contract/billing.test.ts",
      "test/contract/deploy-checks.test.ts",
      "test/contract/limits.test.ts",
    ],
  },
  // The fake backend's limits: request bodies (contract 8), the deploy checks of 7.2 with the
  // instance limit, and the reservation race.
  "fake-limits": {
    // validation.ts's zod schemas are built at module load, so each of their mutants would run
    // every test of the group (about 25 s each here, 300 of them); the limits they hold are
    // pinned by the table tests of test/contract/limits.test.ts and bad-requests.test.ts.
    ignoreStatic: true,
    mutate: ["src/fake-backend/http/validation.ts", "src/fake-backend/deploy-checks.ts"],
    tests: [
      "src/fake-backend/deploy-checks.test.ts",
      "test/contract/limits.test.ts",
      "test/contract/deploy-checks.test.ts",
      "test/contract/bad-requests.test.ts",
      "test/contract/raw-http.test.ts",
      "test/contract/fault-injection.test.ts",
      "test/contract/control-api.test.ts",
      "test/contract/log-redaction.test.ts",
    ],
  },
  // Which failed requests are sent again (retry-policy.ts, pure), when (retry.ts), and the parts
  // of the transport that act on the verdict: a deploy that may have landed is never resent.
  retry: {
    mutate: [
      "src/api/retry-policy.ts",
      "src/api/retry.ts",
      // After a failed attempt: ambiguous, retried within the deadline, or final.
      between("src/api/network/transport.ts", "const verdict = retryVerdict(", "lastError = error;"),
      // One attempt: answered, timed out, aborted, or failed before or after it was sent.
      between("src/api/network/transport.ts", "async #attempt(", "linked.dispose();"),
    ],
    tests: [
      "src/api/retry-policy.test.ts",
      "src/api/retry.test.ts",
      "src/api/client.requests.test.ts",
      "src/api/client.retries.test.ts",
      "src/api/client.cancellation.test.ts",
      "src/api/client.leaks.test.ts",
      "src/api/client.fake-backend.test.ts",
    ],
  },
  // The schema's sensitive and write-only flags as sent to Terraform, and the write-only values
  // nulled in everything the provider returns.
  schema: {
    mutate: ["src/framework/schema.ts", "src/framework/write-only.ts"],
    tests: [
      "src/framework/schema.test.ts",
      "src/framework/write-only.test.ts",
      "src/framework/service.test.ts",
      "src/framework/plan.test.ts",
    ],
  },
  // What runs side by side: deploys and key creations queued only behind those they could be taken
  // for, and identical plan-time reads in flight at once sharing one request.
  sharing: {
    mutate: ["src/provider/keyed-queue.ts", "src/provider/shared-reads.ts"],
    tests: [
      "src/provider/keyed-queue.test.ts",
      "src/provider/shared-reads.test.ts",
      "src/resources/instance/deploy-send.test.ts",
      "src/resources/instance/deploy-adopt.test.ts",
      "src/resources/instance/deploy-write-failures.test.ts",
      "src/resources/api-key/journal-creation.test.ts",
      "src/resources/api-key/journal-sweep.test.ts",
      "src/resources/api-key/journal-failures.test.ts",
      "src/resources/api-key/journal-fingerprints.test.ts",
    ],
  },
  // The deploy reconciliation: every deploy and key creation journaled before it is sent, a lost
  // answer looked for (never resent), and what an interrupted apply created adopted or revoked.
  reconciliation: {
    mutate: [
      "src/journal/store.ts",
      "src/journal/records.ts",
      "src/journal/saved-state.ts",
      "src/journal/disk.ts",
      "src/journal/lost-requests.ts",
      "src/journal/location.ts",
      "src/journal/run.ts",
      "src/journal/fingerprint.ts",
      "src/resources/instance/deploy.ts",
      "src/resources/api-key/journal.ts",
      "src/provider/journal-notes.ts",
      "src/api/reconcile.ts",
      // The adoptions a plan announced, per journal (per provider process, or per session of a
      // resident process): no more "will adopt" notes than entries (plannedAdoptionOf, in
      // instance-ops.ts, chooses the entry).
      between(
        "src/resources/instance/resource.ts",
        'if (journal.live("instance").length === 0)',
        "report(ctx.diags, [next.note])",
      ),
      // The provider's journal: the run it records, and the signal that closes it to writes once
      // the launch of a resident session is gone.
      between(
        "src/provider.ts",
        "...(opts.run ? { run: opts.run } : {})",
        "...(opts.ended ? { ended: opts.ended } : {})",
      ),
    ],
    tests: [
      "src/journal/store.test.ts",
      "src/journal/store-reading.test.ts",
      "src/journal/store-writing.test.ts",
      "src/journal/store-lock.test.ts",
      "src/journal/store-location.test.ts",
      "src/resources/instance/deploy-journal.test.ts",
      "src/resources/api-key/journal-creation.test.ts",
      "src/resources/api-key/journal-sweep.test.ts",
      "src/resources/api-key/journal-failures.test.ts",
      "src/resources/api-key/journal-fingerprints.test.ts",
      "src/provider/journal-notes.test.ts",
      "src/resources/instance/deploy-send.test.ts",
      "src/resources/instance/deploy-adopt.test.ts",
      "src/resources/instance/deploy-write-failures.test.ts",
      "src/resources/instance/deploy.pure.test.ts",
      "src/journal/lost-requests.test.ts",
      "src/journal/run.test.ts",
      "src/resources/instance/ops.test.ts",
      "src/resources/instance/secret-env.test.ts",
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
// `npm run mutate -- --survivors <group>` (scripts/testing/mutate.js) re-tests only the mutants that
// survived the group's last run: it passes their places as Stryker ranges (`file:line:col-line:col`)
// and merges the results into the group's report itself.
const ranges = process.env.MUTATE_RANGES ? JSON.parse(process.env.MUTATE_RANGES) : null;
// Runs of different groups keep their own reports and sandboxes, so two can run side by side.
const runName = `${selected.length > 0 ? selected.join("+") : "all"}${ranges ? ".survivors" : ""}`;
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
  mutate: ranges ?? groups.flatMap((g) => g.mutate),
  // The machine is small and shared: one test runner, one type checker.
  concurrency: 1,
  timeoutMS: 15_000,
  // Mutants in code that runs once at module load (the catalogue of refusals, the patterns) run
  // every test of their group: they are the mapping itself, so they are not ignored, except in a
  // group that says why (scripts/testing/mutate.js runs each group on its own).
  ignoreStatic: groups.every((g) => g.ignoreStatic === true),
  reporters: ["clear-text", "progress", "html", "json"],
  clearTextReporter: { allowColor: false, logTests: false, reportScoreTable: true, reportMutants: true },
  htmlReporter: { fileName: `reports/mutation/${runName}.html` },
  jsonReporter: { fileName: `reports/mutation/${runName}.json` },
  // A later run of the same groups re-tests only the mutants whose code or tests changed.
  incremental: ranges === null,
  incrementalFile: `reports/mutation/${runName}.incremental.json`,
  ignorePatterns: ["dist", "cdktf.out", "coverage", "reports", "examples", "docs", "bench", ".stryker-tmp"],
  tempDirName: `.stryker-tmp/${runName}`,
  cleanTempDir: "always",
};
