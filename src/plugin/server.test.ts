import { existsSync } from "node:fs";
import { status } from "@grpc/grpc-js";
import { Logger } from "../log";
import { until } from "../testing/until";
import { derToPem, generateServerCertificate } from "./cert";
import { MAX_MESSAGE_BYTES, SHUTDOWN_LINGER_MS } from "./grpc-server";
import { MAGIC_COOKIE_KEY, MAGIC_COOKIE_VALUE } from "./handshake";
import { type ServeOptions, type ServingProvider, serveProvider } from "./server";
import { connect, parseHandshake, tlsCredentials } from "./testing/grpc-client";
import { createStubProviderService } from "./testing/stub-service";
import type { ProviderService } from "./tfplugin6";

const quiet = new Logger("test", "off");
const hostCert = generateServerCertificate(); // stands in for the certificate Terraform passes
const hostEnv = {
  [MAGIC_COOKIE_KEY]: MAGIC_COOKIE_VALUE,
  PLUGIN_PROTOCOL_VERSIONS: "5,6",
  PLUGIN_CLIENT_CERT: hostCert.certPem,
};
const plainEnv = { [MAGIC_COOKIE_KEY]: MAGIC_COOKIE_VALUE, PLUGIN_PROTOCOL_VERSIONS: "6" };

const running: ServingProvider[] = [];
/** The certificate of the server under test, for credentials made after it started. */
let servedCert = "";
afterEach(() => {
  for (const s of running.splice(0)) s.close();
});

async function serve(service: ProviderService | (() => Promise<ProviderService>), opts: ServeOptions = {}) {
  const out: string[] = [];
  const exits: number[] = [];
  const serving = await serveProvider(service, {
    env: hostEnv,
    stdout: (t) => out.push(t),
    exit: (code) => exits.push(code),
    processHooks: false,
    logger: quiet,
    ...opts,
  });
  running.push(serving);
  return { serving, out, exits, hs: parseHandshake(out.join("")) };
}

describe("serveProvider with AutoMTLS", () => {
  it("prints exactly one handshake line carrying its certificate, and serves the host holding its certificate", async () => {
    const { serving, out, hs } = await serve(createStubProviderService(), { network: "tcp" });
    expect(out).toHaveLength(1);
    expect(out[0]).toMatch(/^1\|6\|tcp\|127\.0\.0\.1:\d+\|grpc\|[A-Za-z0-9+/]+\n$/);
    expect(hs.address).toBe(serving.address);

    const client = connect(
      hs.address,
      "tfplugin6.Provider",
      tlsCredentials(serving.serverCertPem!, hostCert),
    );
    try {
      const res = await client.call("GetProviderSchema");
      const provider = res.provider as { block: { attributes: { name: string; sensitive: boolean }[] } };
      expect(provider.block.attributes.map((a) => a.name)).toEqual(["base_url", "token", "org_id"]);
      expect(provider.block.attributes[1]!.sensitive).toBe(true);
      expect(res.server_capabilities).toMatchObject({ get_provider_schema_optional: true });
    } finally {
      client.close();
    }
  });

  // What a resident provider process relies on when the launch of a session is killed: the
  // session's server is closed while Terraform, still connected, waits on a call. That call must
  // end there, as it would with the provider process gone, not get the answer its handler, stopped,
  // returns later.
  it("close() cancels a call in flight: the answer its handler returns afterwards reaches no one", async () => {
    let started!: () => void;
    const inFlight = new Promise<void>((r) => {
      started = r;
    });
    let release!: () => void;
    const service = createStubProviderService();
    service.ValidateResourceConfig = async () => {
      started();
      await new Promise<void>((r) => {
        release = r;
      });
      return { diagnostics: [] };
    };
    const { hs, serving } = await serve(service, { network: "tcp" });
    const client = connect(
      hs.address,
      "tfplugin6.Provider",
      tlsCredentials(serving.serverCertPem!, hostCert),
    );
    try {
      const call = client.call("ValidateResourceConfig", { type_name: "x" });
      await inFlight;
      serving.close();
      release();
      await expect(call).rejects.toMatchObject({ code: status.UNAVAILABLE });
    } finally {
      client.close();
    }
  });

  // A refused host gets UNAVAILABLE at once, before any handler runs; a server that hung instead
  // would end the call at its deadline with DEADLINE_EXCEEDED. The same server serves the host
  // holding the right certificate, so the refusal is about the credential and nothing else.
  it.each([
    ["without a certificate", () => tlsCredentials(servedCert, undefined)],
    ["with some other certificate", () => tlsCredentials(servedCert, generateServerCertificate())],
    ["in plaintext", () => undefined],
  ])("refuses a client %s and serves the host", async (_name, credentials) => {
    let calls = 0;
    const service = createStubProviderService();
    const schema = service.GetProviderSchema;
    service.GetProviderSchema = (req) => {
      calls++;
      return schema(req);
    };
    const { serving, hs } = await serve(service);
    servedCert = serving.serverCertPem!;
    const stranger = connect(hs.address, "tfplugin6.Provider", credentials());
    try {
      await expect(
        stranger.call("GetProviderSchema", {}, { deadline: Date.now() + 10_000 }),
      ).rejects.toMatchObject({ code: status.UNAVAILABLE });
      expect(calls).toBe(0);
    } finally {
      stranger.close();
    }
    const host = connect(hs.address, "tfplugin6.Provider", tlsCredentials(servedCert, hostCert));
    try {
      await expect(
        host.call("GetProviderSchema", {}, { deadline: Date.now() + 10_000 }),
      ).resolves.toHaveProperty("provider");
      expect(calls).toBe(1);
    } finally {
      host.close();
    }
  });
});

