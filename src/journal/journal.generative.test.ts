import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import fc from "fast-check";
import { generativeRuns, generativeSeed, hostileText } from "../testing/generative";
import { dir, gone, journal } from "../testing/journal-dir";
import { JOURNAL_FORMAT, JOURNAL_VERSION, locateJournal, parseJournal } from ".";
import { readRecord } from "./records";

// A journal is read from a file or a database row that anything may have damaged: a disk, an
// edit, another program. Whatever its records hold, every use a run makes of it (its views, a take,
// settling, a new record) ends normally or in the journal's own error, never a TypeError; a damaged
// record is reported, and every record left whole is still applied. What this version cannot apply
// (a damaged line, a later version's record) is never dropped, whatever the writes that follow.

const SEED = generativeSeed(20261129);
const RUNS = generativeRuns(150);

const AT = "2026-03-01T00:00:00.000Z";
const header = {
  op: "header",
  format: JOURNAL_FORMAT,
  version: JOURNAL_VERSION,
  workspace: "default",
  backend: "local",
  created_at: AT,
};

/** A journal of every kind of record, each entry's records apart. */
function wholeRecords(): Record<string, unknown>[] {
  const run = gone("old");
  const sent = (entry: string, kind = "instance") => ({
    op: "sent",
    entry,
    kind,
    fingerprint: "sha256:f",
    request: { label: entry },
    before: ["i-0"],
    at: AT,
    run,
  });
  return [
    header,
    sent("a"),
    { op: "answered", entry: "a", id: "i-a", at: AT },
    { op: "handed", entry: "a", at: AT },
    sent("b", "api_key"),
    { op: "taken", entry: "b", run: gone("other"), at: AT },
    sent("c"),
    {
      op: "closed",
      entry: "c",
      reason: "claimed",
      at: AT,
      detail: "saved",
      state: { lineage: "l", serial: 3 },
    },
    {
      op: "entry",
      entry: "d",
      kind: "instance",
      fingerprint: "sha256:f",
      request: {},
      before: [],
      sent_at: AT,
      run,
      id: "i-d",
      answered_at: AT,
      handed_at: null,
      taken: null,
      closed: null,
    },
    sent("e"),
    { op: "answered", entry: "e", id: "i-e", at: AT },
    {
      op: "closed",
      entry: "e",
      reason: "claimed",
      at: AT,
      state: { lineage: "l", serial: 3, pending: true },
    },
  ];
}

/** What a damaged field holds instead: any JSON, hostile text, odd numbers, nothing. */
const damage: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  hostileText,
  fc.constantFrom(null, "", -1, 0.5, 1e308, [], {}, true, { id: 5 }),
  fc.constant(undefined),
);

/** Records with one to four fields (or whole records) damaged, and which records were touched. */
const damagedJournal = fc
  .array(fc.tuple(fc.nat(), fc.option(fc.nat()), damage), { minLength: 1, maxLength: 4 })
  .map((edits) => {
    const recs: unknown[] = wholeRecords();
    const touched = new Set<number>();
    for (const [r, field, value] of edits) {
      const i = 1 + (r % (recs.length - 1));
      touched.add(i);
      const rec = recs[i] as Record<string, unknown>;
      if (field === null) {
        recs[i] = value;
        continue;
      }
      const keys = Object.keys(rec);
      const key = keys[field % keys.length]!;
      const copy = { ...rec };
      if (value === undefined) delete copy[key];
      else copy[key] = value;
      recs[i] = copy;
    }
    return { recs, touched };
  });

test("a damaged journal is read and used without a crash, and every whole record still counts", () => {
  fc.assert(
    fc.property(damagedJournal, ({ recs, touched }) => {
      const { j } = journal({ run: gone("this") });
      mkdirSync(dirname(j.file), { recursive: true });
      const text = recs.map((r) => (r === undefined ? "" : JSON.stringify(r))).join("\n");
      writeFileSync(j.file, `${text}\n`);

      const parsed = parseJournal(`${text}\n`);
      // Each entry whose records are all whole is there, as written.
      const whole = wholeRecords();
      for (const [entry, lines] of [
        ["a", [1, 2, 3]],
        ["b", [4, 5]],
        ["c", [6, 7]],
        ["d", [8]],
        ["e", [9, 10, 11]],
      ] as const) {
        if (lines.some((i) => touched.has(i))) continue;
        const e = parsed.entries.get(entry);
        expect(e?.fingerprint).toBe("sha256:f");
        expect(e?.run).toEqual((whole[lines[0]] as { run: unknown }).run);
      }
      // Every entry read has what the journal's logic reads.
      for (const e of parsed.entries.values()) {
        expect(typeof e.entry).toBe("string");
        expect(typeof e.run.id).toBe("string");
        expect(e.closed === null || typeof e.closed.reason === "string").toBe(true);
      }

      j.resolvePending();
      j.entries();
      j.live("instance");
      j.adoptable("instance", "sha256:f");
      j.referencedIds();
      j.take("instance", "sha256:f");
      j.settleHanded();
      j.closeId("i-a", "destroyed");
      const entry = j.sent("instance", "sha256:g", { label: "new" });
      j.answered(entry, "i-new");
      expect(j.entries().find((e) => e.entry === entry)?.id).toBe("i-new");
    }),
    { seed: SEED, numRuns: RUNS },
  );
});

