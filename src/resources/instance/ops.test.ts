import { GpurentalClient } from "../../api/client";
import { RequestAbortedError } from "../../api/errors";
import type { RetryOptions } from "../../api/retry";
import { DEMO_IDS } from "../../fake-backend";
import type { DeploySettings } from "../../provider/provider-data";
import { useFakeBackend } from "../../testing/fake-backend";
import type { InstanceArgs } from "./model";
import type { OpContext } from "./op-context";
import { createInstance, deleteInstance, readInstance } from "./ops";
import { updateInstance } from "./power";

// The instance lifecycle against the in-process fake backend, without Terraform: fast feedback on
// the waits, the refusals, the lost-deploy reconciliation and the start failures.

const fake = useFakeBackend();

function ctx(timeoutMs = 5000, token?: string, retry: RetryOptions = { maxAttempts: 4 }): OpContext {
  const client = fake.client({
    ...(token ? { token } : {}),
    retry: { baseDelayMs: 5, maxDelayMs: 20, ...retry },
    // Retry-After of 429/503 answers is honoured, but not slept for real in these tests.
    sleep: (ms, signal) => fastSleep(ms, signal),
  });
  return { client, timeoutMs, initialPollMs: 5, maxPollMs: 20, sleep: (ms, signal) => fastSleep(ms, signal) };
}

function fastSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    setTimeout(resolve, Math.min(ms, 20));
  });
}

function args(over: Partial<InstanceArgs> = {}): InstanceArgs {
  return {
    offer_id: fake.creds.offer_id,
    offer_filter: null,
    template_id: fake.creds.template_id,
    disk_gb: 50,
    label: "ops-test",
    ssh_key_id: fake.creds.ssh_key_id,
    env: { A: "1" },
    secret_env: { S: "secret-value" },
    unset_env: ["TZ"],
    desired_status: "running",
    ...over,
  };
}

const noJournal: DeploySettings = {
  journal: null,
  reconcileTimeoutMs: 5000,
  partial: false,
  account: { base_url: "", org_id: null },
};

const live = () => fake.backend.listInstances(fake.creds.org_id).filter((i) => i.status !== "destroyed");

test("create, read, stop, start, delete", async () => {
  const created = await createInstance(args(), ctx());
  expect(created.diagnostics).toEqual([]);
  const s = created.state!;
  expect(s.status).toBe("running");
  expect(s.desired_status).toBe("running");
  expect(s.env).toEqual({ A: "1" });
  expect(s.ssh_key_id).toBe(fake.creds.ssh_key_id);
  expect(s.allowed_actions).toEqual(["stop", "destroy"]);
  const record = fake.backend.instance(s.id)!;
  expect(record.env.find((e) => e.key === "S")).toMatchObject({ value: "secret-value", secret: true });
  expect(record.env.find((e) => e.key === "TZ")).toBeUndefined();

  const read = await readInstance(s.id, s, ctx());
  expect(read.state).toEqual({ ...s, spend_micro: read.state!.spend_micro });

  const stopped = await updateInstance(s.id, { ...args(), desired_status: "stopped" }, ctx());
  expect(stopped.diagnostics).toEqual([]);
  expect(stopped.state).toMatchObject({ status: "stopped", desired_status: "stopped" });

  const started = await updateInstance(s.id, args(), ctx());
  expect(started.diagnostics).toEqual([]);
  expect(started.state).toMatchObject({ status: "running", desired_status: "running" });

  expect(await deleteInstance(s.id, ctx())).toEqual({ state: null, diagnostics: [] });
  expect(fake.backend.instance(s.id)?.status).toBe("destroyed");
  expect(await readInstance(s.id, s, ctx())).toEqual({ state: null, diagnostics: [] });
  // Deleting again is fine.
  expect(await deleteInstance(s.id, ctx())).toEqual({ state: null, diagnostics: [] });
});

test("create with desired_status stopped ends stopped", async () => {
  const r = await createInstance(args({ desired_status: "stopped" }), ctx());
  expect(r.diagnostics).toEqual([]);
  expect(r.state).toMatchObject({ status: "stopped", desired_status: "stopped" });
});

test("a refused deploy records nothing and names the code on the attribute", async () => {
  const r = await createInstance(args({ disk_gb: 1900, offer_id: fake.creds.small_disk_offer_id }), ctx());
  expect(r.state).toBeNull();
  expect(r.diagnostics[0]).toMatchObject({ severity: "error", path: [{ attribute: "disk_gb" }] });
  expect(r.diagnostics[0]!.summary).toMatch(/^DISK_TOO_LARGE: /);
  expect(r.diagnostics[0]!.detail).toContain("500 GB");
  expect(live()).toHaveLength(0);
});

