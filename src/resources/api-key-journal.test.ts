import { mkdirSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import {
  AmbiguousRequestError,
  ApiError,
  NetworkError,
  RequestAbortedError,
  TimeoutError,
} from "../api/errors";
import { type DeployJournal, fingerprintOf, type JournalEntry, secretDigest } from "../journal";
import { useKeyJournalFixture } from "../testing/key-journal";
import {
  createKeyJournaled,
  type KeyEnv,
  pendingKeyCreations,
  sweepLostKeys,
  sweepLostKeysOf,
} from "./api-key-journal";
import type { DeploySettings, ProviderData } from "./provider-data";
import { SharedReads } from "./shared-reads";

// Key creations and the sweep of lost keys, called directly with a client of the in-process fake
// backend and a journal in a temporary working directory. What is asserted is what a user or the
// journal's next reader sees: the keys live on the backend, the journal's entries and how they were
// closed, the errors and the warnings logged.

const { fake, logged, goneRun, thisRun, client, journal, settings, env, liveKeys, warnings } =
  useKeyJournalFixture();

/** A local port nothing listens on: a request to it never reaches a server. */
async function closedPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
  const { port } = srv.address() as { port: number };
  await new Promise((r) => srv.close(r));
  return port;
}

/** A creation whose signal Terraform's stop fires once the server holds its request. */
function interruptible(j: DeployJournal, stop: AbortController, over: Partial<DeploySettings> = {}): KeyEnv {
  // As the provider builds it: every call of the client ends with Terraform's stop.
  const admin = client(undefined, undefined, stop.signal);
  const c: KeyEnv["client"] = {
    listApiKeys: (o) => admin.listApiKeys(o),
    revokeApiKey: (id, o) => admin.revokeApiKey(id, o),
    createApiKey: async (b, o) => {
      const sent = admin.createApiKey(b, o);
      while (fake.backend.lateCommitsPending() === 0) await new Promise((r) => setTimeout(r, 5));
      stop.abort();
      return sent;
    },
  };
  return { ...env(c, j, over), signal: stop.signal };
}

