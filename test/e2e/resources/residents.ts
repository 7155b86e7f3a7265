import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { residentPids } from "../../../src/testing/resident";
import type { RunResult, TerraformHarness } from "../harness";
import { alive, until } from "./helpers";

// The resident provider process (the default where a person runs Terraform on Linux) in the suites
// that drive the real terraform CLI with it (resident.e2e.test.ts, resident-interruptions.e2e.test.ts): a resident
// directory per test, the resident processes found and stopped, and which session served each of
// a command's provider launches.

/**
 * The resident directories of a suite: short ones in the temp directory, each turned on for a
 * harness by `use`, their processes stopped by `stop` (after each test) and the directories
 * removed by `remove` (after the suite).
 */
export class ResidentDirs {
  private readonly dirs: string[] = [];

  /**
   * Runs `tf`'s commands as a person at a terminal runs them, where the resident mode is the
   * default (GPURENTAL_PROVIDER_RESIDENT and TF_IN_AUTOMATION unset, no CI variable in the
   * harness's environment), with the directory named `name` (made at its first use); returns it. The idle time is short, so that a resident process the cleanup missed
   * goes away by itself, but not the shortest (5 s): a pause that long between two commands on a
   * busy machine would let the process go and the next command's first launch serve itself.
   */
  use(tf: TerraformHarness, name: string): string {
    // Short, in the temp directory itself: a unix socket path longer than 103 bytes cannot be bound
    // (the launch then serves Terraform itself), and CI's temp directories are deep.
    const dir =
      this.dirs.find((d) => basename(d).startsWith(`gpr-${name}-`)) ??
      mkdtempSync(join(tmpdir(), `gpr-${name}-`));
    if (!this.dirs.includes(dir)) this.dirs.push(dir);
    delete tf.env.GPURENTAL_PROVIDER_RESIDENT;
    delete tf.env.TF_IN_AUTOMATION;
    tf.env.GPURENTAL_PROVIDER_RESIDENT_DIR = dir;
    tf.env.GPURENTAL_PROVIDER_RESIDENT_IDLE_SECONDS = "10";
    return dir;
  }

  /**
   * Stops the resident processes of every directory used (SIGTERM, then SIGKILL) and gives `tf`
   * the harness's settings again (automation, the mode off).
   */
  async stop(tf: TerraformHarness | undefined): Promise<void> {
    for (const dir of this.dirs) {
      const pids = residentPids(dir);
      for (const pid of pids) process.kill(pid, "SIGTERM");
      await until(() => pids.every((p) => !alive(p)), "the resident processes to exit", 10_000).catch(() => {
        for (const pid of pids) if (alive(pid)) process.kill(pid, "SIGKILL");
      });
    }
    if (tf) {
      tf.env.GPURENTAL_PROVIDER_RESIDENT = "off";
      tf.env.TF_IN_AUTOMATION = "1";
    }
    delete tf?.env.GPURENTAL_PROVIDER_RESIDENT_DIR;
    delete tf?.env.GPURENTAL_PROVIDER_RESIDENT_IDLE_SECONDS;
  }

  /** Removes the directories (after `stop`). */
  remove(): void {
    for (const dir of this.dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  }
}

/** The session sockets of the resident processes in `dir` (one per launch being served). */
export function sessionSockets(dir: string): string[] {
  return readdirSync(dir).filter((f) => /^s[0-9a-f]{12}\.sock$/.test(f));
}

/** The control sockets in `dir`: one per resident process (per build and node) once it serves. */
export function controlSockets(dir: string): string[] {
  try {
    return readdirSync(dir)
      .filter((f) => /^[0-9a-f]{16}\.sock$/.test(f))
      .map((f) => join(dir, f));
  } catch {
    return [];
  }
}

/**
 * Waits until one resident process serves `dir` (its control socket is moved into place once it
 * listens) and no other is running; returns its pid.
 */
export async function residentServing(dir: string): Promise<number> {
  await until(
    () => controlSockets(dir).length === 1 && residentPids(dir).length === 1,
    "one resident process serving",
    30_000,
  );
  return residentPids(dir)[0]!;
}

/**
 * From terraform's TF_LOG=debug (or trace) log: each provider launch (its pid) and the session
 * that served it, as the provider's own "session started" record relayed by the launch names it,
 * or null for a launch that served Terraform itself.
 */
export function launches(r: RunResult): Map<number, string | null> {
  const out = new Map<number, string | null>();
  for (const line of r.stderr.split("\n")) {
    const started = / provider: plugin started: .* pid=(\d+)/.exec(line);
    if (started) out.set(Number(started[1]), null);
    if (line.includes(": session started: ")) {
      const pid = / pid=(\d+)/.exec(line)?.[1];
      const address = / address=(\S+)/.exec(line)?.[1];
      if (pid && address && out.has(Number(pid))) out.set(Number(pid), address);
    }
  }
  return out;
}

/** Expects every launch of `r` to have been served by a session of the resident process in `dir`. */
export function expectServedByResident(r: RunResult, dir: string): void {
  const served = launches(r);
  expect(served.size).toBeGreaterThan(0);
  for (const [pid, address] of served) {
    expect({ pid, address }).toEqual({ pid, address: expect.stringMatching(/\/s[0-9a-f]{12}\.sock$/) });
    expect(address!.startsWith(`${dir}/`)).toBe(true);
  }
}

/** The instance ids in the state of `tf`'s working directory. */
export async function stateIds(tf: TerraformHarness): Promise<string[]> {
  const st = await tf.state();
  return (st.values?.root_module?.resources ?? [])
    .filter((r) => r.type === "gpurental_instance")
    .map((r) => r.values.id as string)
    .sort();
}