test("a deploy refused at the instance limit counts the instances that hold the places", async () => {
  const m = fake.backend.createMachine({ disk_gb: 4000 });
  const bulk = fake.backend.createOffer({ machine_id: m.id, free_units: 30 });
  const c = ctx();
  for (let i = 0; i < 25; i++) {
    await c.client.deployInstance({ offer_id: bulk.id, template_id: fake.creds.template_id, disk_gb: 10 });
  }
  // Destroyed instances do not count.
  await c.client.destroyInstance(live()[0]!.id);
  await c.client.listInstances();
  await c.client.deployInstance({ offer_id: bulk.id, template_id: fake.creds.template_id, disk_gb: 10 });
  const r = await createInstance(args({ offer_id: bulk.id }), c);
  expect(r.state).toBeNull();
  expect(r.diagnostics[0]!.summary).toMatch(/^INSTANCE_LIMIT_REACHED: /);
  expect(r.diagnostics[0]!.detail).toContain(
    "The organization has 25 instances that are not destroyed, and the limit is 25",
  );
  expect(live()).toHaveLength(25);
});

test("a failed provisioning returns the instance with the error", async () => {
  fake.backend.setHostBehaviour(DEMO_IDS.machineLarge, { provisionFails: true });
  const r = await createInstance(args(), ctx());
  expect(r.state).toMatchObject({ status: "error", error_code: "provision_failed" });
  expect(r.diagnostics[0]!.summary).toMatch(/^provision_failed: /);
});

test("a create timeout while the instance is creating keeps it with a warning, never an error", async () => {
  fake.backend.setTransitions("manual");
  const r = await createInstance(args(), ctx(150));
  expect(r.state).toMatchObject({ status: "creating" });
  expect(r.unfinished).toBe(true);
  // An error would have Terraform taint the instance and the next apply replace it.
  expect(r.diagnostics.map((d) => d.severity)).toEqual(["warning"]);
  expect(r.diagnostics[0]!.summary).toBe(`Instance ${r.state!.id} is still creating: kept, not replaced`);
  expect(r.diagnostics[0]!.detail).toContain("The create's timeout ended");
  expect(r.diagnostics[0]!.detail).toContain("the next terraform apply waits for it in place");
  expect(live()).toHaveLength(1);

  // The next apply's update waits for it in place and records it running.
  fake.backend.setTransitions("immediate");
  const done = await updateInstance(r.state!.id, args(), ctx());
  expect(done.diagnostics).toEqual([]);
  expect(done.state).toMatchObject({ id: r.state!.id, status: "running" });
  expect(live()).toHaveLength(1);
});

test("Terraform's stop while the instance is creating keeps it with a warning saying so", async () => {
  fake.backend.setTransitions("manual");
  const stop = new AbortController();
  setTimeout(() => stop.abort(new Error("stop")), 100);
  const r = await createInstance(args(), { ...ctx(5000), signal: stop.signal });
  expect(r.unfinished).toBe(true);
  expect(r.state).toMatchObject({ status: "creating" });
  expect(r.diagnostics.map((d) => d.severity)).toEqual(["warning"]);
  expect(r.diagnostics[0]!.detail).toContain("Terraform was stopped while instance");
  expect(live()).toHaveLength(1);
});

test("a create kept while creating that then fails is an error of the update, for the next plan to replace", async () => {
  fake.backend.setTransitions("manual");
  fake.backend.setHostBehaviour(DEMO_IDS.machineLarge, { provisionFails: true });
  const r = await createInstance(args(), ctx(150));
  expect(r.unfinished).toBe(true);
  fake.backend.setTransitions("immediate");
  const done = await updateInstance(r.state!.id, args(), ctx());
  expect(done.state).toMatchObject({ status: "error" });
  expect(done.diagnostics.map((d) => d.severity)).toEqual(["error"]);
});

test("a failed provisioning within the create is still an error (Terraform taints and replaces it)", async () => {
  fake.backend.setTransitions("manual");
  fake.backend.setHostBehaviour(DEMO_IDS.machineLarge, { provisionFails: true });
  const pending = createInstance(args(), ctx(5000));
  await new Promise((r) => setTimeout(r, 50));
  fake.backend.setTransitions("immediate");
  const r = await pending;
  expect(r.unfinished).toBeUndefined();
  expect(r.state).toMatchObject({ status: "error" });
  expect(r.diagnostics[0]!.severity).toBe("error");
});

