import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { DEMO_IDS } from "../../../src/fake-backend";
import { residentPids } from "../../../src/testing/resident";
import { roomyOffer, slowCreating } from "./accounting";
import {
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
  TERRAFORM_BLOCK,
  until,
  writeConfig,
} from "./helpers";
import {
  controlSockets,
  expectServedByResident,
  launches,
  ResidentDirs,
  residentServing,
  sessionSockets,
  stateIds,
} from "./residents";

// The resident provider process (the default where a person runs Terraform on Linux) with the real
// terraform CLI: the launches Terraform starts are served by sessions of one process that stays up
// between commands, and each session is the provider its launch would have been (its credentials,
// working directory, journal run and log). Each test has a resident directory of its own; whatever
// resident process a test started is stopped after it.

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

const SECRET_ENV_VALUE = "resident-secret-5c2e81";

function instances(count: number, label: string): string {
  return `resource "gpurental_instance" "gpu" {
  count       = ${count}
  offer_id    = "${offerId}"
  template_id = "${s.creds.template_id}"
  disk_gb     = 50
  label       = "${label}"
  secret_env  = { TOKEN = "${SECRET_ENV_VALUE}" }
}`;
}

test("apply, a plan without changes and destroy, each launch after the first served by the resident process with its log relayed", async () => {
  const dir = residents.use(s.tf, "lifecycle");
  writeConfig(s, instances(3, "resident"));

  const applied = expectCode(await apply(s, [], { TF_LOG: "debug" }), 0);
  expect(liveInstances(s)).toHaveLength(3);
  // No resident process existed: the first launch started one and served Terraform itself.
  const first = [...launches(applied)][0];
  expect(first).toEqual([expect.any(Number), null]);
  const resident = await residentServing(dir);

  const planned = expectCode(await plan(s, [], { TF_LOG: "debug" }), 0);
  expectServedByResident(planned, dir);
  // Records of the provider's code, not only of the resident process, reach terraform's log through
  // the launch: ConfigureProvider's "configured" record with the session's own credential.
  const configured = planned.stderr.split("\n").filter((l) => l.includes(": configured: "));
  expect(configured.length).toBeGreaterThan(0);
  for (const line of configured) {
    expect(line).toMatch(/ provider\.terraform-provider-gpurental_v\S+: configured: /);
    expect(line).toContain(" credential=session");
    expect(line).toContain(" token_from=env");
  }
  expect(planned.stderr).toMatch(/: request: .*url=\/v1\/instances\//);

  const destroyed = await s.tf.run(["destroy", "-auto-approve", "-input=false"], { TF_LOG: "debug" });
  expectCode(destroyed, 0);
  expectServedByResident(destroyed, dir);
  expect(liveInstances(s)).toHaveLength(0);
  expect(await stateIds(s.tf)).toEqual([]);
  // Every session ended with its launch: no session socket is left behind.
  await until(() => sessionSockets(dir).length === 0, "the sessions to end", 10_000);
  expect(residentPids(dir)).toEqual([resident]);
});

test("two working directories with credentials of two organizations, applied at once through one resident process: each keeps to its own, and no credential is written anywhere", async () => {
  const a = s.tf;
  const b = s.tf.workingDir("second-org");
  const dir = residents.use(a, "orgs");
  residents.use(b, "orgs");
  const tokenA = s.creds.admin_session_token;
  const tokenB = s.backend.createSession(DEMO_IDS.otherAdmin, DEMO_IDS.otherOrg);
  b.env.GPURENTAL_TOKEN = tokenB;
  s.backend.setBalance(DEMO_IDS.otherOrg, 1_000_000_000);
  b.write({ "main.tf": `${TERRAFORM_BLOCK}\nprovider "gpurental" {}\n\n${instances(2, "org-b")}\n` });
  writeConfig(s, instances(2, "org-a"));
  await b.ok(["init", "-input=false"]);
  // Started before the applies, so that both are served by the same resident process.
  await a.ok(["validate"]);
  const resident = await residentServing(dir);

  const trace = { TF_LOG: "trace" };
  const [appliedA, appliedB] = await Promise.all([
    a.run(["apply", "-auto-approve", "-input=false"], trace),
    b.run(["apply", "-auto-approve", "-input=false"], trace),
  ]);
  expectCode(appliedA, 0);
  expectCode(appliedB, 0);
  expectServedByResident(appliedA, dir);
  expectServedByResident(appliedB, dir);
  expect(residentPids(dir)).toEqual([resident]);

  // Each organization holds exactly the instances of its own working directory's state.
  const idsA = await stateIds(a);
  const idsB = await stateIds(b);
  expect(idsA).toHaveLength(2);
  expect(idsB).toHaveLength(2);
  const live = (org: string) =>
    liveInstances(s, org)
      .map((i) => i.id)
      .sort();
  expect(live(s.creds.org_id)).toEqual(idsA);
  expect(live(DEMO_IDS.otherOrg)).toEqual(idsB);
  const stateA = readFileSync(join(a.workDir, "terraform.tfstate"), "utf8");
  const stateB = readFileSync(join(b.workDir, "terraform.tfstate"), "utf8");
  for (const id of idsB) expect(stateA).not.toContain(id);
  for (const id of idsA) expect(stateB).not.toContain(id);
  expect(stateA).toContain('"org-a"');
  expect(stateB).toContain('"org-b"');

  // No secret in terraform's trace log (the sessions' relayed records included), in the resident
  // process's own log, or in its environment (it is started without the launch's credentials).
  const log = `${controlSockets(dir)[0]}.log`;
  expect(existsSync(log)).toBe(true);
  const written = [output(appliedA), output(appliedB), readFileSync(log, "utf8")];
  const environ = readFileSync(`/proc/${resident}/environ`, "utf8");
  for (const secret of [tokenA, tokenB, SECRET_ENV_VALUE]) {
    for (const text of written) expect(text).not.toContain(secret);
    expect(environ).not.toContain(secret);
  }
  expect(appliedA.stderr).toContain("[REDACTED]");

  const destroyed = await Promise.all([
    a.run(["destroy", "-auto-approve", "-input=false"]),
    b.run(["destroy", "-auto-approve", "-input=false"]),
  ]);
  for (const r of destroyed) expectCode(r, 0);
  expect(live(s.creds.org_id)).toEqual([]);
  expect(live(DEMO_IDS.otherOrg)).toEqual([]);
});

/**
 * An apply (with `extra` arguments) whose launch is killed while 3 instances are creating, then
 * the same apply again: it adopts the 3 from the deploy journal and deploys none.
 */
async function killedLaunch(name: string, extra: readonly string[]): Promise<void> {
  const dir = residents.use(s.tf, name);
  writeConfig(s, instances(3, "killed"));
  await s.tf.ok(["validate"]);
  const resident = await residentServing(dir);
  slowCreating(s);
  const run = s.tf.spawn(["apply", "-auto-approve", "-input=false", "-no-color", ...extra]);
  let launched: number[] = [];
  try {
    await until(() => liveInstances(s).length === 3, "3 instances creating");
    // Killed once the journal holds each deploy's answer (as in interruptions.e2e.test.ts).
    await until(() => journalAnswers(s.tf.workDir) === 3, "the journal to record 3 answers");
    launched = providerPids(run.pid!);
  } finally {
    if (launched.length === 0) run.kill("SIGKILL");
  }
  expect(launched.length).toBeGreaterThan(0);
  for (const pid of launched) process.kill(pid, "SIGKILL");
  const r = await run.result;
  expect(r.code).not.toBe(0);
  // The session of the killed launch ends in the resident process, which stays up.
  await until(() => sessionSockets(dir).length === 0, "the session to end", 10_000);
  expect(residentPids(dir)).toEqual([resident]);
  const paid = liveInstances(s).map((i) => i.id);
  expect(paid).toHaveLength(3);
  // Terraform, still connected to the session, got no answer from it once the launch was killed
  // (as from a killed provider process): the 3 are billed outside the state until adopted.
  expect(await stateIds(s.tf)).toEqual([]);

  // The next apply, served by the same process that ran the killed session.
  s.backend.setTransitions("immediate");
  const again = expectCode(await apply(s, extra, { TF_LOG: "debug" }), 0);
  expectServedByResident(again, dir);
  for (const id of paid)
    expect(output(again)).toMatch(new RegExp(`Adopted instance ${id}, deployed at \\d{4}-\\d\\d-\\d\\dT`));
  expect(await stateIds(s.tf)).toEqual([...paid].sort());
  expect(liveInstances(s)).toHaveLength(3);
  expectCode(await s.tf.run(["destroy", "-auto-approve", "-input=false"]), 0);
  expect(liveInstances(s)).toHaveLength(0);
}

test("a launch killed (kill -9) mid-apply: its session ends, the resident process stays, the next apply adopts what it deployed", async () => {
  await killedLaunch("killed", []);
});

test("a launch killed (kill -9) mid-apply with -target: the next such apply adopts what it deployed, none is deployed twice", async () => {
  // The killed session's creates return once stopped, to no one: had that been recorded as handed
  // to Terraform, a -target apply (which leaves handed entries alone) would deploy 3 more.
  await killedLaunch("killed-target", ["-target=gpurental_instance.gpu"]);
});
