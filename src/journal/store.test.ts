import { spawnSync } from "node:child_process";
import fs, {
  appendFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { appendRaw, journalIn, rawRecords, recordCount, STORE_KINDS } from "../testing/journal-stores";
import { instanceStateText } from "../testing/saved-state";
import { JournalError, locateJournal, parseJournal, type RunIdentity, stableJson } from ".";
import { currentRun } from "./run";

// The journal file on its own: where it is, what survives a crash, who may take an entry.

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "gpurental-journal-store-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function deadRun(): RunIdentity {
  const child = spawnSync(process.execPath, ["-e", "0"]);
  return { id: `dead-${child.pid}`, pid: child.pid!, boot: currentRun().boot };
}

describe("location: one file per workspace and state", () => {
  test.each([
    ["TF_WORKSPACE", { TF_WORKSPACE: "prod" }, "prod"],
    ["the data directory's environment file", {}, "staging"],
  ])("the workspace comes from %s", (_what, env, ws) => {
    mkdirSync(join(dir, ".terraform"));
    writeFileSync(join(dir, ".terraform", "environment"), "staging");
    const loc = locateJournal({ cwd: dir, env });
    expect(loc.workspace).toBe(ws);
    expect(loc.file.startsWith(join(dir, ".terraform", "gpurental-journal", `${ws}-`))).toBe(true);
  });

  test("two workspaces, two backends or two local state paths never share a file", () => {
    const files = new Set<string>();
    files.add(locateJournal({ cwd: dir, env: {} }).file);
    files.add(locateJournal({ cwd: dir, env: { TF_WORKSPACE: "b" } }).file);
    mkdirSync(join(dir, ".terraform"));
    const backend = (b: unknown) =>
      writeFileSync(join(dir, ".terraform", "terraform.tfstate"), JSON.stringify({ backend: b }));
    backend({ type: "pg", config: { conn_str: "postgres://u:secret@h/db", schema_name: "a" } });
    const pg = locateJournal({ cwd: dir, env: {} });
    files.add(pg.file);
    expect(pg.backend).toBe("pg");
    expect(pg.file).not.toContain("secret");
    backend({ type: "pg", config: { conn_str: "postgres://u:secret@h/db", schema_name: "b" } });
    files.add(locateJournal({ cwd: dir, env: {} }).file);
    backend({ type: "local", config: { path: "other.tfstate" } });
    files.add(locateJournal({ cwd: dir, env: {} }).file);
    expect(files.size).toBe(5);
  });

  test("journal_dir wins over GPURENTAL_JOURNAL_DIR, which wins over TF_DATA_DIR", () => {
    expect(locateJournal({ cwd: dir, env: { TF_DATA_DIR: "data" } }).dir).toBe(
      join(dir, "data", "gpurental-journal"),
    );
    expect(locateJournal({ cwd: dir, env: { GPURENTAL_JOURNAL_DIR: "/j" } }).dir).toBe("/j");
    expect(locateJournal({ cwd: dir, env: { GPURENTAL_JOURNAL_DIR: "/j" }, configured: "k" }).dir).toBe(
      join(dir, "k"),
    );
  });
});