test("a lost deploy answer is reconciled to the instance it created", async () => {
  fake.backend.addFault({ route: "POST /v1/instances", kind: "lost-response", times: 1 });
  const r = await createInstance(args(), ctx());
  expect(r.diagnostics).toEqual([]);
  expect(live()).toHaveLength(1);
  expect(r.state!.id).toBe(live()[0]!.id);
});

test("a deploy whose connection dropped is never sent again: its outcome is unknown", async () => {
  fake.backend.addFault({ route: "POST /v1/instances", kind: "drop", times: 1 });
  const r = await createInstance(args(), { ...ctx(), settings: { ...noJournal, reconcileTimeoutMs: 300 } });
  expect(r.state).toBeNull();
  expect(r.diagnostics.map((d) => d.summary)).toEqual(["Deploy outcome unknown"]);
  expect(r.diagnostics[0]!.detail).toContain("It was not sent again");
  expect(r.diagnostics[0]!.detail).toContain("(0.3 s)");
  expect(live()).toHaveLength(0);
});

test("lost answers do not adopt instances that existed before", async () => {
  const first = await createInstance(args(), ctx());
  fake.backend.addFault({ route: "POST /v1/instances", kind: "lost-response", times: 1 });
  const second = await createInstance(args(), ctx());
  expect(second.diagnostics).toEqual([]);
  expect(second.state!.id).not.toBe(first.state!.id);
  expect(live()).toHaveLength(2);
});

test("parallel deploys with lost answers each get their own instance", async () => {
  fake.backend.addFault({ route: "POST /v1/instances", kind: "lost-response", times: 2 });
  const rs = await Promise.all([
    createInstance(args(), ctx()),
    createInstance(args(), ctx()),
    createInstance(args(), ctx()),
  ]);
  expect(rs.flatMap((r) => r.diagnostics)).toEqual([]);
  expect(new Set(rs.map((r) => r.state!.id)).size).toBe(3);
  expect(live()).toHaveLength(3);
});

test("429 and 503 on deploy converge", async () => {
  fake.backend.addFault({
    route: "POST /v1/instances",
    kind: "status",
    status: 429,
    retryAfterSeconds: 0,
    times: 1,
  });
  fake.backend.addFault({ route: "POST /v1/instances", kind: "status", status: 503, times: 1 });
  const r = await createInstance(args(), ctx());
  expect(r.diagnostics).toEqual([]);
  expect(live()).toHaveLength(1);
});

describe("start failures", () => {
  async function stoppedInstance() {
    const r = await createInstance(args({ desired_status: "stopped" }), ctx());
    return r.state!;
  }

  test.each([
    [{ unreachable: true }, "HOST_UNREACHABLE"],
    [{ refuseStart: "refused" as const }, "START_REFUSED"],
    [{ refuseStart: "workload_missing" as const }, "START_REFUSED"],
    [{ capacityUnavailable: true }, "CAPACITY_UNAVAILABLE"],
    [{ startUnavailable: true }, "START_UNAVAILABLE"],
  ])("%o -> %s, state stays stopped", async (behaviour, code) => {
    const s = await stoppedInstance();
    fake.backend.setHostBehaviour(DEMO_IDS.machineLarge, behaviour);
    const r = await updateInstance(s.id, args(), ctx(400));
    expect(r.diagnostics[0]!.summary.startsWith(`${code}: `)).toBe(true);
    expect(r.diagnostics[0]!.path).toEqual([{ attribute: "desired_status" }]);
    expect(r.state).toMatchObject({ status: "stopped", desired_status: "stopped" });
  });

  test("START_UNAVAILABLE is retried until it clears", async () => {
    const s = await stoppedInstance();
    fake.backend.setHostBehaviour(DEMO_IDS.machineLarge, { startUnavailable: true });
    const c = ctx(60_000);
    let calls = 0;
    c.sleep = async () => {
      calls++;
      if (calls === 2) fake.backend.setHostBehaviour(DEMO_IDS.machineLarge, { startUnavailable: false });
    };
    const r = await updateInstance(s.id, args(), c);
    expect(r.diagnostics).toEqual([]);
    expect(r.state).toMatchObject({ status: "running" });
  });

  test("insufficient balance at start names the amounts", async () => {
    const s = await stoppedInstance();
    fake.backend.setBalance(fake.creds.org_id, 1_000_000);
    const r = await updateInstance(s.id, args(), ctx());
    expect(r.diagnostics[0]!.summary).toMatch(/^INSUFFICIENT_BALANCE: /);
    expect(r.diagnostics[0]!.detail).toContain("¥1.00");
  });
});

