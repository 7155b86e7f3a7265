import { mkdirSync, rmSync } from "node:fs";
import type { ApiError } from "../../api/errors";
import type { DeployJournal } from "../../journal";
import {
  client,
  env,
  fake,
  goneRun,
  journal,
  liveKeys,
  logged,
  settings,
  warnings,
} from "../../testing/api-key-journal";
import { createKeyJournaled, type KeyEnv, sweepLostKeys } from "./journal";

// Key creations and the sweep of lost keys, called directly with a client of the in-process fake
// backend and a journal in a temporary working directory. What is asserted is what a user or the
// journal's next reader sees: the keys live on the backend, the journal's entries and how they were
// closed, the errors and the warnings logged.

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
