import { readFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { stringify } from "lossless-json";
import { makeInstance } from "../api/testing/fixtures";
import { firstUnsafeCharacter, jsonEscaped } from "../display";
import {
  damagedJsonText,
  generativeRuns,
  generativeSeed,
  hostileText as hostile,
} from "../testing/generative";
import { parseJsonDocument } from "../tfstate/json";
import { readTerraformDocument } from "../tfstate/plan";
import { UserFacingError } from "../user-facing";
import { buildPlanReport } from "./build";
import { evaluateGates, FAIL_ON_CONDITIONS, type FailOn } from "./gates";
import type { DeployReading, PlanReadings } from "./readings";
import { renderMarkdown, reportJson } from "./render";

// A plan given to `gpurental plan-report` is a file from outside: often an artifact of another job,
// and on a pull request made from a branch its author controls. Any such file, and any answer the
// API gives, must end in a report or in one error naming the file, never in a fault of the
// program; and the report, which goes into a pull-request comment and onto a terminal, must hold
// no control character or bidirectional override raw, and never an env value the plan marks
// secret. Here the fixture plan (every action Terraform plans on instances and keys) is damaged at
// random places (any JSON, hostile strings, removed members), cut short, or replaced by random
// text; the API's instances carry hostile labels and GPU models; the gates are random.

const SEED = generativeSeed(20261129);
const RUNS = generativeRuns(400);

const FIXTURE = readFileSync(join(__dirname, "..", "tfstate", "fixtures", "plan.json"), "utf8");
/** The secret env value of the fixture's `gpurental_instance.new`. */
const SECRET = "env-secret-value";

/** A plan file's text: the fixture damaged, cut short, or any text. */
const planText = damagedJsonText(FIXTURE);

/** The API's answers: the organization's instances with hostile labels, a price for each deploy. */
const readings: fc.Arbitrary<PlanReadings> = fc
  .record({
    labels: fc.array(fc.option(hostile, { nil: null }), { minLength: 0, maxLength: 4 }),
    gpu: hostile,
    perHour: fc.bigInt({ min: 0n, max: 10n ** 12n }),
    balance: fc.oneof(
      fc.bigInt({ min: -(10n ** 12n), max: 10n ** 15n }).map((micro) => ({ micro })),
      hostile.map((unread) => ({ unread })),
    ),
  })
  .map(({ labels, gpu, perHour, balance }) => {
    const deploy: DeployReading = {
      price: { perHour, storagePerGbHour: 200n, estimate: false, basis: gpu },
      gpu: { model: gpu, count: 1 },
      offerId: "00000000-0000-4000-8000-000000000041",
      findings: [],
    };
    return {
      now: Date.parse("2026-11-29T10:00:00Z"),
      instances: labels.map((label, n) =>
        makeInstance({
          id: `10000000-0000-4000-8000-${String(n + 1).padStart(12, "0")}`,
          label,
          offer: { id: "00000000-0000-4000-8000-000000000041", gpu_model: gpu, num_gpus: 1 },
        }),
      ),
      balance,
      deploys: new Map(
        ["gpurental_instance.new", "gpurental_instance.pinned", "gpurental_instance.a"].map((a) => [
          a,
          deploy,
        ]),
      ),
    };
  });

const gates = fc.record({
  failOn: fc.subarray(Object.keys(FAIL_ON_CONDITIONS) as FailOn[]),
  maxBurnPerHour: fc.option(fc.bigInt({ min: 0n, max: 10n ** 12n }), { nil: undefined }),
  minBalanceTenths: fc.option(fc.bigInt({ min: 0n, max: 10n ** 6n }), { nil: undefined }),
});

test("any plan file and any answers: a report with nothing raw and no secret, or one error naming the file", () => {
  let reports = 0;
  let refusals = 0;
  fc.assert(
    fc.property(planText, readings, gates, (text, r, spec) => {
      let doc: ReturnType<typeof readTerraformDocument>;
      try {
        doc = readTerraformDocument(parseJsonDocument(text, "plan.json"), "plan.json");
      } catch (err) {
        // A refusal is the file's: a user-facing error that names it.
        if (!(err instanceof UserFacingError)) throw err;
        expect(err.message).toContain("plan.json");
        refusals++;
        return;
      }
      if (doc.kind !== "plan") return;
      const report = buildPlanReport({ plan: doc.plan }, r);
      const md = renderMarkdown(report);
      // As the command writes it: lossless, bigints as numbers.
      const json = jsonEscaped(stringify(reportJson(report), null, 2) ?? "");
      evaluateGates(report, spec);
      for (const out of [md, json]) {
        const raw = firstUnsafeCharacter(out.replace(/\n/g, " "));
        if (raw !== undefined) throw new Error(`the report holds ${raw} raw:\n${out}`);
      }
      // The JSON is still JSON, with the same values.
      expect(JSON.parse(json)).toEqual(JSON.parse(stringify(reportJson(report)) ?? ""));
      // Markup and mentions work outside code spans only (a span of n backticks, closed by n).
      const prose = md.replace(/(?<!`)(`+)(?!`)[\s\S]*?(?<!`)\1(?!`)/g, "");
      expect(prose).not.toContain("<b>");
      expect(prose).not.toMatch(/(?<!\u2060)@team/);
      for (const out of [md, json]) expect(out).not.toContain(SECRET);
      reports++;
    }),
    { seed: SEED, numRuns: RUNS },
  );
  // Both ends were reached: reports made from damaged plans, and damaged plans refused.
  expect(reports).toBeGreaterThan(RUNS / 4);
  expect(refusals).toBeGreaterThan(0);
});
