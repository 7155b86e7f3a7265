import { rmSync } from "node:fs";
import { join } from "node:path";
import { residentPids } from "../../../src/testing/resident";
import {
  convergeAndDestroy,
  counts,
  createTimeoutKeeps,
  lateArrivalIsNeverSilent,
  paidConfig,
  putBackCutState,
  roomyOffer,
  SECRET_ENV_VALUE,
  slowCreating,
  stateRmThenImportElsewhere,
  straysImportBlocksApplied,
  untrackedIds,
} from "./accounting";
import {
  alive,
  expectCode,
  liveInstances,
  output,
  providerPids,
  resetSuite,
  type Suite,
  startSuite,
  stopSuite,
  until,
  writeConfig,
} from "./helpers";
import { expectServedByResident, ResidentDirs, residentServing, sessionSockets } from "./residents";

// No paid instance escapes Terraform when the provider runs as sessions of the resident process
// (the default where a person runs Terraform on Linux) and the terraform command itself is interrupted, with the real
// terraform CLI: one Ctrl-C, two Ctrl-C 20 ms apart, and kill -9 of terraform, each while 10
// instances are creating. The launches exit and their sessions end; the resident process stays
// and serves the next apply, which adopts what no state holds and deploys nothing twice. The
// accounting is interruptions.e2e.test.ts's (accounting.ts).

jest.setTimeout(300_000);

let s: Suite;
let offerId: string;
/** The resident directories of the tests, whose processes are stopped after each. */
const residents = new ResidentDirs();

beforeAll(async () => {
  s = await startSuite();
});
afterEach(() => residents.stop(s?.tf));
afterAll(async () => {
  await residents.stop(s?.tf);
  await stopSuite(s);
  residents.remove();
});
beforeEach(() => {
  resetSuite(s);
  rmSync(join(s.tf.workDir, ".terraform", "gpurental-journal"), { recursive: true, force: true });
  offerId = roomyOffer(s);
});

const DEBUG = { TF_LOG: "debug" };

/** An apply being interrupted: its resident directory and process, the command and its launches. */
interface Interrupted {
  dir: string;
  resident: number;
  run: ReturnType<Suite["tf"]["spawn"]>;
  launched: number[];
  /** The process group of the command whose launch started the resident process. */
  starterGroup: number;
}

/**
 * Starts the resident process for the test (a validate, run in a process group of its own as a
 * terminal runs a command, whose launch starts it), then an apply of 10 instances, also in a
 * process group of its own, and waits until all 10 are creating.
 */
async function applyCreating(name: string): Promise<Interrupted> {
  const dir = residents.use(s.tf, name);
  writeConfig(s, paidConfig(s, offerId, 10));
  const validate = s.tf.spawn(["validate", "-no-color"], {}, { processGroup: true });
  expectCode(await validate.result, 0);
  const resident = await residentServing(dir);
  slowCreating(s);
  // No TF_LOG: a launch that writes a log line after terraform is gone fails on the closed pipe and
  // exits by that alone; without one, only its watch of its parent ends it.
  const args = ["apply", "-auto-approve", "-input=false", "-no-color"];
  const run = s.tf.spawn(args, {}, { processGroup: true });
  try {
    await until(() => liveInstances(s).length === 10, "10 instances creating");
  } catch (err) {
    run.kill("SIGKILL");
    const r = await run.result;
    throw new Error(`${(err as Error).message}: ${liveInstances(s).length}\n${r.stdout}\n${r.stderr}`);
  }
  const launched = providerPids(run.pid!);
  expect(launched.length).toBeGreaterThan(0);
  // Each launch running now is a session of the resident process.
  expect(sessionSockets(dir)).toHaveLength(launched.length);
  return { dir, resident, run, launched, starterGroup: validate.pid! };
}

/**
 * A terminal's Ctrl-C: SIGINT to the apply's process group, and to the group of the command that
 * started the resident process, which a Ctrl-C in that terminal would reach too had the process
 * stayed in it (it runs in a session of its own).
 */
function ctrlC(i: Interrupted): void {
  i.run.interrupt();
  try {
    process.kill(-i.starterGroup, "SIGINT");
  } catch {
    // No process is left in that group: the resident process is not in it.
  }
}

/**
 * After the interrupted command: its launches have exited, their sessions have ended, and the
 * resident process that served them still serves the directory, alone.
 */
