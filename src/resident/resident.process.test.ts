import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { connect as connectSocket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { formatStatus, formatStop, residentStatus, stopResident } from "../cli/provider/resident";
import { derToPem, generateServerCertificate } from "../plugin/cert";
import { MAGIC_COOKIE_KEY, MAGIC_COOKIE_VALUE } from "../plugin/handshake";
import { connect, parseHandshake, tlsCredentials } from "../plugin/testing/grpc-client";
import {
  buildExecutable,
  handshakeLine,
  type Started,
  schemaAndShutdown as schemaAndShutdownAs,
  startExecutable,
} from "../testing/provider-executable";
import { residentPids as residentPidsIn } from "../testing/resident";
import { until } from "../testing/until";

// The resident mode as Terraform meets it: launches of the bundled executable, each a separate
// process talking go-plugin on stdout, the first starting the resident process and the others
// served by it.

jest.setTimeout(90_000);

const work = mkdtempSync(join(tmpdir(), "gpurental-resident-process-"));
const runDir = join(work, "run");
const hostCert = generateServerCertificate();

let executable = "";

beforeAll(async () => {
  ({ executable } = await buildExecutable(work));
}, 120_000);

afterAll(() => {
  for (const pid of residentPids()) process.kill(pid, "SIGKILL");
  rmSync(work, { recursive: true, force: true });
});

const residentPids = () => residentPidsIn(work);

const hostEnv = {
  [MAGIC_COOKIE_KEY]: MAGIC_COOKIE_VALUE,
  PLUGIN_PROTOCOL_VERSIONS: "6",
  PLUGIN_CLIENT_CERT: hostCert.certPem,
  GPURENTAL_PROVIDER_RESIDENT: "on",
  GPURENTAL_PROVIDER_RESIDENT_DIR: runDir,
  // Long enough for the next launch of a test, a cold start on a busy machine, to find it up.
  GPURENTAL_PROVIDER_RESIDENT_IDLE_SECONDS: "15",
};

function start(env: NodeJS.ProcessEnv): Started {
  return startExecutable(executable, {
    PATH: process.env.PATH,
    TMPDIR: work,
    GPURENTAL_PROVIDER_CODE_CACHE: "off",
    ...env,
  });
}

async function handshake(s: Started): Promise<ReturnType<typeof parseHandshake> & { line: string }> {
  const line = await handshakeLine(s);
  return { ...parseHandshake(line), line };
}

const schemaAndShutdown = (hs: ReturnType<typeof parseHandshake>, host = hostCert) =>
  schemaAndShutdownAs(hs, host);

const controlSockets = () =>
  existsSync(runDir) ? readdirSync(runDir).filter((f) => /^[0-9a-f]{16}\.sock$/.test(f)) : [];
const sessionSockets = () =>
  existsSync(runDir) ? readdirSync(runDir).filter((f) => /^s[0-9a-f]+\.sock$/.test(f)) : [];

describe("the resident mode", () => {
  it("a setting it cannot use stops the launch with the variable and the value named", async () => {
    const s = start({ ...hostEnv, GPURENTAL_PROVIDER_RESIDENT: "maybe" });
    expect((await s.exited).code).toBe(1);
    expect(s.stdout()).toBe("");
    expect(s.stderr()).toContain('GPURENTAL_PROVIDER_RESIDENT must be "on", "off" or "auto"');
    expect(s.stderr()).toContain('got "maybe"');
    expect(existsSync(runDir)).toBe(false);
  });

  it("never uses a directory others can enter: the launch serves Terraform itself", async () => {
    const shared = join(work, "shared");
    mkdirSync(shared);
    chmodSync(shared, 0o755);
    const s = start({ ...hostEnv, GPURENTAL_PROVIDER_RESIDENT_DIR: shared });
    const hs = await handshake(s);
    expect(hs.address.startsWith(`${shared}/`)).toBe(false);
    await schemaAndShutdown(hs);
    expect(await s.exited).toEqual({ code: 0, signal: null });
    expect(readdirSync(shared)).toEqual([]);
  });

  it("the first launch serves Terraform itself and starts the resident process", async () => {
    const s = start(hostEnv);
    const hs = await handshake(s);
    expect(hs.address.startsWith(`${runDir}/`)).toBe(false);
    await schemaAndShutdown(hs);
    expect(await s.exited).toEqual({ code: 0, signal: null });
    await until("the resident process listens", () => controlSockets().length === 1);
    expect(residentPids()).toHaveLength(1);
  });

  it("later launches are its sessions: mTLS with the launch's certificate, logs at the launch's level on its stderr, exit on Shutdown", async () => {
    const traced = start({ ...hostEnv, TF_LOG: "trace" });
    const quietHostCert = generateServerCertificate();
    const quiet = start({ ...hostEnv, PLUGIN_CLIENT_CERT: quietHostCert.certPem });
    const [a, b] = [await handshake(traced), await handshake(quiet)];
    for (const hs of [a, b]) expect(hs.address.startsWith(`${runDir}/s`)).toBe(true);
    expect(a.address).not.toBe(b.address);
    // The process's certificate, as one provider process has one; the hosts differ.
    expect(a.cert).toBe(b.cert);
    expect(sessionSockets()).toHaveLength(2);

    // Another host's certificate is refused: the session accepts only its launch's host.
    const stranger = generateServerCertificate();
    const wrong = connect(
      a.address,
      "tfplugin6.Provider",
      tlsCredentials(derToPem(Buffer.from(a.cert, "base64")), stranger),
    );
    await expect(wrong.call("GetProviderSchema")).rejects.toThrow();
    wrong.close();
    // Nor does a session accept the other session's host.
    const crossed = connect(
      a.address,
      "tfplugin6.Provider",
      tlsCredentials(derToPem(Buffer.from(a.cert, "base64")), quietHostCert),
    );
    await expect(crossed.call("GetProviderSchema")).rejects.toThrow();
    crossed.close();

    await schemaAndShutdown(a);
    await schemaAndShutdown(b, quietHostCert);
    expect(await traced.exited).toEqual({ code: 0, signal: null });
    expect(await quiet.exited).toEqual({ code: 0, signal: null });
    expect(traced.stdout()).toBe(a.line);
    const records = traced
      .stderr()
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(records).toContainEqual(
      expect.objectContaining({ "@level": "trace", "@message": "received RPC" }),
    );
    expect(quiet.stderr()).not.toContain("received RPC");
    await until("the session sockets are removed", () => sessionSockets().length === 0);
    expect(residentPids()).toHaveLength(1);
  });

  it("a launch that is killed ends its session", async () => {
    const s = start(hostEnv);
    const hs = await handshake(s);
    expect(sessionSockets()).toHaveLength(1);
    s.child.kill("SIGKILL");
    await s.exited;
    await until("the session is closed", () => sessionSockets().length === 0);
    expect(existsSync(hs.address)).toBe(false);
  });

  it("refuses a request it cannot use, naming the field", async () => {
    const [socket] = controlSockets();
    const answer = (request: object) =>
      new Promise<string>((resolve, reject) => {
        const c = connectSocket(join(runDir, socket!));
        let text = "";
        c.on("data", (d) => {
          text += d;
        });
        c.on("close", () => resolve(text));
        c.on("error", reject);
        c.write(`${JSON.stringify(request)}\n`);
      });
    expect(JSON.parse(await answer({ t: "session", env: {}, cwd: "relative", pid: 1, ppid: 1 }))).toEqual({
      t: "error",
      message: "bad session request: cwd must be an absolute path",
    });
    const noCookie = JSON.parse(await answer({ t: "session", env: {}, cwd: "/", pid: 1, ppid: 1 }));
    expect(noCookie.t).toBe("error");
    expect(noCookie.message).toMatch(/Terraform provider plugin/);
    // A host certificate it cannot read (a launch checks it first; the process must not rely on
    // that): an answer to that request alone, and the process serves on.
    const [pid] = residentPids();
    const badCert = JSON.parse(
      await answer({
        t: "session",
        env: {
          ...hostEnv,
          PLUGIN_CLIENT_CERT: "-----BEGIN CERTIFICATE-----\nbad\n-----END CERTIFICATE-----\n",
        },
        cwd: "/",
        pid: 1,
        ppid: 1,
      }),
    );
    expect(badCert).toEqual({
      t: "error",
      message: expect.stringMatching(/^PLUGIN_CLIENT_CERT must be the host's certificate/),
    });
    expect(sessionSockets()).toEqual([]);
    const next = start(hostEnv);
    const hs = await handshake(next);
    expect(hs.address.startsWith(`${runDir}/s`)).toBe(true);
    await schemaAndShutdown(hs);
    expect(await next.exited).toEqual({ code: 0, signal: null });
    expect(residentPids()).toEqual([pid]);
  });

  it("`gpurental provider resident status` lists it with its sessions; `stop` frees its socket at once, and it exits when its last session ends", async () => {
    const [pid] = residentPids();
    const s = start(hostEnv);
    const hs = await handshake(s);
    const entries = await residentStatus(runDir);
    expect(entries).toEqual([
      {
        socket: join(runDir, controlSockets()[0]!),
        status: {
          t: "status",
          pid,
          started_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
          sessions: 1,
          idle_exit_at: null,
          executable,
          node: process.version,
          // A resident process serves every command, no one terraform process.
          serves: null,
        },
      },
    ]);
    expect(formatStatus(runDir, entries)).toContain(`pid ${pid}: serving 1 session; up since `);

    const stopped = await stopResident(runDir);
    expect(stopped).toEqual([{ socket: entries[0]!.socket, pid, sessions: 1 }]);
    expect(formatStop(runDir, stopped)).toBe(
      `pid ${pid}: stops once the 1 session it serves end (it takes no new one, and no longer shows in status)\n`,
    );
    // The name is free for the next command's resident process; this one finishes its session.
    expect(controlSockets()).toEqual([]);
    expect(await residentStatus(runDir)).toEqual([]);
    expect(residentPids()).toEqual([pid]);
    await schemaAndShutdown(hs);
    expect(await s.exited).toEqual({ code: 0, signal: null });
    await until("the stopped process exits", () => residentPids().length === 0);

    // The next launch serves Terraform itself and starts a new resident process.
    const next = start(hostEnv);
    const nextHs = await handshake(next);
    expect(nextHs.address.startsWith(`${runDir}/s`)).toBe(false);
    await schemaAndShutdown(nextHs);
    await until("a new resident process listens", () => controlSockets().length === 1);
    expect(residentPids()).not.toContain(pid);
    const [idle] = await residentStatus(runDir);
    expect(idle?.status?.sessions).toBe(0);
    expect(Date.parse(idle?.status?.idle_exit_at ?? "")).toBeGreaterThan(Date.now());
    expect(formatStop(runDir, [])).toBe(`No resident provider process in ${runDir}.\n`);
  });

  it("exits after its idle time without a session, and removes its socket and its empty log", async () => {
    const [pid] = residentPids();
    await until("the resident process exits", () => residentPids().length === 0, 60_000);
    expect(controlSockets()).toEqual([]);
    // Its log file, empty, goes with it; so did the one of the process stopped above.
    expect(readdirSync(runDir).filter((f) => f.endsWith(".log"))).toEqual([]);
    // Gone, or a zombie waiting for a reaper (its launch, the parent, exited long ago). Its command
    // line empties while it is still tearing down (state R), so wait for the end of that.
    const state = () => {
      try {
        return existsSync(`/proc/${pid}/stat`)
          ? readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.[0]
          : "gone";
      } catch {
        return "gone";
      }
    };
    await until(
      "the resident process is gone or a zombie",
      () => ["gone", "Z", "X"].includes(state() ?? ""),
      10_000,
    );
  });
});

describe("the resident process ended by a signal", () => {
  const dir = join(work, "t");
  afterAll(() => {
    for (const pid of residentPidsIn(dir)) process.kill(pid, "SIGKILL");
  });

  it("removes its control socket, its sessions' sockets and its empty log on SIGTERM", async () => {
    const env = { ...hostEnv, GPURENTAL_PROVIDER_RESIDENT_DIR: dir };
    const first = start(env);
    await schemaAndShutdown(await handshake(first));
    await first.exited;
    // Its process first, then its control socket: a launch before the socket is bound serves
    // Terraform itself, and no session of the resident process would be open for the signal.
    await until("the resident process runs", () => residentPidsIn(dir).length === 1);
    await until("its control socket is bound", () =>
      readdirSync(dir).some((f) => /^[0-9a-f]{16}\.sock$/.test(f)),
    );
    // A session open when the signal comes.
    const session = start(env);
    const hs = await handshake(session);
    expect(hs.address.startsWith(`${dir}/s`)).toBe(true);
    const [pid] = residentPidsIn(dir);
    process.kill(pid!, "SIGTERM");
    await until("the resident process exits", () => residentPidsIn(dir).length === 0, 20_000);
    await session.exited;
    expect(readdirSync(dir)).toEqual([]);
  });
});

// Apart from the suite above, whose resident process must stay up between its tests (its idle
// time is short, for the test of the idle exit): directories of their own, short ones, as CI's
// temp directories are deep.
describe("the resident mode's default", () => {
  const { GPURENTAL_PROVIDER_RESIDENT: _, ...byDefault } = hostEnv;
  const person = join(work, "p");
  const automated = join(work, "a");
  afterAll(() => {
    for (const pid of residentPidsIn(person)) process.kill(pid, "SIGKILL");
  });

  it("is on for a person's launches: the first starts the resident process, the next is its session", async () => {
    const first = start({ ...byDefault, GPURENTAL_PROVIDER_RESIDENT_DIR: person });
    await schemaAndShutdown(await handshake(first));
    expect(await first.exited).toEqual({ code: 0, signal: null });
    // Its process first, then its control socket: a launch between the two finds no socket and,
    // rightly, serves Terraform itself, so wait for the socket (bound under its final name only
    // once it listens).
    await until("a resident process listens", () => residentPidsIn(person).length === 1);
    await until("its control socket is bound", () =>
      readdirSync(person).some((f) => /^[0-9a-f]{16}\.sock$/.test(f)),
    );
    const next = start({ ...byDefault, GPURENTAL_PROVIDER_RESIDENT_DIR: person });
    const hs = await handshake(next);
    expect(hs.address.startsWith(`${person}/s`)).toBe(true);
    await schemaAndShutdown(hs);
    expect(await next.exited).toEqual({ code: 0, signal: null });
  });

  it("is off in automation: no directory, no process; CI=false is a person's launch again", async () => {
    // CI (most systems), BUILD_ID (Jenkins, which sets no CI), Terraform's own TF_IN_AUTOMATION.
    for (const automation of [{ CI: "true" }, { BUILD_ID: "17" }, { TF_IN_AUTOMATION: "1" }]) {
      const s = start({
        ...byDefault,
        ...automation,
        GPURENTAL_PROVIDER_RESIDENT_DIR: automated,
        TF_LOG: "debug",
      });
      await schemaAndShutdown(await handshake(s));
      expect(await s.exited).toEqual({ code: 0, signal: null });
      expect(s.stderr()).toContain("off by default in automation (CI or TF_IN_AUTOMATION)");
      expect(existsSync(automated)).toBe(false);
    }
    // None left from the test before (it may have idled out meanwhile, or not): with CI=false the
    // launch starts one, as a person's first launch does, whatever the time the loop above took.
    for (const pid of residentPidsIn(person)) process.kill(pid, "SIGKILL");
    await until("no resident process is left", () => residentPidsIn(person).length === 0);
    const notCi = start({ ...byDefault, CI: "false", GPURENTAL_PROVIDER_RESIDENT_DIR: person });
    await schemaAndShutdown(await handshake(notCi));
    expect(await notCi.exited).toEqual({ code: 0, signal: null });
    await until("a resident process listens", () => residentPidsIn(person).length === 1);
  });
});
