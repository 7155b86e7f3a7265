import {
  AmbiguousRequestError,
  ApiError,
  NetworkError,
  RequestAbortedError,
  TimeoutError,
} from "../../api/errors";
import {
  client,
  closedPort,
  env,
  fake,
  goneRun,
  interruptible,
  journal,
  liveKeys,
  logged,
  only,
  settings,
  thisRun,
  warnings,
} from "../../testing/api-key-journal";
import { createKeyJournaled, type KeyEnv, pendingKeyCreations, sweepLostKeys } from "./journal";

// Key creations and the sweep of lost keys, called directly with a client of the in-process fake
// backend and a journal in a temporary working directory. What is asserted is what a user or the
// journal's next reader sees: the keys live on the backend, the journal's entries and how they were
// closed, the errors and the warnings logged.

describe("creations side by side", () => {
  test("creations of one name and kind are sent one after another; others run side by side", async () => {
    fake.backend.addFault({ route: "POST /v1/api-keys", kind: "latency", latencyMs: 300, times: 2 });
    const j = journal();
    const created = await Promise.all(
      [
        { name: "ci", kind: "team" as const },
        { name: "ci", kind: "team" as const },
        { name: "ci", kind: "personal" as const },
      ].map((b) => createKeyJournaled(b, env(client(), j))),
    );
    const [first, second, other] = created.map((c) => c.created.key.id);
    const byId = new Map(j.entries().map((e) => [e.id, e]));
    // The second of the same name listed after the first was answered; the other kind did not wait.
    expect(byId.get(second!)?.before).toEqual([first]);
    expect(byId.get(other!)?.before).toEqual([]);
    const sentOrder = j.entries().map((e) => e.id);
    expect(sentOrder.indexOf(other!)).toBeLessThan(sentOrder.indexOf(second!));
    expect(pendingKeyCreations()).toBe(0);
  });
});

describe("a creation that provably created nothing", () => {
  test("a refused creation closes its entry as unsent with the API's code, listing the keys of that name before it", async () => {
    const admin = client();
    const existing = await admin.createApiKey({ name: "ci", kind: "team" });
    await admin.createApiKey({ name: "ci", kind: "personal" });
    await admin.createApiKey({ name: "other", kind: "team" });
    const j = journal();
    // A member may not create team keys: 403 ADMIN_REQUIRED, before anything is created.
    const err = await createKeyJournaled(
      { name: "ci", kind: "team" },
      env(client(fake.creds.member_session_token), j),
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).code).toBe("ADMIN_REQUIRED");
    const e = only(j);
    expect(e.before).toEqual([existing.key.id]);
    expect(e.closed).toMatchObject({ reason: "unsent", detail: "ADMIN_REQUIRED" });
    expect(liveKeys("ci")).toHaveLength(2);
  });

  test("a creation that never reached the server closes its entry as unsent, naming the failure", async () => {
    const admin = client();
    const unreachable = client(fake.creds.admin_session_token, `http://127.0.0.1:${await closedPort()}`);
    const j = journal();
    const c: KeyEnv["client"] = {
      listApiKeys: (o) => admin.listApiKeys(o),
      revokeApiKey: (id, o) => admin.revokeApiKey(id, o),
      createApiKey: (b, o) => unreachable.createApiKey(b, o),
    };
    const err = await createKeyJournaled({ name: "ci", kind: "team" }, env(c, j)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NetworkError);
    expect(only(j).closed).toMatchObject({ reason: "unsent", detail: "NetworkError" });
    expect(liveKeys("ci")).toEqual([]);
  });
});

