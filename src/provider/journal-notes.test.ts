import { mkdirSync } from "node:fs";
import { useKeyJournalFixture } from "../testing/key-journal";
import { bestEffort, orphanedEntriesWarning } from "./journal-notes";

// What the journal tells the user about requests no state holds (orphanedEntriesWarning), and how
// a journal write that fails is reported (bestEffort). Journals of this run and of a gone one in a
// temporary working directory; the provider's log captured from stderr.

const { logged, goneRun, thisRun, journal } = useKeyJournalFixture();

describe("journal notes", () => {
  test("the warning names each key no state can hold: an answered one by id, a lost answer by its name", () => {
    const gone = journal(goneRun(), () => Date.parse("2026-11-24T10:00:00.000Z"));
    const answered = gone.sent("api_key", "sha256:a", { name: "ci", kind: "team" }, []);
    gone.answered(answered, "key-1");
    gone.sent("api_key", "sha256:b", { name: "deploy", kind: "personal" }, []);
    // Handed to Terraform: a state may hold it, so it is not named.
    const handed = gone.sent("api_key", "sha256:c", { name: "held", kind: "team" }, []);
    gone.answered(handed, "key-2");
    gone.handed(handed);
    // Sent by a process still running: not left over.
    journal(thisRun()).sent("api_key", "sha256:d", { name: "running", kind: "team" }, []);
    const j = journal();
    expect(orphanedEntriesWarning(j)).toEqual({
      summary: "The deploy journal holds 2 requests no Terraform state has claimed",
      detail: [
        "API keys created by interrupted or lost requests, whose secret nobody holds:",
        '  - API key key-1 ("ci"), sent at 2026-11-24T10:00:00.000Z',
        '  - an API key creation ("deploy") whose answer was lost, sent at 2026-11-24T10:00:00.000Z',
        "The next apply or destroy revokes them.",
        `Deploy journal: ${j.file}`,
      ].join("\n"),
    });
  });

  test("deploys and keys are told apart: an instance alone gives no paragraph on keys", () => {
    const gone = journal(goneRun(), () => Date.parse("2026-11-24T10:00:00.000Z"));
    const deploy = gone.sent("instance", "sha256:i", { label: "train" }, []);
    gone.answered(deploy, "inst-1");
    const j = journal();
    const onlyDeploy = orphanedEntriesWarning(j)!;
    expect(onlyDeploy.summary).toBe("The deploy journal holds 1 request no Terraform state has claimed");
    expect(onlyDeploy.detail).toContain("  - instance inst-1, sent at 2026-11-24T10:00:00.000Z\n");
    expect(onlyDeploy.detail).not.toContain("API key");
    gone.sent("api_key", "sha256:a", { name: "ci", kind: "team" }, []);
    const both = orphanedEntriesWarning(j)!.detail.split("\n\n");
    expect(both).toHaveLength(2);
    expect(both[0]).toContain("  - instance inst-1,");
    expect(both[0]).not.toContain("API key");
    expect(both[1]).toBe(
      [
        "API keys created by interrupted or lost requests, whose secret nobody holds:",
        '  - an API key creation ("ci") whose answer was lost, sent at 2026-11-24T10:00:00.000Z',
        "The next apply or destroy revokes them.",
        `Deploy journal: ${j.file}`,
      ].join("\n"),
    );
  });

  test("an entry whose request lost its name or label is still described", () => {
    const gone = journal(goneRun(), () => Date.parse("2026-11-24T10:00:00.000Z"));
    const answered = gone.sent("api_key", "sha256:a", {}, []);
    gone.answered(answered, "key-1");
    gone.sent("api_key", "sha256:b", {}, []);
    gone.sent("instance", "sha256:i", {}, []);
    gone.answered(gone.sent("instance", "sha256:j", { label: "train" }, []), "inst-1");
    const detail = orphanedEntriesWarning(journal())!.detail;
    expect(detail).toContain('  - API key key-1 (""), sent at 2026-11-24T10:00:00.000Z\n');
    expect(detail).toContain(
      '  - an API key creation ("") whose answer was lost, sent at 2026-11-24T10:00:00.000Z\n',
    );
    expect(detail).toContain(
      "  - a deploy (label null) whose answer was lost, sent at 2026-11-24T10:00:00.000Z\n  - instance inst-1, sent at 2026-11-24T10:00:00.000Z\n",
    );
  });

  test("one request is named in the singular", () => {
    journal(goneRun()).sent("api_key", "sha256:a", { name: "ci", kind: "team" }, []);
    expect(orphanedEntriesWarning(journal())?.summary).toBe(
      "The deploy journal holds 1 request no Terraform state has claimed",
    );
  });

  test("a journal that cannot be read gives no warning", () => {
    const j = journal();
    mkdirSync(j.file, { recursive: true });
    expect(orphanedEntriesWarning(j)).toBeNull();
  });

  test("a journal write that fails is logged with its reason and does not fail the operation", () => {
    expect(() =>
      bestEffort("a key's id", () => {
        throw new Error("no space left on device");
      }),
    ).not.toThrow();
    expect(() =>
      bestEffort("a revoked key", () => {
        throw "EROFS";
      }),
    ).not.toThrow();
    expect(logged.filter((l) => l["@level"] === "warn")).toEqual([
      expect.objectContaining({
        "@module": "gpurental.journal",
        "@message": "deploy journal: could not record a key's id",
        error: "no space left on device",
      }),
      expect.objectContaining({
        "@module": "gpurental.journal",
        "@message": "deploy journal: could not record a revoked key",
        error: "EROFS",
      }),
    ]);
  });
});
