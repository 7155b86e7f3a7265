// What the tests of the journal's edges share: a temporary directory per test, journals in it
// whose logs are captured, runs that are gone, the records of a file and a wall clock that moves at
// each look. It registers Jest hooks, so the build leaves this folder out (tsconfig.build.json).
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DeployJournal, type JournalLocation, locateJournal, type RunIdentity } from "../journal";
import { currentRun } from "../journal/run";

export let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "gpurental-journal-edges-"));
});
afterEach(() => {
  jest.restoreAllMocks();
  rmSync(dir, { recursive: true, force: true });
});

/** A run of a machine that has restarted since: never alive, without starting a process. */
export const gone = (id = "gone"): RunIdentity => ({
  id,
  pid: 1,
  boot: `before-a-restart-${id}`,
});

export type Logged = {
  level: string;
  message: string;
  fields?: Record<string, unknown>;
};

export function journal(opts: { run?: RunIdentity; now?: () => number; location?: JournalLocation } = {}) {
  const logged: Logged[] = [];
  const j = new DeployJournal(opts.location ?? locateJournal({ cwd: dir, env: {} }), {
    run: opts.run ?? currentRun(),
    ...(opts.now ? { now: opts.now } : {}),
    log: (level, message, fields) => logged.push({ level, message, ...(fields ? { fields } : {}) }),
  });
  return { j, logged };
}

export const lines = (file: string) => readFileSync(file, "utf8").trim().split("\n");
export const records = (file: string) => lines(file).map((l) => JSON.parse(l) as Record<string, unknown>);

/** Date.now() as the lock sees it: one second more at each look, starting from the real time. */
export function fakeWallClock(): void {
  let t = Date.now();
  jest.spyOn(Date, "now").mockImplementation(() => (t += 1000));
}