const only = (j: DeployJournal): JournalEntry => {
  const all = j.entries();
  expect(all).toHaveLength(1);
  return all[0]!;
};

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
    let started: typeof import("./api-key-journal") | undefined;
    try {
      await jest.isolateModulesAsync(async () => {
        started = await import("./api-key-journal");
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

describe("the sweep of what lost creations left", () => {
  /** An entry a process that is gone sent for a key named `name`, `ago` ms before `now`. */
  function leftOver(name: string, now: number, ago: number): string {
    const j = journal(goneRun(), () => now - ago);
    return j.sent("api_key", `sha256:${name}`, { name, kind: "team" }, []);
  }

  test("a creation that left nothing is closed as abandoned only once the reconcile window has passed", async () => {
    const now = Date.now();
    const past = leftOver("ci", now, 60_001);
    const atTheEdge = leftOver("ci", now, 60_000);
    const recent = leftOver("ci", now, 1_000);
    const j = journal();
    await sweepLostKeys({ client: client(), settings: settings(j), now: () => now });
    const byEntry = new Map(j.entries().map((e) => [e.entry, e.closed?.reason ?? null]));
    expect(byEntry).toEqual(
      new Map([
        [past, "abandoned"],
        [atTheEdge, null],
        [recent, null],
      ]),
    );
    expect(warnings()).toEqual([]);
  });

  test("a key already gone counts as revoked", async () => {
    const admin = client();
    const key = await admin.createApiKey({ name: "ci", kind: "team" });
    const gone = journal(goneRun());
    const entry = gone.sent("api_key", "sha256:ci", { name: "ci", kind: "team" }, []);
    gone.answered(entry, key.key.id);
    await admin.revokeApiKey(key.key.id);
    const j = journal();
    await sweepLostKeys({ client: admin, settings: settings(j) });
    expect(only(j).closed?.reason).toBe("revoked");
    expect(warnings()).toEqual([
      "gpurental.api_key: revoked an API key created by an interrupted or lost request; nobody holds its secret",
    ]);
  });

  test("a revocation the API refuses keeps the entry for the next apply and says so", async () => {
    const admin = client();
    const key = await admin.createApiKey({ name: "ci", kind: "team" });
    const gone = journal(goneRun());
    const entry = gone.sent("api_key", "sha256:ci", { name: "ci", kind: "team" }, []);
    gone.answered(entry, key.key.id);
    const j = journal();
    // A member may not revoke a team key: 403 ADMIN_REQUIRED.
    await sweepLostKeys({ client: client(fake.creds.member_session_token), settings: settings(j) });
    expect(only(j).closed).toBeNull();
    expect(liveKeys("ci")).toEqual([key.key.id]);
    const warned = logged.filter((l) => l["@level"] === "warn");
    expect(warned).toEqual([
      expect.objectContaining({
        "@module": "gpurental.api_key",
        "@message": "could not revoke the keys of lost creations; the next apply tries again",
        // The refusal's own message (an error's name in front would say nothing more).
        error: expect.stringMatching(/^DELETE \/v1\/api-keys\/\{id\}: 403 ADMIN_REQUIRED: .+, request \S+$/),
      }),
    ]);
  });

  test("only a new key of the entry's name and kind, absent before and named by no entry, is taken for its key", async () => {
    const admin = client();
    const earlier = await admin.createApiKey({ name: "ci", kind: "team" });
    const now = Date.now();
    const gone = journal(goneRun(), () => now);
    const entry = gone.sent("api_key", "sha256:ci", { name: "ci", kind: "team" }, [earlier.key.id]);
    const personal = await admin.createApiKey({ name: "ci", kind: "personal" });
    const other = await admin.createApiKey({ name: "other", kind: "team" });
    // A key of that name another entry (here one a state claimed) already accounts for.
    const claimed = await admin.createApiKey({ name: "ci", kind: "team" });
    const claim = gone.sent("api_key", "sha256:ci", { name: "ci", kind: "team" }, []);
    gone.answered(claim, claimed.key.id);
    gone.close(claim, "claimed");
    const lost = await admin.createApiKey({ name: "ci", kind: "team" });
    const j = journal();
    await sweepLostKeys({ client: admin, settings: settings(j), now: () => now });
    expect(liveKeys("ci").sort()).toEqual([earlier.key.id, personal.key.id, claimed.key.id].sort());
    expect(liveKeys("other")).toEqual([other.key.id]);
    expect(j.entries().find((e) => e.entry === entry)).toMatchObject({
      id: lost.key.id,
      closed: { reason: "revoked" },
    });
    expect(logged.filter((l) => l["@level"] === "warn")).toEqual([
      expect.objectContaining({
        "@message": "revoked an API key created by an interrupted or lost request; nobody holds its secret",
        id: lost.key.id,
        name: "ci",
        sent_at: new Date(now).toISOString(),
      }),
    ]);
  });

  test("a key created before the request was sent is not its", async () => {
    const admin = client();
    const key = await admin.createApiKey({ name: "ci", kind: "team" });
    // Sent well after the key was created, beyond the clocks' allowed skew.
    const later = Date.now() + 10 * 60_000;
    journal(goneRun(), () => later).sent("api_key", "sha256:ci", { name: "ci", kind: "team" }, []);
    const j = journal();
    await sweepLostKeys({ client: admin, settings: settings(j), now: () => later });
    expect(liveKeys("ci")).toEqual([key.key.id]);
    expect(only(j)).toMatchObject({ id: null, closed: null });
  });

  test("two keys that could be one entry's: neither is revoked", async () => {
    const admin = client();
    journal(goneRun()).sent("api_key", "sha256:ci", { name: "ci", kind: "team" }, []);
    const a = await admin.createApiKey({ name: "ci", kind: "team" });
    const b = await admin.createApiKey({ name: "ci", kind: "team" });
    const j = journal();
    await sweepLostKeys({ client: admin, settings: settings(j) });
    expect(liveKeys("ci").sort()).toEqual([a.key.id, b.key.id].sort());
    expect(only(j)).toMatchObject({ id: null, closed: null });
  });

  test("two entries and one key: the key is the first entry's only", async () => {
    const admin = client();
    const gone = journal(goneRun());
    const first = gone.sent("api_key", "sha256:ci", { name: "ci", kind: "team" }, []);
    const second = gone.sent("api_key", "sha256:ci", { name: "ci", kind: "team" }, []);
    const key = await admin.createApiKey({ name: "ci", kind: "team" });
    const j = journal();
    await sweepLostKeys({ client: admin, settings: settings(j) });
    expect(liveKeys("ci")).toEqual([]);
    const byEntry = new Map(
      j.entries().map((e) => [e.entry, { id: e.id, closed: e.closed?.reason ?? null }]),
    );
    expect(byEntry.get(first)).toEqual({ id: key.key.id, closed: "revoked" });
    expect(byEntry.get(second)).toEqual({ id: null, closed: null });
  });

  test("a key still being created by a live process is left to it", async () => {
    const admin = client();
    // Sent by another provider process that is still running (this one).
    journal(thisRun()).sent("api_key", "sha256:ci", { name: "ci", kind: "team" }, []);
    const key = await admin.createApiKey({ name: "ci", kind: "team" });
    const j = journal();
    await sweepLostKeys({ client: admin, settings: settings(j) });
    expect(liveKeys("ci")).toEqual([key.key.id]);
    expect(only(j).closed).toBeNull();
  });

  /** A key that a process now gone created and journaled, answered (and handed to Terraform when `handed`). */
  async function orphan(name = "ci", handed = false): Promise<string> {
    const key = await client().createApiKey({ name, kind: "team" });
    const gone = journal(goneRun());
    const entry = gone.sent("api_key", `sha256:${name}`, { name, kind: "team" }, []);
    gone.answered(entry, key.key.id);
    if (handed) gone.handed(entry);
    return key.key.id;
  }

  test("a key whose entry lost its name is revoked and logged with an empty name", async () => {
    const key = await client().createApiKey({ name: "ci", kind: "team" });
    const gone = journal(goneRun());
    gone.answered(gone.sent("api_key", "sha256:ci", {}, []), key.key.id);
    await sweepLostKeys({ client: client(), settings: settings(journal()) });
    expect(liveKeys("ci")).toEqual([]);
    expect(logged.filter((l) => l["@level"] === "warn")).toEqual([
      expect.objectContaining({ id: key.key.id, name: "" }),
    ]);
  });

  test("a creation sweeps first: a key left over by a process now gone is revoked before the new one is made", async () => {
    await orphan("left");
    const j = journal();
    const made = await createKeyJournaled({ name: "ci", kind: "team" }, env(client(), j));
    expect(liveKeys("left")).toEqual([]);
    expect(liveKeys("ci")).toEqual([made.created.key.id]);
  });

  test("with -target, a key handed to Terraform is left for a full apply; one never handed is revoked", async () => {
    const handed = await orphan("handed", true);
    await orphan("lost");
    await sweepLostKeys({ client: client(), settings: settings(journal(), { partial: true }) });
    expect(liveKeys("handed")).toEqual([handed]);
    expect(liveKeys("lost")).toEqual([]);
  });

  test("one sweep per journal: two operations at once revoke a key once", async () => {
    await orphan();
    const j = journal();
    const e = { client: client(), settings: settings(j) };
    await Promise.all([sweepLostKeys(e), sweepLostKeys(e)]);
    expect(liveKeys("ci")).toEqual([]);
    expect(warnings()).toEqual([
      "gpurental.api_key: revoked an API key created by an interrupted or lost request; nobody holds its secret",
    ]);
    expect(j.entries().map((x) => x.closed?.reason)).toEqual(["revoked"]);
  });

  test("a sweep that found nothing does not stop a later one of the same journal", async () => {
    const j = journal();
    const e = { client: client(), settings: settings(j) };
    await sweepLostKeys(e);
    await orphan();
    await sweepLostKeys(e);
    expect(liveKeys("ci")).toEqual([]);
  });

  test("the sweep of a provider's client uses its journal, and stops with Terraform's stop", async () => {
    await orphan();
    const provider = (deploy: DeploySettings): ProviderData => ({
      configured: true,
      client: client(),
      credential: { kind: "session", orgId: undefined },
      deploy,
      reads: new SharedReads(),
    });
    const stop = new AbortController();
    stop.abort();
    await sweepLostKeysOf(provider(settings(journal())), stop.signal);
    expect(liveKeys("ci")).toHaveLength(1);
    expect(warnings()).toEqual([
      "gpurental.api_key: could not revoke the keys of lost creations; the next apply tries again",
    ]);
    await sweepLostKeysOf(provider(settings(journal())));
    expect(liveKeys("ci")).toEqual([]);
  });

  test("a journal that cannot be read sweeps nothing and fails nothing", async () => {
    const j = journal();
    mkdirSync(j.file, { recursive: true });
    expect(() => j.live()).toThrow();
    await expect(sweepLostKeys({ client: client(), settings: settings(j) })).resolves.toBeUndefined();
  });
});

describe("a journal write that fails", () => {
  test("a key's id the journal cannot record leaves the created key returned, with a warning", async () => {
    const admin = client();
    const j = journal();
    const c: KeyEnv["client"] = {
      listApiKeys: (o) => admin.listApiKeys(o),
      revokeApiKey: (id, o) => admin.revokeApiKey(id, o),
      // The journal's file is replaced by a directory while the request is out.
      createApiKey: async (b, o) => {
        rmSync(j.file);
        mkdirSync(j.file);
        return admin.createApiKey(b, o);
      },
    };
    const made = await createKeyJournaled({ name: "ci", kind: "team" }, env(c, j));
    expect(liveKeys("ci")).toEqual([made.created.key.id]);
    expect(warnings()).toEqual(["gpurental.journal: deploy journal: could not record a key's id"]);
  });
});

describe("a journal that fails mid-operation", () => {
  /** The journal's file turns into a directory: every later read or write of it fails. */
  function breakJournal(j: DeployJournal): void {
    rmSync(j.file, { force: true });
    mkdirSync(j.file, { recursive: true });
  }

  /** A client whose calls named in `at` break the journal first. */
  function breaking(
    j: DeployJournal,
    at: "create" | "list" | "list after create",
    token = fake.creds.admin_session_token,
  ): KeyEnv["client"] {
    const c = client(token);
    let created = false;
    return {
      listApiKeys: (o) => {
        if (at === "list" || (at === "list after create" && created)) breakJournal(j);
        return c.listApiKeys(o);
      },
      revokeApiKey: (id, o) => c.revokeApiKey(id, o),
      createApiKey: (b, o) => {
        created = true;
        if (at === "create") breakJournal(j);
        return c.createApiKey(b, o);
      },
    };
  }

  const journalWarnings = () =>
    logged
      .filter((l) => l["@level"] === "warn" && l["@module"] === "gpurental.journal")
      .map((l) => String(l["@message"]));

  test("a refused creation it cannot close: the refusal is reported, and the failed write logged", async () => {
    const j = journal();
    const err = await createKeyJournaled(
      { name: "ci", kind: "team" },
      env(breaking(j, "create", fake.creds.member_session_token), j),
    ).catch((e: unknown) => e);
    expect((err as ApiError).code).toBe("ADMIN_REQUIRED");
    expect(journalWarnings()).toEqual(["deploy journal: could not record a refused key creation"]);
  });

  test("a lost answer it cannot record: the key is still revoked, and each failed write logged", async () => {
    fake.backend.addFault({ route: "POST /v1/api-keys", kind: "lost-response", times: 1 });
    const j = journal();
    // It breaks while the provider looks for the key the lost answer made.
    await createKeyJournaled({ name: "ci", kind: "team" }, env(breaking(j, "list after create"), j)).catch(
      (e: unknown) => e,
    );
    expect(liveKeys("ci")).toEqual([]);
    expect(journalWarnings()).toEqual([
      "deploy journal: could not record a lost key's id",
      "deploy journal: could not record a revoked key",
    ]);
  });

  test("a sweep it cannot record: the key is still revoked, and each failed write logged", async () => {
    journal(goneRun()).sent("api_key", "sha256:ci", { name: "ci", kind: "team" }, []);
    await client().createApiKey({ name: "ci", kind: "team" });
    const j = journal();
    await sweepLostKeys({ client: breaking(j, "list"), settings: settings(j) });
    expect(liveKeys("ci")).toEqual([]);
    expect(journalWarnings()).toEqual([
      "deploy journal: could not record a lost key's id",
      "deploy journal: could not record a revoked key",
    ]);
  });

  test("an abandoned creation it cannot close is logged", async () => {
    const now = Date.now();
    journal(goneRun(), () => now - 120_000).sent("api_key", "sha256:ci", { name: "ci", kind: "team" }, []);
    const j = journal();
    await sweepLostKeys({ client: breaking(j, "list"), settings: settings(j), now: () => now });
    expect(journalWarnings()).toEqual(["deploy journal: could not record a key creation that left nothing"]);
  });
});

describe("fingerprints", () => {
  const account: DeploySettings["account"] = { base_url: "https://api.example", org_id: null };

  test("a key creation's entry is fingerprinted by its name, kind and account", async () => {
    const fp = async (
      name: string,
      kind: "team" | "personal",
      acct: DeploySettings["account"] = { base_url: fake.url, org_id: null },
    ) => {
      const j = journal();
      const made = await createKeyJournaled({ name, kind }, env(client(), j, { account: acct }));
      return j.entries().find((e) => e.entry === made.entry)!.fingerprint;
    };
    const ci = await fp("ci", "team");
    expect(await fp("ci", "team")).toBe(ci);
    const others = [
      await fp("cd", "team"),
      await fp("ci", "personal"),
      await fp("ci", "team", { base_url: fake.url, org_id: fake.creds.org_id }),
    ];
    expect(new Set([ci, ...others]).size).toBe(4);
    expect(ci).toBe(
      fingerprintOf({
        kind: "api_key",
        account: { base_url: fake.url, org_id: null },
        name: "ci",
        key_kind: "team",
      }),
    );
  });

  test("fingerprints and secret digests stay what earlier releases wrote, so their journals still match", () => {
    expect(fingerprintOf({ kind: "api_key", account, name: "ci", key_kind: "team" })).toBe(
      "sha256:711bdca881bd38105f755030d84cbd8e1c2efd6b6d72c595627d05c91266b2b5",
    );
    expect(secretDigest({ PASSWORD: "hunter2" })).toBe("332aba4715bd3ed8523621dddbd5a503");
    expect(fingerprintOf({ label: "a" }, { PASSWORD: "hunter2" })).toBe(
      "sha256:735860e71ac064d1db280042f9b296d5107631060cf727df081a90a8fa1e6039",
    );
  });

  test("no secrets, empty secrets and null secrets are the same configuration; any secret value changes it", () => {
    const plain = fingerprintOf({ label: "a" });
    expect(fingerprintOf({ label: "a" }, {})).toBe(plain);
    expect(fingerprintOf({ label: "a" }, null)).toBe(plain);
    expect(fingerprintOf({ label: "a" }, { PASSWORD: "hunter2" })).not.toBe(plain);
    expect(fingerprintOf({ label: "a" }, { PASSWORD: "hunter3" })).not.toBe(
      fingerprintOf({ label: "a" }, { PASSWORD: "hunter2" }),
    );
    expect(fingerprintOf({ label: "a" }, { PASSWORD: "hunter2" })).not.toContain("hunter2");
  });
});