describe("serveProvider RPCs (plaintext)", () => {
  it("serves plaintext with an empty certificate field when no client certificate is given", async () => {
    const { hs, serving } = await serve(createStubProviderService(), { env: plainEnv });
    expect(hs.cert).toBe("");
    expect(serving.serverCertPem).toBeUndefined();
  });

  it("answers UNIMPLEMENTED for RPCs the service does not implement", async () => {
    const { hs } = await serve(createStubProviderService(), { env: plainEnv });
    const client = connect(hs.address, "tfplugin6.Provider");
    try {
      await expect(client.call("MoveResourceState")).rejects.toMatchObject({ code: status.UNIMPLEMENTED });
      await expect(client.call("GetFunctions")).rejects.toMatchObject({ code: status.UNIMPLEMENTED });
    } finally {
      client.close();
    }
  });

  it("turns a thrown error into INTERNAL rather than crashing", async () => {
    const service = createStubProviderService();
    service.ValidateResourceConfig = async () => {
      throw new Error("boom");
    };
    const { hs } = await serve(service, { env: plainEnv });
    const client = connect(hs.address, "tfplugin6.Provider");
    try {
      await expect(client.call("ValidateResourceConfig", { type_name: "x" })).rejects.toMatchObject({
        code: status.INTERNAL,
        details: "boom",
      });
    } finally {
      client.close();
    }
  });

  it("streams the events a service sends, in order, then ends the call", async () => {
    const service = createStubProviderService();
    const seen: unknown[] = [];
    service.ListResource = async (req, stream) => {
      seen.push(req);
      for (const name of ["a", "b", "c"]) await stream.send({ display_name: name });
    };
    const { hs } = await serve(service, { env: plainEnv });
    const client = connect(hs.address, "tfplugin6.Provider");
    try {
      const events = await client.stream("ListResource", { type_name: "gpurental_instance", limit: 5 });
      expect(events.map((e) => e.display_name)).toEqual(["a", "b", "c"]);
      expect(seen[0]).toMatchObject({
        type_name: "gpurental_instance",
        limit: 5,
        include_resource_object: false,
      });
    } finally {
      client.close();
    }
  });

  it("aborts the stream's signal when the client cancels, and drops what is sent after", async () => {
    const service = createStubProviderService();
    let aborted = false;
    let sentAfterAbort = 0;
    service.ListResource = async (_req, stream) => {
      stream.signal.addEventListener("abort", () => {
        aborted = true;
      });
      // Bounded: a transport that never aborts fails the test by its count, not by hanging.
      for (let i = 0; i < 100_000 && !aborted; i++) await stream.send({ display_name: `n${i}` });
      await stream.send({ display_name: "late" });
      sentAfterAbort += 1;
    };
    const { hs } = await serve(service, { env: plainEnv });
    const client = connect(hs.address, "tfplugin6.Provider");
    try {
      const events = await client.stream("ListResource", { type_name: "x", limit: 2 }, { take: 2 });
      expect(events.map((e) => e.display_name)).toEqual(["n0", "n1"]);
      await until("the provider sees the cancellation", () => sentAfterAbort === 1);
      expect(aborted).toBe(true);
    } finally {
      client.close();
    }
  });

  it("ends a stream whose service throws with INTERNAL, and one it lacks with UNIMPLEMENTED", async () => {
    const service = createStubProviderService();
    service.ListResource = async (_req, stream) => {
      await stream.send({ display_name: "first" });
      throw new Error("listing broke");
    };
    const { hs } = await serve(service, { env: plainEnv });
    const client = connect(hs.address, "tfplugin6.Provider");
    try {
      await expect(client.stream("ListResource", { type_name: "x" })).rejects.toMatchObject({
        code: status.INTERNAL,
        details: "listing broke",
      });
      await expect(client.stream("InvokeAction", { action_type: "x" })).rejects.toMatchObject({
        code: status.UNIMPLEMENTED,
      });
    } finally {
      client.close();
    }
  });

  it("passes requests through decoded as proto-loader would (snake_case, Buffer, Number)", async () => {
    const seen: unknown[] = [];
    const service = createStubProviderService();
    service.UpgradeResourceState = async (req) => {
      seen.push(req);
      return { upgraded_state: { msgpack: Buffer.from([0xc0]) }, diagnostics: [] };
    };
    const { hs } = await serve(service, { env: plainEnv });
    const client = connect(hs.address, "tfplugin6.Provider");
    try {
      const res = await client.call("UpgradeResourceState", {
        type_name: "gpurental_instance",
        version: 3,
        raw_state: { json: Buffer.from('{"id":"x"}') },
      });
      expect(seen[0]).toEqual({
        type_name: "gpurental_instance",
        version: 3,
        raw_state: { json: Buffer.from('{"id":"x"}'), flatmap: {} },
      });
      expect(res.upgraded_state).toEqual({ msgpack: Buffer.from([0xc0]), json: Buffer.alloc(0) });
    } finally {
      client.close();
    }
  });

  it("loads a lazy service once, after the handshake", async () => {
    let loads = 0;
    const { hs } = await serve(
      async () => {
        loads++;
        return createStubProviderService();
      },
      { env: plainEnv },
    );
    const client = connect(hs.address, "tfplugin6.Provider");
    try {
      await Promise.all([client.call("GetProviderSchema"), client.call("ValidateProviderConfig")]);
      expect(loads).toBe(1);
    } finally {
      client.close();
    }
  });

  it("forwards StopProvider to the service while other calls are in flight", async () => {
    let release: () => void = () => {};
    const controller = new AbortController();
    const service = createStubProviderService();
    service.ApplyResourceChange = () =>
      new Promise((resolve) => {
        controller.signal.addEventListener("abort", () => resolve({ diagnostics: [] }));
        release = () => resolve({ diagnostics: [] });
      });
    service.StopProvider = async () => {
      controller.abort();
      return { Error: "" };
    };
    const { hs } = await serve(service, { env: plainEnv });
    const client = connect(hs.address, "tfplugin6.Provider");
    try {
      const apply = client.call("ApplyResourceChange", { type_name: "x" });
      await new Promise((r) => setTimeout(r, 50));
      await expect(client.call("StopProvider")).resolves.toEqual({ Error: "" });
      await expect(apply).resolves.toBeDefined();
      expect(controller.signal.aborted).toBe(true);
    } finally {
      release();
      client.close();
    }
  });

  it("replies to GRPCController.Shutdown and exits once the host has closed its connection", async () => {
    const { hs, exits } = await serve(createStubProviderService(), { env: plainEnv });
    const client = connect(hs.address, "plugin.GRPCController");
    try {
      await expect(client.call("Shutdown")).resolves.toEqual({});
      // The exit waits for the host to close (go-plugin closes right after the reply): an exit on
      // a fixed short timer could cut the reply off on a busy machine. The wait's own limit was set
      // before the reply left, SHUTDOWN_LINGER_MS ahead, so a timer set now for a fifth of it falls
      // due first unless the reply took most of that limit to arrive.
      await new Promise((r) => setTimeout(r, SHUTDOWN_LINGER_MS / 5));
      expect(exits).toEqual([]);
    } finally {
      client.close();
    }
    await until("the provider exits", () => exits.length > 0);
    expect(exits).toEqual([0]);
  });

  it("exits after Shutdown even when the host keeps its connection open", async () => {
    const { hs, exits } = await serve(createStubProviderService(), { env: plainEnv });
    const client = connect(hs.address, "plugin.GRPCController");
    try {
      await expect(client.call("Shutdown")).resolves.toEqual({});
      // No measurement of time: the limit's timer was set before the reply left, and Node runs
      // timers in the order they fall due, so it comes before a timer set now for twice as long,
      // however busy the machine. Terraform kills a provider that has not exited 2 s after Shutdown.
      await new Promise((r) => setTimeout(r, SHUTDOWN_LINGER_MS * 2));
      expect(exits).toEqual([0]);
    } finally {
      client.close();
    }
  });

  it("closes the ephemeral resources Terraform left open before it exits after Shutdown", async () => {
    const events: string[] = [];
    const service: ProviderService = {
      ...createStubProviderService(),
      closeOpenEphemeralResources: async () => {
        await new Promise((r) => setTimeout(r, 50));
        events.push("closed");
      },
    };
    // Created by the first RPC, as the provider is in production.
    const { hs, exits } = await serve(async () => service, { env: plainEnv });
    const provider = connect(hs.address, "tfplugin6.Provider");
    const controller = connect(hs.address, "plugin.GRPCController");
    try {
      await provider.call("GetMetadata");
      await controller.call("Shutdown");
    } finally {
      provider.close();
      controller.close();
    }
    await until("the provider exits", () => exits.length > 0);
    expect(events).toEqual(["closed"]);
    expect(exits).toEqual([0]);
  });

  it("reports SERVING on the health service", async () => {
    const { hs } = await serve(createStubProviderService(), { env: plainEnv });
    const client = connect(hs.address, "grpc.health.v1.Health");
    try {
      await expect(client.call("Check", { service: "plugin" })).resolves.toEqual({ status: 1 });
    } finally {
      client.close();
    }
  });

  it("accepts messages far above grpc-js's 4 MiB default", async () => {
    expect(MAX_MESSAGE_BYTES).toBe(256 * 1024 * 1024);
    const { hs } = await serve(createStubProviderService(), { env: plainEnv });
    const client = connect(hs.address, "tfplugin6.Provider");
    try {
      const big = Buffer.alloc(8 * 1024 * 1024, 1);
      await expect(
        client.call("ValidateResourceConfig", { type_name: "x", config: { msgpack: big } }),
      ).resolves.toEqual({ diagnostics: [] });
    } finally {
      client.close();
    }
  });

  it("serves on a unix socket by default, and removes it when closed", async () => {
    const { hs, serving } = await serve(createStubProviderService(), { env: plainEnv });
    expect(hs.network).toBe("unix");
    expect(existsSync(hs.address)).toBe(true);
    const client = connect(hs.address, "tfplugin6.Provider");
    try {
      await expect(client.call("ValidateProviderConfig")).resolves.toEqual({ diagnostics: [] });
    } finally {
      client.close();
    }
    serving.close();
    expect(existsSync(hs.address)).toBe(false);
  });
});

