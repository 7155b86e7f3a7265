import { createHash } from "node:crypto";
import { closeSync, fstatSync, openSync, readFileSync, readSync } from "node:fs";

// A bundle's content id: the build writes it into each bundle (scripts/build/bundle-provider.js,
// markBundle) on a line near its end, so that what is named after a bundle (its code cache, the
// resident process that runs it) is named after exactly this code. npm gives every file one fixed
// time, and an upgrade may leave a file of the same size, even the same inode: neither tells two
// builds apart.

const BUNDLE_ID = /\/\/# gpurental-bundle=([0-9a-f]{16})\n/;
/** How far from a bundle's end its id line is at most (the source map's line comes after it). */
const TAIL_BYTES = 400;

const sha16 = (data: string | Buffer) => createHash("sha256").update(data).digest("hex").slice(0, 16);

/** The content id of a bundle's source: the one the build wrote, else the start of its SHA-256. */
export function bundleId(source: string): string {
  const marked = BUNDLE_ID.exec(source.slice(-TAIL_BYTES));
  return marked ? marked[1]! : sha16(source);
}

/**
 * The content id of a file: a bundle's from its last bytes only, any other file's (or a bundle
 * without one) from its whole content. Throws what reading it throws.
 */
export function fileContentId(file: string): string {
  const fd = openSync(file, "r");
  try {
    const size = fstatSync(fd).size;
    const tail = Buffer.alloc(Math.min(size, TAIL_BYTES));
    readSync(fd, tail, 0, tail.length, size - tail.length);
    const marked = BUNDLE_ID.exec(tail.toString("latin1"));
    if (marked) return marked[1]!;
  } finally {
    closeSync(fd);
  }
  return sha16(readFileSync(file));
}
