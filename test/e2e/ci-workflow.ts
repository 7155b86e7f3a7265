import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";

// examples/ci as the tests read it: the GitHub Actions workflow, parsed, reduced to what its jobs
// run, and the stages of pipeline.sh as its own usage lists them. The workflow check
// (examples-ci-workflow.test.ts) compares the two; the end-to-end suite (examples-ci.e2e.test.ts)
// runs the workflow's own command lines.

/** The example: a repository's root, as a team copies it. */
export const EXAMPLE_DIR = join(__dirname, "..", "..", "examples", "ci");
/** The workflow, relative to the example's root. */
export const WORKFLOW_FILE = join(".github", "workflows", "gpurental.yml");

/** A step of a job. */
export interface WorkflowStep {
  id?: string;
  if?: string;
  run?: string;
  uses?: string;
  with?: Record<string, unknown>;
  env?: Record<string, string>;
}

/** A job of the workflow. */
export interface WorkflowJob {
  needs?: string | string[];
  if?: string;
  environment?: string;
  outputs?: Record<string, string>;
  steps: WorkflowStep[];
}

/** The parts of a workflow the tests look at. */
export interface Workflow {
  on: Record<string, unknown>;
  env?: Record<string, string>;
  jobs: Record<string, WorkflowJob>;
}

/** The workflow file parsed; a duplicate key or any other YAML error throws. */
export function readWorkflow(root = EXAMPLE_DIR): Workflow {
  const file = join(root, WORKFLOW_FILE);
  const doc = parse(readFileSync(file, "utf8"), { uniqueKeys: true, prettyErrors: true }) as Workflow;
  if (!doc || typeof doc.jobs !== "object") throw new Error(`${file} has no jobs`);
  return doc;
}

/** The stage a run line calls (`./pipeline.sh plan` gives "plan"), or undefined for any other command. */
export function pipelineStage(run: string): string | undefined {
  return /^\.\/pipeline\.sh ([a-z-]+)$/.exec(run.trim())?.[1];
}

/** The step of `job` that runs `./pipeline.sh <stage>`; throws when there is none. */
export function stageStep(workflow: Workflow, job: string, stage: string): WorkflowStep {
  const step = workflow.jobs[job]?.steps.find((s) => s.run !== undefined && pipelineStage(s.run) === stage);
  if (!step) throw new Error(`the workflow's job "${job}" has no step running ./pipeline.sh ${stage}`);
  return step;
}

/** The stages pipeline.sh offers, as its usage (`./pipeline.sh --help`) lists them. */
export function scriptStages(root = EXAMPLE_DIR): string[] {
  const usage = execFileSync("bash", [join(root, "pipeline.sh"), "--help"], { encoding: "utf8" });
  return [...usage.matchAll(/^ {2}\.\/pipeline\.sh ([a-z-]+) {2,}/gm)].map((m) => m[1]!);
}