// The journal's meaning is the same over either store: the tests run against each, but for those
// of the file itself (torn lines, its lock, its reads).
describe.each(STORE_KINDS)("store (%s)", (kind) => {
  const here = () => locateJournal({ cwd: dir, env: {} });
  const journal = (run: RunIdentity = currentRun()) => journalIn(kind, here(), { run });
  const fileOnly = kind === "file" ? test : test.skip;

  test("entries go through sent, answered, handed and closed; closing by id writes nothing for unknown ids", () => {
    const j = journal();
    const e = j.sent("instance", "sha256:x", { label: "a" }, ["old"]);
    j.answered(e, "i-1");
    j.handed(e);
    expect(j.live()).toMatchObject([{ entry: e, id: "i-1", before: ["old"], closed: null }]);
    const size = recordCount(kind, here());
    expect(j.closeId("i-unknown", "claimed")).toBe(0);
    expect(recordCount(kind, here())).toBe(size);
    expect(j.closeId("i-1", "claimed")).toBe(1);
    expect(j.live()).toEqual([]);
  });

  fileOnly(
    "claims of one turn are written together after it, are seen at once by what judges entries, and by other processes once written",
    async () => {
      const j = journal();
      const ids = ["i-1", "i-2", "i-3"];
      for (const id of ids) j.answered(j.sent("instance", "sha256:x", {}), id);
      const before = readFileSync(j.file, "utf8");
      for (const id of ids) j.closeIdSoon(id, "claimed");
      j.closeIdSoon("i-unknown", "claimed");
      // Nothing written during the turn: a refresh's ten reads at a time share one append.
      expect(readFileSync(j.file, "utf8")).toBe(before);
      await new Promise((r) => setImmediate(r));
      const added = readFileSync(j.file, "utf8").slice(before.length).trim().split("\n");
      expect(added.map((l) => JSON.parse(l) as { op: string; reason: string })).toEqual(
        ids.map(() => expect.objectContaining({ op: "closed", reason: "claimed" })),
      );
      expect(journal().live()).toEqual([]);

      // Queued and judged in the same turn: the judge writes the claims first.
      const k = journal(deadRun());
      k.answered(k.sent("instance", "sha256:y", {}), "i-4");
      const mine = journal();
      mine.closeIdSoon("i-4", "claimed");
      expect(mine.adoptable("instance", "sha256:y")).toEqual([]);
      expect(journal().live()).toEqual([]);

      // A journal removed before the queued claims are written is not created again by them.
      mine.answered(mine.sent("instance", "sha256:z", {}), "i-5");
      mine.closeIdSoon("i-5", "claimed");
      rmSync(join(dir, ".terraform"), { recursive: true, force: true });
      await new Promise((r) => setImmediate(r));
      expect(existsSync(join(dir, ".terraform"))).toBe(false);
    },
  );

  fileOnly(
    "a torn last line (a crash mid-write) is skipped; a damaged line elsewhere is reported and skipped",
    () => {
      const j = journal(deadRun());
      const e = j.sent("instance", "sha256:x", {});
      appendFileSync(j.file, '{"op":"answered","entry":"');
      const torn = parseJournal(readFileSync(j.file, "utf8"));
      expect(torn.problems).toEqual([]);
      expect([...torn.entries.keys()]).toEqual([e]);
      appendFileSync(j.file, '\n{"op":"answered","entry":"x","id":"y","at":"t"}\n');
      expect(parseJournal(readFileSync(j.file, "utf8")).problems).toEqual(["line 3 is not a journal record"]);
      // Writing after a torn line still works.
      const k = journal();
      k.answered(e, "i-2");
      expect(k.live().map((x) => x.id)).toEqual(["i-2"]);
    },
  );

  fileOnly("its own writes are not read back from the file; another process's writes are", () => {
    const j = journal();
    const e = j.sent("instance", "sha256:x", {});
    const reads = jest.spyOn(fs, "readFileSync");
    try {
      j.answered(e, "i-1");
      j.handed(e);
      expect(j.live().map((x) => [x.id, x.handed_at !== null])).toEqual([["i-1", true]]);
      expect(reads).not.toHaveBeenCalled();
      // Another process of the directory writes: read again, once.
      const other = journal(deadRun());
      reads.mockClear();
      const f = other.sent("instance", "sha256:y", {});
      reads.mockClear();
      expect(j.live().map((x) => x.entry)).toEqual([e, f]);
      expect(j.live().map((x) => x.entry)).toEqual([e, f]);
      expect(reads).toHaveBeenCalledTimes(1);
    } finally {
      reads.mockRestore();
    }
  });

  fileOnly("the next write cuts off a torn fragment, which never took effect, and is read back", () => {
    const j = journal(deadRun());
    const e = j.sent("instance", "sha256:x", {});
    const before = readFileSync(j.file);
    // Cut inside a character, as a torn write can be.
    appendFileSync(
      j.file,
      Buffer.from('{"op":"sent","entry":"z","request":{"label":"caf\u00e9"}}').subarray(0, 49),
    );
    const k = journal();
    const f = k.sent("instance", "sha256:y", { label: "after the crash" });
    k.answered(e, "i-3");
    const text = readFileSync(j.file);
    expect(text.subarray(0, before.length).equals(before)).toBe(true);
    const read = parseJournal(text.toString("utf8"));
    expect([...read.entries.keys()]).toEqual([e, f]);
    expect(read.entries.get(e)?.id).toBe("i-3");
    expect(read.problems).toEqual([]);
    expect(read.unread).toEqual([]);
    expect(
      journal()
        .live()
        .map((x) => x.entry),
    ).toEqual([e, f]);
  });

  fileOnly(
    "a whole record torn only of its newline is kept, and the next write starts a line of its own",
    () => {
      const j = journal(deadRun());
      const e = j.sent("instance", "sha256:x", {});
      appendFileSync(
        j.file,
        JSON.stringify({ op: "answered", entry: e, id: "i-4", at: new Date().toISOString() }),
      );
      const k = journal();
      const f = k.sent("instance", "sha256:y", {});
      const read = parseJournal(readFileSync(j.file, "utf8"));
      expect([...read.entries.keys()]).toEqual([e, f]);
      expect(read.entries.get(e)?.id).toBe("i-4");
      expect(read.problems).toEqual([]);
      // Whole JSON that this version cannot apply is no fragment: it is kept, as a damaged line.
      appendFileSync(j.file, '{"op":"sent","entry":"later"}');
      k.sent("instance", "sha256:z", {});
      const after = parseJournal(readFileSync(j.file, "utf8"));
      expect(after.unread.map((u) => u.text)).toEqual(['{"op":"sent","entry":"later"}']);
      expect(after.entries.size).toBe(3);
    },
  );

  test("take gives each caller a different entry, and only entries of processes that are gone", () => {
    const old = journal(deadRun());
    const a = old.sent("instance", "sha256:x", {});
    const b = old.sent("instance", "sha256:x", {});
    const mine = journal();
    mine.sent("instance", "sha256:x", {});
    expect(mine.take("instance", "sha256:x")?.entry).toBe(a);
    expect(mine.take("instance", "sha256:x")?.entry).toBe(b);
    expect(mine.take("instance", "sha256:x")).toBeNull();
    // Taken by a process that died in turn: free again for the next one.
    const later = journal({ ...currentRun(), id: "later" });
    expect(later.take("instance", "sha256:x")).toBeNull();
  });

  test("with -target, entries handed to Terraform are adopted only when the saved state is read", () => {
    const old = journal(deadRun());
    const e = old.sent("instance", "sha256:x", {});
    old.answered(e, "i-1");
    old.handed(e);
    // The local backend's state file can be read (there is none yet) and does not hold i-1: a plan
    // that skipped it would not have claimed it, and need not have.
    expect(journal().adoptable("instance", "sha256:x", true)).toHaveLength(1);
    // The command saves the state elsewhere (-state, -state-out): only a plan's claims tell what it
    // holds, and a -target plan skipped some.
    const elsewhere = () =>
      journalIn(kind, locateJournal({ cwd: dir, env: {}, stateElsewhere: true }), { run: currentRun() });
    expect(elsewhere().adoptable("instance", "sha256:x", true)).toEqual([]);
    expect(elsewhere().adoptable("instance", "sha256:x", false)).toHaveLength(1);
    // What the backend's own file holds is still never adopted (a run killed after it saved i-1).
    writeFileSync(join(dir, "terraform.tfstate"), instanceStateText(["i-1"]));
    expect(elsewhere().adoptable("instance", "sha256:x", false)).toEqual([]);
    rmSync(join(dir, "terraform.tfstate"));
    // A state file cut short (Terraform rewrites it in place) cannot be read: the same.
    writeFileSync(join(dir, "terraform.tfstate"), instanceStateText(["i-1"]).slice(0, 40));
    expect(journal().adoptable("instance", "sha256:x", true)).toEqual([]);
    // The state holds it: never, with -target or without.
    writeFileSync(join(dir, "terraform.tfstate"), instanceStateText(["i-1"]));
    expect(journal().adoptable("instance", "sha256:x", true)).toEqual([]);
    expect(journal().adoptable("instance", "sha256:x", false)).toEqual([]);
  });

  test("a command that keeps its state elsewhere (-state) never opens what another file saved", () => {
    // An apply of the backend's file saves i-1, and its run closes the entry with that file's mark.
    const j = journal();
    const e = j.sent("instance", "sha256:x", {});
    j.answered(e, "i-1");
    j.handed(e);
    writeFileSync(join(dir, "terraform.tfstate"), instanceStateText(["i-1"], { serial: 3 }));
    expect(j.settleHanded()).toBe(1);
    // An apply with -state=staging.tfstate in the same directory: the backend's file is not its
    // state, and it reads no other in its place, so the mark is never compared with another
    // file's lineage (which would open the entry, and let a create take i-1).
    rmSync(join(dir, "terraform.tfstate"));
    const elsewhere = journalIn(kind, locateJournal({ cwd: dir, env: {}, stateElsewhere: true }), {
      run: currentRun(),
    });
    expect(elsewhere.live()).toEqual([]);
    // (Read as the backend's own, the missing file would have opened it again.)
    expect(
      journal()
        .live()
        .map((x) => x.id),
    ).toEqual(["i-1"]);
  });

  test("a journal whose run has ended (a resident session whose launch is gone) writes nothing more", async () => {
    const ended = new AbortController();
    const j = journalIn(kind, here(), { run: deadRun(), ended: ended.signal });
    const e = j.sent("instance", "sha256:x", {});
    j.answered(e, "i-1");
    j.closeIdSoon("i-1", "claimed");
    ended.abort();
    const before = recordCount(kind, here());
    // The create whose launch was killed returns its instance to no one: no "handed" is recorded,
    // so a -target apply still adopts it, as after a killed provider process.
    expect(() => j.handed(e)).toThrow(JournalError);
    // What the session's log says of each write it refuses: which journal, and why.
    expect(() => j.handed(e)).toThrow(
      `The deploy journal ${j.file} is not written by this provider any more: Terraform's provider process ended.`,
    );
    expect(() => j.sent("instance", "sha256:x", {})).toThrow(JournalError);
    expect(() => j.closeId("i-1", "destroyed")).toThrow(JournalError);
    await new Promise((r) => setImmediate(r));
    expect(recordCount(kind, here())).toBe(before);
    expect(
      journal()
        .adoptable("instance", "sha256:x", true)
        .map((x) => x.id),
    ).toEqual(["i-1"]);
  });

  test("compaction keeps open entries and a week of tombstones, one line each", () => {
    let t = Date.parse("2026-01-01T00:00:00Z");
    const j = journalIn(kind, here(), { run: currentRun(), now: () => t });
    const open = j.sent("instance", "sha256:open", {});
    for (let i = 0; i < 40; i++) {
      const e = j.sent("instance", "sha256:x", {});
      j.answered(e, `i-${i}`);
      j.closeId(`i-${i}`, "destroyed");
    }
    // At most about two records per kept entry: compaction rewrites the journal once it holds more.
    expect(recordCount(kind, here())).toBeLessThanOrEqual(2 * 42 + 3);
    expect(j.live().map((e) => e.entry)).toEqual([open]);
    expect(j.entries()).toHaveLength(41);
    // A week later the tombstones are dropped at the next compaction.
    j.close(open, "abandoned");
    t += 8 * 24 * 3600_000;
    for (let i = 0; i < 50 && j.entries().length > 1; i++)
      j.close(j.sent("instance", "sha256:y", {}), "unsent");
    expect(j.entries().length).toBeLessThan(41);
    expect(j.entries().every((e) => e.fingerprint === "sha256:y")).toBe(true);
  });

  test("what this version cannot apply is kept as written, after the entries, by compaction and once no entry is left", async () => {
    const day = 24 * 3600_000;
    let t = Date.parse("2026-01-01T00:00:00Z");
    const warned: string[] = [];
    const j = journalIn(kind, here(), {
      run: currentRun(),
      now: () => t,
      log: (level, message) => {
        if (level === "warn") warned.push(message);
      },
    });
    const open = j.sent("instance", "sha256:open", {});
    // A sent record without its run, a later version's record about the open entry, and the
    // answer to the damaged sent, with the object's id: kept with it, for whoever repairs it.
    await appendRaw(kind, here(), [
      '{"op":"sent","entry":"b","kind":"instance","fingerprint":"sha256:b","at":"t"}',
      `{"op":"renewed","entry":"${open}","until":"2026-02-01T00:00:00.000Z"}`,
      '{"op":"answered","entry":"b","id":"i-b","at":"t"}',
    ]);
    // As the store keeps them (PostgreSQL writes its own JSON).
    const unread = (await rawRecords(kind, here())).slice(-3);
    for (let i = 0; i < 40; i++) j.close(j.sent("instance", "sha256:x", {}), "destroyed");
    t += 8 * day;
    const fresh = j.sent("instance", "sha256:y", {});
    const compacted = await rawRecords(kind, here());
    expect(compacted.slice(-3)).toEqual(unread);
    expect(compacted.slice(0, -3).map((r) => (JSON.parse(r) as { op: string }).op)).toEqual([
      ...(kind === "file" ? ["header"] : []),
      "entry",
      "entry",
    ]);
    expect(j.entries().map((e) => e.entry)).toEqual([open, fresh]);
    // Said once, wherever the compaction moved it.
    expect(warned).toHaveLength(1);

    // Every entry closed a week ago: the journal stays, with what it could not apply.
    j.close(open, "destroyed");
    j.close(fresh, "destroyed");
    t += 8 * day;
    j.close("no-such-entry", "abandoned");
    expect(j.store.exists()).toBe(true);
    expect((await rawRecords(kind, here())).filter((r) => unread.includes(r))).toEqual(unread);
    expect(warned).toHaveLength(1);
  });

  test("records moved in as they were are written after the entries and kept, by the write that would compact or drop the journal too", async () => {
    const day = 24 * 3600_000;
    let t = Date.parse("2026-01-01T00:00:00Z");
    const j = journalIn(kind, here(), { run: currentRun(), now: () => t });
    // Enough closed entries for the next write to compact, all of them dropped by it.
    for (let i = 0; i < 40; i++) j.close(j.sent("instance", "sha256:x", {}), "destroyed");
    t += 8 * day;
    const damaged = {
      op: "sent",
      entry: "d",
      kind: "instance",
      fingerprint: "f",
      at: "t",
      run: { pid: "x" },
    };
    const later = { op: "renewed", entry: "d", until: "2026-02-01T00:00:00.000Z" };
    const moved = {
      entry: "m",
      kind: "instance" as const,
      fingerprint: "sha256:m",
      request: {},
      before: [],
      sent_at: "2026-01-09T00:00:00.000Z",
      run: currentRun(),
      id: "i-m",
      answered_at: null,
      handed_at: null,
      taken: null,
      closed: null,
    };
    expect(j.importJournal([moved], [damaged, later])).toEqual({ entries: 1, unread: 2 });
    const rows = (await rawRecords(kind, here())).map((r) => JSON.parse(r) as unknown);
    expect(rows.slice(-3)).toEqual([{ op: "entry", ...moved }, damaged, later]);
    // Read back as what this version cannot apply; the damaged record is no entry.
    const again = journalIn(kind, here(), { now: () => t });
    expect(again.entries().map((e) => e.entry)).toEqual(expect.not.arrayContaining(["d"]));
    expect(again.store.read().unread.map((u) => JSON.parse(u.text) as unknown)).toEqual([damaged, later]);
    // Moved in again: none twice. The next writes compact, and keep them.
    expect(j.importJournal([moved], [later, damaged])).toEqual({ entries: 0, unread: 0 });
    j.close("m", "destroyed");
    t += 8 * day;
    j.close("no-such-entry", "abandoned");
    const left = (await rawRecords(kind, here())).map((r) => JSON.parse(r) as unknown);
    expect(
      left.filter((r) => (r as { op: string }).op !== "header" && (r as { op: string }).op !== "closed"),
    ).toEqual(expect.arrayContaining([damaged, later]));
    expect(left.filter((r) => stableJson(r) === stableJson(damaged))).toHaveLength(1);
  });

  fileOnly(
    "a stale lock of a dead process is taken over; a journal of a newer format is never written",
    () => {
      const j = journal();
      mkdirSync(j.location.dir, { recursive: true });
      writeFileSync(`${j.file}.lock`, JSON.stringify(deadRun()));
      j.sent("instance", "sha256:x", {});
      expect(existsSync(`${j.file}.lock`)).toBe(false);
      writeFileSync(
        j.file,
        `${JSON.stringify({ op: "header", format: "gpurental-deploy-journal", version: 99 })}\n`,
      );
      expect(() => j.sent("instance", "sha256:x", {})).toThrow("format version 99");
    },
  );
});