describe("serveProvider listener", () => {
  it("serves on loopback TCP when a unix socket path would be too long to bind whole", async () => {
    const deep = `/tmp/${"d".repeat(100)}`; // never created: only its length matters
    const { hs } = await serve(createStubProviderService(), {
      env: { ...plainEnv, PLUGIN_UNIX_SOCKET_DIR: deep },
    });
    expect(hs.network).toBe("tcp");
    const client = connect(hs.address, "tfplugin6.Provider");
    try {
      await expect(client.call("ValidateProviderConfig")).resolves.toEqual({ diagnostics: [] });
    } finally {
      client.close();
    }
  });
});

describe("serveProvider start-up order", () => {
  // The handshake is printed once the listener is bound; grpc-js loads after it. A host that
  // connects at once must wait, then be served, over TLS and in plaintext alike.
  it.each([
    ["TLS", hostEnv],
    ["plaintext", plainEnv],
  ])("serves a host that connects before the gRPC half has loaded (%s)", async (_mode, env) => {
    let loaded = false;
    let answer: Promise<Record<string, unknown>> | undefined;
    let client: ReturnType<typeof connect> | undefined;
    const serving = await serveProvider(createStubProviderService(), {
      env,
      processHooks: false,
      logger: quiet,
      exit: () => {},
      stdout: (line) => {
        const hs = parseHandshake(line);
        const creds = hs.cert
          ? tlsCredentials(derToPem(Buffer.from(hs.cert, "base64")), hostCert)
          : undefined;
        client = connect(hs.address, "tfplugin6.Provider", creds);
        answer = client.call("ValidateProviderConfig");
      },
      loadGrpcServer: async () => {
        await new Promise((resolve) => setTimeout(resolve, 300));
        loaded = true;
        return import("./grpc-server");
      },
    });
    running.push(serving);
    try {
      expect(loaded).toBe(true);
      await expect(answer).resolves.toEqual({ diagnostics: [] });
    } finally {
      client?.close();
    }
  });

  it("stops listening when the gRPC half cannot be loaded", async () => {
    const out: string[] = [];
    await expect(
      serveProvider(createStubProviderService(), {
        env: plainEnv,
        processHooks: false,
        logger: quiet,
        stdout: (t) => out.push(t),
        loadGrpcServer: () => Promise.reject(new Error("bundle missing")),
      }),
    ).rejects.toThrow("bundle missing");
    const hs = parseHandshake(out.join(""));
    expect(existsSync(hs.address)).toBe(false);
  });
});

