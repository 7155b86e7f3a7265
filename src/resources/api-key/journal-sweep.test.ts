import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { DeployJournal, locateJournal } from "../../journal";
import type { DeploySettings, ProviderData } from "../../provider/provider-data";
import { SharedReads } from "../../provider/shared-reads";
import {
  client,
  env,
  fake,
  goneRun,
  journal,
  liveKeys,
  logged,
  only,
  settings,
  thisRun,
  warnings,
} from "../../testing/api-key-journal";
import { createKeyJournaled, sweepLostKeys, sweepLostKeysOf } from "./journal";

// Key creations and the sweep of lost keys, called directly with a client of the in-process fake
// backend and a journal in a temporary working directory. What is asserted is what a user or the
// journal's next reader sees: the keys live on the backend, the journal's entries and how they were
// closed, the errors and the warnings logged.

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

  test("with -target, a key handed to Terraform is revoked only when the state is read and lacks it", async () => {
    const handed = await orphan("handed", true);
    await orphan("lost");
    // The command saves its state elsewhere (-state): only a full plan's claims tell whether that
    // state holds the key, so it is left for a full apply. One never handed is revoked.
    const elsewhere = new DeployJournal(locateJournal({ cwd: fake.workDir, env: {}, stateElsewhere: true }), {
      run: thisRun(),
    });
    await sweepLostKeys({ client: client(), settings: settings(elsewhere, { partial: true }) });
    expect(liveKeys("handed")).toEqual([handed]);
    expect(liveKeys("lost")).toEqual([]);
    // The local backend's state is read and holds it: kept.
    writeFileSync(
      join(fake.workDir, "terraform.tfstate"),
      JSON.stringify({
        version: 4,
        resources: [
          {
            mode: "managed",
            type: "gpurental_api_key",
            name: "ci",
            instances: [{ attributes: { id: handed } }],
          },
        ],
      }),
    );
    await sweepLostKeys({ client: client(), settings: settings(journal(), { partial: true }) });
    expect(liveKeys("handed")).toEqual([handed]);
    // It holds no such key (there is none): nobody holds the key's secret.
    rmSync(join(fake.workDir, "terraform.tfstate"));
    await sweepLostKeys({ client: client(), settings: settings(journal(), { partial: true }) });
    expect(liveKeys("handed")).toEqual([]);
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
