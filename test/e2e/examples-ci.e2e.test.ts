import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { GpurentalClient } from "../../src/api/client";
import { type DemoCredentials, type FakeBackend, startFakeBackend } from "../../src/fake-backend";
import { COMMENT_MARKER } from "../../src/plan-report/render";
import { type ProcessResult, runProcess } from "../../src/testing/child-process";
import { EXAMPLE_DIR, readWorkflow, stageStep, type Workflow } from "./ci-workflow";
import { findTerraform } from "./harness";
import { findPostgres, type PostgresServer, postgresRequired, startPostgres } from "./postgres";

// examples/ci run as a team runs it: the example copied into a repository whose node_modules has
// gpurental as npm installs a local package (a link) beside cdktf, cdktf-cli and esbuild; the
// workflow's own command lines run by bash, each job on a fresh checkout ("runner") that shares
// only what the workflow carries between jobs (the plan job's pipeline-out) and the state and the
// deploy journal in a private PostgreSQL. The provider is the package's built one (dist/), installed by the
// script into a mirror; the credential is a team API key of the in-process fake backend; the pull
// request comments go to a small stand-in for GitHub's REST API. The steps build on each other:
//   pull request: plan (synth, plan, report) and the comment; main: the apply job applies that plan
//   on a fresh runner; a second run plans no changes, says so and exits 0; a destroy plan, applied,
//   cleans up; the same script on the HCL configuration, with a gate that trips.
//
// Needs `npm run build` (the script installs the provider from dist/). Without PostgreSQL's server
// programs the suite is skipped with one line saying why, unless GPURENTAL_REQUIRE_POSTGRES=1.

jest.setTimeout(180_000);

const ROOT = join(__dirname, "..", "..");
const install = findPostgres();
if (install.missing && !postgresRequired()) {
  process.stderr.write(`test/e2e/examples-ci.e2e.test.ts skipped: ${install.missing}\n`);
}
const describeWithPostgres = install.binDir || postgresRequired() ? describe : describe.skip;

/** The state database's password: trust authentication ignores it, and it must never be printed. */
const PG_PASSWORD = "pg-secret-0d5c2a";
const GITHUB_TOKEN = "ghs_testtoken0123456789";
const REPOSITORY = "acme/infra";
const PR_NUMBER = 42;
const OTHER_STACK_REPORT = `${COMMENT_MARKER}\n### gpurental plan report: stack \`other\`\n\nNo instance changes.\n`;

let workflow: Workflow;
let pg: PostgresServer | undefined;
let fake: FakeBackend;
let creds: DemoCredentials;
let github: FakeGitHub;
let root: string;
let apiKeySecret: string;
let terraform: string;
/** What every step printed, to look for secrets at the end. */
const printed: string[] = [];

/** A comment on the pull request, as the stand-in keeps it. */
interface Comment {
  id: number;
  body: string;
  html_url: string;
}

/** GitHub's three REST calls the comment step makes, for one pull request, with a bearer token. */
interface FakeGitHub {
  server: Server;
  url: string;
  comments: Comment[];
  requests: string[];
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let body = "";
    req.on("data", (c: Buffer) => {
      body += c.toString("utf8");
    });
    req.on("end", () => resolve(body));
    req.on("error", reject);
  });
}

async function startFakeGitHub(): Promise<FakeGitHub> {
  const comments: Comment[] = [
    { id: 1, body: "Looks fine to me, once the plan is in.", html_url: "https://github.test/c/1" },
    // Another stack's report on the same pull request: left alone.
    { id: 2, body: OTHER_STACK_REPORT, html_url: "https://github.test/c/2" },
  ];
  const requests: string[] = [];
  const issue = `/repos/${REPOSITORY}/issues/${PR_NUMBER}/comments`;
  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? "/", "http://github.test");
    requests.push(`${req.method} ${url.pathname}`);
    const answer = (status: number, body: unknown) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    if (req.headers.authorization !== `Bearer ${GITHUB_TOKEN}`)
      return answer(401, { message: "Bad credentials" });
    const text = await readBody(req);
    if (req.method === "GET" && url.pathname === issue) {
      const perPage = Number(url.searchParams.get("per_page") ?? 30);
      const page = Number(url.searchParams.get("page") ?? 1);
      return answer(200, comments.slice((page - 1) * perPage, page * perPage));
    }
    if (req.method === "POST" && url.pathname === issue) {
      const id = comments.length + 1;
      const comment = { id, body: JSON.parse(text).body, html_url: `https://github.test/c/${id}` };
      comments.push(comment);
      return answer(201, comment);
    }
    const edit = /^\/repos\/acme\/infra\/issues\/comments\/(\d+)$/.exec(url.pathname);
    const comment = edit && comments.find((c) => c.id === Number(edit[1]));
    if (req.method === "PATCH" && comment) {
      comment.body = JSON.parse(text).body;
      return answer(200, comment);
    }
    answer(404, { message: "Not Found" });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { server, url: `http://127.0.0.1:${port}`, comments, requests };
}

