/**
 * The journal file on disk: the lock file every write holds, durable appends, and reading the
 * files of a journal directory. Knows nothing of what the records mean.
 */
import {
  closeSync,
  fdatasyncSync,
  fstatSync,
  fsyncSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { type ParsedJournal, parseJournal } from "./records";
import { type RunIdentity, runAlive } from "./run";

/** A lock file older than this is taken over: no holder keeps it longer than one file write. */
const STALE_LOCK_MS = 10_000;
/** The longest wait for the lock before the write is given up (and reported). */
const LOCK_WAIT_MS = 15_000;

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** A journal that cannot be written, with the reason; the resources report it instead of deploying blind. */
export class JournalError extends Error {
  constructor(
    message: string,
    readonly file: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "JournalError";
  }
}

/** Takes the lock file of the journal; waits for another process's short hold, takes over a stale one. */
export function lockJournal(file: string, run: RunIdentity): () => void {
  const lockPath = `${file}.lock`;
  try {
    mkdirSync(dirname(lockPath), { recursive: true, mode: 0o700 });
  } catch (err) {
    throw new JournalError(
      `Cannot create the deploy journal directory ${dirname(lockPath)}: ${String(err)}`,
      file,
      {
        cause: err,
      },
    );
  }
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      const fd = openSync(lockPath, "wx", 0o600);
      writeFileSync(fd, `${JSON.stringify(run)}\n`);
      closeSync(fd);
      return () => rmSync(lockPath, { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") {
        throw new JournalError(`Cannot lock the deploy journal ${file}: ${String(err)}`, file, {
          cause: err,
        });
      }
    }
    if (lockIsStale(lockPath, run)) {
      rmSync(lockPath, { force: true });
      continue;
    }
    if (Date.now() > deadline) {
      throw new JournalError(
        `The deploy journal ${file} stayed locked for ${LOCK_WAIT_MS / 1000} s (${lockPath}); if no other terraform command runs in this directory, delete the lock file.`,
        file,
      );
    }
    sleepSync(10);
  }
}

function lockIsStale(lockPath: string, self: RunIdentity): boolean {
  try {
    const st = statSync(lockPath);
    if (Date.now() - st.mtimeMs > STALE_LOCK_MS) return true;
    const holder = JSON.parse(readFileSync(lockPath, "utf8")) as RunIdentity;
    return holder.id !== self.id && !runAlive(holder, self);
  } catch {
    // Half-written by a holder that has just created it: not stale.
    return false;
  }
}

/** Reads a journal file; one that cannot be read is an empty journal. */
export function parseFile(path: string): ParsedJournal {
  try {
    return parseJournal(readFileSync(path, "utf8"));
  } catch {
    return { header: null, entries: new Map(), problems: [], unread: [], lines: 0 };
  }
}

/** Appends to the file; `durable`: flushed to disk (with the directory entry of a new file) before returning. */
export function append(
  file: string,
  text: string,
  { created, durable }: { created: boolean; durable: boolean },
): void {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const fd = openSync(file, "a", 0o600);
  try {
    writeFileSync(fd, text);
    if (durable) fdatasyncSync(fd);
  } finally {
    closeSync(fd);
  }
  if (created && durable) syncDir(dirname(file));
}

/**
 * Cuts the file after its last newline: the torn last line a crash left, read back from the end
 * as bytes (a torn write may end inside a character). Under the journal's lock.
 */
export function cutTornLine(file: string): void {
  const fd = openSync(file, "r+");
  try {
    let end = fstatSync(fd).size;
    const chunk = Buffer.alloc(4096);
    let keep = 0;
    while (end > 0) {
      const start = Math.max(0, end - chunk.length);
      const n = readSync(fd, chunk, 0, end - start, start);
      const at = chunk.subarray(0, n).lastIndexOf(0x0a);
      if (at >= 0) {
        keep = start + at + 1;
        break;
      }
      end = start;
    }
    ftruncateSync(fd, keep);
  } finally {
    closeSync(fd);
  }
}

export function syncDir(dir: string): void {
  try {
    const fd = openSync(dir, "r");
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {
    // Not every platform can open a directory; the file itself is flushed.
  }
}

/** Lists the journal files of a directory, for tools that read every state's journal. */
export function journalFiles(dir: string): string[] {
  try {
    return readdirSync(dir)
      .filter((f) => f.endsWith(".jsonl"))
      .map((f) => join(dir, f));
  } catch {
    return [];
  }
}

/** Reads a journal file (for tools); a missing file is an empty journal. */
export function readJournalFile(path: string): ParsedJournal {
  return parseFile(path);
}
