import { mkdtempSync, rmSync } from "node:fs";
import { connect as connectSocket, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { logger } from "../log";
import { derToPem, generateServerCertificate } from "../plugin/cert";
import { MAGIC_COOKIE_KEY, MAGIC_COOKIE_VALUE } from "../plugin/handshake";
import { connect, parseHandshake, tlsCredentials } from "../plugin/testing/grpc-client";
import { createStubProviderService } from "../plugin/testing/stub-service";
import { until } from "../testing/until";
import { readMessages, type SessionMessage } from "./resident";
import {
  AlreadyServing,
  type ResidentDaemon,
  type ResidentDaemonOptions,
  runResidentDaemon,
} from "./resident-daemon";

// The resident process in this process: a launch's control connection and Terraform's gRPC calls
// made by hand, and what each session's provider was given. (The executable as Terraform runs it
// is src/resident/resident.process.test.ts.)

// Short: a unix socket's path must stay under 104 bytes, and CI's temp directory is deep.
const dir = mkdtempSync(join(tmpdir(), "gpr-d-"));
const hostCert = generateServerCertificate();
type Session = Parameters<ResidentDaemonOptions["createService"]>[0];
const sessions: Session[] = [];
let daemon: ResidentDaemon;

beforeAll(async () => {
  daemon = await runResidentDaemon({
    socket: join(dir, "0123456789abcdef.sock"),
    createService: (session) => {
      sessions.push(session);
      return createStubProviderService();
    },
    loadGrpcServer: () => import("../plugin/grpc-server"),
    exit: () => {},
  });
});

afterAll(() => {
  daemon.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A launch: asks for a session; resolves with its handshake, and the messages that follow. */
async function launch(
  socket = join(dir, "0123456789abcdef.sock"),
  env: Record<string, string> = {},
): Promise<{ ctl: Socket; handshake: string; messages: SessionMessage[] }> {
  const ctl = connectSocket(socket);
  const messages: SessionMessage[] = [];
  const handshake = await new Promise<string>((resolve, reject) => {
    ctl.once("error", reject);
    readMessages(
      ctl,
      (m) => {
        const message = m as SessionMessage;
        if (message.t === "ready") resolve(message.handshake);
        else messages.push(message);
      },
      reject,
    );
    ctl.write(
      `${JSON.stringify({
        t: "session",
        env: {
          [MAGIC_COOKIE_KEY]: MAGIC_COOKIE_VALUE,
          PLUGIN_PROTOCOL_VERSIONS: "6",
          PLUGIN_CLIENT_CERT: hostCert.certPem,
          ...env,
        },
        cwd: dir,
        pid: process.pid,
        ppid: process.ppid,
      })}\n`,
    );
  });
  return { ctl, handshake, messages };
}

describe("a session of the resident process", () => {
  it("ended by Terraform's Shutdown, closes its journal to writes as a launch gone does: work it still runs reaches no state", async () => {
    const { ctl, handshake, messages } = await launch();
    const hs = parseHandshake(handshake);
    const creds = tlsCredentials(derToPem(Buffer.from(hs.cert, "base64")), hostCert);
    const provider = connect(hs.address, "tfplugin6.Provider", creds);
    await provider.call("GetMetadata");
    provider.close();
    expect(sessions).toHaveLength(1);
    expect(sessions[0]!.ended.aborted).toBe(false);

    const controller = connect(hs.address, "plugin.GRPCController", creds);
    await controller.call("Shutdown");
    controller.close();
    await until("the launch is told to exit", () => messages.some((m) => m.t === "exit"));
    expect(messages).toContainEqual({ t: "exit", code: 0 });
    expect(sessions[0]!.ended.aborted).toBe(true);
    ctl.destroy();
    await until("the session is closed", () => daemon.sessions() === 0);
  });

  it("ended by its launch going away, closes its journal to writes", async () => {
    const { ctl, handshake } = await launch();
    const hs = parseHandshake(handshake);
    const creds = tlsCredentials(derToPem(Buffer.from(hs.cert, "base64")), hostCert);
    const provider = connect(hs.address, "tfplugin6.Provider", creds);
    await provider.call("GetMetadata");
    provider.close();
    const session = sessions.at(-1)!;
    expect(session.ended.aborted).toBe(false);
    ctl.destroy();
    await until("the session is closed", () => daemon.sessions() === 0);
    expect(session.ended.aborted).toBe(true);
  });
});

describe("a resident process whose provider loads when first needed", () => {
  it("makes one provider for a session's calls that come while it loads, and prepares once a session ends", async () => {
    const made: Session[] = [];
    let prepared = 0;
    const socket = join(dir, "fedcba9876543210.sock");
    const lazy = await runResidentDaemon({
      socket,
      createService: async (session) => {
        await new Promise((resolve) => setTimeout(resolve, 50));
        made.push(session);
        return createStubProviderService();
      },
      prepare: () => {
        prepared += 1;
      },
      loadGrpcServer: () => import("../plugin/grpc-server"),
      exit: () => {},
    });
    try {
      const { ctl, handshake } = await launch(socket);
      const hs = parseHandshake(handshake);
      const creds = tlsCredentials(derToPem(Buffer.from(hs.cert, "base64")), hostCert);
      const provider = connect(hs.address, "tfplugin6.Provider", creds);
      await Promise.all([
        provider.call("GetMetadata"),
        provider.call("GetMetadata"),
        provider.call("GetMetadata"),
      ]);
      provider.close();
      expect(made).toHaveLength(1);
      expect(prepared).toBe(0);
      ctl.destroy();
      await until("the session has ended and the process prepared", () => prepared === 1);
      expect(made[0]!.ended.aborted).toBe(true);
    } finally {
      lazy.close();
    }
  });
});

describe("the log records of a session's calls", () => {
  // Each call logs through the module-level logger, as the resources do, after a pause that keeps
  // it running while the other session opens and calls.
  let released: (() => void) | undefined;
  const paused = () =>
    new Promise<void>((resolve) => {
      released = resolve;
    });
  const logging = (): ReturnType<typeof createStubProviderService> => ({
    ...createStubProviderService(),
    ValidateProviderConfig: async () => {
      logger.debug("validation begun");
      await paused();
      logger.debug("validation ended after the pause");
      return { diagnostics: [] };
    },
    GetProviderSchema: async () => {
      await new Promise((resolve) => setTimeout(resolve, 5));
      logger.debug("schema answered");
      return createStubProviderService().GetProviderSchema({});
    },
  });
  // The provider's records (module "gpurental"), not the session's own ("gpurental.plugin").
  const logged = (messages: SessionMessage[], module = "gpurental") =>
    messages.flatMap((m) => {
      if (m.t !== "log") return [];
      const record = JSON.parse(m.line) as { "@message": unknown; "@module": unknown };
      return record["@module"] === module ? [String(record["@message"])] : [];
    });

  const open = async (socket: string, env: Record<string, string>) => {
    const l = await launch(socket, env);
    const hs = parseHandshake(l.handshake);
    const creds = tlsCredentials(derToPem(Buffer.from(hs.cert, "base64")), hostCert);
    return { ...l, provider: connect(hs.address, "tfplugin6.Provider", creds) };
  };

  it("in a command's own process, reach only their own launch: alone, then with a second session open, then alone again", async () => {
    const socket = join(dir, "0a1b2c3d4e5f6a7b.sock");
    const routed = await runResidentDaemon({
      socket,
      owner: process.ppid,
      createService: () => logging(),
      loadGrpcServer: () => import("../plugin/grpc-server"),
      exit: () => {},
    });
    try {
      // Alone: its records reach it, as a provider process of its own writes them.
      const a = await open(socket, { TF_LOG: "debug" });
      await a.provider.call("GetProviderSchema");
      await until("the first session's record", () => logged(a.messages).includes("schema answered"));

      // A call of the first session is still running when a second session opens and calls.
      const pending = a.provider.call("ValidateProviderConfig");
      await until("the call has begun", () => logged(a.messages).includes("validation begun"));
      const b = await open(socket, { TF_LOG: "debug" });
      await b.provider.call("GetProviderSchema");
      released?.();
      await pending;
      await a.provider.call("GetProviderSchema");
      await until(
        "both sessions' records",
        () => logged(a.messages).length === 4 && logged(b.messages).length === 1,
      );
      expect(logged(a.messages)).toEqual([
        "schema answered",
        "validation begun",
        "validation ended after the pause",
        "schema answered",
      ]);
      expect(logged(b.messages)).toEqual(["schema answered"]);
      // The session's own records too: each launch is told of its own session only.
      for (const s of [a, b]) expect(logged(s.messages, "gpurental.plugin")).toEqual(["session started"]);

      // A session at another level gets its records at its level only.
      a.provider.close();
      a.ctl.destroy();
      await until("the first session is closed", () => routed.sessions() === 1);
      const quiet = await open(socket, { TF_LOG: "warn" });
      await quiet.provider.call("GetProviderSchema");
      await b.provider.call("GetProviderSchema");
      await until("the second session's second record", () => logged(b.messages).length === 2);
      expect(logged(quiet.messages)).toEqual([]);
      for (const s of [b, quiet]) {
        s.provider.close();
        s.ctl.destroy();
      }
      await until("every session is closed", () => routed.sessions() === 0);
    } finally {
      routed.close();
    }
  });

  it("in a process shared by commands, of a session that has ended do not reach the next one", async () => {
    const socket = join(dir, "1a2b3c4d5e6f7a8b.sock");
    const routed = await runResidentDaemon({
      socket,
      createService: () => logging(),
      loadGrpcServer: () => import("../plugin/grpc-server"),
      exit: () => {},
    });
    const quiet = jest.spyOn(process.stderr, "write").mockImplementation(() => true);
    try {
      const a = await open(socket, { TF_LOG: "debug" });
      const pending = a.provider.call("ValidateProviderConfig").catch(() => {});
      await until("the call has begun", () => logged(a.messages).includes("validation begun"));
      a.provider.close();
      a.ctl.destroy();
      await until("the first session is closed", () => routed.sessions() === 0);
      const b = await open(socket, { TF_LOG: "debug" });
      released?.();
      await pending;
      await b.provider.call("GetProviderSchema");
      await until("the second session's record", () => logged(b.messages).length === 1);
      expect(logged(b.messages)).toEqual(["schema answered"]);
      b.provider.close();
      b.ctl.destroy();
      await until("every session is closed", () => routed.sessions() === 0);
    } finally {
      quiet.mockRestore();
      routed.close();
    }
  });
});

describe("the control socket", () => {
  it("is bound at the longest path a launch uses (103 bytes), through a temporary name no longer", async () => {
    const name = `${"c".repeat(103 - dir.length - 1 - ".sock".length)}.sock`;
    const socket = join(dir, name);
    expect(Buffer.byteLength(socket)).toBe(103);
    const long = await runResidentDaemon({
      socket,
      createService: () => createStubProviderService(),
      loadGrpcServer: () => import("../plugin/grpc-server"),
      exit: () => {},
    });
    try {
      const answer = await new Promise<string>((resolve, reject) => {
        const c = connectSocket(socket);
        let text = "";
        c.on("data", (d) => {
          text += d;
        });
        c.on("close", () => resolve(text));
        c.on("error", reject);
        c.write(`${JSON.stringify({ t: "status" })}\n`);
      });
      expect(JSON.parse(answer)).toMatchObject({ t: "status", pid: process.pid, sessions: 0 });
    } finally {
      long.close();
    }
  });

  it("taken by one of several processes that start at once: the others give up, and none is left unreachable", async () => {
    const socket = join(dir, "fedcba9876543210.sock");
    const start = () =>
      runResidentDaemon({
        socket,
        createService: () => createStubProviderService(),
        loadGrpcServer: () => import("../plugin/grpc-server"),
        exit: () => {},
      });
    const results = await Promise.allSettled([start(), start(), start()]);
    const serving = results.filter((r) => r.status === "fulfilled");
    try {
      expect(serving).toHaveLength(1);
      for (const r of results)
        if (r.status === "rejected") expect((r.reason as Error).constructor).toBe(AlreadyServing);
    } finally {
      for (const r of serving) r.value.close();
    }
  });
});
