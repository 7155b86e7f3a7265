import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { removeStaleSockets } from "./stale-sockets";

const dir = mkdtempSync(join(tmpdir(), "gpr-stale-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A socket left by a process killed with SIGKILL: the file stays, nobody listens. */
async function killedListener(path: string): Promise<void> {
  const child = spawn(process.execPath, [
    "-e",
    `require("net").createServer().listen(${JSON.stringify(path)}, () => process.stdout.write("up"))`,
  ]);
  await new Promise<void>((r) => child.stdout.once("data", () => r()));
  const gone = new Promise<void>((r) => child.once("exit", () => r()));
  child.kill("SIGKILL");
  await gone;
}

test("sockets of killed processes are removed; live ones, kept ones and other names are not", async () => {
  const stale = join(dir, "plugin0123456789ab.sock");
  const otherName = join(dir, "plugin123456789");
  const keep = join(dir, "pluginaaaaaaaaaaaa.sock");
  await killedListener(stale);
  await killedListener(otherName);
  await killedListener(keep);
  const live = join(dir, "pluginbbbbbbbbbbbb.sock");
  const server = createServer();
  await new Promise<void>((r) => server.listen(live, r));
  try {
    expect(existsSync(stale)).toBe(true);
    // Too young to tell from one being bound: left alone.
    expect(await removeStaleSockets(dir, /^plugin[0-9a-f]{12}\.sock$/, [keep])).toBe(0);
    expect(await removeStaleSockets(dir, /^plugin[0-9a-f]{12}\.sock$/, [keep], 0)).toBe(1);
    expect(existsSync(stale)).toBe(false);
    expect(existsSync(live)).toBe(true);
    expect(existsSync(keep)).toBe(true);
    expect(existsSync(otherName)).toBe(true);
  } finally {
    server.close();
  }
});
