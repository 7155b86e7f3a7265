import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { firstUnsafeCharacter } from "../../display";
import { main } from "../main";
import { formatStatus, ResidentDirError, residentStatus, stopResident } from "./resident";

// `gpurental provider resident status|stop` against what a resident directory can hold besides a
// live resident process (that one is in src/resident/resident.process.test.ts): nothing, sockets
// left by killed processes, a process that answers something else, files of other kinds.

const work = mkdtempSync(join(tmpdir(), "gpurental-cli-resident-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

let n = 0;
/** A fresh private directory. */
function runDir(): string {
  const dir = join(work, `r${++n}`);
  mkdirSync(dir, { mode: 0o700 });
  return dir;
}

/** Runs the command; returns what it printed and its exit code. */
async function cli(...args: string[]): Promise<{ out: string; code: number }> {
  let out = "";
  const write = jest.spyOn(process.stdout, "write").mockImplementation((chunk: string | Uint8Array) => {
    out += String(chunk);
    return true;
  });
  const before = process.exitCode;
  process.exitCode = 0;
  try {
    await main(["node", "gpurental", "provider", "resident", ...args]);
    return { out, code: Number(process.exitCode ?? 0) };
  } finally {
    write.mockRestore();
    process.exitCode = before;
  }
}

/** A socket in `dir` under a control socket's name that answers every line with `answer`. */
async function answering(dir: string, name: string, answer: string): Promise<Server> {
  const server = createServer((c) => {
    c.on("data", () => c.end(answer));
    c.on("error", () => {});
  });
  await new Promise<void>((r) => server.listen(join(dir, name), r));
  return server;
}

describe("gpurental provider resident", () => {
  it("a directory that does not exist holds no resident process", async () => {
    const dir = join(work, "none");
    expect(await cli("status", "--dir", dir)).toEqual({
      out: `No resident provider process in ${dir}.\n`,
      code: 0,
    });
    expect(await cli("stop", "--dir", dir)).toEqual({
      out: `No resident provider process in ${dir}.\n`,
      code: 0,
    });
    expect(existsSync(dir)).toBe(false);
  });

  it("a directory others can enter is refused, named: the provider never uses one", async () => {
    const dir = join(work, "shared");
    mkdirSync(dir);
    chmodSync(dir, 0o755);
    await expect(residentStatus(dir)).rejects.toThrow(ResidentDirError);
    await expect(stopResident(dir)).rejects.toThrow(
      `${dir} is not a directory only this user can use, so the provider never runs a resident process there`,
    );
  });

  it("a socket left by a killed process is reported by status and removed by stop; other files are left alone", async () => {
    const dir = runDir();
    // Connecting to a path that is no listening socket is refused, as for a killed process's socket.
    writeFileSync(join(dir, "0123456789abcdef.sock"), "");
    writeFileSync(join(dir, "0123456789abcdef.sock.log"), "");
    writeFileSync(join(dir, "s0a1b2c3d4e5.sock"), "");
    const status = await cli("status", "--dir", dir);
    expect(status).toEqual({
      out: `Resident provider processes in ${dir}:\n  ${join(dir, "0123456789abcdef.sock")}: no process answers (left behind by one that was killed)\n`,
      code: 0,
    });
    expect(await cli("stop", "--dir", dir)).toEqual({
      out: `${join(dir, "0123456789abcdef.sock")}: no process answers (left behind by one that was killed); removed\n`,
      code: 0,
    });
    expect(existsSync(join(dir, "0123456789abcdef.sock"))).toBe(false);
    expect(existsSync(join(dir, "0123456789abcdef.sock.log"))).toBe(true);
    expect(existsSync(join(dir, "s0a1b2c3d4e5.sock"))).toBe(true);
  });

  it("a process that answers something else is named, left in place, and makes stop fail", async () => {
    const dir = runDir();
    const other = await answering(dir, "fedcba9876543210.sock", '{"t":"hello"}\n');
    const garbled = await answering(dir, "00000000000000aa.sock", "not json\n");
    try {
      const entries = await residentStatus(dir);
      expect(entries).toEqual([
        {
          socket: join(dir, "00000000000000aa.sock"),
          status: null,
          problem: "an answer it cannot read: a message is not JSON",
        },
        {
          socket: join(dir, "fedcba9876543210.sock"),
          status: null,
          problem: "an answer that is not a status",
        },
      ]);
      expect(formatStatus(dir, entries)).toContain(
        `${join(dir, "fedcba9876543210.sock")}: an answer that is not a status`,
      );
      const stop = await cli("stop", "--dir", dir);
      expect(stop.code).toBe(1);
      expect(stop.out).toContain(`${join(dir, "fedcba9876543210.sock")}: an answer that is not a stop's\n`);
      expect(existsSync(join(dir, "fedcba9876543210.sock"))).toBe(true);
    } finally {
      other.close();
      garbled.close();
    }
  });

  it("a status answer missing fields (an older build's) or holding them in another form is shown with ? for them", async () => {
    const dir = runDir();
    const older = await answering(
      dir,
      "0123456789abcdef.sock",
      '{"t":"status","pid":1,"sessions":0,"started_at":"x"}\n',
    );
    const odd = await answering(
      dir,
      "c0123456789abcdef-4100-98765.sock",
      '{"t":"status","pid":"7","sessions":-1,"started_at":5,"executable":["x"],"node":null,"serves":4100}\n',
    );
    try {
      const entries = await residentStatus(dir);
      expect(entries.map((e) => e.status)).toEqual([
        { t: "status", pid: 1, sessions: 0, started_at: "x" },
        { t: "status", serves: 4100 },
      ]);
      expect(await cli("status", "--dir", dir)).toEqual({
        out:
          `Resident provider processes in ${dir}:\n` +
          "  pid 1: idle, exits at ? unless a command starts; up since x\n" +
          "    ? (node ?)\n" +
          "  pid ?: the command of terraform process 4100, sessions ?; up since ?\n" +
          "    ? (node ?); exits with that command\n",
        code: 0,
      });
    } finally {
      older.close();
      odd.close();
    }
  });

  it("a command's provider process is listed as its terraform command's; what any process answers is shown as text", async () => {
    const dir = runDir();
    const answer = (fields: Record<string, unknown>) =>
      `${JSON.stringify({ t: "status", pid: 4242, started_at: "2026-11-29T06:00:00.000Z", sessions: 1, idle_exit_at: null, executable: "/x/terraform-provider-gpurental", node: "v22.23.3", ...fields })}\n`;
    const command = await answering(dir, "c0123456789abcdef-4100-98765.sock", answer({ serves: 4100 }));
    const hostile = await answering(
      dir,
      "0123456789abcdef.sock",
      answer({
        pid: 4343,
        executable: "/x/\u001b]0;owned\u0007p\u001b[2J",
        node: "v22\u202e",
        started_at: "now\r",
      }),
    );
    try {
      const { out } = await cli("status", "--dir", dir);
      expect(out).toContain(
        "pid 4242: the command of terraform process 4100, serving 1 session; up since 2026-11-29T06:00:00.000Z\n    /x/terraform-provider-gpurental (node v22.23.3); exits with that command\n",
      );
      expect(out).toContain("pid 4343: serving 1 session; up since now\\x0d\n");
      expect(out).toContain("/x/\\x1b]0;owned\\x07p\\x1b[2J (node v22\\u202e)");
      expect(firstUnsafeCharacter(out.replace(/\n/g, " "))).toBeUndefined();
      // A socket of that form that nothing answers on is left behind by a killed command too.
      writeFileSync(join(dir, "c0123456789abcdef-77-1.sock"), "");
      expect((await cli("stop", "--dir", dir)).out).toContain(
        `${join(dir, "c0123456789abcdef-77-1.sock")}: no process answers (left behind by one that was killed); removed\n`,
      );
    } finally {
      command.close();
      hostile.close();
    }
  });
});
