import { inspect } from "node:util";
import { DEMO_IDS, startFakeBackend } from "../fake-backend";
import { useFakeBackend } from "../testing/fake-backend";
import type { ClientOptions, GpurentalClient, LogLevel } from "./client";
import {
  AmbiguousRequestError,
  ApiError,
  InstanceErrorStateError,
  NetworkError,
  RequestAbortedError,
  WaitTimeoutError,
} from "./errors";
import { findDeployCandidates } from "./reconcile";
import { waitForInstance } from "./waiter";

// The client against the real fake backend, in-process on port 0: the API's actual answers,
// plus faults injected by route (429/503 with Retry-After, dropped connections, lost responses).

const fake = useFakeBackend();
let sleeps: number[];
let logs: { level: LogLevel; msg: string; fields: Record<string, unknown> }[];

beforeEach(() => {
  sleeps = [];
  logs = [];
});

function client(extra: Partial<ClientOptions> = {}): GpurentalClient {
  return fake.client({
    retry: { maxAttempts: 4, baseDelayMs: 5, maxDelayMs: 50 },
    // Retry waits are recorded, not slept: asserting Retry-After is honoured takes no real time.
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    // No jitter on top of a Retry-After, so the waits asserted are exactly the server's.
    random: () => 0,
    logger: (level, msg, fields) => logs.push({ level, msg, fields }),
    ...extra,
  });
}

const attempts = (endpoint: string) =>
  logs.filter((l) => l.msg === "request" && l.fields.endpoint === endpoint).length;

function deployBody() {
  return {
    offer_id: fake.creds.offer_id,
    template_id: fake.creds.template_id,
    disk_gb: 50,
    ssh_key_id: fake.creds.ssh_key_id,
  };
}

const orgInstances = () => fake.backend.listInstances(fake.creds.org_id);

describe("every endpoint parses the backend's answers", () => {
  test("account, catalogue and billing reads", async () => {
    const c = client();
    const me = await c.getMe();
    expect(me.organization.id).toBe(fake.creds.org_id);
    expect(me.role).toBe("admin");

    const offers = await c.listOffers({ sort: "price_asc" });
    expect(offers.length).toBeGreaterThan(0);
    expect(offers.map((o) => o.id)).toContain(fake.creds.offer_id);
    const offer = await c.getOffer(fake.creds.offer_id);
    expect(offer.machine.disk_gb).toBe(2000);
    expect(await c.listOffers({ gpu_model: offer.gpu_model, num_gpus: offer.num_gpus })).not.toHaveLength(0);

    const templates = await c.listTemplates({ mode: "ssh" });
    expect(templates.every((t) => t.mode === "ssh")).toBe(true);
    await c.listTemplates({ tab: "recommended" });
    const template = await c.getTemplate(fake.creds.template_id);
    expect(template.id).toBe(fake.creds.template_id);

    const keys = await c.listSshKeys();
    expect(keys.map((k) => k.id)).toContain(fake.creds.ssh_key_id);

    const members = await c.listMembers();
    expect(members.map((m) => m.user_id)).toEqual(
      expect.arrayContaining([fake.creds.admin_user_id, fake.creds.member_user_id]),
    );

    const order = await c.createBillingOrder({ amount_micro: 10_000_000 });
    expect(order.amount_micro).toBe(10_000_000);
    const tx = await c.listTransactions({ limit: 5 });
    expect(tx[0]?.kind).toBe("top_up");
    const days = await c.getSpendDaily({ days: 7 });
    expect(Array.isArray(days)).toBe(true);
  });

  test("instance lifecycle: deploy, stop, start, logs, destroy", async () => {
    const c = client();
    const created = await c.deployInstance({ ...deployBody(), label: "lifecycle" });
    expect(created.label).toBe("lifecycle");
    const running = await waitForInstance(c, created.id, { target: "running", timeoutMs: 5000 });
    expect(running.ssh_port).not.toBe(22);

    expect((await c.listInstances()).map((i) => i.id)).toContain(created.id);
    expect(await c.getInstanceLogs(created.id, { tail: 10 })).toEqual(expect.any(Array));

    await c.stopInstance(created.id);
    await waitForInstance(c, created.id, { target: "stopped", timeoutMs: 5000 });
    await c.startInstance(created.id);
    await waitForInstance(c, created.id, { target: "running", timeoutMs: 5000 });

    await c.destroyInstance(created.id);
    const gone = await waitForInstance(c, created.id, { target: "destroyed", timeoutMs: 5000 });
    expect(gone.access_token).toBeNull();
    expect((await c.listInstances()).map((i) => i.id)).not.toContain(created.id);
    expect((await c.listInstances({ include_destroyed: true })).map((i) => i.id)).toContain(created.id);
    expect(await c.listTransactions({ instance_id: created.id })).toEqual(expect.any(Array));
  });

  test("API keys: create, list, use, revoke", async () => {
    const admin = client();
    const { key, secret } = await admin.createApiKey({ name: "ci", kind: "team" });
    expect(secret.startsWith(key.prefix)).toBe(true);
    expect((await admin.listApiKeys()).map((k) => k.id)).toContain(key.id);

    const viaKey = client({ token: secret });
    const inst = await viaKey.deployInstance(deployBody());
    expect(inst.deployed_via_api_key?.id).toBe(key.id);

    await admin.revokeApiKey(key.id);
    const err = await viaKey.listInstances().catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 401, code: "TOKEN_INVALID" });
    await expect(admin.revokeApiKey(key.id)).rejects.toMatchObject({
      status: 404,
      code: "API_KEY_NOT_FOUND",
    });
  });

  test("removing a member", async () => {
    const c = client();
    await c.removeMember(fake.creds.member_user_id);
    expect((await c.listMembers()).map((m) => m.user_id)).not.toContain(fake.creds.member_user_id);
  });
});

