"use strict";
// The order in which Jest hands test files to its workers: the longest first, so that no long
// suite starts last and leaves the other workers idle at the end of the run. Jest's own sequencer
// orders by the durations of the previous run, kept in its cache; a fresh clone has none, and Jest
// then orders by file size, which put the slowest suites (terraform and cdktf end to end, up to a
// minute each) anywhere in the run. Files the cache knows keep its duration; the others take the
// estimate below (seconds, each suite alone on this 2-core machine); the rest follow by size.
const Sequencer = require("@jest/test-sequencer").default;
const { relative } = require("node:path");

/** Seconds each slow suite took alone (docs/design/test-run-time.md). */
const ESTIMATES = {
  "test/e2e/resources/network.e2e.test.ts": 70,
  "test/cdktf/demo.e2e.test.ts": 68,
  "test/e2e/resources/faults.e2e.test.ts": 65,
  "test/cdktf/market.e2e.test.ts": 55,
  "test/cdktf/secret-env.e2e.test.ts": 38,
  "test/cdktn/cdktn.e2e.test.ts": 65,
  "test/package/fresh-install.test.ts": 22,
  "test/e2e/resources/bad-input.e2e.test.ts": 36,
  "test/e2e/resources/lifecycle.e2e.test.ts": 34,
  "test/e2e/resources/interruptions.e2e.test.ts": 31,
  "test/e2e/resources/market.e2e.test.ts": 29,
  "test/e2e/examples-ci.e2e.test.ts": 28,
  "test/e2e/resources/write-only.e2e.test.ts": 27,
  "test/e2e/pg-state.e2e.test.ts": 26,
  "test/e2e/resources/refusals.e2e.test.ts": 25,
  "test/e2e/examples-hcl.e2e.test.ts": 20,
  "test/e2e/resources/resident-interruptions.e2e.test.ts": 20,
  "test/e2e/terraform.e2e.test.ts": 17,
  "src/cli/account/strays.test.ts": 13,
  "test/contract/persistence.test.ts": 12,
  "test/cdktf/schema.test.ts": 10,
  "test/cdktn/bindings.test.ts": 12,
  "test/e2e/commands/plan-report.e2e.test.ts": 9,
  "test/e2e/commands/strays.e2e.test.ts": 9,
  "test/contract/late-commit.test.ts": 8,
  "test/e2e/data-sources/data-sources.e2e.test.ts": 7,
};

class LongestFirst extends Sequencer {
  sort(tests) {
    const size = new Map();
    const bytes = (t) => {
      if (!size.has(t.path)) size.set(t.path, t.context.hasteFS.getSize(t.path) ?? 0);
      return size.get(t.path);
    };
    for (const t of tests) {
      t.duration = this.time(t) ?? estimate(t);
    }
    return [...tests].sort((a, b) => {
      const failedA = this.hasFailed(a);
      if (failedA !== this.hasFailed(b)) return failedA ? -1 : 1;
      const known = (a.duration != null) - (b.duration != null);
      if (known !== 0) return -known;
      if (a.duration != null && a.duration !== b.duration) return b.duration - a.duration;
      return bytes(b) - bytes(a);
    });
  }
}

/** The estimate of a test file, in milliseconds as Jest's cache keeps durations, or undefined. */
function estimate(test) {
  const seconds = ESTIMATES[relative(test.context.config.rootDir, test.path).split("\\").join("/")];
  return seconds === undefined ? undefined : seconds * 1000;
}

module.exports = LongestFirst;
module.exports.ESTIMATES = ESTIMATES;
