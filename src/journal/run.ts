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
  current ??= newRun(process.pid);
  return current;
}

/**
 * A run of its own for process `pid`: a resident provider process gives each Terraform session
 * one, with the pid of the session's launch, which lives exactly as long as the session.
 */
export function newRun(pid: number): RunIdentity {
  return { id: randomUUID(), pid, boot: readBootId() };
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

/** Whether /proc says `pid` has exited and only waits to be reaped (a zombie), or is being. */
export function exited(pid: number): boolean {
  const stat = procStat(pid);
  return typeof stat === "object" && (stat.state === "Z" || stat.state === "X");
}

/**
 * Whether the process of `run` may still be running: this one, or a live pid of the same boot. A
 * zombie is not: it has exited, and only waits for its parent to reap it. A provider process or a
 * launch whose terraform was killed is reaped by pid 1, which in a container often does so late or
 * never; taken as alive, its deploys would not be adopted, and the next apply would deploy again.
 */
export function runAlive(run: RunIdentity, self: RunIdentity = currentRun()): boolean {
  if (run.id === self.id) return true;
  if (run.boot !== self.boot) return false;
  if (exited(run.pid)) return false;
  try {
    process.kill(run.pid, 0);
    return true;
  } catch (err) {
    // EPERM: the pid exists but belongs to someone else; it may be a reused pid, but assuming it is
    // alive only delays an adoption, never duplicates one.
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** What the command that started this provider asks for, as far as the provider can see it. */
export interface ParentCommand {
  /** `-target` was given: the plan walked only part of the configuration, so a missing claim proves nothing. */
  partial: boolean;
}

/**
 * Reads the parent's command line (Linux /proc; elsewhere nothing is known) and TF_CLI_ARGS*.
 * Terraform runs the provider as its direct child, so the parent is the terraform command.
 */
export function parentCommand(env: NodeJS.ProcessEnv = process.env, ppid = process.ppid): ParentCommand {
  const args: string[] = [];
  try {
    args.push(...readFileSync(`/proc/${ppid}/cmdline`, "utf8").split("\0"));
  } catch {
    // Not Linux, or the parent is gone.
  }
  for (const [k, v] of Object.entries(env)) {
    if ((k === "TF_CLI_ARGS" || k.startsWith("TF_CLI_ARGS_")) && v) args.push(...v.split(/\s+/));
  }
  return { partial: args.some((a) => /^--?target(=|$)/.test(a)) };
}
