/**
 * Who is writing the journal: one provider process is one run. Entries remember the run that sent
 * or took them, so that a later run can tell an entry whose process is gone (interrupted, killed,
 * machine restarted) from one that a live process, such as a second provider configuration of the
 * same apply, is still working on.
 */
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";

/** The identity of a provider process, as recorded in the journal. */
export interface RunIdentity {
  /** Random per process. */
  id: string;
  pid: number;
  /** The kernel's boot id where there is one (Linux), so a pid from before a restart is not taken as alive. */
  boot: string | null;
  /**
   * When `pid` started, in clock ticks since boot (Linux /proc), so that a later process given the
   * same pid is not taken for the run; null without /proc, absent from entries of older versions.
   */
  start?: string | null;
  /**
   * The terraform process the run serves (the provider's parent, or a session's launch's), with
   * its start time, where /proc tells them; absent from entries of older versions.
   */
  parent?: { pid: number; start: string } | null;
}

function readBootId(): string | null {
  try {
    return readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim() || null;
  } catch {
    return null;
  }
}

let current: RunIdentity | undefined;

/** This process's run. */
export function currentRun(): RunIdentity {
  current ??= newRun(process.pid, process.ppid);
  return current;
}

/**
 * A run of its own for process `pid`, which serves the terraform process `parent`: a resident
 * provider process gives each Terraform session one, with the pid of the session's launch, which
 * lives exactly as long as the session, and the launch's parent.
 */
export function newRun(pid: number, parent?: number): RunIdentity {
  const own = procStat(pid);
  const up = parent === undefined ? undefined : procStat(parent);
  return {
    id: randomUUID(),
    pid,
    boot: readBootId(),
    start: typeof own === "object" ? own.ticks : null,
    parent: parent !== undefined && typeof up === "object" ? { pid: parent, start: up.ticks } : null,
  };
}

/**
 * The state and start time (clock ticks since boot) of `pid` from /proc/<pid>/stat (fields 3 and
 * 22): undefined when there is no such process or no /proc, "unknown" when it cannot be read.
 */
export function procStat(pid: number): { state: string; ticks: string } | "unknown" | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command's name, in parentheses, may itself hold spaces and parentheses.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return { state: fields[0] ?? "", ticks: fields[19] ?? "" };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return code === "ENOENT" || code === "ESRCH" ? undefined : "unknown";
  }
}

/**
 * Whether `pid` is still the process that started at `ticks` (clock ticks since boot, as procStat
 * gives them; any process of that pid when null or absent) and has not exited. Not it:
 * - a zombie: it has exited, and only waits for its parent to reap it. A provider process or a
 *   launch whose terraform was killed is reaped by pid 1, which in a container often does so late
 *   or never;
 * - a later process given the same pid (its start time differs), whoever's it is.
 * Without /proc, or when it cannot be read, `kill(pid, 0)` answers, EPERM (a process of another
 * user's) counting as alive.
 */