test("a stop the host never confirms ends in stop_timed_out after 30 minutes", async () => {
  const r0 = await createInstance(args(), ctx());
  fake.backend.setHostBehaviour(DEMO_IDS.machineLarge, { neverConfirmStop: true });
  const c = ctx(60_000);
  let advanced = false;
  c.sleep = async () => {
    if (!advanced) {
      advanced = true;
      fake.backend.clock.advance(31 * 60_000);
    }
  };
  const r = await updateInstance(r0.state!.id, { ...args(), desired_status: "stopped" }, c);
  expect(r.diagnostics[0]!.summary).toMatch(/^stop_timed_out: /);
  expect(r.state).toMatchObject({ status: "running", desired_status: "running" });
});

test("an auto-stopped instance reads as stopped", async () => {
  const r0 = await createInstance(args(), ctx());
  fake.backend.setBalance(fake.creds.org_id, 1);
  fake.backend.clock.advance(60_000);
  const r = await readInstance(r0.state!.id, r0.state!, ctx());
  expect(r.state).toMatchObject({ status: "stopped", desired_status: "stopped" });
});

test("deleting an instance already destroying waits for it", async () => {
  const r0 = await createInstance(args(), ctx());
  fake.backend.setTransitions("manual");
  await ctx().client.destroyInstance(r0.state!.id);
  const pending = deleteInstance(r0.state!.id, ctx());
  setTimeout(() => fake.backend.completeTransition(r0.state!.id), 50);
  expect(await pending).toEqual({ state: null, diagnostics: [] });
  expect(fake.backend.instance(r0.state!.id)?.status).toBe("destroyed");
});

test("a deploy interrupted in flight that still lands is found and returned, not leaked", async () => {
  const c = ctx(5000);
  const stop = new AbortController();
  const real = c.client;
  // The deploy lands, then Terraform's stop arrives before the answer does.
  c.client = {
    listInstances: real.listInstances.bind(real),
    getInstance: real.getInstance.bind(real),
    stopInstance: real.stopInstance.bind(real),
    startInstance: real.startInstance.bind(real),
    destroyInstance: real.destroyInstance.bind(real),
    listOffers: real.listOffers.bind(real),
    getTemplate: real.getTemplate.bind(real),
    deployInstance: async (...a: Parameters<typeof real.deployInstance>) => {
      await real.deployInstance(...a);
      stop.abort(new Error("stop"));
      throw new RequestAbortedError("POST /v1/instances");
    },
  };
  const r = await createInstance(args(), { ...c, signal: stop.signal });
  expect(live()).toHaveLength(1);
  expect(r.state?.id).toBe(live()[0]!.id);
  // Running by the time it was found: nothing for Terraform to taint.
  expect(r.state?.status).toBe("running");
  expect(r.diagnostics).toEqual([]);
});

test("a deploy interrupted before it landed records nothing and is not resent", async () => {
  // The answer is held 2 s, the stop comes after 100 ms: the client goes away long before the
  // backend would process the request (a shorter hold let a stalled event loop on a busy machine
  // run the held request before it saw the closed socket).
  fake.backend.addFault({ route: "POST /v1/instances", kind: "latency", latencyMs: 2000, times: 1 });
  const stop = new AbortController();
  setTimeout(() => stop.abort(new Error("stop")), 100);
  const r = await createInstance(args(), { ...ctx(5000), signal: stop.signal });
  await new Promise((res) => setTimeout(res, 2200));
  expect(live()).toHaveLength(0);
  expect(r.state).toBeNull();
});

test("lost answers to stop and start are followed by a read, not an error", async () => {
  const r0 = await createInstance(args(), ctx());
  fake.backend.addFault({ route: "POST /v1/instances/:id/stop", kind: "lost-response", times: 1 });
  const stopped = await updateInstance(r0.state!.id, { ...args(), desired_status: "stopped" }, ctx());
  expect(stopped.diagnostics).toEqual([]);
  expect(stopped.state?.status).toBe("stopped");
  fake.backend.addFault({ route: "POST /v1/instances/:id/start", kind: "drop", times: 1 });
  const started = await updateInstance(r0.state!.id, args(), ctx());
  expect(started.diagnostics).toEqual([]);
  expect(started.state?.status).toBe("running");
});