describe("instances in every kind of state parse", () => {
  test("provision failure: the waiter reports error_code", async () => {
    fake.backend.setHostBehaviour(DEMO_IDS.machineLarge, { provisionFails: true });
    const c = client();
    const inst = await c.deployInstance(deployBody());
    const err = (await waitForInstance(c, inst.id, { target: "running", timeoutMs: 5000 }).catch(
      (e: unknown) => e,
    )) as InstanceErrorStateError;
    expect(err).toBeInstanceOf(InstanceErrorStateError);
    expect(err.errorCode).toBe("provision_failed");
    expect(err.instance.status).toBe("error");
  });

  test("a jupyter instance reports its URL", async () => {
    const c = client();
    const inst = await c.deployInstance({ ...deployBody(), template_id: fake.creds.jupyter_template_id });
    const running = await waitForInstance(c, inst.id, { target: "running", timeoutMs: 5000 });
    expect(running.template.mode).toBe("jupyter");
    expect(running.jupyter_url).toEqual(expect.any(String));
  });

  test("auto-stop at zero balance, GPU release and storage billing", async () => {
    const c = client();
    const inst = await c.deployInstance(deployBody());
    await waitForInstance(c, inst.id, { target: "running", timeoutMs: 5000 });
    fake.backend.setBalance(fake.creds.org_id, 1_000_000);
    fake.backend.clock.advance(6 * 3_600_000);
    const stopped = await c.getInstance(inst.id);
    expect(stopped.status).toBe("stopped");
    expect(stopped.spend_micro).toBeGreaterThan(0);
    expect((await c.listInstances()).find((i) => i.id === inst.id)?.status).toBe("stopped");
    const rows = await c.listTransactions({ instance_id: inst.id, limit: 1000 });
    expect(rows.reduce((sum, r) => sum + r.amount_micro, 0)).toBe(stopped.spend_micro);
    expect((await c.getMe()).organization.balance_micro).toBeLessThanOrEqual(0);
    expect((await c.getSpendDaily({ days: 2 })).length).toBeGreaterThan(0);
  });

  test("an unconfirmed stop returns to running with stop_timed_out", async () => {
    fake.backend.setHostBehaviour(DEMO_IDS.machineLarge, { neverConfirmStop: true });
    const c = client();
    const inst = await c.deployInstance(deployBody());
    await waitForInstance(c, inst.id, { target: "running", timeoutMs: 5000 });
    await c.stopInstance(inst.id);
    fake.backend.clock.advance(31 * 60_000);
    const back = await c.getInstance(inst.id);
    expect(back.status).toBe("running");
    expect(back.error_code).toBe("stop_timed_out");
  });

  test("503 START_UNAVAILABLE is a refusal: retried, then reported with its code", async () => {
    const c = client();
    const inst = await c.deployInstance(deployBody());
    await waitForInstance(c, inst.id, { target: "running", timeoutMs: 5000 });
    await c.stopInstance(inst.id);
    await waitForInstance(c, inst.id, { target: "stopped", timeoutMs: 5000 });
    fake.backend.setHostBehaviour(DEMO_IDS.machineLarge, { startUnavailable: true });
    const err = await c.startInstance(inst.id).catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 503, code: "START_UNAVAILABLE" });
    expect(attempts("POST /v1/instances/{id}/start")).toBe(4);
    expect((await c.getInstance(inst.id)).status).toBe("stopped");
  });
});