test("whatever a data directory says of its backend, a journal is located, and a pg backend's state read only at a postgres URL", () => {
  const setting = fc.oneof(hostileText, fc.jsonValue({ maxDepth: 1 }), fc.constant(undefined));
  const conn = fc.oneof(
    setting,
    fc.constantFrom(
      "postgres://u:pw@db.example/tfstate",
      "postgresql://db.example:5432/tfstate?sslmode=disable",
      "postgres://db.example/tfstate?sslmode=bogus",
      "host=db.example dbname=tfstate",
      "postgres://%zz@db.example/tfstate",
    ),
  );
  let located = 0;
  fc.assert(
    fc.property(
      fc.record(
        {
          type: fc.oneof(fc.constant("pg"), setting),
          config: fc.oneof(
            fc.record({ conn_str: conn, schema_name: setting, table_name: setting }, { requiredKeys: [] }),
            setting,
          ),
        },
        { requiredKeys: [] },
      ),
      fc.record(
        { PG_CONN_STR: conn, PGPORT: setting, PG_SCHEMA_NAME: setting, TF_WORKSPACE: setting },
        { requiredKeys: [] },
      ),
      (backend, rawEnv) => {
        const dataDir = `${dir}/.terraform`;
        mkdirSync(dataDir, { recursive: true });
        writeFileSync(`${dataDir}/terraform.tfstate`, JSON.stringify({ backend }) ?? "null");
        const env = Object.fromEntries(
          Object.entries(rawEnv).filter((kv): kv is [string, string] => typeof kv[1] === "string"),
        );
        const at = locateJournal({ cwd: dir, env });
        expect(typeof at.file).toBe("string");
        if (at.stateDb) {
          located++;
          expect(at.backend).toBe("pg");
          const url = new URL(at.stateDb.target.url);
          expect(["postgres:", "postgresql:"]).toContain(url.protocol);
          expect(url.port).toMatch(/^\d*$/);
          expect(typeof at.stateDb.schema).toBe("string");
          expect(at.stateDb.table.length).toBeGreaterThan(0);
        }
      },
    ),
    { seed: SEED, numRuns: RUNS },
  );
  // The runs did reach a pg backend's state source, not only the refusals.
  expect(located).toBeGreaterThan(0);
});

test("a record holds what its op needs, or it is damaged; a later version's op is skipped", () => {
  const [, sent, answered, , , taken, , closed, entry] = wholeRecords();
  for (const rec of [sent, answered, taken, closed, entry]) expect(readRecord(rec)).toEqual(rec);
  const without = (rec: unknown, key: string) => {
    const copy = { ...(rec as Record<string, unknown>) };
    delete copy[key];
    return copy;
  };
  expect(readRecord(without(sent, "run"))).toBeUndefined();
  // A later version's kind is kept, for no view of this version to match.
  expect(readRecord({ ...(sent as object), kind: "volume" })).toEqual({
    ...(sent as object),
    kind: "volume",
  });
  expect(readRecord({ ...(sent as object), kind: 5 })).toBeUndefined();
  expect(readRecord({ ...(answered as object), id: 7 })).toBeUndefined();
  expect(readRecord(without(closed, "reason"))).toBeUndefined();
  expect(readRecord(without(entry, "closed"))).toBeUndefined();
  // What only informs is dropped when damaged; the record stays.
  expect(readRecord({ ...(closed as object), detail: 5, state: "x" })).toEqual(
    without(without(closed, "detail"), "state"),
  );
  // A request and the ids before it may be left out, as older versions did.
  expect(readRecord(without(without(sent, "request"), "before"))).toBeDefined();
  expect(readRecord({ op: "reserved", entry: "x" })).toBe("other");
  expect(readRecord({ op: 5 })).toBeUndefined();
  expect(readRecord([])).toBeUndefined();
});