describe.each(STORE_KINDS)("handed entries: only what no saved state got is adopted (%s)", (kind) => {
  const journal = (run: RunIdentity = currentRun()) =>
    journalIn(kind, locateJournal({ cwd: dir, env: {} }), { run });
  const stateWith = (...ids: string[]) =>
    writeFileSync(join(dir, "terraform.tfstate"), instanceStateText(ids));

  test("a run that ends normally closes what the local state saved; a later state rm is respected", () => {
    const run = { ...currentRun(), id: "ending-run" };
    const j = journal(run);
    const saved = j.sent("instance", "sha256:x", {});
    j.answered(saved, "i-saved");
    j.handed(saved);
    const lost = j.sent("instance", "sha256:x", {});
    j.answered(lost, "i-lost");
    j.handed(lost);
    stateWith("i-saved");
    expect(j.settleHanded()).toBe(1);
    const closed = j.entries().find((e) => e.entry === saved)!.closed;
    expect(closed).toMatchObject({ reason: "claimed", detail: "saved in the state" });
    // `terraform state rm` afterwards: the saved one is never adopted back; what Terraform never
    // saved (a second Ctrl-C) stays open, to be adopted once its run is gone.
    stateWith();
    expect(
      journal()
        .live()
        .map((e) => e.id),
    ).toEqual(["i-lost"]);
  });

  test("a run that adopts an entry settles it as its own; a take whose adoption handed nothing leaves it open", () => {
    const t0 = Date.parse("2026-06-01T00:00:00Z");
    const old = journalIn(kind, locateJournal({ cwd: dir, env: {} }), { run: deadRun(), now: () => t0 });
    const ids = ["i-a", "i-b"].map((id) => {
      const e = old.sent("instance", "sha256:x", {});
      old.answered(e, id);
      old.handed(e);
      return e;
    });
    // The run that sent them was killed: nothing settled them. The next one adopts i-a; its
    // adoption of i-b fails (the instance could not be read), so it hands only i-a.
    const run = { ...currentRun(), id: "adopting-run" };
    const j = journalIn(kind, locateJournal({ cwd: dir, env: {} }), { run, now: () => t0 + 60_000 });
    for (const e of ids) expect(j.takeEntry(e)?.entry).toBe(e);
    j.handed(ids[0]!);
    stateWith("i-a");
    expect(j.settleHanded()).toBe(1);
    expect(j.entries().map((e) => [e.id, e.closed?.detail ?? null])).toEqual([
      ["i-a", "saved in the state"],
      ["i-b", null],
    ]);
  });

  test("what the local state holds is never adopted, whatever the journal says", () => {
    const old = journal(deadRun());
    const e = old.sent("instance", "sha256:x", {});
    old.answered(e, "i-1");
    stateWith("i-1");
    expect(journal().adoptable("instance", "sha256:x")).toEqual([]);
    stateWith();
    expect(
      journal()
        .adoptable("instance", "sha256:x")
        .map((x) => x.id),
    ).toEqual(["i-1"]);
    // A state file cut short proves nothing either way: the entry stays adoptable.
    writeFileSync(join(dir, "terraform.tfstate"), '{"version": 4, "resour');
    expect(
      journal()
        .adoptable("instance", "sha256:x")
        .map((x) => x.id),
    ).toEqual(["i-1"]);
  });

  test.each([
    ["emptied (Terraform truncates it before writing it again)", ""],
    ["cut short mid-write", '{"version": 4, "resources": [{"mode": "managed", "type": "gpurental_inst'],
  ])(
    "a local state file %s when the run ends proves nothing: every handed entry stays open",
    (_what, text) => {
      // Terraform interrupted twice ends the run (Shutdown) while it rewrites the state file in
      // place, and the provider may never have seen its StopProvider: nothing may be closed then.
      const ended = deadRun();
      const j = journal(ended);
      const ids = ["i-1", "i-2", "i-3"];
      for (const id of ids) {
        const e = j.sent("instance", "sha256:x", {});
        j.answered(e, id);
        j.handed(e);
      }
      stateWith("i-1");
      writeFileSync(join(dir, "terraform.tfstate"), text);
      expect(j.settleHanded()).toBe(0);
      // The state Terraform finally left holds one of them: the next run adopts the other two.
      stateWith("i-1");
      expect(
        journal()
          .adoptable("instance", "sha256:x")
          .map((x) => x.id),
      ).toEqual(["i-2", "i-3"]);
    },
  );

  test("what a state held when its run ended is open again once an earlier state is put back, never after a later one", () => {
    // Terraform stopped twice ends the run (Shutdown) while its apply still writes the state: the
    // state read then holds objects, and the next write is cut short, so the user puts back the
    // backup, an earlier state that does not hold them.
    const state = (serial: number, ids: string[], lineage = "lineage-a") =>
      writeFileSync(join(dir, "terraform.tfstate"), instanceStateText(ids, { serial, lineage }));
    const j = journal(deadRun());
    for (const id of ["i-1", "i-2"]) {
      const e = j.sent("instance", "sha256:x", {});
      j.answered(e, id);
      j.handed(e);
    }
    state(5, ["i-1", "i-2"]);
    expect(j.settleHanded()).toBe(2);
    expect(j.entries().map((e) => e.closed?.state)).toEqual([
      { lineage: "lineage-a", serial: 5 },
      { lineage: "lineage-a", serial: 5 },
    ]);
    const adoptable = () =>
      journal()
        .adoptable("instance", "sha256:x")
        .map((x) => x.id);
    // A later state of the same lineage without one of them: a `terraform state rm`, respected.
    state(6, ["i-1"]);
    expect(adoptable()).toEqual([]);
    expect(journal().live()).toEqual([]);
    // A state file being written (or cut short) proves nothing either way.
    writeFileSync(join(dir, "terraform.tfstate"), '{"version": 4, "lineage": "lineage-a", "ser');
    expect(adoptable()).toEqual([]);
    // The backup put back: an earlier state that holds neither. Both are adopted, not deployed again.
    state(3, []);
    expect(adoptable()).toEqual(["i-1", "i-2"]);
    expect(
      journal()
        .live()
        .map((e) => [e.id, e.closed]),
    ).toEqual([
      ["i-1", null],
      ["i-2", null],
    ]);
    // What the earlier state holds stays its own.
    state(4, ["i-1"]);
    expect(adoptable()).toEqual(["i-2"]);
    // No state at all, or another state (another lineage): open again too.
    rmSync(join(dir, "terraform.tfstate"));
    expect(adoptable()).toEqual(["i-1", "i-2"]);
    state(9, [], "lineage-b");
    expect(adoptable()).toEqual(["i-1", "i-2"]);
    // Once a plan claims a reopened one from a state that holds it, it is closed for good.
    state(4, ["i-1"]);
    expect(journal().closeId("i-1", "claimed")).toBe(1);
    state(3, []);
    expect(adoptable()).toEqual(["i-2"]);
  });

  test("where the state cannot be read, a run that ended normally closes every handed entry, a stopped one none", () => {
    mkdirSync(join(dir, ".terraform"));
    // A key/value conn_str: the provider reads the state of a pg backend given a URL only.
    writeFileSync(
      join(dir, ".terraform", "terraform.tfstate"),
      JSON.stringify({ backend: { type: "pg", config: { conn_str: "host=h dbname=db" } } }),
    );
    const stopped = new AbortController();
    const a = journalIn(kind, locateJournal({ cwd: dir, env: {} }), {
      run: { ...currentRun(), id: "run-a" },
      stopped: stopped.signal,
    });
    const e = a.sent("instance", "sha256:x", {});
    a.answered(e, "i-a");
    a.handed(e);
    stopped.abort();
    expect(a.settleHanded()).toBe(0);
    const b = journalIn(kind, locateJournal({ cwd: dir, env: {} }), {
      run: { ...currentRun(), id: "run-b" },
    });
    const f = b.sent("instance", "sha256:x", {});
    b.answered(f, "i-b");
    b.handed(f);
    expect(b.settleHanded()).toBe(1);
    expect(b.live().map((x) => x.id)).toEqual(["i-a"]);
  });

  test("takeEntry takes the one entry a plan named, and only while it is adoptable", () => {
    const old = journal(deadRun());
    const a = old.sent("instance", "sha256:x", {});
    const b = old.sent("instance", "sha256:x", {});
    const mine = journal();
    expect(mine.takeEntry(b)?.entry).toBe(b);
    expect(mine.takeEntry(b)).toBeNull();
    old.close(a, "claimed");
    expect(mine.takeEntry(a)).toBeNull();
  });
});
