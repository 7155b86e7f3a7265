import { lstatSync, readdirSync, unlinkSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";

// Unix sockets a killed provider process leaves behind: `plugin<hex>.sock` in the temp directory
// (a provider process per launch, server.ts) and the session and control sockets of a resident
// process in its directory (src/resident/resident-daemon.ts). A process that exits normally removes its own;
// one killed with SIGKILL cannot, so the next one to start removes those nobody listens on.

/**
 * Removes the unix sockets in `dir` whose names match `pattern`, that belong to this user and on
 * which nobody listens any more (a connect is refused): what a process killed with SIGKILL leaves
 * behind; `keep` (full paths) are never probed. Best effort; resolves with the number removed.
 */
export async function removeStaleSockets(
  dir: string,
  pattern: RegExp,
  keep: readonly string[] = [],
  /** Younger sockets are left alone: one being bound and not yet listening refuses too. */
  minAgeMs = 10_000,
): Promise<number> {
  const uid = typeof process.getuid === "function" ? process.getuid() : undefined;
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => pattern.test(n) && !keep.includes(join(dir, n)));
  } catch {
    return 0;
  }
  let removed = 0;
  for (const name of names) {
    const path = join(dir, name);
    try {
      const st = lstatSync(path);
      if (!st.isSocket() || (uid !== undefined && st.uid !== uid)) continue;
      if (Date.now() - st.mtimeMs < minAgeMs) continue;
      if (!(await refused(path))) continue;
      // Still the same socket: one bound since under the same name is not touched.
      const again = lstatSync(path);
      if (again.ino !== st.ino || again.dev !== st.dev) continue;
      unlinkSync(path);
      removed++;
    } catch {
      // gone meanwhile, or not ours to remove
    }
  }
  return removed;
}

function refused(path: string): Promise<boolean> {
  return new Promise((done) => {
    const probe = connect(path);
    const timer = setTimeout(() => {
      probe.destroy();
      done(false);
    }, 1000);
    probe.once("connect", () => {
      clearTimeout(timer);
      probe.destroy();
      done(false);
    });
    probe.once("error", (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      done(err.code === "ECONNREFUSED");
    });
  });
}