test("a later version's kind is kept in the journal and acted on by no view", () => {
  const { j } = journal({ run: gone("this") });
  mkdirSync(dirname(j.file), { recursive: true });
  const [, sent] = wholeRecords();
  const later = { ...(sent as object), entry: "v", kind: "volume" };
  writeFileSync(j.file, `${[header, sent, later].map((r) => JSON.stringify(r)).join("\n")}\n`);
  expect(j.entries().map((e) => e.entry)).toEqual(["a", "v"]);
  expect(j.live().map((e) => e.entry)).toEqual(["a"]);
  expect(j.adoptable("instance", "sha256:f").map((e) => e.entry)).toEqual(["a"]);
});

/** The ops of this version's records. */
const KNOWN_OPS = ["header", "sent", "answered", "handed", "taken", "closed", "entry"];

/** A line this version may not apply: any text, a record damaged at one field, a later version's record. */
const strangeLine: fc.Arbitrary<string> = fc
  .oneof(
    fc.string({ unit: "binary", maxLength: 40 }),
    hostileText,
    fc.tuple(fc.nat(), fc.nat(), damage).map(([r, field, value]) => {
      const recs = wholeRecords();
      const rec = { ...(recs[1 + (r % (recs.length - 1))] as Record<string, unknown>) };
      const key = Object.keys(rec)[field % Object.keys(rec).length]!;
      if (value === undefined) delete rec[key];
      else rec[key] = value;
      return JSON.stringify(rec);
    }),
    fc
      .tuple(
        fc.string({ maxLength: 12 }).filter((op) => !KNOWN_OPS.includes(op)),
        fc.constantFrom("a", "b", "c", "d", "z"),
        fc.jsonValue({ maxDepth: 2 }),
      )
      .map(([op, entry, value]) => JSON.stringify({ op, entry, value })),
  )
  .map((line) => line.replaceAll("\n", " "));

/** The non-blank lines of a journal's text that this version does not apply, in order. */
function unreadLines(text: string): string[] {
  return text.split("\n").filter((line) => {
    if (!line.trim()) return false;
    try {
      const rec = readRecord(JSON.parse(line));
      return rec === undefined || rec === "other";
    } catch {
      return true;
    }
  });
}

/** What a run writes: a deploy, its answer, its hand-over, its close, or a close of no entry. */
const write = fc.constantFrom("sent", "answered", "handed", "close", "closeNothing");

test("every line this version cannot apply outlives the compactions and removals that writes bring", () => {
  const DAY = 24 * 3600_000;
  fc.assert(
    fc.property(
      fc.boolean(),
      fc.array(fc.tuple(fc.nat(), strangeLine), { maxLength: 6 }),
      fc.array(write, { minLength: 1, maxLength: 8 }),
      (withOpen, strange, writes) => {
        // Entries closed long ago, enough for the first write to compact the journal (or remove it,
        // when no entry is open); with or without the open entries of wholeRecords.
        const run = gone("old");
        const recs: string[] = wholeRecords()
          .filter((r) => withOpen || r.op === "header" || r.entry === "c")
          .map((r) => JSON.stringify(r));
        for (let i = 0; i < 32; i++) {
          recs.push(
            JSON.stringify({ op: "sent", entry: `o${i}`, kind: "instance", fingerprint: "f", at: AT, run }),
            JSON.stringify({ op: "closed", entry: `o${i}`, reason: "destroyed", at: AT }),
          );
        }
        for (const [at, line] of strange) recs.splice(1 + (at % recs.length), 0, line);
        const { j } = journal({ run: gone("this"), now: () => Date.parse(AT) + 30 * DAY });
        mkdirSync(dirname(j.file), { recursive: true });
        writeFileSync(j.file, `${recs.join("\n")}\n`);
        // As the file holds it (text that is no UTF-8 is written as U+FFFD).
        const original = readFileSync(j.file, "utf8");
        const before = parseJournal(original).entries;

        const text = () => (existsSync(j.file) ? readFileSync(j.file, "utf8") : "");
        const mine: string[] = [];
        for (const [i, w] of writes.entries()) {
          const last = mine.at(-1);
          if (w === "sent") mine.push(j.sent("instance", "sha256:g", {}));
          else if (w === "closeNothing" || !last) j.close("no-such-entry", "abandoned");
          else if (w === "answered") j.answered(last, `i-${last}`);
          else if (w === "handed") j.handed(last);
          else j.close(last, "destroyed");
          // The first write compacted the journal, or removed it.
          if (i === 0) expect(text().length).toBeLessThan(original.length);
        }

        const final = text();
        expect(unreadLines(final)).toEqual(unreadLines(original));
        // The entries replay as they were: the open ones untouched, this run's own all there.
        const after = parseJournal(final).entries;
        for (const [id, e] of before) if (e.closed === null) expect(after.get(id)).toEqual(e);
        for (const id of mine) expect(after.has(id)).toBe(true);
      },
    ),
    { seed: SEED, numRuns: RUNS },
  );
});
