import {
  appendFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { dir, fakeWallClock, gone, journal, lines, records } from "../testing/journal-dir";
import {
  CLOSED_KEPT_MS,
  DeployJournal,
  JOURNAL_FORMAT,
  JournalError,
  locateJournal,
  readJournalFile,
} from ".";
import { FileStore } from "./file-store";
import type { JournalStore } from "./journal-store";
import { currentRun } from "./run";

// The journal's edges: the file or its lock unusable, a lock held by someone else, compaction at its
// thresholds, records a reader must skip, and how the location is derived from what init left.

describe("writing a journal", () => {
  test("the header names the format, version, workspace, backend and creation time; the file is 0600 in a 0700 directory", () => {
    const t = Date.parse("2026-02-01T12:00:00Z");
    const { j } = journal({
      location: locateJournal({ cwd: dir, env: { TF_WORKSPACE: "prod" } }),
      now: () => t,
    });
    j.sent("instance", "sha256:x", {});
    j.sent("instance", "sha256:y", {});
    const recs = records(j.file);
    expect(recs[0]).toStrictEqual({
      op: "header",
      format: "gpurental-deploy-journal",
      version: 1,
      workspace: "prod",
      backend: "local",
      created_at: "2026-02-01T12:00:00.000Z",
    });
    expect(recs.filter((r) => r.op === "header")).toHaveLength(1);
    expect(recs).toHaveLength(3);
    expect(statSync(j.file).mode & 0o777).toBe(0o600);
    expect(statSync(j.location.dir).mode & 0o777).toBe(0o700);
    // No lock or temp file is left beside it.
    expect(readdirSync(j.location.dir)).toEqual([j.file.slice(j.location.dir.length + 1)]);
  });

  test("live() filters by kind", () => {
    const { j } = journal();
    const i = j.sent("instance", "sha256:x", {});
    const k = j.sent("api_key", "sha256:x", {});
    expect(j.live("instance").map((e) => e.entry)).toEqual([i]);
    expect(j.live("api_key").map((e) => e.entry)).toEqual([k]);
    expect(j.live().map((e) => e.entry)).toEqual([i, k]);
    // Sent without the ids that existed before: none recorded.
    expect(j.entries()[0]?.before).toEqual([]);
  });

  test("without -target an entry handed to Terraform is adoptable; a closed one never is, nor one of another fingerprint", () => {
    const { j: old } = journal({ run: gone("old") });
    const closed = old.sent("instance", "sha256:x", {});
    old.close(closed, "abandoned");
    const handed = old.sent("instance", "sha256:x", {});
    old.handed(handed);
    old.sent("instance", "sha256:y", {});
    const { j: mine } = journal();
    const entry = mine.entries().find((e) => e.entry === handed);
    expect(entry && mine.isAdoptable(entry)).toBe(true);
    expect(mine.adoptable("instance", "sha256:x").map((e) => e.entry)).toEqual([handed]);
    // With -target, only what was handed is left alone.
    expect(mine.adoptable("instance", "sha256:y", true)).toHaveLength(1);
    expect(mine.take("instance", "sha256:x")?.entry).toBe(handed);
    expect(mine.take("instance", "sha256:x")).toBeNull();
  });

  test("a write holds a lock naming its run, and leaves no file descriptor open", () => {
    const held: string[] = [];
    const location = locateJournal({ cwd: dir, env: {} });
    let t = Date.parse("2026-07-01T00:00:00Z");
    const j = new DeployJournal(location, {
      run: currentRun(),
      now: () => t,
      log: () => held.push(readFileSync(`${location.file}.lock`, "utf8")),
    });
    const fds = () => readdirSync("/proc/self/fd").length;
    j.sent("instance", "sha256:first", {});
    const before = fds();
    for (let i = 0; i < 40; i++) j.close(j.sent("instance", "sha256:x", {}), "destroyed");
    t += 8 * 24 * 3600_000;
    j.sent("instance", "sha256:last", {});
    expect(j.entries()).toHaveLength(2);
    expect(fds()).toBe(before);
    // Compaction, under the lock, was told of.
    expect(held.length).toBeGreaterThan(0);
    expect(JSON.parse(held[0] ?? "null")).toEqual(currentRun());
  });

  test("a take keeps kinds and fingerprints apart, and an entry taken by a process that is gone is free again", () => {
    const { j: old } = journal({ run: gone("old") });
    const otherFingerprint = old.sent("instance", "sha256:other", {});
    const key = old.sent("api_key", "sha256:x", {});
    const instance = old.sent("instance", "sha256:x", {});
    const { j: mine } = journal();
    expect(mine.take("instance", "sha256:x")?.entry).toBe(instance);
    expect(mine.take("instance", "sha256:x")).toBeNull();
    expect(mine.take("api_key", "sha256:x")?.entry).toBe(key);
    expect(mine.take("instance", "sha256:other")?.entry).toBe(otherFingerprint);

    // Taken by a run that died in turn: the next run may take it.
    const { j: dying } = journal({ run: gone("dying") });
    const e = old.sent("instance", "sha256:again", {});
    expect(dying.take("instance", "sha256:again")?.entry).toBe(e);
    expect(mine.adoptable("instance", "sha256:again").map((x) => x.entry)).toEqual([e]);
    expect(mine.take("instance", "sha256:again")?.entry).toBe(e);
    expect(
      journal({ run: { ...currentRun(), id: "third" } }).j.adoptable("instance", "sha256:again"),
    ).toEqual([]);
  });

  test("a claim queued in this turn is on disk before the next durable write's record", () => {
    const { j } = journal();
    j.answered(j.sent("instance", "sha256:x", {}), "i-1");
    j.closeIdSoon("i-1", "claimed");
    j.sent("instance", "sha256:y", {});
    const recs = records(j.file);
    expect(recs.slice(-2).map((r) => r.op)).toEqual(["closed", "sent"]);
    expect(recs.at(-2)).toMatchObject({ op: "closed", reason: "claimed" });
  });

  test("a claim closes only the open entries of the id, and writes nothing when another process closed them first", async () => {
    let t = Date.parse("2026-04-01T00:00:00Z");
    const { j } = journal({ now: () => t });
    const first = j.sent("instance", "sha256:x", {});
    j.answered(first, "i-1");
    j.closeId("i-1", "destroyed");
    // The same id again (an adopted instance, say), open this time.
    const second = j.sent("instance", "sha256:x", {});
    j.answered(second, "i-1");
    t += 60_000;
    j.closeIdSoon("i-1", "claimed");
    await new Promise((r) => setImmediate(r));
    const byId = readJournalFile(j.file).entries;
    expect(byId.get(first)?.closed).toStrictEqual({
      reason: "destroyed",
      at: "2026-04-01T00:00:00.000Z",
    });
    expect(byId.get(second)?.closed).toStrictEqual({
      reason: "claimed",
      at: "2026-04-01T00:01:00.000Z",
    });

    const third = j.sent("instance", "sha256:x", {});
    j.answered(third, "i-3");
    j.closeIdSoon("i-3", "claimed");
    expect(journal().j.closeId("i-3", "destroyed")).toBe(1);
    const size = statSync(j.file).size;
    j.writeQueuedCloses();
    expect(statSync(j.file).size).toBe(size);
    expect(readJournalFile(j.file).entries.get(third)?.closed?.reason).toBe("destroyed");
  });

  test("a claim that cannot read the journal, or cannot write it, is logged and not thrown", () => {
    // Unreadable: the journal's path is a directory.
    const { j, logged } = journal();
    mkdirSync(j.file, { recursive: true });
    expect(() => j.closeIdSoon("i-1", "claimed")).not.toThrow();
    expect(logged).toEqual([
      {
        level: "warn",
        message: "deploy journal: could not read it to record a claim",
        fields: { file: j.file, error: expect.stringContaining("EISDIR") },
      },
    ]);
    rmSync(j.file, { recursive: true });

    // Unwritable: by then a newer provider has rewritten the file.
    const { j: k, logged: kLogged } = journal();
    k.answered(k.sent("instance", "sha256:x", {}), "i-2");
    k.closeIdSoon("i-2", "claimed");
    writeFileSync(
      k.file,
      `${JSON.stringify({
        op: "header",
        format: JOURNAL_FORMAT,
        version: 2,
      })}\n`,
    );
    expect(() => k.writeQueuedCloses()).not.toThrow();
    expect(kLogged).toEqual([
      {
        level: "warn",
        message: "deploy journal: could not record claims",
        fields: {
          file: k.file,
          error: expect.stringContaining("format version 2"),
        },
      },
    ]);
  });

  test("closing or taking what no open entry names creates nothing and takes no lock", () => {
    const { j } = journal();
    expect(j.closeId("i-1", "claimed")).toBe(0);
    expect(j.take("instance", "sha256:x")).toBeNull();
    expect(existsSync(join(dir, ".terraform"))).toBe(false);
    // Nor does either wait for a lock another process holds.
    j.answered(j.sent("instance", "sha256:mine", {}), "i-2");
    const lock = `${j.file}.lock`;
    writeFileSync(lock, JSON.stringify({ ...currentRun(), id: "another-configuration" }));
    fakeWallClock();
    expect(j.closeId("i-1", "claimed")).toBe(0);
    expect(j.take("instance", "sha256:x")).toBeNull();
    expect(j.take("instance", "sha256:mine")).toBeNull();
    expect(readFileSync(lock, "utf8")).toContain("another-configuration");
  });

  test("an entry another process takes while this one waits for the lock is not taken twice", () => {
    const { j: old } = journal({ run: gone("old") });
    const e = old.sent("instance", "sha256:x", {});
    const { j: other } = journal({ run: { ...currentRun(), id: "another-configuration" } });
    const { j: mine } = journal();
    const lock = `${mine.file}.lock`;
    writeFileSync(lock, JSON.stringify({ ...currentRun(), id: "another-configuration" }));
    // The other process, holding the lock, takes the entry and lets go while this one waits.
    let t = Date.now();
    let looks = 0;
    let otherTook: string | undefined;
    jest.spyOn(Date, "now").mockImplementation(() => {
      if (++looks === 3) {
        rmSync(lock);
        otherTook = other.take("instance", "sha256:x")?.entry;
      }
      t += 1000;
      return t;
    });
    expect(mine.take("instance", "sha256:x")).toBeNull();
    expect(otherTook).toBe(e);
    expect(readJournalFile(mine.file).entries.get(e)?.taken?.run.id).toBe("another-configuration");
  });

  test("claims hold one exit hook per journal while they are queued, and none when no open entry has the id", async () => {
    const { j } = journal();
    j.answered(j.sent("instance", "sha256:x", {}), "i-1");
    j.answered(j.sent("instance", "sha256:x", {}), "i-2");
    j.closeId("i-2", "destroyed");
    const hooks = () => process.listenerCount("exit");
    const before = hooks();
    j.closeIdSoon("i-unknown", "claimed");
    j.closeIdSoon("i-2", "claimed");
    expect(hooks()).toBe(before);
    j.closeIdSoon("i-1", "claimed");
    expect(hooks()).toBe(before + 1);
    await new Promise((r) => setImmediate(r));
    // Written: the process holds the journal no longer (a resident provider process makes one per
    // session, and would otherwise keep them all, with a listener each).
    expect(hooks()).toBe(before);
    j.answered(j.sent("instance", "sha256:x", {}), "i-3");
    j.closeIdSoon("i-3", "claimed");
    j.closeIdSoon("i-3", "claimed");
    expect(hooks()).toBe(before + 1);
    await new Promise((r) => setImmediate(r));
    expect(hooks()).toBe(before);
    expect(j.live()).toEqual([]);
  });

  test("referencedIds reports a damaged line of its own journal like any read", () => {
    const { j, logged } = journal();
    const { j: reader, logged: readerLogged } = journal();
    j.answered(j.sent("instance", "sha256:x", {}), "i-1");
    appendFileSync(j.file, "not json\n");
    expect(reader.referencedIds()).toEqual(new Set(["i-1"]));
    expect(readerLogged).toEqual([
      {
        level: "warn",
        message: "deploy journal: skipped a damaged line; it is kept in the file",
        fields: { file: j.file, problem: "line 4 is not a journal record" },
      },
    ]);
    expect(logged).toEqual([]);
  });

  test("closing an id closes its open entries only", () => {
    let t = Date.parse("2026-04-02T00:00:00Z");
    const { j } = journal({ now: () => t });
    const first = j.sent("instance", "sha256:x", {});
    j.answered(first, "i-1");
    j.close(first, "destroyed");
    const second = j.sent("instance", "sha256:x", {});
    j.answered(second, "i-1");
    t += 1000;
    expect(j.closeId("i-1", "claimed")).toBe(1);
    const byId = readJournalFile(j.file).entries;
    expect(byId.get(first)?.closed).toStrictEqual({ reason: "destroyed", at: "2026-04-02T00:00:00.000Z" });
    expect(byId.get(second)?.closed).toStrictEqual({ reason: "claimed", at: "2026-04-02T00:00:01.000Z" });
  });

  test("the exit hook writes the claims still queued", () => {
    const { j } = journal();
    const e = j.sent("instance", "sha256:x", {});
    j.answered(e, "i-1");
    const hooks = process.listeners("exit");
    j.closeIdSoon("i-1", "claimed");
    const hook = process.listeners("exit").find((l) => !hooks.includes(l));
    expect(hook).toBeDefined();
    process.removeListener("exit", hook as () => void);
    (hook as () => void)();
    expect(readJournalFile(j.file).entries.get(e)?.closed?.reason).toBe("claimed");
  });

  test("reading the entries waits for no lock", () => {
    const { j } = journal();
    j.sent("instance", "sha256:x", {});
    writeFileSync(`${j.file}.lock`, JSON.stringify({ ...currentRun(), id: "another-configuration" }));
    fakeWallClock();
    expect(j.entries()).toHaveLength(1);
    expect(j.live()).toHaveLength(1);
    expect(j.referencedIds()).toEqual(new Set());
  });

  test("referencedIds reads every journal of the directory, and nothing else", () => {
    const { j: none } = journal();
    expect(none.referencedIds()).toEqual(new Set());
    const { j } = journal();
    j.answered(j.sent("instance", "sha256:x", {}), "i-mine");
    j.sent("instance", "sha256:x", {}); // no id yet
    const { j: other } = journal({
      location: locateJournal({ cwd: dir, env: { TF_WORKSPACE: "other" } }),
    });
    other.answered(other.sent("instance", "sha256:x", {}), "i-other");
    // A copy under another name and a directory named like a journal are not journals.
    writeFileSync(
      join(j.location.dir, "old.jsonl.bak"),
      readFileSync(j.file, "utf8").replace("i-mine", "i-bak"),
    );
    mkdirSync(join(j.location.dir, "odd.jsonl"));
    expect(j.referencedIds()).toEqual(new Set(["i-mine", "i-other"]));
  });
});

describe("compaction", () => {
  const day = 24 * 3600_000;

  test("a journal whose every entry was closed more than a week ago is removed; one closed exactly a week ago is kept", () => {
    const t0 = Date.parse("2026-05-01T00:00:00Z");
    let t = t0;
    const { j } = journal({ now: () => t });
    const e = j.sent("instance", "sha256:x", {});
    j.close(e, "destroyed");
    // A week, written out: the constant itself is what is checked.
    expect(CLOSED_KEPT_MS).toBe(7 * day);
    t = t0 + 7 * day;
    j.close("no-such-entry", "abandoned");
    expect(j.entries().map((x) => x.entry)).toEqual([e]);
    t = t0 + 7 * day + 1;
    j.close("no-such-entry", "abandoned");
    expect(() => statSync(j.file)).toThrow("ENOENT");
    expect(j.entries()).toEqual([]);
    // Written again from scratch, header first.
    j.sent("instance", "sha256:y", {});
    expect(records(j.file).map((r) => r.op)).toEqual(["header", "sent"]);
  });

  /** `closed` entries closed long ago, then `open` entries sent now; the line count after each send. */
  function fill(closed: number, open: number) {
    const t0 = Date.parse("2026-06-01T00:00:00Z");
    let t = t0;
    const { j, logged } = journal({ now: () => t });
    for (let i = 0; i < closed; i++) j.close(j.sent("instance", "sha256:old", {}), "destroyed");
    t = t0 + 8 * day;
    const counts: number[] = [];
    for (let i = 0; i < open; i++) {
      j.sent("instance", "sha256:new", {});
      counts.push(lines(j.file).length);
    }
    return { j, logged, counts };
  }

  test("the file is rewritten once it reaches 64 lines and holds at least two per kept entry", () => {
    // 1 header + 32 lines of 16 old closed entries + 31 sends = 64 lines, 31 entries kept.
    const { j, logged, counts } = fill(16, 31);
    expect(counts.slice(-2)).toEqual([63, 32]);
    expect(records(j.file).map((r) => r.op)).toEqual(["header", ...Array(31).fill("entry")]);
    expect(j.live()).toHaveLength(31);
    expect(j.entries()).toHaveLength(31);
    expect(logged).toEqual([
      {
        level: "debug",
        message: "deploy journal compacted",
        fields: { file: j.file, lines: 64, kept: 31 },
      },
    ]);
  });

  test("the lines this version cannot apply are written back as they are, in their order, after the entries", () => {
    const t0 = Date.parse("2026-06-01T00:00:00Z");
    let t = t0;
    const { j, logged } = journal({ now: () => t });
    const open = j.sent("instance", "sha256:open", {});
    // Not JSON, a record without what its op needs, a later version's record; a blank line is none.
    const unread = [
      "not json\r",
      '{"op":"closed","entry":"x","at":"t"}',
      `{"op":"renewed","entry":"${open}","until":"2026-07-01T00:00:00.000Z"}`,
    ];
    appendFileSync(j.file, `${unread[0]}\n${unread[1]}\n \n${unread[2]}\n`);
    for (let i = 0; i < 30; i++) j.close(j.sent("instance", "sha256:old", {}), "destroyed");
    t = t0 + 8 * day;
    const fresh = j.sent("instance", "sha256:new", {});
    const after = lines(j.file);
    expect(after.slice(-3)).toEqual(unread);
    expect(after.slice(0, -3).map((l) => (JSON.parse(l) as { op: string; entry?: string }).entry)).toEqual([
      undefined,
      open,
      fresh,
    ]);
    expect(logged.filter((l) => l.message === "deploy journal compacted")).toEqual([
      { level: "debug", message: "deploy journal compacted", fields: { file: j.file, lines: 66, kept: 2 } },
    ]);
    // Each damaged line is said once, though the compaction moved it.
    j.entries();
    expect(logged.filter((l) => l.level === "warn").map((l) => l.fields?.problem)).toEqual([
      "line 3 is not a journal record",
      "line 4 is not a journal record",
    ]);
  });

  test("a journal whose entries are all dropped is kept while it holds lines this version cannot apply", () => {
    const t0 = Date.parse("2026-05-01T00:00:00Z");
    let t = t0;
    const { j } = journal({ now: () => t });
    j.close(j.sent("instance", "sha256:x", {}), "destroyed");
    const later = '{"op":"renewed","entry":"e"}';
    appendFileSync(j.file, `${later}\n`);
    t = t0 + 8 * day;
    j.close("no-such-entry", "abandoned");
    expect(lines(j.file)).toContain(later);
  });

  test("64 lines holding less than two per kept entry are left as they are", () => {
    // 1 header + 30 lines of 15 old closed entries + 33 sends = 64 lines, 33 entries kept.
    const { j, logged, counts } = fill(15, 33);
    expect(counts.at(-1)).toBe(64);
    expect(logged).toEqual([]);
    // The old tombstones are still there, to be dropped at the next compaction.
    expect(j.entries()).toHaveLength(48);
    expect(j.live()).toHaveLength(33);
  });
});

/** A file store with some of its methods replaced. */
function storeOver(file: FileStore, over: Partial<Pick<JournalStore, "update" | "retire">>): JournalStore {
  return {
    name: file.name,
    kind: file.kind,
    read: () => file.read(),
    exists: () => file.exists(),
    referencedIds: () => file.referencedIds(),
    update: over.update ?? ((build, opts) => file.update(build, opts)),
    retire: over.retire ?? (() => file.retire()),
  };
}

describe("an id whose record could not be written", () => {
  /** A journal over a file store whose writes fail while `down` is true (a database out of reach). */
  function flakyJournal() {
    const location = locateJournal({ cwd: dir, env: {} });
    const run = currentRun();
    const file = new FileStore(location, { run, log: () => {} });
    const state = { down: false };
    const store = storeOver(file, {
      update: (build, opts) => {
        if (state.down) throw new JournalError("the database cannot be reached", file.name);
        file.update(build, opts);
      },
    });
    return { j: new DeployJournal(location, { run, store }), state, location };
  }

  test("is seen by every read, and written first by the next write that gets through", () => {
    const { j, state, location } = flakyJournal();
    const sent = j.sent("instance", "sha256:x", {});
    const other = j.sent("instance", "sha256:y", {});
    state.down = true;
    expect(() => j.answered(sent, "inst-1")).toThrow(JournalError);
    // This run knows the id: it is the deploy's, and no listing may offer it to another create.
    expect(j.referencedIds()).toContain("inst-1");
    expect(j.entries().find((e) => e.entry === sent)?.id).toBe("inst-1");
    expect(j.adoptable("instance", "sha256:x")).toEqual([]);
    state.down = false;
    j.close(other, "unsent");
    // Another process reads it from the file alone.
    const reader = new DeployJournal(location, { run: currentRun() });
    expect(reader.entries().find((e) => e.entry === sent)?.id).toBe("inst-1");
    const ops = records(j.file).map((r) => `${String(r.op)}:${String(r.entry ?? "")}`);
    expect(ops.slice(-2)).toEqual([`answered:${sent}`, `closed:${other}`]);
  });

  test("is written when the run settles, when no other write got through before", () => {
    const { j, state, location } = flakyJournal();
    const sent = j.sent("instance", "sha256:x", {});
    state.down = true;
    expect(() => j.answered(sent, "inst-2")).toThrow(JournalError);
    expect(() => j.handed(sent)).toThrow(JournalError);
    state.down = false;
    // Nothing was recorded as handed, so nothing is closed; the id is written all the same, and a
    // plan that reads the instance from the state then claims the entry by it.
    expect(j.settleHanded()).toBe(0);
    const reader = new DeployJournal(location, { run: currentRun() });
    const entry = reader.entries().find((e) => e.entry === sent);
    expect(entry?.id).toBe("inst-2");
  });
});

describe("the journal a state had under an older key", () => {
  test("is moved into today's at its first use, then retired; an interrupted run's deploy is still adopted", () => {
    const today = locateJournal({ cwd: dir, env: {} });
    const older = { ...today, file: join(today.dir, "default-0123456789ab.jsonl") };
    const old = new DeployJournal(older, { run: gone("old") });
    const open = old.sent("instance", "sha256:x", {});
    old.answered(open, "i-7");
    const closed = old.sent("instance", "sha256:x", {});
    old.answered(closed, "i-8");
    old.close(closed, "destroyed");

    const j = new DeployJournal(today, {
      run: currentRun(),
      legacy: new FileStore(older, { run: currentRun(), log: () => {} }),
    });
    expect(j.adoptable("instance", "sha256:x").map((e) => e.id)).toEqual(["i-7"]);
    expect(j.entries().map((e) => e.id)).toEqual(["i-7", "i-8"]);
    expect(existsSync(older.file)).toBe(false);
    expect(existsSync(`${older.file}.moved`)).toBe(true);
    // Another process of the same run finds it moved, and nothing twice.
    const k = new DeployJournal(today, {
      run: currentRun(),
      legacy: new FileStore(older, { run: currentRun(), log: () => {} }),
    });
    expect(k.entries()).toHaveLength(2);
  });

  test("one holding lines this version cannot apply is kept where its versions look; its entries are moved once", () => {
    const today = locateJournal({ cwd: dir, env: {} });
    const older = { ...today, file: join(today.dir, "default-0123456789ab.jsonl") };
    const old = new DeployJournal(older, { run: gone("old") });
    old.answered(old.sent("instance", "sha256:x", {}), "i-9");
    appendFileSync(older.file, '{"op":"a later version\'s","entry":"e"}\n');
    const move = () =>
      new DeployJournal(today, {
        run: currentRun(),
        legacy: new FileStore(older, { run: currentRun(), log: () => {} }),
      }).entries();
    expect(move().map((e) => e.id)).toEqual(["i-9"]);
    // Only what could not be moved stays there: moved again later, an entry today's journal has
    // closed and compacted away would come back.
    const left = readFileSync(older.file, "utf8").trim().split("\n");
    expect(left.map((l) => (JSON.parse(l) as { op: string }).op)).toEqual(["header", "a later version's"]);
    expect(move().map((e) => e.id)).toEqual(["i-9"]);
    expect(readFileSync(older.file, "utf8").trim().split("\n")).toEqual(left);
  });

  test("one that changed while it was moved is kept, and moved again by the next process", () => {
    const today = locateJournal({ cwd: dir, env: {} });
    const older = { ...today, file: join(today.dir, "default-0123456789ab.jsonl") };
    new DeployJournal(older, { run: gone("old") }).sent("instance", "sha256:x", {});
    const legacy = new FileStore(older, { run: currentRun(), log: () => {} });
    const store = storeOver(legacy, {
      // An older version's run writes between the move and the retirement.
      retire: () => {
        new DeployJournal(older, { run: gone("old") }).sent("instance", "sha256:y", {});
        legacy.retire();
      },
    });
    const j = new DeployJournal(today, { run: currentRun(), legacy: store });
    expect(j.entries()).toHaveLength(1);
    expect(existsSync(older.file)).toBe(true);
    const k = new DeployJournal(today, {
      run: currentRun(),
      legacy: new FileStore(older, { run: currentRun(), log: () => {} }),
    });
    expect(
      k
        .entries()
        .map((e) => e.fingerprint)
        .sort(),
    ).toEqual(["sha256:x", "sha256:y"]);
    expect(existsSync(older.file)).toBe(false);
  });
});
