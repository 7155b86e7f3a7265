import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { layOut, TRUST_CASES } from "../executable/compact/testing/directory-trust";
import { privateRunDir, RESIDENT_DIR_ENV, residentSocket, trustedAncestors } from "./resident";
import { attachResident } from "./resident-client";

// The resident directory is safe against its parents: another local user who owns a parent of it
// (a TMPDIR or GPURENTAL_PROVIDER_RESIDENT_DIR under their control) swaps the directory for one of
// their own, in a loop, while launches ask for sessions; they must never receive a session request,
// which carries the launch's environment and its credentials.

const uid = typeof process.getuid === "function" ? process.getuid() : -1;
const work = mkdtempSync(join(tmpdir(), "gpr-dir-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe("trustedAncestors", () => {
  test("a parent that others can write to is refused, unless it is sticky", () => {
    const parent = join(work, "open");
    mkdirSync(join(parent, "run"), { recursive: true, mode: 0o700 });
    chmodSync(parent, 0o777);
    expect(trustedAncestors(join(parent, "run"), uid)).toBe(false);
    expect(privateRunDir(join(parent, "run"))).toBe(false);
    chmodSync(parent, 0o1777);
    expect(trustedAncestors(join(parent, "run"), uid)).toBe(true);
    expect(privateRunDir(join(parent, "run"))).toBe(true);
    chmodSync(parent, 0o755);
    expect(privateRunDir(join(parent, "run"))).toBe(true);
  });
});

describe("the directory trust rule, as the compact launcher keeps it (directory-trust.json)", () => {
  let n = 0;
  test.each(TRUST_CASES)("$name: trusted $trusted", (c) => {
    const base = join(work, `trust${++n}`);
    mkdirSync(base, { mode: 0o700 });
    expect(privateRunDir(layOut(base, c))).toBe(c.trusted);
  });
});

/** What the other user runs: swaps its own directory in for the resident one, in a loop. */
const SWAPPER = `
const fs = require("fs"), net = require("net"), path = require("path");
const [P, sockName] = process.argv.slice(2);
const run = path.join(P, "run"), real = path.join(P, "real"), fake = path.join(P, "fake");
const log = path.join(P, "received.log");
fs.mkdirSync(fake, { mode: 0o700 });
let swaps = 0;
const server = net.createServer((c) => {
  fs.appendFileSync(log, "connection\\n");
  c.on("data", (d) => { fs.appendFileSync(log, d); c.destroy(); });
  c.on("error", () => {});
});
function back() {
  try { fs.renameSync(run, fake); } catch {}
  try { fs.renameSync(real, run); } catch {}
}
function loop() {
  if (fs.existsSync(path.join(P, "stop"))) {
    back();
    fs.writeFileSync(path.join(P, "swaps"), String(swaps));
    server.close();
    return;
  }
  try { fs.renameSync(run, real); fs.renameSync(fake, run); swaps++; } catch {}
  setImmediate(() => { back(); setImmediate(loop); });
}
server.listen(path.join(fake, sockName), () => {
  fs.writeFileSync(path.join(P, "ready"), "");
  loop();
});
`;

/**
 * A Node.js the other user may run: this one, or else one on PATH. A Node installed into the
 * project (the Node 22 and 24 runs use npm's binaries) can sit below a folder only its owner
 * may enter.
 */
function nodeFor(user: string): string {
  const candidates = [
    process.execPath,
    ...(process.env.PATH ?? "").split(delimiter).map((d) => join(d, "node")),
  ];
  for (const node of candidates) {
    if (!existsSync(node)) continue;
    const ran = spawnSync("runuser", ["-u", user, "--", node, "-e", "0"], { stdio: "ignore" });
    if (ran.status === 0) return node;
  }
  throw new Error(`no Node.js on PATH that the user ${user} may run`);
}

const asRoot = uid === 0;
if (!asRoot) {
  test.skip("another local user's swap of the resident directory (needs root to create that user; skipped)", () => {});
}

(asRoot ? describe : describe.skip)("another local user who owns a parent of the resident directory", () => {
  const user = `gprswap${randomBytes(3).toString("hex")}`;
  let parent: string;
  let dir: string;
  let swapper: ChildProcess | undefined;
  let resident: Server | undefined;

  beforeAll(() => {
    const made = spawnSync("useradd", ["--system", "--no-create-home", "--shell", "/usr/sbin/nologin", user]);
    if (made.status !== 0) throw new Error(`useradd failed: ${made.stderr}`);
  });
  afterAll(async () => {
    if (swapper && swapper.exitCode === null) swapper.kill("SIGKILL");
    resident?.close();
    spawnSync("userdel", [user]);
  });

  test("never receives a session request while swapping the directory in a loop", async () => {
    // The other user reaches the parent through directories anyone may enter.
    chmodSync(work, 0o755);
    parent = mkdtempSync(join(work, "p-"));
    chmodSync(parent, 0o755);
    dir = join(parent, "run");
    mkdirSync(dir, { mode: 0o700 });
    const owner = Number(spawnSync("id", ["-u", user]).stdout.toString().trim());
    chownSync(parent, owner, owner);
    const bundleDir = join(work, "bundle");
    mkdirSync(bundleDir, { recursive: true });
    const env = { [RESIDENT_DIR_ENV]: dir, PATH: process.env.PATH ?? "" };
    const socket = residentSocket(dir, bundleDir, env)!;
    // A resident process of this user's, in the real directory: answers every session with a refusal.
    resident = createServer((c) => {
      c.on("error", () => {});
      c.end(`${JSON.stringify({ t: "error", message: "test" })}\n`);
    });
    await new Promise<void>((r) => resident!.listen(socket, r));
    const script = join(parent, "swap.js");
    writeFileSync(script, SWAPPER);
    chmodSync(script, 0o644);
    swapper = spawn(
      "runuser",
      ["-u", user, "--", nodeFor(user), script, parent, socket.slice(dir.length + 1)],
      { stdio: "ignore" },
    );
    const exited = new Promise<void>((r) => swapper!.once("exit", () => r()));
    for (let i = 0; i < 200 && !existsSync(join(parent, "ready")); i++)
      await new Promise((r) => setTimeout(r, 25));
    expect(existsSync(join(parent, "ready"))).toBe(true);

    // The directory's parent belongs to the other user: it is never used, however the swap stands.
    let served = 0;
    for (let i = 0; i < 300; i++) {
      const ok = await attachResident({
        env,
        bundleDir,
        command: { node: "/bin/false", script: "" },
        stdout: () => {},
        stderr: () => {},
        exit: () => {},
        processHooks: false,
      });
      if (ok) served++;
    }
    writeFileSync(join(parent, "stop"), "");
    await exited;
    expect(Number(readFileSync(join(parent, "swaps"), "utf8"))).toBeGreaterThan(0);
    expect(served).toBe(0);
    expect(existsSync(join(parent, "received.log"))).toBe(false);
    expect(privateRunDir(dir)).toBe(false);
    resident.close();
    resident = undefined;
  }, 60_000);
});
