import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readStateSources, type SourceContext } from "./sources";
import { DEFAULT_TERRAFORM_TIMEOUT_MS, runTerraform, TerraformCliError, terraformTimeout } from "./terraform";

// A Terraform CLI run that never ends (a backend that does not answer) is stopped at its time limit
// with everything it started, and the command says what timed out and after how long. The stand-in
// for terraform is a shell script that starts a child of its own and waits.

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "gpurental-terraform-"));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

/** Whether a process runs (a zombie nobody reaped yet does not). */
function running(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}

/** A stand-in for terraform that starts `sleep` in the background, records both pids, and waits. */
function hangingTerraform(opts: { ignoreTerm?: boolean } = {}): { binary: string; pids: () => number[] } {
  const binary = join(root, "terraform");
  const pids = join(root, "pids");
  writeFileSync(
    binary,
    `#!/bin/sh
${opts.ignoreTerm ? "trap '' TERM" : ""}
sleep 300 &
echo "$$ $!" > "${pids}"
wait
`,
  );
  chmodSync(binary, 0o755);
  return {
    binary,
    pids: () => (existsSync(pids) ? readFileSync(pids, "utf8").trim().split(" ").map(Number) : []),
  };
}

async function until(cond: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond() && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
}

test("a state pull that hangs is stopped at the limit, its process group with it, and named", async () => {
  const tf = hangingTerraform();
  writeFileSync(join(root, "main.tf"), "");
  const ctx: SourceContext = {
    env: { PATH: process.env.PATH, TERRAFORM_BINARY_NAME: tf.binary, GPURENTAL_TERRAFORM_TIMEOUT: "300ms" },
    cwd: root,
    readStdin: async () => "",
  };
  const started = Date.now();
  const failure = await readStateSources(["."], ctx).catch((e: unknown) => e);
  expect(failure).toBeInstanceOf(TerraformCliError);
  expect((failure as Error).message).toBe(
    `\`terraform state pull -no-color\` in ${root} did not finish within 300ms and was stopped: a backend that does not answer (unreachable, or a state lock that is never released) holds it. Set GPURENTAL_TERRAFORM_TIMEOUT (e.g. 30m) for a slower one.`,
  );
  expect(Date.now() - started).toBeLessThan(4000);
  const [shell, sleeper] = tf.pids();
  expect(shell).toBeGreaterThan(0);
  await until(() => !running(shell!) && !running(sleeper!));
  expect([running(shell!), running(sleeper!)]).toEqual([false, false]);
});

test("a run that ignores SIGTERM is killed after the grace period", async () => {
  const tf = hangingTerraform({ ignoreTerm: true });
  const env = { PATH: process.env.PATH, TERRAFORM_BINARY_NAME: tf.binary };
  await expect(runTerraform(["show", "-json"], root, env, { timeoutMs: 200, graceMs: 300 })).rejects.toThrow(
    /did not finish within 200ms and was stopped/,
  );
  const [shell, sleeper] = tf.pids();
  await until(() => !running(shell!) && !running(sleeper!));
  expect([running(shell!), running(sleeper!)]).toEqual([false, false]);
});

test("an interrupt reaches terraform's own process group and is waited for; the process ends only after the failure was handled", async () => {
  const binary = join(root, "terraform");
  const got = join(root, "got");
  const pids = join(root, "pids");
  // As Terraform does: on an interrupt it stops, takes a moment to finish, and exits.
  writeFileSync(
    binary,
    `#!/bin/sh
trap 'echo INT > "${got}"; sleep 0.2; exit 1' INT
sleep 300 &
echo "$$ $!" > "${pids}"
wait
`,
  );
  chmodSync(binary, 0o755);
  const listening = process.listenerCount("SIGINT");
  const raised: string[] = [];
  let handled = false;
  const run = runTerraform(
    ["show", "-json"],
    root,
    { PATH: process.env.PATH, TERRAFORM_BINARY_NAME: binary },
    {
      graceMs: 5000,
      raise: (signal) => raised.push(`${signal} after handling: ${handled}`),
    },
  ).catch((e: unknown) => {
    handled = true;
    return e;
  });
  await until(() => existsSync(pids));
  process.emit("SIGINT", "SIGINT");
  const failure = await run;
  expect((failure as Error).message).toBe(`\`terraform show -json\` in ${root} was interrupted (SIGINT)`);
  expect(readFileSync(got, "utf8")).toBe("INT\n");
  await until(() => raised.length > 0);
  expect(raised).toEqual(["SIGINT after handling: true"]);
  const [shell, sleeper] = readFileSync(pids, "utf8").trim().split(" ").map(Number);
  await until(() => !running(shell!) && !running(sleeper!));
  expect([running(shell!), running(sleeper!)]).toEqual([false, false]);
  expect(process.listenerCount("SIGINT")).toBe(listening);
});