async function sessionsEnded(i: Interrupted): Promise<void> {
  await until(() => i.launched.every((p) => !alive(p)), "the launches to exit", 10_000);
  await until(() => sessionSockets(i.dir).length === 0, "the sessions to end", 10_000);
  expect(await residentServing(i.dir)).toBe(i.resident);
}

/**
 * The next apply, served by the same resident process: converges on the 10 instances by adopting
 * `adopted`, deploys none twice, and leaves nothing after the destroy.
 */
async function convergeThroughResident(i: Interrupted, adopted: readonly string[]): Promise<void> {
  // Counted over every instance ever deployed: none was deployed twice (10 in all).
  const again = await convergeAndDestroy(s, 10, adopted, DEBUG, 10);
  expectServedByResident(again, i.dir);
  expect(output(again)).not.toContain(SECRET_ENV_VALUE);
  expect(residentPids(i.dir)).toEqual([i.resident]);
}

test("Ctrl-C once while 10 instances are creating: terraform stops gracefully, the resident process stays, the state and the next apply account for all 10", async () => {
  const i = await applyCreating("int1");
  ctrlC(i);
  const r = await i.run.result;
  expect(r.code).toBe(1);
  expect(output(r)).toContain("Interrupt received");
  expect(output(r)).toContain("kept, not replaced");
  expect((await counts(s)).state).toBe(10);
  expect(output(r)).not.toMatch(/Plugin did not respond|panic|crash/i);
  await sessionsEnded(i);
  expect(liveInstances(s)).toHaveLength(10);
  // A graceful stop writes the state whole: it holds the stopped creates' instances, kept without
  // taint, which the next apply waits for in place; any instance billed outside it is adopted.
  expect(putBackCutState(s)).toBeNull();
  const untracked = await untrackedIds(s);
  expect((await counts(s)).backend).toBe(10);
  await convergeThroughResident(i, untracked);
});

test("Ctrl-C twice, 20 ms apart, while 10 instances are creating: terraform exits at once, its launches end their sessions, the next apply adopts all that no state holds", async () => {
  const i = await applyCreating("int2");
  ctrlC(i);
  await new Promise((resolve) => setTimeout(resolve, 20));
  ctrlC(i);
  const r = await i.run.result;
  expect(r.code).not.toBe(0);
  await sessionsEnded(i);
  expect(liveInstances(s)).toHaveLength(10);
  // As in interruptions.e2e.test.ts: a state cut short mid-write is put back from the backup (or
  // removed, and then all 10 are billed outside it); the next apply ends with exactly 10.
  const putBack = putBackCutState(s);
  const untracked = await untrackedIds(s);
  if (putBack === "removed") expect(untracked).toHaveLength(10);
  expect((await counts(s)).backend).toBe(10);
  await convergeThroughResident(i, untracked);
});

test("terraform itself killed (kill -9) while 10 instances are creating: its orphaned launch ends its session, the same resident process serves the next apply, which adopts all 10", async () => {
  const i = await applyCreating("kill");
  i.run.kill("SIGKILL");
  const r = await i.run.result;
  expect(r.signal).toBe("SIGKILL");
  // The launch, re-parented, notices its parent is gone and exits, which ends its session.
  await sessionsEnded(i);
  const paid = liveInstances(s).map((inst) => inst.id);
  expect(await counts(s)).toMatchObject({ backend: 10, state: 0, untracked: 10 });
  await convergeThroughResident(i, paid);
});

test("terraform state rm, then an import in another configuration, through the resident process: never adopted back", async () => {
  const dir = residents.use(s.tf, "srm");
  await stateRmThenImportElsewhere(s, offerId);
  expect(residentPids(dir)).toHaveLength(1);
});

test("a deploy committed after the reconcile window, through the resident process: warned on every command until destroyed", async () => {
  residents.use(s.tf, "late");
  await lateArrivalIsNeverSilent(s, offerId);
});

test("gpurental strays import blocks after a killed apply, through the resident process: the plan says what the apply does", async () => {
  residents.use(s.tf, "imp");
  await straysImportBlocksApplied(s, offerId);
});

test("a create timeout while 10 instances are creating, through the resident process: kept without taint, waited for in place; 10 deploys in all", async () => {
  const dir = residents.use(s.tf, "tmo");
  await createTimeoutKeeps(s, offerId);
  expect(residentPids(dir)).toHaveLength(1);
});
