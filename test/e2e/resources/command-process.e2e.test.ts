import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { NODE_SCRIPT, terraformPlatform } from "../../../src/cli/provider/provider";
import { ownedPids, residentPids } from "../../../src/testing/resident";
import { counts, deploysEver, paidConfig, roomyOffer, SECRET_ENV_VALUE, slowCreating } from "./accounting";
import {
  expectCode,
  liveInstances,
  output,
  resetSuite,
  type Suite,
  startSuite,
  stopSuite,
  until,
  writeConfig,
} from "./helpers";

// The npm provider in automation, as CI runs it (TF_IN_AUTOMATION, the resident mode left to its
// default), with the real terraform CLI: the launcher installed in front of the Node.js script
// (src/executable/compact/node-launcher.c) makes every launch of one terraform command a session
// of one provider process of that command, which exits with it. Interrupted applies (kill -9 of
// terraform or of that process, Ctrl-C) deploy nothing twice.

jest.setTimeout(300_000);

let s: Suite;
let offerId: string;
/** The command's sockets: short, in the temp directory (a socket path must fit in 103 bytes). */
let dir = "";

beforeAll(async () => {
  s = await startSuite();
});
afterAll(async () => {
  // Never with an empty directory: residentPids("") would match every resident process.
  if (dir) for (const pid of residentPids(dir)) process.kill(pid, "SIGKILL");
  await stopSuite(s);
  rmSync(dir, { recursive: true, force: true });
});
beforeEach(() => {
  resetSuite(s);
  rmSync(join(s.tf.workDir, ".terraform", "gpurental-journal"), { recursive: true, force: true });
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = mkdtempSync(join(tmpdir(), "gcp-"));
  leftBehind = [];
  delete s.tf.env.GPURENTAL_PROVIDER_RESIDENT;
  s.tf.env.TF_IN_AUTOMATION = "1";
  s.tf.env.GPURENTAL_PROVIDER_RESIDENT_DIR = dir;
  offerId = roomyOffer(s);
});

const linux = process.platform === "linux" ? test : test.skip;

/** Sockets a command's provider process killed with SIGKILL left (it cannot remove its own). */
let leftBehind: string[] = [];

/** Waits until no provider process of a command is left, and checks that it left no socket. */
async function commandEnded(killed = false): Promise<void> {
  await until(() => residentPids(dir).length === 0, "the command's provider process to exit", 15_000);
  const sockets = readdirSync(dir).filter((f) => f.endsWith(".sock"));
  if (killed) leftBehind = sockets;
  else expect(sockets.filter((f) => !leftBehind.includes(f))).toEqual([]);
}

linux("the installed provider holds this machine's launcher in C beside the Node.js script", () => {
  const files = readdirSync(s.tf.install.packageDir);
  expect(files).toEqual(expect.arrayContaining([NODE_SCRIPT, `node-launcher-${terraformPlatform()}`]));
  // An ELF executable: the build compiled the launcher for this platform.
  const launcher = join(s.tf.install.packageDir, `node-launcher-${terraformPlatform()}`);
  expect(readFileSync(launcher).subarray(0, 4).toString("latin1")).toBe("\x7fELF");
});

linux(
  "apply, a plan without changes and destroy: each command's launches are sessions of one process, gone with the command",
  async () => {
    writeConfig(s, paidConfig(s, offerId, 2));
    const logged = { TF_LOG_PROVIDER: "debug" };

    const applied = expectCode(await s.tf.run(["apply", "-auto-approve", "-input=false"], logged), 0);
    expect(liveInstances(s)).toHaveLength(2);
    // apply: the schema, the validate walk, the plan walk and the apply walk.
    expect(applied.stderr.match(/session started/g)?.length).toBeGreaterThanOrEqual(3);
    await commandEnded();

    const planned = expectCode(await s.tf.run(["plan", "-detailed-exitcode", "-input=false"], logged), 0);
    expect(output(planned)).toContain("No changes.");
    // plan: three launches of one process (the schema, validate, plan).
    expect(planned.stderr.match(/session started/g)).toHaveLength(3);
    await commandEnded();
    // The process's own log holds none of the sessions' credentials.
    for (const f of readdirSync(dir).filter((n) => n.endsWith(".log"))) {
      const log = readFileSync(join(dir, f), "utf8");
      expect(log).not.toContain(s.creds.admin_session_token);
      expect(log).not.toContain(SECRET_ENV_VALUE);
    }

    expectCode(await s.tf.run(["destroy", "-auto-approve", "-input=false"]), 0);
    expect(await counts(s)).toMatchObject({ backend: 0, state: 0, untracked: 0 });
    await commandEnded();
  },
);

linux(
  "kill -9 of terraform, of the command's provider process, and Ctrl-C mid-apply: the next apply converges, none deployed twice",
  async () => {
    writeConfig(s, paidConfig(s, offerId, 4));
    let deploys = 0;
    for (const victim of ["terraform", "the command's provider process", "Ctrl-C"] as const) {
      slowCreating(s);
      const run = s.tf.spawn(
        ["apply", "-auto-approve", "-input=false", "-no-color"],
        {},
        { processGroup: true },
      );
      await until(() => liveInstances(s).length === 4, `4 instances creating (${victim})`);
      // This apply's own (a process of an earlier command may still be on its way out).
      const [command] = ownedPids(run.pid!);
      expect(command).toBeDefined();
      if (victim === "Ctrl-C") run.interrupt();
      else process.kill(victim === "terraform" ? run.pid! : command!, "SIGKILL");
      await run.result;
      // Nothing of the command is left: its launches and its provider process exit with it.
      await commandEnded(victim === "the command's provider process");

      s.backend.setTransitions("immediate");
      const again = expectCode(await s.tf.run(["apply", "-auto-approve", "-input=false"]), 0);
      // After kill -9 no create was answered to Terraform, and the journal gives each one back.
      if (victim !== "Ctrl-C")
        expect(output(again).match(/Adopted instance [0-9a-f-]+, deployed at/g)).toHaveLength(4);
      deploys += 4;
      expect(await counts(s)).toMatchObject({ backend: 4, state: 4, untracked: 0 });
      // Counted over every instance ever deployed: none was deployed twice.
      expect(deploysEver(s)).toBe(deploys);
      expectCode(await s.tf.run(["destroy", "-auto-approve", "-input=false"]), 0);
      expect(liveInstances(s)).toEqual([]);
    }
  },
);