describe("coded errors", () => {
  test("DISK_TOO_LARGE carries max_disk_gb", async () => {
    const err = (await client()
      .deployInstance({ ...deployBody(), offer_id: fake.creds.small_disk_offer_id, disk_gb: 800 })
      .catch((e: unknown) => e)) as ApiError;
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({
      status: 422,
      code: "DISK_TOO_LARGE",
      max_disk_gb: 500,
      endpoint: "POST /v1/instances",
    });
    expect(err.requestId).toEqual(expect.any(String));
    expect(orgInstances()).toHaveLength(0);
  });

  test("INSUFFICIENT_BALANCE carries balance and requirement", async () => {
    fake.backend.setBalance(fake.creds.org_id, 1);
    const err = (await client()
      .deployInstance(deployBody())
      .catch((e: unknown) => e)) as ApiError;
    expect(err).toMatchObject({ status: 402, code: "INSUFFICIENT_BALANCE", balance_micro: 1 });
    expect(err.required_micro).toBeGreaterThan(1);
  });

  test("VALIDATION_ERROR names the field", async () => {
    const c = client();
    const inst = await c.deployInstance(deployBody());
    const err = (await c.getInstanceLogs(inst.id, { tail: 5000 }).catch((e: unknown) => e)) as ApiError;
    expect(err).toMatchObject({ status: 422, code: "VALIDATION_ERROR", field: "tail" });
  });

  test("INVALID_STATE, INSTANCE_NOT_FOUND, ORG_MISMATCH, TOKEN_INVALID", async () => {
    const c = client();
    const inst = await c.deployInstance(deployBody());
    await waitForInstance(c, inst.id, { target: "running", timeoutMs: 5000 });
    await expect(c.startInstance(inst.id)).rejects.toMatchObject({ status: 409, code: "INVALID_STATE" });
    await expect(c.getInstance("00000000-0000-4000-8000-00000000dead")).rejects.toMatchObject({
      status: 404,
      code: "INSTANCE_NOT_FOUND",
    });
    await expect(client({ orgId: fake.creds.other_org_id }).listInstances()).rejects.toMatchObject({
      status: 403,
      code: "ORG_MISMATCH",
    });
    const { secret } = await c.createApiKey({ name: "k" });
    await expect(client({ token: secret }).getMe()).rejects.toMatchObject({
      status: 401,
      code: "TOKEN_INVALID",
    });
  });
});

describe("the logger", () => {
  test("a logger that drops a level is not called for it; the others still come", async () => {
    fake.backend.addFault({
      route: "GET /v1/offers",
      kind: "status",
      status: 429,
      retryAfterSeconds: 1,
      times: 1,
    });
    const asked: LogLevel[] = [];
    const logger = Object.assign(
      (level: LogLevel, msg: string, fields: Record<string, unknown>) => logs.push({ level, msg, fields }),
      {
        enabled: (level: LogLevel) => {
          asked.push(level);
          return level !== "debug";
        },
      },
    );
    await client({ logger }).listOffers();
    // Two requests and one answer at debug, asked and dropped; the refused answer at warn, written.
    expect(asked.filter((l) => l === "debug").length).toBeGreaterThanOrEqual(3);
    expect(logs.map((l) => l.level)).not.toContain("debug");
    expect(logs).toContainEqual(expect.objectContaining({ level: "warn", msg: "response" }));
  });
});

