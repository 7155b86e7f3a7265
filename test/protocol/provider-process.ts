// One provider process, started and dialled as go-plugin does for Terraform: the magic cookie,
// PLUGIN_PROTOCOL_VERSIONS and PLUGIN_CLIENT_CERT in its environment, the handshake line read from
// its stdout, mTLS to the address it prints, a tfplugin6.Provider client built from the protocol
// file of the version played, and plugin.GRPCController/Shutdown on close. Which calls are made,
// and in what order, is driver.ts's business.
import type { ChildProcess } from "node:child_process";
import { join } from "node:path";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { derToPem, generateServerCertificate } from "../../src/plugin/cert";
import { MAGIC_COOKIE_KEY, MAGIC_COOKIE_VALUE } from "../../src/plugin/handshake";
import { connect, parseHandshake, tlsCredentials } from "../../src/plugin/testing/grpc-client";
import { type ProcessExit, startProcess } from "../../src/testing/child-process";
import { type TerraformVersion, VERSIONS } from "./versions";
import type { Decoded, Msg, Rec } from "./wire";

const PROTO_DIR = join(__dirname, "..", "..", "src", "plugin", "proto", "terraform");

/** What the driver needs to start the provider. */
export interface DriverOptions {
  version: TerraformVersion;
  /** The provider executable: a file Node runs (`run.js` of buildExecutable) or an executable. */
  executable: string;
  /** The provider process's environment (TMPDIR, HOME, GPURENTAL_JOURNAL_DIR, ...). */
  env: NodeJS.ProcessEnv;
  /** The provider block's values. */
  providerConfig: Rec;
  /** "1.14.0" plays that release's GenerateResourceConfig, which sends no state. */
  patch?: string;
  /** Sees every answer as the version's client decoded it (unary calls and stream events). */
  onResponse?: (rpc: string, response: Decoded) => void;
}

/** How long one provider process may take to print its handshake. */
const HANDSHAKE_MS = 60_000;
/** How long one unary call may take. */
const CALL_MS = 60_000;

const LOADER_OPTIONS: protoLoader.Options = {
  keepCase: true,
  longs: Number,
  enums: Number,
  bytes: Buffer,
  defaults: true,
  oneofs: true,
};

const clients = new Map<string, grpc.ServiceClientConstructor>();

/** The tfplugin6.Provider client constructor of a vendored protocol file, built once. */
function providerClient(proto: string): grpc.ServiceClientConstructor {
  let ctor = clients.get(proto);
  if (!ctor) {
    const def = protoLoader.loadSync(join(PROTO_DIR, proto), LOADER_OPTIONS);
    const pkg = grpc.loadPackageDefinition(def) as unknown as {
      tfplugin6: { Provider: grpc.ServiceClientConstructor };
    };
    ctor = pkg.tfplugin6.Provider;
    clients.set(proto, ctor);
  }
  return ctor;
}

const hostCert = generateServerCertificate();

/** One started provider process, dialled as go-plugin dials it. */
export class ProviderProcess {
  private constructor(
    private readonly child: ChildProcess,
    private readonly client: grpc.Client,
    private readonly address: string,
    private readonly creds: grpc.ChannelCredentials,
    private readonly stderr: () => string,
    private readonly exited: Promise<ProcessExit>,
  ) {}

  static async start(opts: DriverOptions): Promise<ProviderProcess> {
    const facts = VERSIONS[opts.version];
    const env: NodeJS.ProcessEnv = {
      ...opts.env,
      [MAGIC_COOKIE_KEY]: MAGIC_COOKIE_VALUE,
      // go-plugin lists the versions from a map: the order is random (Terraform 1.11.4 sent both).
      PLUGIN_PROTOCOL_VERSIONS: "5,6",
      PLUGIN_MIN_PORT: "10000",
      PLUGIN_MAX_PORT: "25000",
      PLUGIN_CLIENT_CERT: hostCert.certPem,
    };
    const node = opts.executable.endsWith(".js");
    const { child, stdout, stderr, exited } = startProcess(
      node ? process.execPath : opts.executable,
      node ? [opts.executable] : [],
      { env },
    );
    const deadline = Date.now() + HANDSHAKE_MS;
    while (!stdout().includes("\n")) {
      if (child.exitCode !== null)
        throw new Error(`provider exited before its handshake; stderr: ${stderr()}`);
      if (Date.now() > deadline) {
        child.kill("SIGKILL");
        throw new Error(`no handshake within ${HANDSHAKE_MS} ms; stderr: ${stderr()}`);
      }
      await new Promise((r) => setTimeout(r, 10));
    }
    const out = stdout();
    const hs = parseHandshake(out);
    if (hs.protocol !== "6" || hs.transport !== "grpc")
      throw new Error(`unexpected handshake for Terraform ${opts.version}: ${out}`);
    const creds = tlsCredentials(derToPem(Buffer.from(hs.cert, "base64")), hostCert);
    const Ctor = providerClient(facts.proto);
    const target = hs.address.startsWith("/") ? `unix://${hs.address}` : hs.address;
    const client = new Ctor(target, creds, {
      "grpc.ssl_target_name_override": "localhost",
      "grpc.default_authority": "localhost",
      "grpc.max_receive_message_length": 256 * 1024 * 1024,
    });
    return new ProviderProcess(child, client, hs.address, creds, stderr, exited);
  }

  /** A unary call; a gRPC error is thrown with the provider's stderr. */
  call(rpc: string, request: Msg): Promise<Decoded> {
    return new Promise((resolve, reject) => {
      const fn = (this.client as unknown as Record<string, unknown>)[rpc];
      if (typeof fn !== "function") return reject(new Error(`this protocol has no ${rpc}`));
      (fn as (r: Msg, o: grpc.CallOptions, cb: (e: Error | null, r: Decoded) => void) => void).call(
        this.client,
        request,
        { deadline: Date.now() + CALL_MS },
        (e, r) => (e ? reject(Object.assign(e, { stderr: this.stderr() })) : resolve(r)),
      );
    });
  }

  /** A server stream, read until it ends, or cancelled once `take` events arrived. */
  stream(rpc: string, request: Msg, take?: number): Promise<Decoded[]> {
    return new Promise((resolve, reject) => {
      const fn = (this.client as unknown as Record<string, unknown>)[rpc];
      if (typeof fn !== "function") return reject(new Error(`this protocol has no ${rpc}`));
      const call = (fn as (r: Msg, o: grpc.CallOptions) => grpc.ClientReadableStream<Decoded>).call(
        this.client,
        request,
        { deadline: Date.now() + CALL_MS * 5 },
      );
      const events: Decoded[] = [];
      let done = false;
      call.on("data", (e: Decoded) => {
        if (done) return;
        events.push(e);
        if (take !== undefined && events.length >= take) {
          done = true;
          call.cancel();
          resolve(events);
        }
      });
      call.on("error", (e: Error & { code?: number }) => {
        if (done) return;
        done = true;
        reject(Object.assign(e, { stderr: this.stderr() }));
      });
      call.on("end", () => {
        if (done) return;
        done = true;
        resolve(events);
      });
    });
  }

  /** What go-plugin does when Terraform closes a provider: Shutdown, then the process exits. */
  async close(): Promise<void> {
    const controller = connect(this.address, "plugin.GRPCController", this.creds);
    try {
      await controller.call("Shutdown").catch(() => {});
    } finally {
      controller.close();
      this.client.close();
    }
    const gone = await Promise.race([
      this.exited.then(() => true),
      new Promise<boolean>((r) => setTimeout(() => r(false), 5_000).unref()),
    ]);
    if (!gone) this.child.kill("SIGKILL");
  }
}
