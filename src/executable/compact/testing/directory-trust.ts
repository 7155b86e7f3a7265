import { chmodSync, mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import table from "./directory-trust.json";

// The cases of directory-trust.json, and the layout each describes, for the two tests that hold
// the launchers' rule (private-dir.c) and the resident process's (src/resident/resident.ts) to it.

/** One case of the table. */
export interface TrustCase {
  name: string;
  /** The parent's mode (octal), or "link": a link of the user's to a directory of mode 0755. */
  parent: string;
  /** The directory's mode (octal), "absent", or "link": a link of the user's to a private directory. */
  dir: string;
  trusted: boolean;
}

/** The cases, in the table's order. */
export const TRUST_CASES: readonly TrustCase[] = table.cases;

/** Lays out a case under `base` (an empty private directory) and returns the directory to judge. */
export function layOut(base: string, c: TrustCase): string {
  const parent = join(base, "p");
  const made = (path: string, mode: number) => {
    mkdirSync(path, { mode });
    chmodSync(path, mode); // whatever the umask took away
  };
  if (c.parent === "link") {
    made(join(base, "real-parent"), 0o755);
    symlinkSync(join(base, "real-parent"), parent);
  } else made(parent, Number.parseInt(c.parent, 8));
  const dir = join(parent, "rt");
  if (c.dir === "link") {
    made(join(base, "real-dir"), 0o700);
    symlinkSync(join(base, "real-dir"), dir);
  } else if (c.dir !== "absent") made(dir, Number.parseInt(c.dir, 8));
  return dir;
}
