import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseFailOn } from "../../plan-report/gates";
import { testIO } from "../../testing/command-io";
import { runCommandInProcess } from "../../testing/command-run";
import { useFakeBackend } from "../../testing/fake-backend";
import { PLAN_REPORT_EXIT, type PlanReportOptions, runPlanReport } from "./plan-report";

// Where `gpurental plan-report --output` may write: a new file only, never the plan it reads nor
// any file that exists, and every refusal names the flag, the path and what to do, before the
// plan or the API is read. Against the fake backend, so that a report is really written.

const fake = useFakeBackend({ workDir: "test" });
const PLAN = readFileSync(join(__dirname, "..", "..", "tfstate", "fixtures", "plan.json"), "utf8");

async function report(opts: PlanReportOptions, plan = "plan.json") {
  const io = testIO(
    { GPURENTAL_BASE_URL: fake.url, GPURENTAL_TOKEN: fake.creds.admin_session_token },
    fake.workDir,
  );
  const code = await runPlanReport(plan, opts, io);
  return { code, out: io.out, err: io.err };
}

beforeEach(() => writeFileSync(join(fake.workDir, "plan.json"), PLAN));

test("--output writes a new file, and refuses one that exists", async () => {
  const first = await report({ output: "report.md" });
  expect(first).toMatchObject({ code: PLAN_REPORT_EXIT.ok, out: "" });
  expect(first.err).toBe(`Plan report written to ${join(fake.workDir, "report.md")}\n`);
  const written = readFileSync(join(fake.workDir, "report.md"), "utf8");
  expect(written).toMatch(/^<!-- gpurental-plan-report -->/);

  writeFileSync(join(fake.workDir, "report.md"), "the last report");
  const again = await report({ output: "report.md" });
  expect(again).toEqual({
    code: PLAN_REPORT_EXIT.failed,
    out: "",
    err: `error: --output report.md (${join(fake.workDir, "report.md")}) already exists: the report never replaces a file. Remove it first, or give a path that does not exist.\n`,
  });
  expect(readFileSync(join(fake.workDir, "report.md"), "utf8")).toBe("the last report");
});

test("--output naming the plan itself is refused and the plan is left whole", async () => {
  const same = await report({ output: "plan.json" });
  expect(same).toEqual({
    code: PLAN_REPORT_EXIT.failed,
    out: "",
    err: "error: --output plan.json is the plan being read: the report would replace it. Write the report to another file.\n",
  });
  // Another name for the same file.
  symlinkSync(join(fake.workDir, "plan.json"), join(fake.workDir, "alias.json"));
  const alias = await report({ output: join(fake.workDir, "alias.json") });
  expect(alias.err).toMatch(/^error: --output .*alias\.json is the plan being read/);
  expect(readFileSync(join(fake.workDir, "plan.json"), "utf8")).toBe(PLAN);
});

test("--output where no file can be made names the flag, the path and the reason", async () => {
  const cases: [string, string][] = [
    [
      "/nonexistent/x.md",
      "error: --output /nonexistent/x.md: its folder /nonexistent does not exist. Create it first.\n",
    ],
    [".", `error: --output . (${fake.workDir}) is a directory: give the path of a file to create in it.\n`],
    ["", "error: --output needs the path of a file to write the report to, got an empty value.\n"],
  ];
  writeFileSync(join(fake.workDir, "file"), "");
  cases.push([
    "file/x.md",
    `error: --output file/x.md (${join(fake.workDir, "file", "x.md")}): a part of its folder ${join(fake.workDir, "file")} is not a directory.\n`,
  ]);
  for (const [output, err] of cases) {
    expect(await report({ output })).toEqual({ code: PLAN_REPORT_EXIT.failed, out: "", err });
  }
});

test("the refusal comes before the plan is read: a missing plan is not what is reported", async () => {
  mkdirSync(join(fake.workDir, "out"));
  const r = await report({ output: "out" }, "missing.json");
  expect(r.err).toMatch(/^error: --output out .* is a directory/);
});

test("--fail-on with no condition is refused naming the flag", async () => {
  expect(() => parseFailOn("")).toThrow(
    "--fail-on needs at least one of disk-loss, replace, destroy, key-revoke, refusal, balance-rule, forget, unjudged (comma-separated), got ''",
  );
  expect(() => parseFailOn(" , ")).toThrow(/--fail-on needs at least one of/);
  const { printed, code } = await runCommandInProcess(["plan-report", "plan.json", "--fail-on", ""]);
  expect(code).toBe(1);
  expect(printed).toMatch(
    /option '--fail-on <conditions>' argument '' is invalid\. --fail-on needs at least one of/,
  );
});

test.each([
  [
    "price_per_hour_micro",
    -2_500_000,
    "with price_per_hour_micro -2500000, out of range (a whole number from 0)",
  ],
  ["disk_gb", -50, "with disk_gb -50, out of range (a whole number from 0)"],
  ["storage_price_per_gb_hour_micro", 2 ** 52, "over the most that adds up exactly, 9007199254740991"],
] as const)("an instance listed with %s %d fails the report, naming it", async (field, value, said) => {
  const client = fake.client();
  const inst = await client.deployInstance({
    offer_id: fake.creds.offer_id,
    template_id: fake.creds.template_id,
    disk_gb: 50,
  });
  // What a faulty server could list: the burn now is their sum, and a negative price would lower it.
  const record = fake.backend.instance(inst.id)!;
  (record as unknown as Record<string, number>)[field] = value;
  const r = await report({ failOn: ["balance-rule"] });
  expect(r).toEqual({
    code: PLAN_REPORT_EXIT.failed,
    out: "",
    err: expect.stringContaining(`GET /v1/instances lists instance ${inst.id} `),
  });
  expect(r.err).toContain(said);
});
