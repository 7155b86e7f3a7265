import { appendFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { dir, gone, journal, records } from "../testing/journal-dir";
import { JOURNAL_FORMAT, JOURNAL_VERSION, journalFiles, parseJournal, readJournalFile } from ".";
import { currentRun } from "./run";

// The journal's edges: the file or its lock unusable, a lock held by someone else, compaction at its
// thresholds, records a reader must skip, and how the location is derived from what init left.

describe("reading a journal", () => {
  test("lines that are JSON but no record are reported, like any damaged line", () => {
    const text = ['{"op":"header"}', "42", "null", '"sent"', '{"op":1}', '{"entry":"x"}', ""].join("\n");
    expect(parseJournal(text).problems).toEqual([
      "line 2 is not a journal record",
      "line 3 is not a journal record",
      "line 4 is not a journal record",
      "line 5 is not a journal record",
      "line 6 is not a journal record",
    ]);
  });

  test("what this version cannot apply is kept as written, in order: damaged lines and a later version's records, never a torn last line", () => {
    const later = '{"op":"renewed","entry":"e","until":"t"}';
    const text = [
      '{"op":"header"}',
      "not json\r",
      later,
      "  ",
      '{"op":"answered"}',
      '{"op":"answered","entry":"',
    ];
    expect(parseJournal(text.join("\n")).unread).toEqual([
      { text: "not json\r", problem: "line 2 is not a journal record" },
      { text: later },
      { text: '{"op":"answered"}', problem: "line 5 is not a journal record" },
    ]);
  });

  test("blank lines are not counted; records of unknown entries are ignored; a sent record without request or before reads as empty", () => {
    const run = gone();
    const text = [
      "",
      JSON.stringify({
        op: "closed",
        entry: "nobody",
        reason: "claimed",
        at: "t0",
      }),
      "   ",
      JSON.stringify({
        op: "sent",
        entry: "e",
        kind: "instance",
        fingerprint: "f",
        at: "t1",
        run,
      }),
      JSON.stringify({ op: "answered", entry: "nobody", id: "i-x", at: "t2" }),
      "",
    ].join("\n");
    const parsed = parseJournal(text);
    expect(parsed.lines).toBe(3);
    expect(parsed.problems).toEqual([]);
    expect([...parsed.entries.values()]).toStrictEqual([
      {
        entry: "e",
        kind: "instance",
        fingerprint: "f",
        request: {},
        before: [],
        sent_at: "t1",
        run,
        id: null,
        answered_at: null,
        handed_at: null,
        taken: null,
        closed: null,
      },
    ]);
  });

  test("a close keeps its detail only when it has one; a take records who took it and when", () => {
    let t = Date.parse("2026-03-01T00:00:00Z");
    const { j: old } = journal({ run: gone(), now: () => t });
    const a = old.sent("instance", "sha256:a", { label: "a" });
    const b = old.sent("instance", "sha256:b", { label: "b" });
    const c = old.sent("instance", "sha256:c", { label: "c" });
    old.close(a, "unsent", "refused: OFFER_GONE");
    old.close(b, "abandoned");
    const { j: mine } = journal({ now: () => t });
    t += 1000;
    expect(mine.take("instance", "sha256:c")?.entry).toBe(c);
    const byId = new Map(readJournalFile(mine.file).entries);
    expect(byId.get(a)?.closed).toStrictEqual({
      reason: "unsent",
      at: "2026-03-01T00:00:00.000Z",
      detail: "refused: OFFER_GONE",
    });
    expect(byId.get(b)?.closed).toStrictEqual({
      reason: "abandoned",
      at: "2026-03-01T00:00:00.000Z",
    });
    expect(byId.get(c)?.taken).toStrictEqual({
      run: currentRun(),
      at: "2026-03-01T00:00:01.000Z",
    });
    expect(records(mine.file).find((r) => r.op === "closed" && r.entry === b)).not.toHaveProperty("detail");
  });

  test("a damaged line is warned about once, however often the file is read again", () => {
    const { j, logged } = journal();
    j.sent("instance", "sha256:x", {});
    appendFileSync(j.file, "not json\n");
    j.sent("instance", "sha256:y", {});
    j.sent("instance", "sha256:z", {});
    expect(j.entries()).toHaveLength(3);
    expect(logged.filter((l) => l.level === "warn")).toEqual([
      {
        level: "warn",
        message: "deploy journal: skipped a damaged line; it is kept in the file",
        fields: { file: j.file, problem: "line 3 is not a journal record" },
      },
    ]);
  });

  test("readJournalFile and journalFiles: a missing file or directory is empty, a journal is read whole", () => {
    expect(readJournalFile(join(dir, "missing.jsonl"))).toEqual({
      header: null,
      entries: new Map(),
      problems: [],
      unread: [],
      lines: 0,
    });
    expect(journalFiles(join(dir, "missing"))).toEqual([]);
    const { j } = journal();
    const e = j.sent("api_key", "sha256:k", { name: "ci", kind: "org" });
    writeFileSync(join(j.location.dir, "notes.txt"), "not a journal");
    expect(journalFiles(j.location.dir)).toEqual([j.file]);
    const read = readJournalFile(j.file);
    expect(read.header).toMatchObject({
      op: "header",
      format: JOURNAL_FORMAT,
      version: JOURNAL_VERSION,
    });
    expect([...read.entries.keys()]).toEqual([e]);
    expect(read.lines).toBe(2);
  });
});