describe("serveProvider checks before serving", () => {
  it("refuses to start without the magic cookie", async () => {
    await expect(
      serveProvider(createStubProviderService(), { env: {}, processHooks: false }),
    ).rejects.toThrow(/Terraform provider plugin/);
  });

  it("refuses a host without protocol 6", async () => {
    await expect(
      serveProvider(createStubProviderService(), {
        env: { [MAGIC_COOKIE_KEY]: MAGIC_COOKIE_VALUE, PLUGIN_PROTOCOL_VERSIONS: "5" },
        processHooks: false,
      }),
    ).rejects.toThrow(/protocol 6/);
  });

  it("needs neither in debug mode, serves plaintext and prints TF_REATTACH_PROVIDERS", async () => {
    const { out, serving } = await serve(createStubProviderService(), { env: {}, debug: true });
    const text = out.join("");
    const match = /TF_REATTACH_PROVIDERS='(.*)'/.exec(text);
    expect(match).not.toBeNull();
    const reattach = JSON.parse(match![1]!);
    expect(reattach["registry.terraform.io/gpurental/gpurental"]).toMatchObject({
      Protocol: "grpc",
      ProtocolVersion: 6,
      Test: true,
      Pid: process.pid,
      Addr: { Network: serving.network, String: serving.address },
    });
    expect(serving.serverCertPem).toBeUndefined();
  });
});
