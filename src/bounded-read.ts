import { closeSync, openSync, readSync } from "node:fs";

// Reading a file a person named (a CA bundle, a token file, a state or a plan) whole, with a
// bound: the path may be a pipe (`<(vault read …)`), which is read once from where it is, or a
// device such as /dev/zero, which never ends, so the size is known only by reading.

/** Thrown by {@link readBounded} for a file that gives more than it takes. */
export class TooLargeError extends Error {
  constructor(
    readonly path: string,
    readonly maxBytes: number,
  ) {
    super(`${path} gives more than ${formatBytes(maxBytes)}`);
    this.name = "TooLargeError";
  }
}

/** A size in the unit it is a whole number of: `64 KiB`, `16 MiB`. */
export function formatBytes(n: number): string {
  if (n >= 1024 * 1024 && n % (1024 * 1024) === 0) return `${n / 1024 / 1024} MiB`;
  if (n >= 1024 && n % 1024 === 0) return `${n / 1024} KiB`;
  return `${n} bytes`;
}

/**
 * The whole of `path`, read once in order from where it stands (a regular file from its start, a
 * pipe or a device from its current position); a {@link TooLargeError} once it gives more than
 * `maxBytes`. File system errors are thrown as they are (ENOENT, EISDIR, EACCES, ...).
 */
export function readBounded(path: string, maxBytes: number): Buffer {
  const fd = openSync(path, "r");
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    for (;;) {
      const chunk = Buffer.alloc(Math.min(64 * 1024, maxBytes + 1));
      const n = readSync(fd, chunk, 0, chunk.length, null);
      if (n === 0) break;
      total += n;
      if (total > maxBytes) throw new TooLargeError(path, maxBytes);
      chunks.push(chunk.subarray(0, n));
    }
  } finally {
    closeSync(fd);
  }
  return Buffer.concat(chunks);
}