describe("a lost answer", () => {
  test("one new key: it is revoked, its entry closed as revoked with its id, and the creation sent once more", async () => {
    fake.backend.addFault({ route: "POST /v1/api-keys", kind: "lost-response", times: 1 });
    const j = journal();
    const made = await createKeyJournaled({ name: "ci", kind: "team" }, env(client(), j));
    expect(liveKeys("ci")).toEqual([made.created.key.id]);
    const [lost, sent] = j.entries();
    expect(lost?.closed?.reason).toBe("revoked");
    expect(lost?.id).not.toBeNull();
    expect(lost?.id).not.toBe(made.created.key.id);
    expect(sent).toMatchObject({ entry: made.entry, id: made.created.key.id, closed: null });
  });

  test("with TF_LOG=info, the revocation of the key a lost answer made is logged with its id", async () => {
    // The provider reads its log level once, at start-up: a provider of its own, started with it.
    const saved = process.env.TF_LOG_PROVIDER;
    process.env.TF_LOG_PROVIDER = "info";
    let started: typeof import("./journal") | undefined;
    try {
      await jest.isolateModulesAsync(async () => {
        started = await import("./journal");
      });
    } finally {
      if (saved === undefined) delete process.env.TF_LOG_PROVIDER;
      else process.env.TF_LOG_PROVIDER = saved;
    }
    fake.backend.addFault({ route: "POST /v1/api-keys", kind: "lost-response", times: 1 });
    const j = journal();
    await started!.createKeyJournaled({ name: "ci", kind: "team" }, env(client(), j));
    const lost = j.entries()[0]!.id;
    expect(lost).not.toBeNull();
    expect(logged.filter((l) => l["@level"] === "info" && l["@module"] === "gpurental.api_key")).toEqual([
      expect.objectContaining({
        "@message": "revoked the key a lost creation made; its secret was lost with the answer",
        id: lost,
      }),
    ]);
  });

  test("several new keys of that name: none is revoked, and the error names each", async () => {
    const admin = client();
    const c: KeyEnv["client"] = {
      listApiKeys: (o) => admin.listApiKeys(o),
      revokeApiKey: (id, o) => admin.revokeApiKey(id, o),
      // Another client creates a key of the same name while this creation's answer is lost.
      createApiKey: async (b, o) => {
        await admin.createApiKey(b);
        fake.backend.addFault({ route: "POST /v1/api-keys", kind: "lost-response", times: 1 });
        return admin.createApiKey(b, o);
      },
    };
    const j = journal();
    const err = (await createKeyJournaled({ name: "ci", kind: "team" }, env(c, j)).catch(
      (e: unknown) => e,
    )) as Error;
    const ids = (await admin.listApiKeys()).filter((k) => k.name === "ci").map((k) => k.id);
    expect(ids).toHaveLength(2);
    expect(liveKeys("ci").sort()).toEqual([...ids].sort());
    expect(err.message).toBe(
      `The API key creation's answer was lost and 2 new keys named "ci" appeared (${ids.join(", ")}); another client created keys of that name at the same time, so none was revoked. Revoke the one without a holder in the console.`,
    );
    // The entry stays open for the next apply, which cannot tell either.
    expect(only(j)).toMatchObject({ id: null, closed: null });
  });
});

