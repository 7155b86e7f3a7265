import { mkdirSync, readFileSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { dir, fakeWallClock, gone, journal } from "../testing/journal-dir";
import { currentRun } from "./run";

// The journal's edges: the file or its lock unusable, a lock held by someone else, compaction at its
// thresholds, records a reader must skip, and how the location is derived from what init left.

describe("the lock", () => {
  test("a journal whose directory cannot be created is an error naming it", () => {
    writeFileSync(join(dir, "a-file"), "");
    const jdir = join(dir, "a-file", "journal");
    const { j } = journal({
      location: {
        dir: jdir,
        file: join(jdir, "x.jsonl"),
        workspace: "default",
        backend: "local",
      },
    });
    expect(() => j.sent("instance", "sha256:x", {})).toThrow(
      expect.objectContaining({
        name: "JournalError",
        file: join(jdir, "x.jsonl"),
        cause: expect.objectContaining({ code: "ENOTDIR" }),
        message: expect.stringMatching(
          /^Cannot create the deploy journal directory .*a-file\/journal: Error: ENOTDIR/,
        ),
      }),
    );
  });

  test("a lock file that cannot be created is an error, not a wait", () => {
    // The lock's name is one too long for the file system.
    const file = join(dir, `${"j".repeat(251)}`);
    const { j } = journal({
      location: { dir, file, workspace: "default", backend: "local" },
    });
    expect(() => j.sent("instance", "sha256:x", {})).toThrow(
      expect.objectContaining({
        name: "JournalError",
        cause: expect.objectContaining({ code: "ENAMETOOLONG" }),
        message: expect.stringMatching(/^Cannot lock the deploy journal .*: Error: ENAMETOOLONG/),
      }),
    );
  });

  test("a lock held by a live process is waited for, then given up with an error naming the lock file", () => {
    const { j } = journal();
    mkdirSync(j.location.dir, { recursive: true });
    const lock = `${j.file}.lock`;
    writeFileSync(lock, JSON.stringify({ ...currentRun(), id: "another-configuration" }));
    // Touched now, in the lock's eyes, however far its clock runs.
    const future = new Date(Date.now() + 3600_000);
    utimesSync(lock, future, future);
    fakeWallClock();
    expect(() => j.sent("instance", "sha256:x", {})).toThrow(
      `The deploy journal ${j.file} stayed locked for 15 s (${lock}); if no other terraform command runs in this directory, delete the lock file.`,
    );
    expect(readFileSync(lock, "utf8")).toContain("another-configuration");
    expect(() => statSync(j.file)).toThrow("ENOENT");
  });

  test("a lock whose holder is gone is taken over at once, however recent", () => {
    const { j } = journal();
    mkdirSync(j.location.dir, { recursive: true });
    const lock = `${j.file}.lock`;
    writeFileSync(lock, JSON.stringify(gone("killed-apply")));
    // Touched now, in the lock's eyes, however far its clock runs: only its holder can make it stale.
    const future = new Date(Date.now() + 3600_000);
    utimesSync(lock, future, future);
    fakeWallClock();
    const e = j.sent("instance", "sha256:x", {});
    expect(j.live().map((x) => x.entry)).toEqual([e]);
    // Released after the write, not left behind with the dead holder's name.
    expect(() => statSync(lock)).toThrow("ENOENT");
  });

  test("a half-written lock is waited for, and taken over once it is 10 s old", () => {
    const { j } = journal();
    mkdirSync(j.location.dir, { recursive: true });
    const lock = `${j.file}.lock`;
    writeFileSync(lock, '{"id":');
    const now = Date.now();
    utimesSync(lock, new Date(now), new Date(now));
    let t = now;
    const seen: number[] = [];
    jest.spyOn(Date, "now").mockImplementation(() => {
      t += 1000;
      seen.push(t - now);
      return t;
    });
    const e = j.sent("instance", "sha256:x", {});
    expect(j.live().map((x) => x.entry)).toEqual([e]);
    // Not taken over before it was 10 s old (one look per second of this clock).
    expect(seen.length).toBeGreaterThanOrEqual(10);
  });

  /** Date.now() at `first` for its first look, at `held` for the next `n` looks, one millisecond later after. */
  function boundaryClock(first: number, held: number, n: number): () => number {
    let looks = 0;
    jest.spyOn(Date, "now").mockImplementation(() => {
      looks++;
      if (looks === 1) return first;
      return looks <= n + 1 ? held : held + 1;
    });
    return () => looks;
  }

  test("a lock exactly 10 s old is not yet taken over", () => {
    const { j } = journal();
    mkdirSync(j.location.dir, { recursive: true });
    const lock = `${j.file}.lock`;
    writeFileSync(lock, '{"id":');
    const mtime = Math.floor(Date.now() / 1000) * 1000 - 60_000;
    utimesSync(lock, mtime / 1000, mtime / 1000);
    expect(statSync(lock).mtimeMs).toBe(mtime);
    const looks = boundaryClock(mtime + 10_000, mtime + 10_000, 6);
    j.sent("instance", "sha256:x", {});
    expect(looks()).toBeGreaterThan(7);
  });

  test("a wait of exactly 15 s is not yet given up", () => {
    const { j } = journal();
    mkdirSync(j.location.dir, { recursive: true });
    const lock = `${j.file}.lock`;
    writeFileSync(lock, JSON.stringify({ ...currentRun(), id: "another-configuration" }));
    const future = new Date(Date.now() + 3600_000);
    utimesSync(lock, future, future);
    const start = Date.now();
    const looks = boundaryClock(start, start + 15_000, 6);
    expect(() => j.sent("instance", "sha256:x", {})).toThrow("stayed locked for 15 s");
    expect(looks()).toBeGreaterThan(7);
  });
});