describe("retries within the operation's time limit", () => {
  // The provider's client: no fixed number of attempts, only each operation's deadline.
  const untilDeadline = (timeoutMs = 5000) => ctx(timeoutMs, undefined, {});

  test("500s on reads and DELETEs are retried until they pass, more often than any fixed count", async () => {
    fake.backend.addFault({ route: "GET /v1/instances/:id", kind: "status", status: 500, times: 6 });
    const created = await createInstance(args(), untilDeadline());
    expect(created.diagnostics).toEqual([]);
    fake.backend.addFault({ route: "DELETE /v1/instances/:id", kind: "status", status: 502, times: 3 });
    fake.backend.addFault({ route: "DELETE /v1/instances/:id", kind: "status", status: 504, times: 3 });
    expect(await deleteInstance(created.state!.id, untilDeadline())).toEqual({
      state: null,
      diagnostics: [],
    });
    expect(live()).toHaveLength(0);
  });

  test("a DELETE whose answers were lost, resent to an instance already destroyed, counts as done", async () => {
    const created = await createInstance(args(), untilDeadline());
    // The first DELETE lands; the resend finds the instance destroyed (409 INVALID_STATE).
    fake.backend.addFault({ route: "DELETE /v1/instances/:id", kind: "lost-response", times: 2 });
    expect(await deleteInstance(created.state!.id, untilDeadline())).toEqual({
      state: null,
      diagnostics: [],
    });
    expect(fake.backend.instance(created.state!.id)?.status).toBe("destroyed");
  });

  test("stop and start answers lost five times in a row still converge: a read decides each resend", async () => {
    const r0 = await createInstance(args(), untilDeadline());
    const id = r0.state!.id;
    fake.backend.addFault({ route: "POST /v1/instances/:id/stop", kind: "drop", times: 4 });
    fake.backend.addFault({ route: "POST /v1/instances/:id/stop", kind: "lost-response", times: 1 });
    const stopped = await updateInstance(id, { ...args(), desired_status: "stopped" }, untilDeadline());
    expect(stopped.diagnostics).toEqual([]);
    expect(stopped.state?.status).toBe("stopped");
    fake.backend.addFault({ route: "POST /v1/instances/:id/start", kind: "status", status: 500, times: 5 });
    const started = await updateInstance(id, args(), untilDeadline());
    expect(started.diagnostics).toEqual([]);
    expect(started.state?.status).toBe("running");
  });

  test("the operation's time limit ends the retries with the last answer", async () => {
    const r0 = await createInstance(args(), untilDeadline());
    fake.backend.addFault({ route: "GET /v1/instances/:id", kind: "status", status: 500 });
    let attempts = 0;
    const c = untilDeadline(2000);
    c.client = fake.client({
      retry: { baseDelayMs: 5, maxDelayMs: 20 },
      logger: (_level, msg) => {
        if (msg === "request") attempts++;
      },
    });
    const r = await readInstance(r0.state!.id, r0.state!, c);
    // The read's 2 s ended it, with the API's own answer; the client's default budget is two
    // minutes, and no fixed count stopped it after a few attempts.
    expect(r.diagnostics[0]?.summary).toMatch(/^INTERNAL: /);
    expect(attempts).toBeGreaterThan(4);
  });

  test("a Retry-After longer than the time left fails at once with RATE_LIMITED, not after waiting", async () => {
    const r0 = await createInstance(args(), untilDeadline());
    fake.backend.addFault({
      route: "GET /v1/instances/:id",
      kind: "status",
      status: 429,
      retryAfterSeconds: 90,
    });
    const c = untilDeadline(60_000);
    const slept: number[] = [];
    c.client = new GpurentalClient({
      baseUrl: fake.url,
      token: fake.creds.admin_session_token,
      dispatcher: fake.agent,
      sleep: async (ms) => {
        slept.push(ms);
      },
    });
    const r = await readInstance(r0.state!.id, r0.state!, c);
    expect(r.diagnostics[0]?.summary).toMatch(/^RATE_LIMITED: /);
    expect(slept).toEqual([]);
    // With the time to wait (a create's 20 minutes), the same answers are waited out in full.
    fake.backend.clearFaults();
    fake.backend.addFault({
      route: "GET /v1/instances/:id",
      kind: "status",
      status: 429,
      retryAfterSeconds: 90,
      times: 3,
    });
    const long = await readInstance(r0.state!.id, r0.state!, { ...c, timeoutMs: 20 * 60_000 });
    expect(long.diagnostics).toEqual([]);
    expect(slept).toHaveLength(3);
    expect(slept.every((ms) => ms >= 90_000)).toBe(true);
  });
});
