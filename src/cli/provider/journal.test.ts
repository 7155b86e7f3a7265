import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "pg";
import { testIO } from "../../../test/e2e/commands/io";
import { DeployJournal, journalFiles, locateJournal, type RunIdentity } from "../../journal";
import { workingDirJournals } from "../../journal/open";
import { stateKeyOf } from "../../journal/pg/store";
import { appendRaw, journalIn, journalServer, rawRecords, STORE_KINDS } from "../../testing/journal-stores";
import { IMPORTED_SUFFIX, JOURNAL_EXIT, runJournalExport, runJournalImport } from "./journal";

// `gpurental journal import|export` with a private PostgreSQL: a file journal's entries (open, and
// closed ones it keeps) move into the database and back, nothing is lost or doubled, the source is
// retired, and the tools (strays) read whichever store GPURENTAL_JOURNAL_URL names.

const describePg = STORE_KINDS.includes("postgresql") ? describe : describe.skip;

const PASSWORD = "cli-journal-pw-77e1";
const gone: RunIdentity = { id: "gone", pid: 1, boot: "before-a-restart" };

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "gpurental-journal-cli-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describePg("gpurental journal import and export", () => {
  const url = () => `postgres://tf:${PASSWORD}@127.0.0.1:${journalServer().port}/tfstate?sslmode=disable`;

  test("a file journal moves into PostgreSQL and back, entries whole, the source retired each time", () => {
    const location = locateJournal({ cwd: dir, env: {} });
    const file = new DeployJournal(location, { run: gone });
    const open = file.sent("instance", "sha256:x", { label: "a" });
    file.answered(open, "i-open");
    const closed = file.sent("instance", "sha256:x", {});
    file.answered(closed, "i-closed");
    file.close(closed, "destroyed");
    const before = file.entries();

    const env = { GPURENTAL_JOURNAL_URL: url() };
    const io = testIO(env, dir);
    expect(runJournalImport({}, io)).toBe(JOURNAL_EXIT.done);
    expect(io.out).toContain("1 open, 1 closed entries; 2 added to postgres://***@127.0.0.1:");
    expect(`${io.out}${io.err}`).not.toContain(PASSWORD);
    expect(journalFiles(location.dir)).toEqual([]);
    expect(existsSync(`${location.file}${IMPORTED_SUFFIX}`)).toBe(true);

    // The provider with GPURENTAL_JOURNAL_URL now adopts from the database what the file held.
    const pg = journalIn("postgresql", location);
    expect(pg.entries()).toEqual(before);
    expect(pg.adoptable("instance", "sha256:x").map((e) => e.id)).toEqual(["i-open"]);
    // The tools read the database.
    expect(workingDirJournals(dir, env).map((j) => j.journal.entries().length)).toEqual([2]);

    // Importing again adds nothing: the file is gone, and so would be a second copy.
    const again = testIO(env, dir);
    expect(runJournalImport({}, again)).toBe(JOURNAL_EXIT.done);
    expect(again.out).toContain("nothing to import");

    const back = testIO(env, dir);
    expect(runJournalExport({}, back)).toBe(JOURNAL_EXIT.done);
    expect(back.out).toContain(`2 added to ${location.file}`);
    expect(new DeployJournal(location).entries()).toEqual(before);
    expect(journalIn("postgresql", location).entries()).toEqual([]);
    expect(workingDirJournals(dir, {}).map((j) => j.journal.entries().length)).toEqual([2]);
  });

  test("entries the target has already are left as it has them", () => {
    const location = locateJournal({ cwd: dir, env: {} });
    const file = new DeployJournal(location, { run: gone });
    const e = file.sent("instance", "sha256:x", {});
    const pg = journalIn("postgresql", location, { run: gone });
    pg.importEntries(file.entries());
    pg.answered(e, "i-known");
    const io = testIO({ GPURENTAL_JOURNAL_URL: url() }, dir);
    expect(runJournalImport({}, io)).toBe(JOURNAL_EXIT.done);
    expect(io.out).toContain("0 added");
    expect(
      journalIn("postgresql", location)
        .entries()
        .map((x) => x.id),
    ).toEqual(["i-known"]);
  });

  test("export keeps the state's rows when some could not be read, and says so", async () => {
    const location = locateJournal({ cwd: dir, env: {} });
    const pg = journalIn("postgresql", location, { run: gone });
    const e = pg.sent("instance", "sha256:x", {});
    pg.answered(e, "i-1");
    const key = stateKeyOf(location);
    const c = new Client({ connectionString: journalServer().connStr() });
    await c.connect();
    try {
      // A sent record without its run: not applied, not copied.
      await c.query(
        `insert into gpurental_journal.records (state_key, seq, record)
           select state_key, seq + 1, '{"op":"sent","entry":"b","kind":"instance","fingerprint":"f","at":"t"}'::jsonb
           from gpurental_journal.journals where state_key = $1`,
        [key],
      );
      await c.query("update gpurental_journal.journals set seq = seq + 1 where state_key = $1", [key]);
    } finally {
      await c.end();
    }
    // A later version's record: not copied either.
    await appendRaw("postgresql", location, ['{"op":"renewed","entry":"b","until":"t"}']);
    const io = testIO({ GPURENTAL_JOURNAL_URL: url() }, dir);
    expect(runJournalExport({}, io)).toBe(JOURNAL_EXIT.failed);
    expect(io.out).toContain("1 added to");
    expect(io.out).toContain(
      "The state's rows are kept in the database: 2 of them could not be read (record 3 is not a journal record; a record of a later version)",
    );
    const rows = journalIn("postgresql", location);
    expect(rows.entries().map((x) => x.id)).toEqual(["i-1"]);
  });

  test("export keeps the state's rows, and fails, when what is left is only rows it cannot read", async () => {
    const location = locateJournal({ cwd: dir, env: {} });
    // The state's row, as the first write of a journal makes it, and one record of a later version.
    journalIn("postgresql", location).entries();
    const c = new Client({ connectionString: journalServer().connStr() });
    await c.connect();
    try {
      await c.query(
        `insert into gpurental_journal.journals (state_key, workspace, backend, header, generation, seq)
           values ($1, 'default', 'local', '{"op":"header"}'::jsonb, nextval('gpurental_journal.seq'), 0)`,
        [stateKeyOf(location)],
      );
    } finally {
      await c.end();
    }
    await appendRaw("postgresql", location, ['{"op":"renewed","entry":"b","until":"t"}']);
    const io = testIO({ GPURENTAL_JOURNAL_URL: url() }, dir);
    expect(runJournalExport({}, io)).toBe(JOURNAL_EXIT.failed);
    expect(io.out).toContain(
      "no entries. The state's rows are kept in the database: 1 of them could not be read (a record of a later version)",
    );
    expect(await rawRecords("postgresql", location)).toContain(
      '{"op": "renewed", "entry": "b", "until": "t"}',
    );
  });

  /** A file journal with one entry, then `lines` as they are. */
  function fileWith(lines: string[]) {
    const location = locateJournal({ cwd: dir, env: {} });
    const file = new DeployJournal(location, { run: gone });
    const e = file.sent("instance", "sha256:x", {});
    file.answered(e, "i-1");
    appendFileSync(location.file, lines.map((l) => `${l}\n`).join(""));
    return location;
  }

  const DAMAGED =
    '{"op":"sent","entry":"d","kind":"instance","fingerprint":"f","at":"2026-11-29T00:00:00.000Z","run":{"id":"r","pid":"notanumber","boot":null}}';
  const LATER = '{"op":"future-op","entry":"d","until":"2026-12-01T00:00:00.000Z"}';

  test("import copies the records this version cannot apply as they are, says so, and adds none twice", async () => {
    const location = fileWith([DAMAGED, LATER]);
    const text = readFileSync(location.file, "utf8");
    const env = { GPURENTAL_JOURNAL_URL: url() };
    const io = testIO(env, dir);
    expect(runJournalImport({}, io)).toBe(JOURNAL_EXIT.done);
    expect(io.out).toContain("1 open, 0 closed entries; 1 added to postgres://***@127.0.0.1:");
    expect(io.out).toContain(
      ", 0 there already. 2 records this version cannot apply (line 4: damaged; line 5: a later version's) kept as they are: 2 added, 0 there already. The file is now ",
    );
    // The rows are the lines' JSON values, after the entry, and the journal reads them as it read the file.
    const rows = await rawRecords("postgresql", location);
    expect(rows.slice(-2).map((r) => JSON.parse(r))).toEqual([JSON.parse(DAMAGED), JSON.parse(LATER)]);
    const pg = journalIn("postgresql", location);
    expect(pg.entries().map((e) => e.id)).toEqual(["i-1"]);
    expect(pg.store.read().unread.map((u) => JSON.parse(u.text))).toEqual([
      JSON.parse(DAMAGED),
      JSON.parse(LATER),
    ]);

    // The same file imported again adds nothing.
    writeFileSync(location.file, text);
    const again = testIO(env, dir);
    expect(runJournalImport({}, again)).toBe(JOURNAL_EXIT.done);
    expect(again.out).toContain("0 added to");
    expect(again.out).toContain("kept as they are: 0 added, 2 there already.");
    expect(await rawRecords("postgresql", location)).toEqual(rows);

    // Export keeps them where they are, as it keeps any row it cannot read.
    const back = testIO(env, dir);
    expect(runJournalExport({}, back)).toBe(JOURNAL_EXIT.failed);
    expect(back.out).toContain("2 of them could not be read");
  });

  test("a line the database cannot keep as it is: the file is left whole and nothing of it imported", async () => {
    const location = fileWith([LATER, "not json at all", '{"op":"future-op","n":123456789012345678901}']);
    const io = testIO({ GPURENTAL_JOURNAL_URL: url() }, dir);
    expect(runJournalImport({}, io)).toBe(JOURNAL_EXIT.failed);
    expect(io.err).toBe(
      `${location.file}: the database keeps a record it cannot apply only as the JSON value it is, and line 5 is not JSON; line 6 holds the number 123456789012345678901, which cannot be kept exactly; repair or delete those lines, then import again. Nothing of it was imported; the file is left as it is.\n` +
        "gpurental journal import: the journal file was not imported (said above); it is left as it is.\n",
    );
    expect(io.out).toBe("");
    expect(journalFiles(location.dir)).toEqual([location.file]);
    expect(await rawRecords("postgresql", location)).toEqual([]);
  });

  test("a header that names no state: that file is named with its field and left; the others are imported", async () => {
    const location = fileWith([]);
    const header = JSON.parse(readFileSync(location.file, "utf8").split("\n")[0] as string);
    const noWorkspace = join(location.dir, "aaaa-no-workspace.jsonl");
    const { workspace: _w, ...withoutWorkspace } = header;
    writeFileSync(noWorkspace, `${JSON.stringify(withoutWorkspace)}\n${DAMAGED}\n`);
    const newer = join(location.dir, "aaab-newer.jsonl");
    writeFileSync(newer, `${JSON.stringify({ ...header, version: 2 })}\n`);
    const io = testIO({ GPURENTAL_JOURNAL_URL: url() }, dir);
    expect(runJournalImport({}, io)).toBe(JOURNAL_EXIT.failed);
    expect(io.err).toBe(
      `${noWorkspace}: its header's "workspace" must name the Terraform workspace (a non-empty string); got none. Nothing of it was imported; the file is left as it is.\n` +
        `${newer}: its header's "version" is 2: it was written by a newer provider, which must import it. Nothing of it was imported; the file is left as it is.\n` +
        "gpurental journal import: 2 of 3 journal files were not imported (said above); they are left as they are.\n",
    );
    expect(io.out).toContain(`${location.file}: 1 open, 0 closed entries; 1 added`);
    expect(journalFiles(location.dir).sort()).toEqual([noWorkspace, newer].sort());
    expect(
      journalIn("postgresql", location)
        .entries()
        .map((e) => e.id),
    ).toEqual(["i-1"]);
  });

  test("without GPURENTAL_JOURNAL_URL, or with a bad one, it says what to set and fails", () => {
    const io = testIO({}, dir);
    expect(runJournalImport({}, io)).toBe(JOURNAL_EXIT.failed);
    expect(io.err).toContain("set GPURENTAL_JOURNAL_URL to the PostgreSQL database to import into");
    const bad = testIO({ GPURENTAL_JOURNAL_URL: `mysql://u:${PASSWORD}@h/db` }, dir);
    expect(runJournalExport({}, bad)).toBe(JOURNAL_EXIT.failed);
    expect(bad.err).toContain("The GPURENTAL_JOURNAL_URL environment variable must be a postgres://");
    expect(bad.err).not.toContain(PASSWORD);
    // An escape the PostgreSQL client cannot decode, for either command: named, never "URI malformed".
    for (const run of [runJournalImport, runJournalExport]) {
      const undecodable = testIO({ GPURENTAL_JOURNAL_URL: `postgres://u:${PASSWORD}@h/%ZZ` }, dir);
      expect(run({}, undecodable)).toBe(JOURNAL_EXIT.failed);
      expect(undecodable.err).toContain(
        'The GPURENTAL_JOURNAL_URL environment variable must be percent-encoded correctly in its database name: each "%" must begin an escape',
      );
      expect(undecodable.err).toContain('got "postgres://***@h/%ZZ"');
      expect(undecodable.err).not.toContain(PASSWORD);
    }
  });
});
