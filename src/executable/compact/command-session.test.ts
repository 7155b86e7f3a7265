import { type ChildProcess, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { connect as connectSocket, createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { compactExecutable } from "../../../scripts/release/compact-executable";
import { residentStatus } from "../../cli/provider/resident";
import { generateServerCertificate } from "../../plugin/cert";
import { MAGIC_COOKIE_KEY, MAGIC_COOKIE_VALUE } from "../../plugin/handshake";
import { parseHandshake } from "../../plugin/testing/grpc-client";
import { buildExecutable, schemaAndShutdown as schemaAndShutdownAs } from "../../testing/provider-executable";
import { ownedPids, residentPids } from "../../testing/resident";
import { until } from "../../testing/until";

// The command's provider process (command-session.c): the compact executable's launches of one
// terraform process, in automation, are sessions of one provider process that the first launch
// starts and that exits with that terraform process. Here a shell stands in for terraform: it runs
// the launches one after the other, as a plan does (schema, validate, plan), and stays up until
// the test ends it.

jest.setTimeout(120_000);

// Short: a socket's path must fit in 103 bytes, and the launcher serves itself when it does not.
const work = mkdtempSync(join(tmpdir(), "gcs-"));
const runDir = join(work, "r");
const hostCert = generateServerCertificate();
let exe = "";

/** The runtime's id as the launcher names the command's socket by it. */
let runtimeId = "";

beforeAll(async () => {
  const { executable } = await buildExecutable(work);
  // The runtime the launcher unpacks and runs: the bundled provider, run by this node.
  const runtime = join(work, "runtime");
  writeFileSync(
    runtime,
    `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(executable)} "$@"\n`,
    {
      mode: 0o755,
    },
  );
  runtimeId = createHash("sha256").update(readFileSync(runtime)).digest("hex").slice(0, 16);
  exe = join(work, "terraform-provider-gpurental_v9.9.9");
  writeFileSync(exe, compactExecutable(runtime, work), { mode: 0o755 });
}, 120_000);

const started: ChildProcess[] = [];
afterAll(() => {
  for (const c of started) c.kill("SIGKILL");
  for (const pid of residentPids(work)) process.kill(pid, "SIGKILL");
  rmSync(work, { recursive: true, force: true });
});

const SECRET = "gpr_secretsecretsecret0123456789";

/** A launch's environment as Terraform in automation gives it. */
function launchEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const runtimeDir = join(work, "rt");
  mkdirSync(runtimeDir, { recursive: true, mode: 0o700 });
  return {
    PATH: process.env.PATH,
    TMPDIR: work,
    GPURENTAL_RUNTIME_DIR: runtimeDir,
    GPURENTAL_PROVIDER_CODE_CACHE: "off",
    GPURENTAL_PROVIDER_RESIDENT_DIR: runDir,
    GPURENTAL_TOKEN: SECRET,
    TF_IN_AUTOMATION: "1",
    [MAGIC_COOKIE_KEY]: MAGIC_COOKIE_VALUE,
    PLUGIN_PROTOCOL_VERSIONS: "6",
    PLUGIN_CLIENT_CERT: hostCert.certPem,
    ...extra,
  };
}

interface Host {
  pid: number;
  /** The next handshake line a launch printed. */
  handshake(): Promise<ReturnType<typeof parseHandshake>>;
  /** Lines `exit=<code>` the shell printed after each launch. */
  exits(): string[];
  stderr(): string;
  end(): void;
}

/**
 * A shell that runs `launches` launches one after the other, then waits to be ended; with `held`,
 * only once `go` is called, so that a test can listen on the command's socket first.
 */
function host(launches: number, env: NodeJS.ProcessEnv, held = false, body?: string): Host & { go(): void } {
  const script = `${held ? "read go; " : ""}${body ?? Array(launches).fill('"$0"; echo "exit=$?"').join("; ")}; exec sleep 600`;
  const child = spawn("sh", ["-c", script, exe], { env, stdio: ["pipe", "pipe", "pipe"] });
  started.push(child);
  let out = "";
  let err = "";
  let read = 0;
  child.stdout?.on("data", (d) => {
    out += d;
  });
  child.stderr?.on("data", (d) => {
    err += d;
  });
  const lines = () => out.split("\n").filter((l) => l.startsWith("1|"));
  return {
    pid: child.pid as number,
    handshake: async () => {
      await until("a handshake line", () => lines().length > read);
      return parseHandshake(lines()[read++] as string);
    },
    exits: () => out.split("\n").filter((l) => l.startsWith("exit=")),
    stderr: () => err,
    end: () => child.kill("SIGKILL"),
    go: () => child.stdin?.write("\n"),
  };
}

const schemaAndShutdown = (hs: ReturnType<typeof parseHandshake>) => schemaAndShutdownAs(hs, hostCert);

const ownedBy = ownedPids;

describe("the command's provider process", () => {
  it("serves every launch of one terraform process, holds none of its credentials, and exits with it", async () => {
    const h = host(3, launchEnv({ TF_LOG: "debug" }));
    const seen: ReturnType<typeof parseHandshake>[] = [];
    for (let i = 0; i < 3; i++) {
      const hs = await h.handshake();
      seen.push(hs);
      await schemaAndShutdown(hs);
    }
    await until("three launches exited", () => h.exits().length === 3);
    expect(h.exits()).toEqual(["exit=0", "exit=0", "exit=0"]);
    // Sessions of one process: its session sockets, and the one certificate it shows them all.
    for (const hs of seen) expect(hs.address.startsWith(`${runDir}/s`)).toBe(true);
    expect(new Set(seen.map((hs) => hs.cert)).size).toBe(1);
    expect(new Set(seen.map((hs) => hs.address)).size).toBe(3);
    // The sessions' records reach the launch's stderr, at the launch's level.
    expect(h.stderr()).toContain("session started");
    const pids = ownedBy(h.pid);
    expect(pids).toHaveLength(1);
    const environ = readFileSync(`/proc/${pids[0]}/environ`, "utf8");
    expect(environ).not.toContain(SECRET);
    expect(environ).not.toContain("PLUGIN_CLIENT_CERT");
    const ticks = readFileSync(`/proc/${h.pid}/stat`, "utf8").split(") ")[1]?.split(" ")[19];
    const control = readdirSync(runDir).filter((f) => f.endsWith(`-${h.pid}-${ticks}.sock`));
    expect(control).toHaveLength(1);
    // `gpurental provider resident status` lists it, as this terraform command's.
    const listed = (await residentStatus(runDir)).filter(
      (e) => e.socket === join(runDir, control[0] as string),
    );
    expect(listed.map((e) => [e.status?.pid, e.status?.serves])).toEqual([[pids[0], h.pid]]);

    // A launch of another command cannot have a session of it.
    const answer = await new Promise<string>((resolve, reject) => {
      const c = connectSocket(join(runDir, control[0] as string));
      let text = "";
      c.on("data", (d) => {
        text += d;
      });
      c.on("end", () => resolve(text));
      c.on("error", reject);
      const request = { t: "session", env: launchEnv(), cwd: work, pid: process.pid, ppid: process.pid };
      c.write(`${JSON.stringify(request)}\n`);
    });
    expect(answer).toContain(`serves only the launches of terraform process ${h.pid}, not of ${process.pid}`);

    h.end();
    await until("the process exits with its terraform process", () => ownedBy(h.pid).length === 0);
    expect(readdirSync(runDir).filter((f) => f.includes(`-${h.pid}-`))).toEqual([]);
  });

  it("two terraform processes at once each get their own", async () => {
    const a = host(2, launchEnv());
    const b = host(2, launchEnv());
    const [a1, b1] = [await a.handshake(), await b.handshake()];
    await Promise.all([schemaAndShutdown(a1), schemaAndShutdown(b1)]);
    const [a2, b2] = [await a.handshake(), await b.handshake()];
    await Promise.all([schemaAndShutdown(a2), schemaAndShutdown(b2)]);
    expect(a1.cert).toBe(a2.cert);
    expect(b1.cert).toBe(b2.cert);
    expect(a1.cert).not.toBe(b1.cert);
    expect(ownedBy(a.pid)).toHaveLength(1);
    expect(ownedBy(b.pid)).toHaveLength(1);
    a.end();
    b.end();
    await until("both exit", () => ownedBy(a.pid).length + ownedBy(b.pid).length === 0);
  });

  it("two launches of one command at once start one process between them, and both are its sessions", async () => {
    const h = host(0, launchEnv(), false, '"$0" & "$0" & wait; echo "exit=both"');
    const [a, b] = [await h.handshake(), await h.handshake()];
    for (const hs of [a, b]) expect(hs.address.startsWith(`${runDir}/s`)).toBe(true);
    expect(a.cert).toBe(b.cert);
    await Promise.all([schemaAndShutdown(a), schemaAndShutdown(b)]);
    await until("both launches exited", () => h.exits().length === 1);
    // The one that lost the name exits at once; none is left up and unreachable.
    await until("one process left", () => ownedBy(h.pid).length === 1);
    await new Promise((r) => setTimeout(r, 300));
    expect(ownedBy(h.pid)).toHaveLength(1);
    h.end();
    await until("it exits with its command", () => ownedBy(h.pid).length === 0);
  });

  it.each([
    ["outside automation", { TF_IN_AUTOMATION: "" }],
    ["with the resident mode off", { GPURENTAL_PROVIDER_RESIDENT: "off" }],
    // The process would bind from "/" and the launch connect from the working directory.
    ["with a relative directory", { GPURENTAL_PROVIDER_RESIDENT_DIR: "relative-run" }],
  ])("%s, a launch is a provider process of its own", async (_, extra) => {
    const h = host(1, launchEnv({ GPURENTAL_PROVIDER_RESIDENT_DIR: join(work, "other-run"), ...extra }));
    const hs = await h.handshake();
    expect(hs.address.startsWith(join(work, "other-run"))).toBe(false);
    await schemaAndShutdown(hs);
    await until("the launch exited", () => h.exits().length === 1);
    expect(ownedBy(h.pid)).toHaveLength(0);
    h.end();
  });

  it("in a directory others can enter, a launch is a provider process of its own", async () => {
    const shared = join(work, "shared");
    mkdirSync(shared);
    chmodSync(shared, 0o755);
    const h = host(1, launchEnv({ GPURENTAL_PROVIDER_RESIDENT_DIR: shared }));
    const hs = await h.handshake();
    expect(hs.address.startsWith(`${shared}/`)).toBe(false);
    await schemaAndShutdown(hs);
    await until("the launch exited", () => h.exits().length === 1);
    expect(existsSync(shared) && readdirSync(shared)).toEqual([]);
    h.end();
  });
});

/** Where the launches of the shell `pid` look for their command's process. */
function commandSocket(dir: string, pid: number): string {
  const ticks = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ")[19];
  return join(dir, `c${runtimeId}-${pid}-${ticks}.sock`);
}

/** A stand-in for the command's process: answers each session request with `answer`. */
async function standIn(
  path: string,
  answer: (request: string) => string,
): Promise<{ server: Server; requests: string[] }> {
  const requests: string[] = [];
  const server = createServer((c) => {
    let text = "";
    c.on("data", (d) => {
      text += d;
      const nl = text.indexOf("\n");
      if (nl === -1) return;
      requests.push(text.slice(0, nl));
      c.end(answer(text.slice(0, nl)));
    });
    c.on("error", () => {});
  });
  await new Promise<void>((resolve) => server.listen(path, resolve));
  return { server, requests };
}

describe("the launcher's side of a session, against a stand-in for the command's process", () => {
  const AWKWARD = 'quote " backslash \\ tab \t bell \u0007 escape \u001b[2J é ✓ 𝄞 \u202e end';

  it("sends the launch's environment exactly as it is, and serves itself when refused", async () => {
    const dir = join(work, "s1");
    mkdirSync(dir, { mode: 0o700 });
    const h = host(1, launchEnv({ GPURENTAL_PROVIDER_RESIDENT_DIR: dir, AWKWARD }), true);
    const { server, requests } = await standIn(
      commandSocket(dir, h.pid),
      () => '{"t":"error","message":"no"}\n',
    );
    try {
      h.go();
      const hs = await h.handshake();
      expect(hs.address.startsWith(`${dir}/`)).toBe(false);
      await schemaAndShutdown(hs);
      await until("the launch exited", () => h.exits().length === 1);
      expect(h.exits()).toEqual(["exit=0"]);
      expect(requests).toHaveLength(1);
      const request = JSON.parse(requests[0] as string);
      expect(request.t).toBe("session");
      expect(request.env.AWKWARD).toBe(AWKWARD);
      expect(request.env.GPURENTAL_TOKEN).toBe(SECRET);
      expect(request.ppid).toBe(h.pid);
      expect(request.cwd).toBe(process.cwd());
      expect(Number.isSafeInteger(request.pid)).toBe(true);
    } finally {
      server.close();
      h.end();
    }
  });

  it("whatever the process sends after the handshake, the launch relays its log lines and exits with its code, or 1", async () => {
    const lineArb = fc.oneof(
      fc.string({ unit: "binary", maxLength: 200 }).map((line) => ({ kind: "log" as const, line })),
      fc.integer({ min: 0, max: 255 }).map((code) => ({ kind: "exit" as const, code })),
      fc
        .string({ unit: "binary", maxLength: 200 })
        .map((raw) => ({ kind: "garbage" as const, raw: raw.replace(/\n/g, " ") })),
      fc
        .constantFrom(
          '{"t":"log","line":"\\',
          '{"t":"log","line":"\\u12',
          '{"t":"exit","code":999}',
          '{"t":"log"}',
          "{",
        )
        .map((raw) => ({ kind: "garbage" as const, raw })),
    );
    let n = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(lineArb, { maxLength: 12 }), async (messages) => {
        const dir = join(work, `g${++n}`);
        mkdirSync(dir, { mode: 0o700 });
        const h = host(1, launchEnv({ GPURENTAL_PROVIDER_RESIDENT_DIR: dir }), true);
        const handshake = `1|6|unix|${dir}/s000000000000.sock|grpc|CERT\n`;
        const body = messages
          .map((m) =>
            m.kind === "log"
              ? JSON.stringify({ t: "log", line: m.line })
              : m.kind === "exit"
                ? JSON.stringify({ t: "exit", code: m.code })
                : m.raw,
          )
          .join("\n");
        const { server } = await standIn(
          commandSocket(dir, h.pid),
          () => `${JSON.stringify({ t: "ready", handshake })}\n${body}${body ? "\n" : ""}`,
        );
        try {
          h.go();
          await until("the launch exited", () => h.exits().length === 1);
          let expected = "";
          let code = 1;
          for (const m of messages) {
            if (m.kind === "exit") {
              code = m.code;
              break;
            }
            if (m.kind === "log") expected += m.line;
          }
          expect(h.exits()).toEqual([`exit=${code}`]);
          expect(h.stderr()).toBe(expected);
          expect(await h.handshake()).toEqual(
            expect.objectContaining({ address: `${dir}/s000000000000.sock` }),
          );
        } finally {
          server.close();
          h.end();
        }
      }),
      { numRuns: 40 },
    );
  });
});