test("an interrupt after terraform exited, its group still holding the output open, still fails the run", async () => {
  const binary = join(root, "terraform");
  const pids = join(root, "pids");
  writeFileSync(binary, `#!/bin/sh\nsleep 300 &\necho "$!" > "${pids}"\nexit 0\n`);
  chmodSync(binary, 0o755);
  const raised: string[] = [];
  const run = runTerraform(
    ["show", "-json"],
    root,
    { PATH: process.env.PATH, TERRAFORM_BINARY_NAME: binary },
    {
      // Longer than the test may take: the run must fail on the interrupt, not after the grace.
      graceMs: 120_000,
      raise: (signal) => raised.push(signal),
    },
  ).catch((e: unknown) => e);
  await until(() => existsSync(pids));
  await new Promise((r) => setTimeout(r, 200));
  process.emit("SIGINT", "SIGINT");
  expect(((await run) as Error).message).toBe(`\`terraform show -json\` in ${root} was interrupted (SIGINT)`);
  await until(() => raised.length > 0);
  expect(raised).toEqual(["SIGINT"]);
  const sleeper = Number(readFileSync(pids, "utf8"));
  await until(() => !running(sleeper));
  expect(running(sleeper)).toBe(false);
});

test("an interrupt while a run is stopped at its time limit is what ends the command", async () => {
  const tf = hangingTerraform({ ignoreTerm: true });
  const raised: string[] = [];
  const run = runTerraform(
    ["show", "-json"],
    root,
    { PATH: process.env.PATH, TERRAFORM_BINARY_NAME: tf.binary },
    {
      timeoutMs: 200,
      graceMs: 5000,
      raise: (signal) => raised.push(signal),
    },
  ).catch((e: unknown) => e);
  await until(() => tf.pids().length === 2);
  await new Promise((r) => setTimeout(r, 400));
  process.emit("SIGINT", "SIGINT");
  expect(((await run) as Error).message).toBe(`\`terraform show -json\` in ${root} was interrupted (SIGINT)`);
  await until(() => raised.length > 0);
  expect(raised).toEqual(["SIGINT"]);
  const [shell, sleeper] = tf.pids();
  await until(() => !running(shell!) && !running(sleeper!));
  expect([running(shell!), running(sleeper!)]).toEqual([false, false]);
});

test("the limit: 10 minutes by default, a duration from the environment, a bad one named", () => {
  expect(terraformTimeout({})).toBe(DEFAULT_TERRAFORM_TIMEOUT_MS);
  expect(DEFAULT_TERRAFORM_TIMEOUT_MS).toBe(600_000);
  expect(terraformTimeout({ GPURENTAL_TERRAFORM_TIMEOUT: "1h30m" })).toBe(5_400_000);
  for (const bad of ["10", "0s", "-1m", "forever", "481h"]) {
    expect(() => terraformTimeout({ GPURENTAL_TERRAFORM_TIMEOUT: bad })).toThrow(
      `GPURENTAL_TERRAFORM_TIMEOUT must be a duration of at most 480h, such as 10m or 1h30m, got '${bad}'`,
    );
  }
});

test("a run that ends in time is not touched", async () => {
  const binary = join(root, "terraform");
  writeFileSync(binary, "#!/bin/sh\necho '{\"version\": 4}'\n");
  chmodSync(binary, 0o755);
  const r = await runTerraform(["state", "pull"], root, {
    PATH: process.env.PATH,
    TERRAFORM_BINARY_NAME: binary,
  });
  expect(r).toEqual({ code: 0, stdout: '{"version": 4}\n', stderr: "" });
});
