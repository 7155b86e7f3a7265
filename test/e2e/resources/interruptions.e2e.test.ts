import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import {
  convergeAndDestroy,
  counts,
  createTimeoutKeeps,
  deploysEver,
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
  apply,
  expectCode,
  journalAnswers,
  liveInstances,
  output,
  plan,
  providerPids,
  resetSuite,
  type Suite,
  startSuite,
  stopSuite,
  until,
  writeConfig,
} from "./helpers";

// No paid instance escapes Terraform, with the real terraform CLI: an apply interrupted by one
// Ctrl-C or a create timeout (kept without taint, waited for in place), by a double Ctrl-C, by kill -9 of the provider or of terraform itself while instances are creating,
// and a deploy the server commits after the provider gave up on it. Each is followed by an apply
// that adopts what was paid for (with a warning naming the instance and when it was deployed)
// instead of deploying another, and by a destroy that leaves no instance and no key behind.

jest.setTimeout(300_000);

let s: Suite;

beforeAll(async () => {
  s = await startSuite();
});
afterAll(() => stopSuite(s));
beforeEach(() => {
  resetSuite(s);
  rmSync(join(s.tf.workDir, ".terraform", "gpurental-journal"), { recursive: true, force: true });
  delete s.tf.env.GPURENTAL_RECONCILE_TIMEOUT;
  delete s.tf.env.GPURENTAL_REQUEST_TIMEOUT;
  offerId = roomyOffer(s);
});

let offerId: string;

function config(count: number): string {
  return paidConfig(s, offerId, count);
}

test("Ctrl-C once while 10 instances are creating: kept without taint, the next apply waits for them in place; 10 deploys in all", async () => {
  const keysBefore = Object.keys(s.backend.state().api_keys).length;
  writeConfig(s, config(10));
  slowCreating(s);
  // Eleven at once: with Terraform's default of ten, the key could wait behind the ten creating
  // instances and never be created before the Ctrl-C.
  const run = s.tf.spawn(
    ["apply", "-auto-approve", "-input=false", "-no-color", "-parallelism=11"],
    {},
    { processGroup: true },
  );
  await until(
    () => liveInstances(s).length === 10 && Object.keys(s.backend.state().api_keys).length > keysBefore,
    "10 instances creating and the key created",
  );
  run.interrupt();
  const r = await run.result;
  expect(r.code).toBe(1);
  const text = output(r).replace(/\s+/g, " ");
  expect(text).toContain("kept, not replaced");
  expect(text).toContain("the next terraform apply waits for it in place");
  expect(text).not.toContain("continue waiting");
  expect(await counts(s)).toMatchObject({ backend: 10, state: 10, untracked: 0 });
  const state = readFileSync(join(s.tf.workDir, "terraform.tfstate"), "utf8");
  expect(state).not.toContain('"status": "tainted"');
  // The plan waits in place: an update of each, nothing replaced.
  const p = output(expectCode(await plan(s, ["-no-color"]), 2));
  expect(p).toContain("0 to add, 10 to change, 0 to destroy");
  expect(p).toContain("is still creating: this apply waits for it");
  await convergeAndDestroy(s, 10, [], {}, 10);
});

test("a create timeout while creating: kept without taint, the next apply (timeout still set) waits in place; no instance deployed twice", async () => {
  await createTimeoutKeeps(s, offerId);
});

test("a kept instance that ends in error is replaced by the next apply, and only it", async () => {
  writeConfig(
    s,
    config(2).replace(
      '  label       = "journal"',
      '  label       = "journal"\n  timeouts    = { create = "3s" }',
    ),
  );
  slowCreating(s);
  expectCode(await apply(s, ["-no-color"]), 0);
  const [bad] = liveInstances(s);
  // Its host fails to provision it; the other one comes to run.
  s.backend.setHostBehaviour(bad!.machine_id, { provisionFails: true });
  expect(s.backend.completeTransition(bad!.id)).toBe(true);
  s.backend.setHostBehaviour(bad!.machine_id, { provisionFails: false });
  s.backend.setTransitions("immediate");
  const p = output(expectCode(await plan(s, ["-no-color"]), 2)).replace(/\s+/g, " ");
  expect(p).toContain(`Instance ${bad!.id} ended in error after its create was cut short: replaced`);
  expect(p).toContain("Plan: 1 to add, 0 to change, 1 to destroy");
  expectCode(await apply(s, ["-no-color"]), 0);
  expect(deploysEver(s)).toBe(3);
  expect(await counts(s)).toMatchObject({ backend: 2, state: 2, untracked: 0 });
});