describe("retries against injected faults", () => {
  test("429 with Retry-After on a GET: retried, and the wait is the server's", async () => {
    fake.backend.addFault({
      route: "GET /v1/offers",
      kind: "status",
      status: 429,
      retryAfterSeconds: 2,
      times: 2,
    });
    const offers = await client().listOffers();
    expect(offers.length).toBeGreaterThan(0);
    expect(attempts("GET /v1/offers")).toBe(3);
    expect(sleeps).toEqual([2000, 2000]);
  });

  test("503 with Retry-After on deploy: refused, retried, exactly one instance", async () => {
    fake.backend.addFault({
      route: "POST /v1/instances",
      kind: "status",
      status: 503,
      retryAfterSeconds: 1,
      times: 1,
    });
    await client().deployInstance(deployBody());
    expect(attempts("POST /v1/instances")).toBe(2);
    expect(sleeps).toEqual([1000]);
    expect(orgInstances()).toHaveLength(1);
  });

  test("a persistent 429 surfaces as RATE_LIMITED after maxAttempts", async () => {
    fake.backend.addFault({ route: "GET /v1/instances", kind: "status", status: 429, retryAfterSeconds: 1 });
    const err = await client()
      .listInstances()
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 429, code: "RATE_LIMITED", retryAfterMs: 1000 });
    expect(attempts("GET /v1/instances")).toBe(4);
  });

  test("a 500 on a GET is retried: reads are idempotent", async () => {
    fake.backend.addFault({ route: "GET /v1/instances", kind: "status", status: 500, times: 2 });
    await expect(client().listInstances()).resolves.toEqual([]);
    expect(attempts("GET /v1/instances")).toBe(3);
  });

  test("a dropped connection on GET is retried", async () => {
    const c = client();
    const inst = await c.deployInstance(deployBody());
    fake.backend.addFault({ route: "GET /v1/instances/:id", kind: "drop", times: 1 });
    await expect(c.getInstance(inst.id)).resolves.toMatchObject({ id: inst.id });
    expect(attempts("GET /v1/instances/{id}")).toBe(2);
  });

  test("a lost deploy response is ambiguous, not resent: exactly one instance exists", async () => {
    fake.backend.addFault({ route: "POST /v1/instances", kind: "lost-response", times: 1 });
    const err = (await client()
      .deployInstance(deployBody())
      .catch((e: unknown) => e)) as AmbiguousRequestError;
    expect(err).toBeInstanceOf(AmbiguousRequestError);
    expect(err.endpoint).toBe("POST /v1/instances");
    expect(err.reason).toBe("connection");
    expect(attempts("POST /v1/instances")).toBe(1);
    expect(orgInstances()).toHaveLength(1);
  });

  test("reconciling an ambiguous deploy finds the instance it created, and only that one", async () => {
    const c = client();
    const other = await c.deployInstance({ ...deployBody(), label: "other" });
    await c.deployInstance({ ...deployBody(), disk_gb: 60 });
    const body = { ...deployBody(), label: "lost" };
    fake.backend.addFault({ route: "POST /v1/instances", kind: "lost-response", times: 1 });
    const sentAt = Date.now();
    await expect(c.deployInstance(body)).rejects.toThrow(AmbiguousRequestError);
    const candidates = await findDeployCandidates(c, body, { sentAt });
    expect(candidates).toHaveLength(1);
    expect(candidates[0]?.label).toBe("lost");
    expect(candidates[0]?.id).not.toBe(other.id);
  });

  test("reconciling a deploy that never landed finds nothing", async () => {
    const c = client();
    fake.backend.addFault({ route: "POST /v1/instances", kind: "drop", times: 1 });
    const sentAt = Date.now();
    await expect(c.deployInstance(deployBody())).rejects.toThrow(AmbiguousRequestError);
    expect(await findDeployCandidates(c, deployBody(), { sentAt })).toEqual([]);
  });

  test("a deploy dropped before processing is also ambiguous to the client, and nothing was created", async () => {
    fake.backend.addFault({ route: "POST /v1/instances", kind: "drop", times: 1 });
    await expect(client().deployInstance(deployBody())).rejects.toThrow(AmbiguousRequestError);
    expect(attempts("POST /v1/instances")).toBe(1);
    expect(orgInstances()).toHaveLength(0);
  });

  // What each answer status does to a read and to a deploy, through the whole client: a read is
  // sent again after any status that says "not now" or "a gateway failed"; a deploy only after the
  // ones by which the server says it did not act (429, 503), never after one that leaves it open.
  test.each([429, 502, 503, 504])("a %i on a read is retried, and the read succeeds", async (status) => {
    fake.backend.addFault({ route: "GET /v1/offers", kind: "status", status, times: 1 });
    await expect(client().listOffers()).resolves.not.toHaveLength(0);
    expect(attempts("GET /v1/offers")).toBe(2);
  });

  test.each([429, 503])("a %i on deploy is retried: exactly one instance", async (status) => {
    fake.backend.addFault({ route: "POST /v1/instances", kind: "status", status, times: 1 });
    await expect(client().deployInstance(deployBody())).resolves.toHaveProperty("id");
    expect(attempts("POST /v1/instances")).toBe(2);
    expect(orgInstances()).toHaveLength(1);
  });

  test.each([500, 502, 504])("a %i on deploy is ambiguous and never resent", async (status) => {
    fake.backend.addFault({ route: "POST /v1/instances", kind: "status", status, times: 1 });
    const err = await client()
      .deployInstance(deployBody())
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AmbiguousRequestError);
    expect(err).toMatchObject({ reason: "status", status });
    expect(attempts("POST /v1/instances")).toBe(1);
  });

  test.each([400, 404, 409, 422])("a %i is final for a read and a deploy", async (status) => {
    fake.backend.addFault({ route: "GET /v1/offers", kind: "status", status, times: 1 });
    fake.backend.addFault({ route: "POST /v1/instances", kind: "status", status, times: 1 });
    await expect(client().listOffers()).rejects.toMatchObject({ status });
    await expect(client().deployInstance(deployBody())).rejects.toMatchObject({ status });
    expect(attempts("GET /v1/offers")).toBe(1);
    expect(attempts("POST /v1/instances")).toBe(1);
    expect(orgInstances()).toHaveLength(0);
  });

  test("a 500 on deploy is ambiguous", async () => {
    fake.backend.addFault({ route: "POST /v1/instances", kind: "status", status: 500, times: 1 });
    await expect(client().deployInstance(deployBody())).rejects.toMatchObject({
      reason: "status",
      status: 500,
    });
    expect(attempts("POST /v1/instances")).toBe(1);
  });

  test("a lost stop response is not resent: one stop, the instance stops", async () => {
    const c = client();
    const inst = await c.deployInstance(deployBody());
    await waitForInstance(c, inst.id, { target: "running", timeoutMs: 5000 });
    fake.backend.addFault({ route: "POST /v1/instances/:id/stop", kind: "lost-response", times: 1 });
    await expect(c.stopInstance(inst.id)).rejects.toThrow(AmbiguousRequestError);
    expect(attempts("POST /v1/instances/{id}/stop")).toBe(1);
    await expect(waitForInstance(c, inst.id, { target: "stopped", timeoutMs: 5000 })).resolves.toMatchObject({
      status: "stopped",
    });
  });

  test("a lost destroy response is resent and reconciled to the destroyed instance", async () => {
    const c = client();
    const inst = await c.deployInstance(deployBody());
    fake.backend.addFault({ route: "DELETE /v1/instances/:id", kind: "lost-response", times: 1 });
    const out = await c.destroyInstance(inst.id);
    expect(["destroying", "destroyed"]).toContain(out.status);
    expect(attempts("DELETE /v1/instances/{id}")).toBe(2);
  });

  test("a lost revoke response is resent and treated as revoked", async () => {
    const c = client();
    const { key } = await c.createApiKey({ name: "to-revoke" });
    fake.backend.addFault({ route: "DELETE /v1/api-keys/:id", kind: "lost-response", times: 1 });
    await expect(c.revokeApiKey(key.id)).resolves.toBeUndefined();
    expect((await c.listApiKeys()).map((k) => k.id)).not.toContain(key.id);
  });

  test("a server that is gone: NetworkError after the attempts", async () => {
    const other = await startFakeBackend({ port: 0 });
    const url = other.url;
    await other.close();
    const err = await client({ baseUrl: url })
      .listOffers()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NetworkError);
    expect(sleeps).toHaveLength(3);
  });
});