export function processLives(pid: number, ticks?: string | null): boolean {
  const stat = procStat(pid);
  if (typeof stat === "object") {
    if (stat.state === "Z" || stat.state === "X") return false;
    if (typeof ticks === "string" && stat.ticks !== ticks) return false;
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Whether the process of `run` may still be running: this one, or a process of the same boot that
 * is still the run's (processLives). A run taken for alive has its deploys left alone, so the next
 * apply deploys again: a process that is not the run's must not pass. An entry of an older version
 * has no start time, and any live process on its pid is taken for it.
 */
export function runAlive(run: RunIdentity, self: RunIdentity = currentRun()): boolean {
  if (run.id === self.id) return true;
  if (run.boot !== self.boot) return false;
  return processLives(run.pid, run.start);
}

/**
 * Whether `run` may still hand what it deploys to Terraform: its process may still be running
 * (runAlive) and so may the terraform process it serves. Once that terraform is gone, nothing the
 * run still does reaches a state, whatever its own process still does in the half second before
 * it notices (a provider process, or a launch, watches its parent that often), so the next apply
 * may take its deploys: the journal's adoption asks this, where the journal's lock asks runAlive.
 */
export function runServing(run: RunIdentity, self: RunIdentity = currentRun()): boolean {
  if (!runAlive(run, self)) return false;
  if (run.id === self.id || !run.parent) return true;
  return processLives(run.parent.pid, run.parent.start);
}

/**
 * Whether the terraform command `run` served is over: the machine restarted, or its terraform
 * process is gone. Nothing of it can still reach a state, and its state write has happened or
 * never will. A run that does not know its terraform (an older version's) is never over.
 */
export function runOver(run: RunIdentity, self: RunIdentity = currentRun()): boolean {
  if (run.id === self.id) return false;
  if (run.boot !== self.boot) return true;
  if (!run.parent) return false;
  return !processLives(run.parent.pid, run.parent.start);
}

/** A terraform command line's subcommand: after the program and its global options (-chdir=…). */
export function subcommandOf(line: readonly string[]): string {
  return line.slice(1).find((a) => a !== "" && !a.startsWith("-")) ?? "";
}

/** The terraform commands that hold the state's lock while their providers run. */
const LOCKING_COMMANDS = new Set(["plan", "apply", "destroy", "refresh", "import"]);

/** What the command that started this provider asks for, as far as the provider can see it. */
export interface ParentCommand {
  /**
   * `-target` (or OpenTofu's `-target-file`, `-exclude`, `-exclude-file`) was given: the plan walked
   * only part of the configuration, so a missing claim proves nothing.
   */
  partial: boolean;
  /**
   * The command holds the state's lock while it runs the provider: plan, apply, destroy, refresh
   * or import, without `-lock=false`. Not console, query or test, which never lock it. Where the
   * command line cannot be read (no /proc), taken to hold it unless `-lock=false` says otherwise.
   */
  locked: boolean;
  /**
   * Where the command keeps a local backend's state when its command line says (`-state`, a local
   * backend's legacy option): that path, as given. Null when it writes the state elsewhere than it
   * reads it (`-state-out`), so that no one file tells what it saved. Undefined without either.
   */
  statePath: string | null | undefined;
}

/**
 * Reads the parent's command line (Linux /proc; elsewhere nothing is known) and TF_CLI_ARGS*.
 * Terraform runs the provider as its direct child, so the parent is the terraform command.
 */
export function parentCommand(env: NodeJS.ProcessEnv = process.env, ppid = process.ppid): ParentCommand {
  let line: string[] | undefined;
  try {
    line = readFileSync(`/proc/${ppid}/cmdline`, "utf8").split("\0");
  } catch {
    // Not Linux, or the parent is gone.
  }
  const command = line ? subcommandOf(line) : undefined;
  // Terraform puts the words of TF_CLI_ARGS_<command>, then those of TF_CLI_ARGS, right after the
  // subcommand, before the command line's own (main.go, mergeEnvArgs): the last value of a flag
  // wins. Without the command line, every TF_CLI_ARGS_* variable is read.
  const variables =
    command === undefined
      ? Object.keys(env)
          .filter((k) => k.startsWith("TF_CLI_ARGS_"))
          .sort()
      : [`TF_CLI_ARGS_${command.replace(/[- ]/g, "_")}`];
  const own = line ? line.slice(line.indexOf(command ?? "", 1) + 1) : [];
  const args = [...[...variables, "TF_CLI_ARGS"].flatMap((k) => shellWords(env[k] ?? "")), ...own];
  // An empty value is the flag's default: the backend's own file.
  const state = flagValue(args, "state") || undefined;
  const stateOut = flagValue(args, "state-out") || undefined;
  return {
    // OpenTofu's -target-file, -exclude and -exclude-file plan part of the configuration too.
    partial: args.some((a) => /^--?(target|exclude)(-file)?(=|$)/.test(a)),
    statePath: stateOut !== undefined && stateOut !== state ? null : state,
    locked:
      (command === undefined || LOCKING_COMMANDS.has(command)) &&
      // Go's flag package: a boolean flag takes its value only after "=", as strconv.ParseBool reads it.
      !args.some((a) => /^--?lock=(0|f|F|false|FALSE|False)$/.test(a)),
  };
}

/** The value of a string flag as Go's flag package reads it (the last one given), or undefined. */
function flagValue(args: readonly string[], name: string): string | undefined {
  let value: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const m = /^--?([^=]+)(?:=(.*))?$/s.exec(args[i]!);
    if (m?.[1] !== name) continue;
    if (m[2] !== undefined) value = m[2];
    else value = args[++i] ?? "";
  }
  return value;
}

/**
 * The words of a TF_CLI_ARGS variable as Terraform splits them (go-shellwords without expansion):
 * blanks separate words; single quotes keep everything; double quotes keep all but a backslash
 * before `"`, `\`, `$` or a backtick; a backslash elsewhere keeps the next character.
 */
export function shellWords(text: string): string[] {
  const words: string[] = [];
  let word = "";
  let started = false;
  let quote: "'" | '"' | null = null;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quote === "'") {
      if (c === "'") quote = null;
      else word += c;
    } else if (c === "\\" && i + 1 < text.length && (quote === null || `"\\$\``.includes(text[i + 1]!))) {
      word += text[++i];
      started = true;
    } else if (quote === '"') {
      if (c === '"') quote = null;
      else word += c;
    } else if (c === "'" || c === '"') {
      quote = c;
      started = true;
    } else if (/\s/.test(c)) {
      if (started) words.push(word);
      word = "";
      started = false;
    } else {
      word += c;
      started = true;
    }
  }
  if (started) words.push(word);
  return words;
}