test("Ctrl-C twice, 20 ms apart, while 10 instances are creating: the next apply adopts all 10", async () => {
  writeConfig(s, config(10));
  slowCreating(s);
  const run = s.tf.spawn(["apply", "-auto-approve", "-input=false", "-no-color"], {}, { processGroup: true });
  await until(() => liveInstances(s).length === 10, "10 instances creating").catch(async (err) => {
    run.kill("SIGKILL");
    const r = await run.result;
    throw new Error(`${err.message}: ${liveInstances(s).length}\n${r.stdout}\n${r.stderr}`);
  });
  run.interrupt();
  await new Promise((r) => setTimeout(r, 20));
  run.interrupt();
  const r = await run.result;
  expect(r.code).not.toBe(0);
  await until(() => providerPids(run.pid!).length === 0, "the provider to exit", 10_000);
  expect(liveInstances(s)).toHaveLength(10);
  // Terraform exits at the second interrupt: what it had not saved by then is billed outside the
  // state (how many depends on how far the provider's answers to the stop got in 20 ms); what it
  // saved is tainted and replaced. If it was cut short mid-write, the backup Terraform wrote is put
  // back (without one, no state is left and all 10 are billed outside it). Either way the next
  // apply must end with exactly 10, adopting every one the state does not hold.
  const putBack = putBackCutState(s);
  const untracked = await untrackedIds(s);
  if (putBack === "removed") expect(untracked).toHaveLength(10);
  expect((await counts(s)).backend).toBe(10);
  const again = await convergeAndDestroy(s, 10, untracked, {}, 10);
  expect(output(again)).not.toContain(SECRET_ENV_VALUE);
});

test("the provider killed (kill -9) mid-apply: the next apply adopts the instances it deployed", async () => {
  writeConfig(s, config(4));
  slowCreating(s);
  const run = s.tf.spawn(["apply", "-auto-approve", "-input=false", "-no-color"]);
  await until(() => liveInstances(s).length === 4, "4 instances creating");
  // Killed once the journal holds each deploy's answer: a deploy killed between the server's
  // answer and the journal's line is the lost-answer case (adopted by listing), tested below.
  await until(() => journalAnswers(s.tf.workDir) === 4, "the journal to record 4 answers");
  const [pid] = providerPids(run.pid!);
  expect(pid).toBeDefined();
  process.kill(pid!, "SIGKILL");
  const r = await run.result;
  expect(r.code).not.toBe(0);
  const paid = liveInstances(s).map((i) => i.id);
  expect(await counts(s)).toMatchObject({ backend: 4, state: 0, untracked: 4 });

  // The next plan says what it will adopt, and the provider warns about what no state holds.
  s.backend.setTransitions("immediate");
  const p = await s.tf.run(["plan", "-input=false", "-no-color"]);
  for (const id of paid) expect(output(p)).toContain(`Will adopt instance ${id}`);
  expect(output(p)).toContain("The deploy journal holds");
  await convergeAndDestroy(s, 4, paid, {}, 4);
});

test("terraform itself killed (kill -9) mid-apply: the orphaned provider's deploys are adopted", async () => {
  writeConfig(s, config(4));
  slowCreating(s);
  const run = s.tf.spawn(["apply", "-auto-approve", "-input=false", "-no-color"]);
  await until(() => liveInstances(s).length === 4, "4 instances creating");
  const pids = providerPids(run.pid!);
  run.kill("SIGKILL");
  await run.result;
  // The provider notices its parent is gone and exits by itself.
  await until(() => pids.every((p) => !alive(p)), "the orphaned provider to exit", 10_000);
  const paid = liveInstances(s).map((i) => i.id);
  expect(await counts(s)).toMatchObject({ backend: 4, state: 0, untracked: 4 });
  await convergeAndDestroy(s, 4, paid, {}, 4);
});

test("a deploy the server commits after the provider gave up: outcome unknown, then adopted by the next apply", async () => {
  writeConfig(s, config(3));
  // One deploy is held by a proxy and committed 6 s after it was sent; the provider's request gives
  // up after 1 s and it looks for the instance for 2 s (the row's 38 s, shortened).
  s.backend.addFault({ route: "POST /v1/instances", kind: "late-commit", delayMs: 6000, times: 1 });
  s.tf.env.GPURENTAL_REQUEST_TIMEOUT = "1s";
  s.tf.env.GPURENTAL_RECONCILE_TIMEOUT = "2s";
  const first = await apply(s);
  expect(first.code).toBe(1);
  expect(output(first)).toContain("Deploy outcome unknown");
  expect(output(first).replace(/\s+/g, " ")).toContain(
    "the next terraform apply of this configuration adopts it",
  );
  expect(await counts(s)).toMatchObject({ backend: 2, state: 2 });
  await until(() => s.backend.lateCommitsPending() === 0, "the late commit");
  expect(await counts(s)).toMatchObject({ backend: 3, state: 2, untracked: 1 });
  const late = await untrackedIds(s);
  delete s.tf.env.GPURENTAL_REQUEST_TIMEOUT;
  await convergeAndDestroy(s, 3, late);
});

test("terraform state rm, then an import in another configuration: never adopted back, and A's destroy leaves B's instance alone", async () => {
  await stateRmThenImportElsewhere(s, offerId);
});

test("a deploy committed after the reconcile window: every plan, apply and destroy warns about the late arrival until it is destroyed", async () => {
  await lateArrivalIsNeverSilent(s, offerId);
});

test("gpurental strays import blocks after a killed apply: the plan shows imports and creates, no adoption, and the apply does exactly that", async () => {
  await straysImportBlocksApplied(s, offerId);
});
