import { spawn } from "node:child_process";
import { closeSync, existsSync, openSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { GpurentalClient } from "../../../src/api/client";
import { useFakeBackend } from "../../../src/testing/fake-backend";

// The built `gpurental` under outputs that fail: a stdout whose reader is gone (`| head -c 5`,
// `| true`: EPIPE) and a stdout on a full disk (`> /dev/full`: ENOSPC). No stack trace, ever; a
// closed pipe is a quiet end with the exit code of the work; a full disk is one line on stderr and
// exit code 1; and `strays --destroy` goes on to destroy every stray when its progress cannot be
// printed, saying so at the end. Against the fake backend, in its own process.

jest.setTimeout(120_000);

const fake = useFakeBackend({ workDir: "test" });
const BIN = join(__dirname, "..", "..", "..", "bin", "gpurental");
const PLAN = readFileSync(
  join(__dirname, "..", "..", "..", "src", "tfstate", "fixtures", "plan.json"),
  "utf8",
);

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the binary with stdout read ("pipe"), closed before it writes ("closed"), or on /dev/full. */
function run(args: string[], stdout: "pipe" | "closed" | "full"): Promise<Ran> {
  const env = {
    PATH: process.env.PATH,
    GPURENTAL_BASE_URL: fake.url,
    GPURENTAL_TOKEN: fake.creds.admin_session_token,
  };
  const full = stdout === "full" ? openSync("/dev/full", "w") : undefined;
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: fake.workDir,
    env,
    stdio: ["ignore", full ?? "pipe", "pipe"],
  });
  if (full !== undefined) closeSync(full);
  let out = "";
  let err = "";
  // The reader leaves before the command writes anything: every write meets EPIPE.
  if (stdout === "closed") child.stdout?.destroy();
  else child.stdout?.setEncoding("utf8").on("data", (t: string) => (out += t));
  child.stderr?.setEncoding("utf8").on("data", (t: string) => (err += t));
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout: out, stderr: err }));
  });
}

const NO_CRASH = /Unhandled 'error' event|node:events|\n\s+at /;

beforeEach(() => {
  writeFileSync(join(fake.workDir, "plan.json"), PLAN);
  writeFileSync(join(fake.workDir, "s.tfstate"), JSON.stringify({ version: 4, resources: [] }));
});

test.each([
  ["plan-report --json", ["plan-report", "--json", "plan.json"]],
  ["plan-report (Markdown)", ["plan-report", "plan.json"]],
  ["strays --json", ["strays", "--json", "s.tfstate"]],
  ["strays (table)", ["strays", "s.tfstate"]],
  ["--help", ["--help"]],
])("%s under a closed pipe: a quiet end with the work's exit code", async (_, args) => {
  const normal = await run(args, "pipe");
  expect(normal.stdout).not.toBe("");
  const closed = await run(args, "closed");
  expect(closed.stderr).not.toMatch(NO_CRASH);
  expect(closed).toEqual({ code: normal.code, stdout: "", stderr: normal.stderr });
});

test.each([
  ["plan-report --json", ["plan-report", "--json", "plan.json"]],
  ["strays --json", ["strays", "--json", "s.tfstate"]],
])("%s on a full disk: one line naming stdout and the reason, exit code 1", async (_, args) => {
  if (!existsSync("/dev/full")) return;
  const r = await run(args, "full");
  expect(r).toEqual({
    code: 1,
    stdout: "",
    stderr:
      "gpurental: standard output could not be written: no space left on device (ENOSPC). The output is incomplete; the command itself ran to its end.\n",
  });
});

test("strays --destroy goes on to the end when stdout closes, and says so", async () => {
  const client = new GpurentalClient({ baseUrl: fake.url, token: fake.creds.admin_session_token });
  for (let i = 0; i < 3; i++) {
    await client.deployInstance({
      offer_id: fake.creds.offer_id,
      template_id: fake.creds.template_id,
      disk_gb: 20,
      ssh_key_id: fake.creds.ssh_key_id,
      label: `stray-${i}`,
    });
  }
  const live = () =>
    fake.backend
      .listInstances(fake.creds.org_id)
      .filter((i) => i.status !== "destroyed" && i.status !== "destroying");
  expect(live().length).toBeGreaterThanOrEqual(3);

  const r = await run(["strays", "--destroy", "--yes", "--no-wait", "s.tfstate"], "closed");
  expect(r.stderr).not.toMatch(NO_CRASH);
  // Every stray was destroyed although none of the progress could be printed.
  expect(live()).toEqual([]);
  expect(r.stderr).toMatch(
    /^gpurental: standard output was closed \(EPIPE\) while the command went on; it ran to its end, but \d+ later writes were not shown\.\n$/,
  );
  expect(r.code).not.toBe(1);
});
