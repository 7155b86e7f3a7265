import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import {
  EXAMPLE_DIR,
  pipelineStage,
  readWorkflow,
  scriptStages,
  stageStep,
  WORKFLOW_FILE,
  type Workflow,
} from "./ci-workflow";

// The example workflow (examples/ci/.github/workflows/gpurental.yml) runs the same commands as
// examples/ci/pipeline.sh, which examples-ci.e2e.test.ts runs end to end: every step that is not
// a GitHub action is `npm ci` or a stage of the script, every stage of the script is run, in the
// order the pipeline needs, and the credentials reach the script as secrets in the environment.

let workflow: Workflow;
let text: string;
beforeAll(() => {
  workflow = readWorkflow();
  text = readFileSync(join(EXAMPLE_DIR, WORKFLOW_FILE), "utf8");
});

/** A GitHub Actions expression as the workflow writes it: `${{ <inner> }}`. */
function expr(inner: string): string {
  return `\${{ ${inner} }}`;
}

/** `jobs.<job>.steps[].run` of every job. */
function runLines(): { job: string; run: string }[] {
  return Object.entries(workflow.jobs).flatMap(([job, j]) =>
    j.steps.flatMap((s) => (s.run === undefined ? [] : [{ job, run: s.run }])),
  );
}

test("every command the workflow runs is npm ci or a stage of pipeline.sh, and it runs every stage", () => {
  const stages = scriptStages();
  expect(stages).toEqual(["plan", "comment", "apply"]);
  const others = runLines().filter((l) => pipelineStage(l.run) === undefined && l.run.trim() !== "npm ci");
  expect(others).toEqual([]);
  const called = runLines().flatMap((l) => pipelineStage(l.run) ?? []);
  expect(new Set(called)).toEqual(new Set(stages));
});

test("a pull request plans and comments; main plans, then applies that plan in a job of its own", () => {
  expect(Object.keys(workflow.on).sort()).toEqual(["pull_request", "push", "workflow_dispatch"]);
  expect(workflow.on.push).toEqual({ branches: ["main"] });

  const plan = workflow.jobs.plan!;
  const stagesOf = (job: string) =>
    workflow.jobs[job]!.steps.flatMap((s) => (s.run === undefined ? [] : (pipelineStage(s.run) ?? [])));
  expect(stagesOf("plan")).toEqual(["plan", "comment"]);
  expect(plan.if).toBeUndefined();
  // The comment only on pull requests, and also when a gate tripped (the plan step failed).
  const comment = stageStep(workflow, "plan", "comment");
  expect(comment.if).toMatch(/github\.event_name == 'pull_request'/);
  expect(comment.if).toMatch(/!cancelled\(\)/);
  expect(comment.env?.GITHUB_TOKEN).toBe(expr("github.token"));

  // The plan stage writes `changes` to GITHUB_OUTPUT; the job passes it on; apply runs only then.
  const planStep = stageStep(workflow, "plan", "plan");
  expect(planStep.id).toBe("plan");
  expect(plan.outputs?.changes).toBe(expr("steps.plan.outputs.changes"));
  const apply = workflow.jobs.apply!;
  expect(stagesOf("apply")).toEqual(["apply"]);
  expect(apply.needs).toBe("plan");
  expect(apply.if).toMatch(/github\.event_name != 'pull_request'/);
  expect(apply.if).toMatch(/needs\.plan\.outputs\.changes == 'true'/);
  expect(apply.environment).toBe("production");

  // The apply job gets the plan job's pipeline-out (PIPELINE_OUT's default) before it applies.
  const upload = plan.steps.find((s) => s.uses?.startsWith("actions/upload-artifact@"));
  const download = apply.steps.find((s) => s.uses?.startsWith("actions/download-artifact@"));
  expect(upload?.with?.path).toBe("pipeline-out/");
  expect(download?.with).toEqual({ name: upload?.with?.name, path: "pipeline-out" });
  expect(apply.steps.indexOf(download!)).toBeLessThan(
    apply.steps.indexOf(stageStep(workflow, "apply", "apply")),
  );
});

test("the gates are plan-report flags, for pull requests only", () => {
  const gates = stageStep(workflow, "plan", "plan").env?.PIPELINE_GATES ?? "";
  expect(gates).toMatch(/^\$\{\{ github\.event_name == 'pull_request' && '--fail-on [a-z,-]+' \|\| '' \}\}$/);
});

test("credentials come from the secret store as environment variables, never as Terraform variables", () => {
  expect(workflow.env?.GPURENTAL_TOKEN).toBe(expr("secrets.GPURENTAL_TOKEN"));
  expect(workflow.env?.PG_CONN_STR).toBe(expr("secrets.PG_CONN_STR"));
  expect(text).not.toMatch(/TF_VAR_|-var[ =]|-backend-config/);
});

test("terraform is set up without the action's wrapper: the script reads terraform's own output and exit codes", () => {
  for (const job of Object.values(workflow.jobs)) {
    const setup = job.steps.find((s) => s.uses?.startsWith("hashicorp/setup-terraform@"));
    expect(setup?.with?.terraform_wrapper).toBe(false);
  }
});

test("the deploy journal is kept in PostgreSQL, from the secret store, never in a runner's cache", () => {
  expect(workflow.env?.GPURENTAL_JOURNAL_URL).toBe(expr("secrets.GPURENTAL_JOURNAL_URL"));
  expect(workflow.env?.GPURENTAL_JOURNAL_DIR).toBeUndefined();
  const cached = Object.values(workflow.jobs).flatMap((j) =>
    j.steps.filter((s) => s.uses?.startsWith("actions/cache")),
  );
  expect(cached).toEqual([]);
});

test("the Terraform-only workflow keeps its journal in PostgreSQL too, never in a runner's cache", () => {
  // gpurental-hcl.yml: the same secret, the same database; only the command's own files are cached.
  const hcl = parse(
    readFileSync(join(EXAMPLE_DIR, ".github", "workflows", "gpurental-hcl.yml"), "utf8"),
  ) as Workflow;
  expect(hcl.env?.GPURENTAL_JOURNAL_URL).toBe(expr("secrets.GPURENTAL_JOURNAL_URL"));
  expect(hcl.env?.GPURENTAL_JOURNAL_DIR).toBeUndefined();
  const cached = Object.values(hcl.jobs).flatMap((j) =>
    j.steps.filter((s) => s.uses?.startsWith("actions/cache")).map((s) => s.with?.path),
  );
  expect(new Set(cached)).toEqual(new Set([".gpurental-tools"]));
  // The script says where it reads the journal's address from.
  expect(readFileSync(join(EXAMPLE_DIR, "hcl-pipeline.sh"), "utf8")).toMatch(
    /^# {3}GPURENTAL_JOURNAL_URL +the deploy journal/m,
  );
});
