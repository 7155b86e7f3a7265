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
   * The command keeps the state elsewhere than its local backend's file (`-state`, `-state-out`, a
   * local backend's legacy options): that file is not the state it saves, and the journal, whose
   * entries any command of the directory shares, reads no other (DeployJournal's state marks
   * would compare one file's lineage with another's).
   */
  stateElsewhere: boolean;
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
  const own = line ? line.slice(line.indexOf(command ?? "", 1) + 1) : [];
  const every = Object.keys(env)
    .filter((k) => k.startsWith("TF_CLI_ARGS_"))
    .sort();
  // Terraform reads TF_CLI_ARGS and TF_CLI_ARGS_<command> (main.go, mergeEnvArgs). Without the
  // command line, every TF_CLI_ARGS_* variable is read. A variable Terraform could not split
  // (it would refuse to run) says the worst of everything.
  const words = (names: readonly string[]) => {
    const all = names.map((k) => shellWords(env[k] ?? ""));
    return all.includes(null) ? null : [...all.flatMap((w) => w ?? []), ...own];
  };
  const mine = words([
    ...(command === undefined ? every : [`TF_CLI_ARGS_${command.replace(/[- ]/g, "_")}`]),
    "TF_CLI_ARGS",
  ]);
  // An apply of a saved plan file does not say on its command line which plan it carries: the
  // plan's own variable (TF_CLI_ARGS_plan=-target=…) counts too, as every other command's.
  const any = words([...every, "TF_CLI_ARGS"]);
  return {
    // OpenTofu's -target-file, -exclude and -exclude-file plan part of the configuration too.
    partial: !any || any.some((a) => /^--?(target|exclude)(-file)?(=|$)/.test(a)),
    // An empty value is the flag's default: the backend's own file.
    stateElsewhere:
      !mine ||
      mine.some((a, i) => /^--?state(-out)?=./s.test(a) || (/^--?state(-out)?$/.test(a) && !!mine[i + 1])),
    locked:
      !!mine &&
      (command === undefined || LOCKING_COMMANDS.has(command)) &&
      // Go's flag package: a boolean flag takes its value only after "=", as strconv.ParseBool reads it.
      !mine.some((a) => /^--?lock=(0|f|F|false|FALSE|False)$/.test(a)),
  };
}

/**
 * The words of a TF_CLI_ARGS variable as Terraform splits them (go-shellwords 1.0.12, without
 * expansion): blanks (space, tab, CR, LF) separate words; a backslash outside single quotes keeps
 * the next character; quotes keep blanks; backquotes and `$(…)` keep blanks and their own
 * characters; an unquoted `;`, `&`, `|`, `<` or `>` ends the list. Null where Terraform would
 * refuse the text (an unclosed quote, a trailing backslash, an unquoted `(`).
 */
export function shellWords(text: string): string[] | null {
  const words: string[] = [];
  const blank = (c: string) => c === " " || c === "\t" || c === "\r" || c === "\n";
  let word = "";
  let got = false;
  let [escaped, single, double, back, dollar] = [false, false, false, false, false];
  for (const c of text) {
    if (escaped) {
      word += c;
      escaped = false;
      got = true;
      continue;
    }
    if (c === "\\") {
      if (single) word += c;
      else escaped = true;
      continue;
    }
    if (blank(c)) {
      if (single || double || back || dollar) word += c;
      else if (got) {
        words.push(word);
        word = "";
        got = false;
      }
      continue;
    }
    const quoted = single || double;
    if (c === "`" && !quoted && !dollar) back = !back;
    else if (c === ")" && !quoted && !back) dollar = !dollar;
    else if (c === "(" && !quoted && !back) {
      if (dollar || !word.endsWith("$")) return null;
      dollar = true;
      word += c;
      continue;
    } else if (c === '"' && !single && !dollar) {
      if (double) got = true;
      double = !double;
      continue;
    } else if (c === "'" && !double && !dollar) {
      if (single) got = true;
      single = !single;
      continue;
    } else if (";&|<>".includes(c) && !(quoted || back || dollar)) {
      // `2>file`: the number goes with the redirection.
      if (c === ">" && /^[0-9]/.test(word)) got = false;
      break;
    }
    word += c;
    got = true;
  }
  if (got) words.push(word);
  return escaped || single || double || back || dollar ? null : words;
}