describe("waiting and cancellation", () => {
  test("the waiter times out with the last status when transitions are held", async () => {
    fake.backend.setTransitions("manual");
    const c = client();
    const inst = await c.deployInstance(deployBody());
    const err = (await waitForInstance(c, inst.id, {
      target: "running",
      timeoutMs: 300,
      initialPollMs: 20,
    }).catch((e: unknown) => e)) as WaitTimeoutError;
    expect(err).toBeInstanceOf(WaitTimeoutError);
    expect(err.lastStatus).toBe("creating");
    expect(err.lastInstance?.id).toBe(inst.id);
    fake.backend.completeTransition(inst.id);
    await expect(waitForInstance(c, inst.id, { target: "running", timeoutMs: 5000 })).resolves.toMatchObject({
      status: "running",
    });
  });

  test("an AbortSignal cancels a request the server holds", async () => {
    // The fake holds the request until the test lets it go, so the call can only end through the
    // abort: no clock decides the outcome. The bounded wait turns a hang into a clear failure.
    fake.backend.addFault({ route: "GET /v1/offers", kind: "late-commit", delayMs: 600_000, times: 1 });
    const ac = new AbortController();
    const call = client().listOffers(undefined, { signal: ac.signal });
    try {
      for (let i = 0; i < 1000 && fake.backend.lateCommitsPending() === 0; i++) {
        await new Promise((r) => setTimeout(r, 10));
      }
      expect(fake.backend.lateCommitsPending()).toBe(1);
      ac.abort();
      const outcome = await Promise.race([
        call.then(
          () => "answered",
          (e: unknown) => e,
        ),
        new Promise((r) => setTimeout(() => r("still waiting after 10 s"), 10_000).unref()),
      ]);
      expect(outcome).toBeInstanceOf(RequestAbortedError);
      expect(fake.backend.lateCommitsPending()).toBe(1);
    } finally {
      await fake.backend.flushLateCommits();
    }
  });

  test("an AbortSignal cancels a wait", async () => {
    fake.backend.setTransitions("manual");
    const c = client();
    const inst = await c.deployInstance(deployBody());
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 100);
    await expect(
      waitForInstance(c, inst.id, { target: "running", signal: ac.signal, initialPollMs: 20 }),
    ).rejects.toThrow(RequestAbortedError);
  });
});