describe("a lost answer, further", () => {
  test("a new key of that name another entry accounts for is not taken for the lost one", async () => {
    const admin = client();
    let others: string | null = null;
    const c: KeyEnv["client"] = {
      listApiKeys: (o) => admin.listApiKeys(o),
      revokeApiKey: (id, o) => admin.revokeApiKey(id, o),
      // Another provider process creates and journals a key of the same name while the first
      // attempt's answer is lost; the attempt sent again is answered.
      createApiKey: async (b, o) => {
        if (others) return admin.createApiKey(b, o);
        const theirs = journal(thisRun());
        const entry = theirs.sent("api_key", "sha256:theirs", { ...b }, []);
        others = (await admin.createApiKey(b)).key.id;
        theirs.answered(entry, others);
        fake.backend.addFault({ route: "POST /v1/api-keys", kind: "lost-response", times: 1 });
        return admin.createApiKey(b, o);
      },
    };
    const j = journal();
    const made = await createKeyJournaled({ name: "ci", kind: "team" }, env(c, j));
    expect(liveKeys("ci").sort()).toEqual([others!, made.created.key.id].sort());
  });

  test("no key within the reconcile window: the creation fails as outcome unknown, is not sent again, and its entry stays open", async () => {
    // The connection drops before the server processes the request: nothing is created.
    fake.backend.addFault({ route: "POST /v1/api-keys", kind: "drop" });
    const j = journal();
    const err = (await createKeyJournaled(
      { name: "ci", kind: "team" },
      env(client(), j, { reconcileTimeoutMs: 1000 }),
    ).catch((e: unknown) => e)) as Error;
    expect(err.name).toBe("KeyOutcomeUnknownError");
    expect(err.message).toMatch(
      /^The API key creation's outcome is unknown: its answer was lost \(POST \/v1\/api-keys: .+\) and no matching key appeared within the reconcile window \(1 s\)\. It was not sent again\. If it lands, it is a key whose secret nobody holds: the next terraform apply or destroy in this working directory revokes it \(deploy journal (.+)\)\.$/,
    );
    expect(err.message.endsWith(`(deploy journal ${j.file}).`)).toBe(true);
    expect(only(j)).toMatchObject({ id: null, closed: null });
    expect(liveKeys("ci")).toEqual([]);
  });

  test("without a journal, outcome unknown tells the user to revoke the key in the console", async () => {
    fake.backend.addFault({ route: "POST /v1/api-keys", kind: "drop" });
    const err = (await createKeyJournaled(
      { name: "ci", kind: "team" },
      env(client(), null, { reconcileTimeoutMs: 180_000 }),
    ).catch((e: unknown) => e)) as Error;
    expect(err.name).toBe("KeyOutcomeUnknownError");
    expect(err.message).toMatch(
      /^The API key creation's outcome is unknown: its answer was lost \(POST \/v1\/api-keys: .+\) and no matching key appeared within the reconcile window \(3 min\)\. It was not sent again\. If it lands, revoke it in the console: its secret is lost\.$/,
    );
  });

  test("a second lost answer: both keys are revoked and the creation fails", async () => {
    fake.backend.addFault({ route: "POST /v1/api-keys", kind: "lost-response", times: 2 });
    const j = journal();
    const err = await createKeyJournaled({ name: "ci", kind: "team" }, env(client(), j)).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(AmbiguousRequestError);
    expect(liveKeys("ci")).toEqual([]);
    const entries = j.entries();
    expect(entries.map((e) => e.closed?.reason)).toEqual(["revoked", "revoked"]);
    expect(entries.every((e) => e.id !== null)).toBe(true);
    expect(warnings()).toEqual([]);
  });

  test("an interrupted creation whose key lands within the window: the key is revoked and the interruption reported", async () => {
    fake.backend.addFault({ route: "POST /v1/api-keys", kind: "late-commit", delayMs: 600_000, times: 1 });
    const j = journal();
    const stop = new AbortController();
    const e = interruptible(j, stop);
    // The held request lands while the listings look for it.
    const sleep = e.sleep!;
    e.sleep = async (ms) => {
      await fake.backend.flushLateCommits();
      await sleep(ms);
    };
    const err = await createKeyJournaled({ name: "ci", kind: "team" }, e).catch((x: unknown) => x);
    // The creation's own interruption, not that of a creation sent again.
    expect(err).toBeInstanceOf(RequestAbortedError);
    expect((err as RequestAbortedError).endpoint).toBe("POST /v1/api-keys");
    expect(liveKeys("ci")).toEqual([]);
    expect(only(j)).toMatchObject({ closed: { reason: "revoked" } });
    expect(only(j).id).not.toBeNull();
  });

  test("a stop right after a lost answer: the key is still looked for and revoked, and the lost answer reported", async () => {
    fake.backend.addFault({ route: "POST /v1/api-keys", kind: "lost-response", times: 1 });
    const stop = new AbortController();
    // As the provider builds it: every call of the client ends with Terraform's stop.
    const admin = client(undefined, undefined, stop.signal);
    const c: KeyEnv["client"] = {
      listApiKeys: (o) => admin.listApiKeys(o),
      revokeApiKey: (id, o) => admin.revokeApiKey(id, o),
      createApiKey: async (b, o) => {
        try {
          return await admin.createApiKey(b, o);
        } finally {
          stop.abort();
        }
      },
    };
    const j = journal();
    const err = await createKeyJournaled(
      { name: "ci", kind: "team" },
      { ...env(c, j), signal: stop.signal },
    ).catch((x: unknown) => x);
    expect(err).toBeInstanceOf(AmbiguousRequestError);
    expect(liveKeys("ci")).toEqual([]);
    expect(only(j).closed?.reason).toBe("revoked");
  });

  test("an interrupted creation that lands later: the interruption is reported, and the next apply revokes the key", async () => {
    fake.backend.addFault({ route: "POST /v1/api-keys", kind: "late-commit", delayMs: 600_000, times: 1 });
    const sender = journal(goneRun());
    const e = interruptible(sender, new AbortController());
    const start = e.now!();
    const err = await createKeyJournaled({ name: "ci", kind: "team" }, e).catch((x: unknown) => x);
    expect(err).toBeInstanceOf(RequestAbortedError);
    // A stopped apply looks for the key for 3 s at most, not for the whole reconcile window (60 s here).
    expect(e.now!() - start).toBeLessThanOrEqual(3000);
    expect(only(sender)).toMatchObject({ id: null, closed: null });
    await fake.backend.flushLateCommits();
    expect(liveKeys("ci")).toHaveLength(1);
    const next = journal();
    await sweepLostKeys({ client: client(), settings: settings(next) });
    expect(liveKeys("ci")).toEqual([]);
    expect(only(next).closed?.reason).toBe("revoked");
  });

  test("a stop with a reconcile window under the interruption's 3 s looks for the key within that window", async () => {
    fake.backend.addFault({ route: "POST /v1/api-keys", kind: "late-commit", delayMs: 600_000, times: 1 });
    const j = journal();
    const e = interruptible(j, new AbortController(), { reconcileTimeoutMs: 500 });
    const start = e.now!();
    const err = await createKeyJournaled({ name: "ci", kind: "team" }, e).catch((x: unknown) => x);
    expect(err).toBeInstanceOf(RequestAbortedError);
    expect(e.now!() - start).toBeLessThanOrEqual(500);
    await fake.backend.flushLateCommits();
  });

  test("a creation past its deadline sends nothing", async () => {
    const j = journal();
    const e = env(client(), j);
    const err = await createKeyJournaled(
      { name: "ci", kind: "team" },
      { ...e, deadline: e.now!() - 1 },
    ).catch((x: unknown) => x);
    expect(err).toBeInstanceOf(TimeoutError);
    expect(liveKeys("ci")).toEqual([]);
  });
});
