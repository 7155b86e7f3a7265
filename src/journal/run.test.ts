import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { until } from "../testing/until";
import {
  currentRun,
  newRun,
  parentCommand,
  procStat,
  type RunIdentity,
  runAlive,
  runServing,
  shellWords,
  subcommandOf,
} from "./run";

// Who writes the journal: this process's identity, whether another run's process may still be
// working on its entries, and whether the command planned only part of the configuration.

/** A pid no process has: beyond the largest the kernel hands out. */
const NO_SUCH_PID = Number(readFileSync("/proc/sys/kernel/pid_max", "utf8").trim()) + 1;

describe("currentRun", () => {
  test("one identity per process: a random id, the pid and the kernel's boot id", () => {
    const run = currentRun();
    expect(currentRun()).toBe(run);
    expect(run.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(run.pid).toBe(process.pid);
    expect(run.boot).toBe(readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim());
  });
});

describe("runAlive", () => {
  const self: RunIdentity = { id: "self", pid: process.pid, boot: "boot-1" };

  test.each<[string, RunIdentity, boolean]>([
    ["this run, whatever its pid and boot say", { id: "self", pid: NO_SUCH_PID, boot: "boot-0" }, true],
    ["another run of a live pid of this boot", { id: "other", pid: process.pid, boot: "boot-1" }, true],
    ["another run of a pid that is gone", { id: "other", pid: NO_SUCH_PID, boot: "boot-1" }, false],
    ["another run of a live pid of another boot", { id: "other", pid: process.pid, boot: "boot-0" }, false],
    ["a run of a boot that was not known", { id: "other", pid: process.pid, boot: null }, false],
  ])("%s: %s", (_what, run, alive) => {
    expect(runAlive(run, self)).toBe(alive);
  });

  test("a live pid this user may not signal (EPERM) is taken as alive; any other failure as gone", () => {
    const failWith = (code: string) =>
      jest.spyOn(process, "kill").mockImplementation(() => {
        throw Object.assign(new Error(`kill: ${code}`), { code });
      });
    const other: RunIdentity = { id: "other", pid: process.pid, boot: "boot-1" };
    try {
      failWith("EPERM");
      expect(runAlive(other, self)).toBe(true);
      failWith("ESRCH");
      expect(runAlive(other, self)).toBe(false);
    } finally {
      jest.restoreAllMocks();
    }
  });

  test("a process that has exited but is not reaped yet (a zombie) is gone: its deploys can be adopted", async () => {
    // sh starts a short sleep and becomes a long one, which never reaps it: the short one stays a
    // zombie, as a killed terraform's launches do until pid 1 reaps them.
    // (The short one lasts long enough for the first check on a busy machine.)
    const parent = spawn("sh", ["-c", "sleep 3 & echo $!; exec sleep 30"], {
      stdio: ["ignore", "pipe", "ignore"],
    });
    try {
      const pid = Number(
        await new Promise<string>((resolve) => parent.stdout.once("data", (d: Buffer) => resolve(String(d)))),
      );
      const run: RunIdentity = { id: "other", pid, boot: currentRun().boot };
      expect(runAlive(run)).toBe(true);
      await until(
        "the short sleep is a zombie",
        () => (procStat(pid) as { state: string }).state === "Z",
        10_000,
      );
      expect(runAlive(run)).toBe(false);
      // Its parent, running, is alive.
      expect(runAlive({ ...run, pid: parent.pid! })).toBe(true);
    } finally {
      parent.kill("SIGKILL");
    }
  });

  test("a later process given the run's pid is not the run, whoever's it is: its start time differs", () => {
    const now = currentRun();
    expect(newRun(process.pid).start).toBe((procStat(process.pid) as { ticks: string }).ticks);
    expect(runAlive({ ...newRun(process.pid), id: "other" }, now)).toBe(true);
    expect(runAlive({ ...newRun(process.pid), id: "other", start: "1" }, now)).toBe(false);
    // Another user's process (EPERM) with another start time too.
    jest.spyOn(process, "kill").mockImplementation(() => {
      throw Object.assign(new Error("kill: EPERM"), { code: "EPERM" });
    });
    try {
      expect(runAlive({ ...newRun(process.pid), id: "other", start: "1" }, now)).toBe(false);
      // An entry of an older version, without a start time, is judged as before.
      expect(runAlive({ id: "other", pid: process.pid, boot: now.boot }, now)).toBe(true);
    } finally {
      jest.restoreAllMocks();
    }
  });

  test("judged against this process's run by default", () => {
    expect(runAlive({ ...currentRun(), id: "other" })).toBe(true);
    expect(runAlive({ ...currentRun(), id: "other", pid: NO_SUCH_PID })).toBe(false);
  });
});

describe("runServing", () => {
  // A run whose process lingers after its terraform was killed (a provider process or a launch
  // notices its parent gone within half a second) serves nobody: the next apply adopts its deploys.
  test("a run serves while its process and its terraform run; not once its terraform is gone", async () => {
    const now = currentRun();
    // sh stands in for terraform, its sleep for the run's process.
    const terraform = spawn("sh", ["-c", "sleep 30 & echo $!; wait"], {
      stdio: ["ignore", "pipe", "ignore"],
    });
    try {
      const pid = Number(
        await new Promise<string>((resolve) =>
          terraform.stdout.once("data", (d: Buffer) => resolve(String(d))),
        ),
      );
      const run = { ...newRun(pid, terraform.pid!), id: "other" };
      expect(run.parent).toEqual({
        pid: terraform.pid,
        start: (procStat(terraform.pid!) as { ticks: string }).ticks,
      });
      expect(runServing(run, now)).toBe(true);
      expect(runServing({ ...run, parent: { pid: terraform.pid!, start: "1" } }, now)).toBe(false);
      // An entry of an older version, without its terraform, is judged by its process alone.
      expect(runServing({ ...run, parent: undefined }, now)).toBe(true);
      terraform.kill("SIGKILL");
      await until("terraform is gone", () => procStat(terraform.pid!) === undefined, 5_000);
      expect(runAlive(run, now)).toBe(true);
      expect(runServing(run, now)).toBe(false);
      process.kill(pid, "SIGKILL");
    } finally {
      terraform.kill("SIGKILL");
    }
  });

  test("this run serves, and a run whose process is gone does not", () => {
    const now = currentRun();
    expect(runServing(now, now)).toBe(true);
    expect(runServing({ ...now, id: "other", pid: NO_SUCH_PID, start: null }, now)).toBe(false);
  });
});

describe("parentCommand", () => {
  // A parent that is gone: only the environment tells.
  const cmd = (env: NodeJS.ProcessEnv) => parentCommand(env, NO_SUCH_PID);

  test.each<[string, NodeJS.ProcessEnv, boolean]>([
    ["nothing", {}, false],
    ["TF_CLI_ARGS with -target=", { TF_CLI_ARGS: "-target=gpurental_instance.a" }, true],
    [
      "TF_CLI_ARGS_apply with --target",
      { TF_CLI_ARGS_apply: "-input=false --target gpurental_instance.a" },
      true,
    ],
    ["TF_CLI_ARGS_plan with -target alone", { TF_CLI_ARGS_plan: "-target\tgpurental_instance.a" }, true],
    [
      "an option that only starts with target",
      { TF_CLI_ARGS: "-targets=x -target-files=y -excluded=z" },
      false,
    ],
    ["OpenTofu's -target-file", { TF_CLI_ARGS_plan: "-target-file=targets.txt" }, true],
    ["OpenTofu's -exclude", { TF_CLI_ARGS_apply: "-exclude gpurental_instance.a" }, true],
    ["OpenTofu's --exclude-file", { TF_CLI_ARGS: "--exclude-file=skip.txt" }, true],
    ["target without a dash", { TF_CLI_ARGS: "target=x" }, false],
    ["a dash inside a word", { TF_CLI_ARGS: "x-target=y" }, false],
    [
      "a variable that only starts with TF_CLI_ARGS",
      { TF_CLI_ARGSX: "-target=x", MY_TF_CLI_ARGS: "-target=x" },
      false,
    ],
    ["-target in another variable", { OTHER: "-target=x" }, false],
    ["an empty TF_CLI_ARGS", { TF_CLI_ARGS: "" }, false],
    ["an unset TF_CLI_ARGS_apply", { TF_CLI_ARGS_apply: undefined }, false],
  ])("%s: partial %s", (_what, env, partial) => {
    expect(cmd(env).partial).toBe(partial);
  });

  test.each<[string, NodeJS.ProcessEnv, boolean]>([
    ["nothing", {}, true],
    ["TF_CLI_ARGS_plan with -lock=false", { TF_CLI_ARGS_plan: "-input=false -lock=false" }, false],
    ["--lock=0", { TF_CLI_ARGS: "--lock=0" }, false],
    ["-lock=F", { TF_CLI_ARGS: "-lock=F" }, false],
    ["-lock=true", { TF_CLI_ARGS: "-lock=true" }, true],
    ["-lock-timeout=5m", { TF_CLI_ARGS: "-lock-timeout=5m" }, true],
    // A boolean flag takes no value apart: Terraform would refuse it, so it says nothing.
    ["-lock false", { TF_CLI_ARGS: "-lock false" }, true],
  ])("a command line that cannot be read, %s: locked %s", (_what, env, locked) => {
    expect(cmd(env).locked).toBe(locked);
  });

  test.each<[string, NodeJS.ProcessEnv, boolean]>([
    ["nothing", {}, false],
    ["-state=", { TF_CLI_ARGS_apply: "-state=other.tfstate" }, true],
    ["-state apart from its value", { TF_CLI_ARGS: "-state other.tfstate" }, true],
    ["--state-out=", { TF_CLI_ARGS_plan: "--state-out=out.tfstate" }, true],
    ["an empty -state (the default)", { TF_CLI_ARGS: "-state=" }, false],
    ["a quoted value with blanks", { TF_CLI_ARGS: `-state="my state.tfstate"` }, true],
    ["-state inside a quoted value", { TF_CLI_ARGS: `-var="a -state b" -var='x=-state-out=y'` }, false],
    ["-state after an operator, which ends the words", { TF_CLI_ARGS: "-input=false ; -state=x" }, false],
    ["options that only start with state", { TF_CLI_ARGS: "-states=x -state-file=y -stateful" }, false],
    ["-backup", { TF_CLI_ARGS: "-backup=b.tfstate" }, false],
    ["a variable terraform could not split", { TF_CLI_ARGS: `-var="open` }, true],
  ])("%s: the state is elsewhere %s", (_what, env, elsewhere) => {
    expect(cmd(env).stateElsewhere).toBe(elsewhere);
  });

  test("a variable terraform could not split says the worst of everything", () => {
    expect(cmd({ TF_CLI_ARGS_output: "-x=(" })).toEqual({
      partial: true,
      locked: false,
      stateElsewhere: true,
    });
  });

  // As go-shellwords 1.0.12 splits them, without expansion (Terraform's main.go).
  test.each<[string, string[] | null]>([
    ["a b  c", ["a", "b", "c"]],
    ["  a \t b\r\n", ["a", "b"]],
    ["a\u00a0b\vc", ["a\u00a0b\vc"]],
    [`-var="a b" -var='c "d"' e\\ f`, ["-var=a b", `-var=c "d"`, "e f"]],
    [`"a\\"b" "\\$x" "\\q" '\\n'`, ['a"b', "$x", "q", "\\n"]],
    [`"" ''`, ["", ""]],
    ["a;b c", ["a"]],
    ["a b|c d", ["a", "b"]],
    ["a 2>err b", ["a"]],
    ["'a;b' \"c|d\" e\\&f", ["a;b", "c|d", "e&f"]],
    ["-var=`a -state=s` x", ["-var=`a -state=s`", "x"]],
    ["-var=$(a b) x", ["-var=$(a b)", "x"]],
    [`"open`, null],
    ["'open", null],
    ["trailing\\", null],
    ["a(b", null],
    ["`open", null],
  ])("TF_CLI_ARGS %j is the words %j", (text, words) => {
    expect(shellWords(text)).toEqual(words);
  });

  test("with the command line read, TF_CLI_ARGS and the variable of its own subcommand count; for -target, every one", async () => {
    // Stand-ins for `terraform apply`: a script named apply, run from its folder.
    const dir = mkdtempSync(join(tmpdir(), "gpurental-run-"));
    writeFileSync(join(dir, "apply"), "process.stdout.write('up'); setInterval(() => {}, 1000)");
    const standIns: ReturnType<typeof spawn>[] = [];
    const standIn = async (...args: string[]) => {
      const parent = spawn(process.execPath, ["apply", ...args], {
        cwd: dir,
        stdio: ["ignore", "pipe", "ignore"],
      });
      standIns.push(parent);
      await new Promise<void>((resolve, reject) => {
        parent.stdout!.once("data", () => resolve());
        parent.once("error", reject);
        parent.once("exit", (code) => reject(new Error(`the stand-in exited with ${code}`)));
      });
      return parent.pid ?? NO_SUCH_PID;
    };
    try {
      const pid = await standIn("-input=false");
      const others = { TF_CLI_ARGS_output: "-state=prod.tfstate -lock=false" };
      expect(parentCommand(others, pid)).toEqual({ partial: false, locked: true, stateElsewhere: false });
      // An apply of a saved plan does not say which plan it carries: the plan's -target counts.
      expect(parentCommand({ TF_CLI_ARGS_plan: "-target=x" }, pid).partial).toBe(true);
      expect(parentCommand({ ...others, TF_CLI_ARGS_apply: "-state=a" }, pid)).toEqual({
        partial: false,
        locked: true,
        stateElsewhere: true,
      });
      expect(parentCommand({ TF_CLI_ARGS: "-lock=false" }, pid).locked).toBe(false);
      // Another command's variable that Terraform could not split: only -target's reading, which
      // counts every variable, says the worst.
      expect(parentCommand({ TF_CLI_ARGS_output: `-var="open` }, pid)).toEqual({
        partial: true,
        locked: true,
        stateElsewhere: false,
      });
      // The command line's own words.
      expect(parentCommand({}, await standIn("-target=x", "-lock=false", "-state=s"))).toEqual({
        partial: true,
        locked: false,
        stateElsewhere: true,
      });
    } finally {
      for (const p of standIns) p.kill("SIGKILL");
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test.each<[string[], string]>([
    [["terraform", "plan", "-out=p"], "plan"],
    [["/usr/bin/terraform", "-chdir=infra", "apply", "p"], "apply"],
    [["terraform", "-chdir", "x"], "x"],
    [["terraform", "", "console", "-plan"], "console"],
    [["terraform"], ""],
  ])("the subcommand of %j is %j", (line, command) => {
    expect(subcommandOf(line)).toBe(command);
  });

  test("a parent that is no locking terraform command (console, query, test) does not hold the lock", () => {
    // Jest's command line, read from /proc: its first word after the program is no such command.
    expect(parentCommand({}, process.pid).locked).toBe(false);
  });

  test("a parent whose command line has -target is partial, read from /proc", async () => {
    // A process of our own stands in for terraform: its command line is all that is read.
    // It says when it runs: only then is its command line in /proc (not while it is being exec'd).
    const parent = spawn(
      process.execPath,
      ["-e", "process.stdout.write('up'); setInterval(() => {}, 1000)", "--", "-target=gpurental_instance.a"],
      { stdio: ["ignore", "pipe", "ignore"] },
    );
    try {
      await new Promise<void>((resolve, reject) => {
        parent.stdout.once("data", () => resolve());
        parent.once("error", reject);
        parent.once("exit", (code) => reject(new Error(`the stand-in exited with ${code}`)));
      });
      const pid = parent.pid ?? NO_SUCH_PID;
      expect(readFileSync(`/proc/${pid}/cmdline`, "utf8")).toContain("-target=gpurental_instance.a");
      expect(parentCommand({}, pid).partial).toBe(true);
    } finally {
      parent.kill("SIGKILL");
    }
  });

  test("a parent command line without -target is not partial", () => {
    expect(parentCommand({}).partial).toBe(false);
    // Read from /proc: jest's own command line has no -target either, and it is read without error.
    expect(parentCommand({}, process.pid).partial).toBe(false);
  });
});