describe("credentials", () => {
  test("no token in any error or log line of a run full of failures", async () => {
    const c = client({ retry: { maxAttempts: 2, baseDelayMs: 1 } });
    const { secret } = await c.createApiKey({ name: "secret-holder" });
    const viaKey = client({ token: secret, retry: { maxAttempts: 2, baseDelayMs: 1 } });
    fake.backend.addFault({ route: "GET /v1/offers", kind: "drop" });
    fake.backend.addFault({ route: "POST /v1/instances", kind: "lost-response", times: 1 });
    const errors = [
      await c.listOffers().catch((e: unknown) => e),
      await viaKey.listOffers().catch((e: unknown) => e),
      await viaKey.getMe().catch((e: unknown) => e),
      await viaKey.deployInstance(deployBody()).catch((e: unknown) => e),
      await c.deployInstance({ ...deployBody(), disk_gb: 1 }).catch((e: unknown) => e),
    ];
    for (const e of errors) expect(e).toBeInstanceOf(Error);
    const rendered = [
      ...errors.flatMap((e) => [
        String(e),
        (e as Error).stack,
        inspect(e, { depth: 10, showHidden: true }),
        JSON.stringify(e),
      ]),
      JSON.stringify(logs),
      inspect(c),
      inspect(viaKey),
    ].join("\n");
    for (const token of [fake.creds.admin_session_token, secret]) expect(rendered).not.toContain(token);
    expect(logs.length).toBeGreaterThan(5);
  });
});