/** A fresh checkout of the repository on a new runner: the example, `files` committed beside it, and its dependencies installed. */
function checkout(name: string, files: Record<string, string> = {}): string {
  const dir = join(root, name);
  cpSync(EXAMPLE_DIR, dir, {
    recursive: true,
    // A local run of the example leaves these; a checkout has none of them.
    filter: (src) =>
      !/(^|\/)(node_modules|cdktf\.out|\.gen|pipeline-out|\.terraform)(\/|$)/.test(
        relative(EXAMPLE_DIR, src),
      ),
  });
  for (const [file, text] of Object.entries(files)) writeFileSync(join(dir, file), text);
  const modules = join(dir, "node_modules");
  mkdirSync(join(modules, ".bin"), { recursive: true });
  // `npm install <path to gpurental>` installs the package as this link.
  mkdirSync(join(modules, "@gpurental"));
  symlinkSync(ROOT, join(modules, "@gpurental", "gpurental"));
  symlinkSync(join(ROOT, "bin", "gpurental"), join(modules, ".bin", "gpurental"));
  // The app's other dependencies, the same copies gpurental uses (as npm would dedupe them).
  for (const dep of ["cdktf", "constructs"]) symlinkSync(join(ROOT, "node_modules", dep), join(modules, dep));
  for (const bin of ["cdktf", "esbuild"]) {
    symlinkSync(realpathSync(join(ROOT, "node_modules", ".bin", bin)), join(modules, ".bin", bin));
  }
  return dir;
}

/** What a runner of the workflow gives every step; the workflow's env from the secret store. */
function runnerEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: join(root, "home"),
    TMPDIR: join(root, "tmp"),
    RUNNER_TEMP: join(root, "runner-temp"),
    // The engine the harness finds (terraform, else tofu), for the script too.
    TERRAFORM_BINARY_NAME: terraform,
    CI: "true",
    GITHUB_ACTIONS: "true",
    GITHUB_API_URL: github.url,
    GITHUB_SERVER_URL: "https://github.test",
    GITHUB_REPOSITORY: REPOSITORY,
    GITHUB_RUN_ID: "1001",
    GITHUB_EVENT_PATH: join(root, "github", "event.json"),
    GITHUB_OUTPUT: join(root, "github", "output"),
    GITHUB_STEP_SUMMARY: join(root, "github", "summary.md"),
    GPURENTAL_BASE_URL: fake.url,
    GPURENTAL_TOKEN: apiKeySecret,
    PG_CONN_STR: pg!.connStr().replace("://tf@", `://tf:${PG_PASSWORD}@`),
    // The journal in the state's database, as the workflow's secret names it.
    GPURENTAL_JOURNAL_URL: pg!.connStr().replace("://tf@", `://tf:${PG_PASSWORD}@`),
  };
  for (const k of Object.keys(env)) if (env[k] === undefined) delete env[k];
  return env;
}

/** Runs a step's `run` line as GitHub does (bash -e) in the runner's checkout. */
async function step(runner: string, run: string, env: NodeJS.ProcessEnv = {}): Promise<ProcessResult> {
  for (const f of ["output", "summary.md"]) writeFileSync(join(root, "github", f), "");
  const r = await runProcess("bash", ["-e", "-c", run], { cwd: runner, env: { ...runnerEnv(), ...env } });
  printed.push(r.output);
  return r;
}

async function expectStep(
  runner: string,
  run: string,
  code: number,
  env: NodeJS.ProcessEnv = {},
): Promise<string> {
  const r = await step(runner, run, env);
  if (r.code !== code) throw new Error(`${run} exited ${r.code}, expected ${code}\n${r.output}`);
  return r.output;
}

/** A file the last step wrote. */
function written(...path: string[]): string {
  return readFileSync(join(...path), "utf8");
}

function live() {
  return fake.listInstances(creds.org_id).filter((i) => i.status !== "destroyed");
}

/** The workflow's gates for a pull request, from its `${{ ... && '<flags>' || '' }}` expression. */
function pullRequestGates(): string {
  const expr = stageStep(workflow, "plan", "plan").env?.PIPELINE_GATES ?? "";
  const flags = /&& '([^']+)'/.exec(expr)?.[1];
  if (!flags) throw new Error(`no gates for pull requests in ${expr}`);
  return flags;
}

describeWithPostgres("examples/ci: the pipeline script, run by the workflow's commands", () => {
  let plan: string;
  let comment: string;
  let apply: string;
  let prGates: string;

  beforeAll(async () => {
    if (!install.binDir) {
      throw new Error(`GPURENTAL_REQUIRE_POSTGRES=1, and PostgreSQL is missing: ${install.missing}`);
    }
    if (!existsSync(join(ROOT, "dist", "provider-bundle", "provider.js"))) {
      throw new Error(
        "dist/ is missing: run `npm run build` first (the pipeline installs the provider from it)",
      );
    }
    terraform = findTerraform();
    workflow = readWorkflow();
    plan = stageStep(workflow, "plan", "plan").run!;
    comment = stageStep(workflow, "plan", "comment").run!;
    apply = stageStep(workflow, "apply", "apply").run!;
    prGates = pullRequestGates();
    root = mkdtempSync(join(tmpdir(), "gpurental-ci-"));
    for (const d of ["home", "tmp", "runner-temp", "github"]) mkdirSync(join(root, d));
    writeFileSync(
      join(root, "github", "event.json"),
      JSON.stringify({ pull_request: { number: PR_NUMBER } }),
    );
    [pg, fake, github] = await Promise.all([
      startPostgres(install),
      startFakeBackend({ port: 0, seed: "demo", transitions: "immediate" }),
      startFakeGitHub(),
    ]);
    creds = fake.credentials!;
    // CI runs with a team API key, not a person's session.
    const admin = new GpurentalClient({ baseUrl: fake.url, token: creds.admin_session_token });
    apiKeySecret = (await admin.createApiKey({ name: "ci", kind: "team" })).secret;
  });

  afterAll(async () => {
    await pg?.stop();
    await fake?.close();
    await new Promise((resolve) => github?.server.close(resolve));
    if (root) rmSync(root, { recursive: true, force: true });
  });

  /** The comments that hold this pipeline's report. */
  const reportComments = () =>
    github.comments.filter((c) =>
      c.body.startsWith(`${COMMENT_MARKER}\n### gpurental plan report: stack \`gpu-fleet\``),
    );

  test("pull request: synth, plan, the plan report, and the report as a comment", async () => {
    const runner = checkout("pr-1");
    const output = await expectStep(runner, plan, 0, { PIPELINE_GATES: prGates });
    expect(output).toContain("Plan: 2 to add, 0 to change, 0 to destroy.");
    const out = join(runner, "pipeline-out");
    expect(readdirSync(out).sort()).toEqual(["changes", "plan.bin", "plan.txt", "report.md", "stacks"]);
    // The stack as planned, for the apply job: its configuration and the provider's lock, no .terraform.
    expect(readdirSync(join(out, "stacks", "gpu-fleet")).sort()).toEqual([
      ".terraform.lock.hcl",
      "cdk.tf.json",
    ]);
    expect(written(out, "plan.txt")).toContain("Plan: 2 to add");

    const report = written(out, "report.md");
    expect(report.startsWith(`${COMMENT_MARKER}\n`)).toBe(true);
    expect(report).toContain("#### Instances: 2 to create");
    // Each instance with its construct path, its GPU and the disk it gets.
    expect(report).toMatch(/gpu-fleet\/train.*RTX 4090.*new 100 GB/);
    expect(report).toMatch(/gpu-fleet\/eval.*RTX 3090.*new 50 GB/);
    // An API key reads everything but the balance, and the report says so rather than failing.
    expect(report).toContain("The balance was not read");
    expect(written(root, "github", "output")).toBe("changes=true\n");
    expect(written(root, "github", "summary.md")).toBe(report);
    expect(live()).toEqual([]);

    // The provider is the package's own build, installed into a mirror in the runner's temp space.
    const mirror = join(root, "runner-temp", "gpurental-pipeline", "mirror");
    const pkg = join(mirror, "registry.terraform.io", "gpurental", "gpurental", "0.1.0");
    const [platform] = readdirSync(pkg);
    expect(readFileSync(join(pkg, platform!, "provider.js"))).toEqual(
      readFileSync(join(ROOT, "dist", "provider-bundle", "provider.js")),
    );

    expect(await expectStep(runner, comment, 0, { GITHUB_TOKEN })).toContain("Posted the plan report");
    expect(reportComments()).toHaveLength(1);
    expect(reportComments()[0]!.body).toBe(
      `${report}\n<sub>[The run, with the whole plan](https://github.test/${REPOSITORY}/actions/runs/1001)</sub>\n`,
    );
  });

  test("main: the apply job applies the plan job's saved plan on a fresh runner, without synthesizing", async () => {
    // The main branch's plan job runs the same stage as the pull request's; the artifact it hands
    // the apply job is its pipeline-out, here the pull request runner's.
    const runner = checkout("main-1-apply");
    cpSync(join(root, "pr-1", "pipeline-out"), join(runner, "pipeline-out"), { recursive: true });
    const output = await expectStep(runner, apply, 0);
    expect(output).toContain("Apply complete! Resources: 2 added, 0 changed, 0 destroyed.");
    // The app never ran here: the stack came with the plan.
    expect(existsSync(join(runner, ".gen"))).toBe(false);
    expect(
      live()
        .map((i) => `${i.label} ${i.disk_gb}`)
        .sort(),
    ).toEqual(["eval 50", "train 100"]);
    expect(await pg!.query("select name from gpu_fleet.states")).toBe("default");
    // The provider kept its deploy journal in the database every runner reaches.
    expect(Number(await pg!.query("select count(*) from gpurental_journal.journals"))).toBeGreaterThan(0);
  });

  test("a second run plans no changes, says so, exits 0, updates its comment and applies nothing", async () => {
    // The team committed the stack's lock file, as docs/ci.md advises; init checks the provider against it.
    const lock = written(root, "pr-1", "pipeline-out", "stacks", "gpu-fleet", ".terraform.lock.hcl");
    const runner = checkout("pr-2", { "gpu-fleet.terraform.lock.hcl": lock });
    const output = await expectStep(runner, plan, 0, { PIPELINE_GATES: prGates });
    expect(output).toContain("No changes. Your infrastructure matches the configuration.");
    const out = join(runner, "pipeline-out");
    const report = written(out, "report.md");
    expect(report).toContain("No instance changes.");
    expect(report).not.toContain("#### Instances");
    expect(written(root, "github", "output")).toBe("changes=false\n");
    expect(written(runner, "cdktf.out", "stacks", "gpu-fleet", ".terraform.lock.hcl")).toBe(lock);

    const before = reportComments()[0]!;
    expect(await expectStep(runner, comment, 0, { GITHUB_TOKEN })).toContain("Updated the plan report");
    expect(reportComments()).toEqual([{ ...before, body: expect.stringContaining("No instance changes.") }]);
    expect(github.comments).toHaveLength(3);
    expect(github.comments[1]!.body).toBe(OTHER_STACK_REPORT);

    // The workflow skips the apply job without changes; the script, run anyway, agrees.
    expect(await expectStep(runner, apply, 0)).toContain("nothing to apply");
    expect(live()).toHaveLength(2);
  });

  test("a destroy is a plan like any other: reported with its disk losses, then applied", async () => {
    const runner = checkout("destroy");
    await expectStep(runner, plan, 0, { PIPELINE_DESTROY: "true" });
    const report = written(runner, "pipeline-out", "report.md");
    expect(report).toContain("#### Instances: 2 to destroy");
    expect(report).toContain("[!CAUTION]");
    await expectStep(runner, apply, 0);
    expect(live()).toEqual([]);
    expect(await pg!.query("select count(*) from gpu_fleet.states")).toBe("1");
  });

  test("the same script on the HCL configuration; a gate that trips exits 2 with everything written", async () => {
    const runner = checkout("hcl");
    const output = await expectStep(runner, plan, 2, {
      PIPELINE_DIR: "hcl",
      PIPELINE_GATES: `${prGates} --max-burn-per-hour 1`,
    });
    expect(output).toContain("a gate of the plan report tripped");
    const report = written(runner, "pipeline-out", "report.md");
    expect(report).toContain("#### Instances: 2 to create");
    expect(report).toContain('gpurental_instance.fleet["train"]');
    expect(report).toMatch(/max-burn-per-hour.*\*\*tripped\*\*/);
    expect(written(root, "github", "output")).toBe("changes=true\n");
    expect(await pg!.query("select name from gpu_fleet_hcl.states")).toBe("");
  });

  test("no secret in anything the pipeline printed, wrote or posted, and nothing in HOME", () => {
    const files = ["pr-1", "pr-2", "destroy", "hcl"].flatMap((r) =>
      ["plan.txt", "report.md"].map((f) => written(root, r, "pipeline-out", f)),
    );
    const everything = [...printed, ...files, ...github.comments.map((c) => c.body)].join("\n");
    for (const secret of [apiKeySecret, PG_PASSWORD, GITHUB_TOKEN]) expect(everything).not.toContain(secret);
    process.stderr.write(
      `TMPDIR: ${readdirSync(join(root, "tmp")).join(",")} RUNNER_TEMP: ${readdirSync(join(root, "runner-temp")).join(",")}\n`,
    );
    expect(readdirSync(join(root, "home"))).toEqual([]);
    expect(dirname(join(root, "home"))).toBe(root);
  });
});
