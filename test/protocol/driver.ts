// A protocol driver that plays Terraform's part against the real provider process: it starts the
// executable as go-plugin does (magic cookie, PLUGIN_PROTOCOL_VERSIONS, PLUGIN_CLIENT_CERT), dials
// the handshake's address over mTLS with a gRPC client built from the protocol file of the
// Terraform version it plays (src/plugin/proto/terraform/, so an older version drops the fields it
// does not know, as that Terraform does), and makes the calls in the order and shape Terraform's
// own code makes them. No newer CLI than 1.11.4 runs on these machines; this is how identity,
// `terraform query` and actions are proven, and the configuration a query generates goes back
// through the real 1.11 CLI (test/protocol/query.e2e.test.ts).
//
// What each version does, read from github.com/hashicorp/terraform at its tag (files and lines):
//
// Every version (v1.11.4, v1.12.0, v1.14.0, v1.16.0-rc2)
// - One provider process per walk: the first process of a command only loads the schema, and
//   later ones take it from the schema cache when the provider sets get_provider_schema_optional
//   (internal/plugin6/grpc_provider.go GetProviderSchema: v1.11.4 78, v1.12.0 80, v1.14.0 80,
//   v1.16.0-rc2 96, the cache test a few lines in). Closing a process calls
//   plugin.GRPCController/Shutdown (go-plugin grpc_client.go Close).
// - A managed object in state: UpgradeResourceState, then ReadResource, then PlanResourceChange
//   (grpc_provider.go UpgradeResourceState v1.11.4 282, ReadResource 374, PlanResourceChange 432);
//   apply plans again with the configuration wholly known, then ApplyResourceChange (526).
//   ConfigureProvider comes once per process before any of them (329); its client capabilities
//   carry deferral_allowed only in apply (internal/terraform/eval_context_builtin.go
//   ClientCapabilities: v1.12.0 617, v1.14.0 636; write_only_attributes_allowed always true).
//
// Terraform 1.12 (protocol 6.9, tfplugin6.9.proto)
// - GetProviderSchema calls GetResourceIdentitySchemas right after the schema answer, in the same
//   load (grpc_provider.go v1.12.0 131; UNIMPLEMENTED there means "no identities").
// - ReadResource sends current_identity, PlanResourceChange prior_identity, ApplyResourceChange
//   planned_identity, and each answer's identity is validated and stored (grpc_provider.go v1.12.0
//   ReadResource 465, PlanResourceChange 550, ApplyResourceChange 672; internal/terraform/
//   node_resource_abstract_instance.go validateIdentity).
// - An import block with `identity` calls ImportResourceState with identity and no id, requires
//   an identity back, then refreshes (ReadResource with that identity) and plans
//   (internal/terraform/node_resource_plan_instance.go v1.12.0 importState 581, identity branch
//   662, "didn't return an identity" 758, refresh 801).
// - UpgradeResourceIdentity only when the stored identity version differs from the schema's
//   (internal/terraform/upgrade_resource_state.go v1.12.0 upgradeResourceIdentity 155, equal
//   versions return at 173): never for this provider's version 0.
//
// Terraform 1.14 (protocol 6.10, tfplugin6.10.proto)
// - `terraform query`: per list block, ValidateListResourceConfig then ListResource, a stream read
//   until its end or the block's limit (default 100), then cancelled
//   (internal/terraform/node_resource_plan_instance_query.go v1.14.0 95 and 110;
//   grpc_provider.go v1.14.0 ValidateListResourceConfig 348 sends only type_name and the list
//   block's `config`, ListResource 1302 stops receiving at the limit). With
//   `-generate-config-out`, include_resource is forced true (query node, "implicitly set
//   include_resource"), and each result's configuration comes from GenerateResourceConfig when
//   the provider sets generate_resource_config (node_resource_plan_instance.go v1.14.0
//   generateHCLListResourceDef 916, generateResourceConfig 967, capability test 995). Terraform
//   1.14.0 sends that request without the state (grpc_provider.go v1.14.0 GenerateResourceConfig
//   922: `State: nil`); 1.14.1 sends it (commit c9d024062a, "set state in proto req").
//   Terraform renders the answer as HCL itself (internal/genconfig/generate_config.go): see
//   genconfig.ts beside this file.
// - `terraform apply -invoke=action.T.N`: ValidateActionConfig in the validate walk
//   (internal/terraform/node_action_validate.go v1.14.0 116), PlanAction in the plan walk
//   (node_action_invoke.go v1.14.0 182), InvokeAction in the apply walk, its events read until the
//   stream ends: progress messages, then one completion whose error diagnostics fail the apply
//   (node_action_trigger_instance_apply.go v1.14.0 150; grpc_provider.go v1.14.0 PlanAction 1585,
//   InvokeAction 1630, ValidateActionConfig 1702).
//
// Terraform 1.16 (protocol 6.11, tfplugin6.11.proto)
// - Client capabilities add store_planned_private and computed_blocks_allowed
//   (eval_context_builtin.go v1.16.0-rc2 679-680); the apply-time PlanResourceChange sends the
//   plan-time planned_private back (node_resource_abstract_instance.go v1.16.0-rc2 877-882 and
//   1035).
// - Actions may run on before_destroy: PlanAction while planning the destroy, InvokeAction before
//   the destroy's ApplyResourceChange (node_resource_abstract_instance.go v1.16.0-rc2 3302;
//   action_trigger_instance_apply.go v1.16.0-rc2 118). Query and action RPCs as in 1.14
//   (node_resource_plan_instance_query.go v1.16.0-rc2 113 and 128, node_action.go 219,
//   node_action_invoke.go 271).
import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { derToPem, generateServerCertificate } from "../../src/plugin/cert";
import {
  type CtyType,
  type CtyValue,
  decodeMsgpack,
  encodeJson,
  encodeMsgpack,
  isRecord,
  newRecord,
  type ObjectType,
  t,
  typeFromBytes,
  valuesEqual,
} from "../../src/plugin/cty";
import { MAGIC_COOKIE_KEY, MAGIC_COOKIE_VALUE } from "../../src/plugin/handshake";
import { connect, parseHandshake, tlsCredentials } from "../../src/plugin/testing/grpc-client";

/** The Terraform versions the driver plays, each with its protocol. */
export type TerraformVersion = "1.11" | "1.12" | "1.14" | "1.16";

interface VersionFacts {
  /** The vendored protocol file the version's plugin client is built from. */
  proto: string;
  /** Calls GetResourceIdentitySchemas in every schema load (1.12+). */
  identity: boolean;
  /** Knows list resources and actions (1.14+). */
  query: boolean;
  /** Sends store_planned_private / computed_blocks_allowed and planned_private in re-plans (1.16). */
  v611: boolean;
  /** The version ConfigureProvider reports. */
  terraformVersion: string;
}

const PROTO_DIR = join(__dirname, "..", "..", "src", "plugin", "proto", "terraform");

/** What each version speaks and does. */
export const VERSIONS: Readonly<Record<TerraformVersion, VersionFacts>> = {
  "1.11": {
    proto: "tfplugin6.8.proto",
    identity: false,
    query: false,
    v611: false,
    terraformVersion: "1.11.4",
  },
  "1.12": {
    proto: "tfplugin6.9.proto",
    identity: true,
    query: false,
    v611: false,
    terraformVersion: "1.12.2",
  },
  "1.14": {
    proto: "tfplugin6.10.proto",
    identity: true,
    query: true,
    v611: false,
    terraformVersion: "1.14.1",
  },
  "1.16": {
    proto: "tfplugin6.11.proto",
    identity: true,
    query: true,
    v611: true,
    terraformVersion: "1.16.0",
  },
};

type Rec = Record<string, CtyValue>;
type Msg = Record<string, unknown>;

/** A decoded protocol message as the version's client reads it. */
export type Decoded = Msg;

/** An attribute of a decoded schema, as much as the driver needs. */
interface SchemaAttr {
  name: string;
  type: Buffer;
  nested_type: { attributes: SchemaAttr[]; nesting: number } | null;
  required: boolean;
  optional: boolean;
  computed: boolean;
  sensitive: boolean;
  deprecated: boolean;
}

/** A decoded schema block with its implied cty type. */
export interface DriverSchema {
  readonly attributes: readonly SchemaAttr[];
  readonly type: ObjectType;
  /** The schema version Terraform stores with the state and sends to UpgradeResourceState. */
  readonly version: number;
}

function attrType(a: SchemaAttr): CtyType {
  if (!a.nested_type || a.nested_type.nesting === 0) return typeFromBytes(a.type);
  const obj = objectType(a.nested_type.attributes);
  switch (a.nested_type.nesting) {
    case 2:
      return t.list(obj);
    case 3:
      return t.set(obj);
    case 4:
      return t.map(obj);
    default:
      return obj;
  }
}

function objectType(attrs: readonly SchemaAttr[]): ObjectType {
  const types: Record<string, CtyType> = {};
  for (const a of attrs) types[a.name] = attrType(a);
  return t.object(types);
}

function toSchema(schema: {
  version?: number;
  block: { attributes: SchemaAttr[]; block_types: unknown[] };
}): DriverSchema {
  const { block } = schema;
  if (block.block_types.length > 0) throw new Error("the driver reads attribute-only schemas");
  return {
    attributes: block.attributes,
    type: objectType(block.attributes),
    version: Number(schema.version ?? 0),
  };
}

/** Every attribute of a schema, null where `values` has none. */
export function fullObject(schema: DriverSchema, values: Readonly<Rec>): Rec {
  const out = newRecord<CtyValue>();
  for (const a of schema.attributes) out[a.name] = values[a.name] ?? null;
  return out;
}

/**
 * Terraform's proposed new state (internal/plans/objchange/objchange.go ProposedNew), for the
 * attribute-only schemas this provider has: configured values win; a computed attribute the
 * configuration leaves null keeps its prior value; single nested attributes recursively.
 */
function proposedNew(attrs: readonly SchemaAttr[], prior: Rec | null, config: Rec): Rec {
  const out = newRecord<CtyValue>();
  for (const a of attrs) {
    const c = config[a.name] ?? null;
    const p = prior ? (prior[a.name] ?? null) : null;
    if (a.computed && c === null) out[a.name] = p;
    else if (a.nested_type?.nesting === 1 && isRecord(c))
      out[a.name] = proposedNew(a.nested_type.attributes, isRecord(p) ? (p as Rec) : null, c as Rec);
    else out[a.name] = c;
  }
  return out;
}

/** One call the driver made: which process of the command, which RPC. */
export interface CallRecord {
  process: number;
  rpc: string;
}

/** The provider schema as the version's client decoded it. */
export interface LoadedSchema {
  raw: Decoded;
  identityRaw: Decoded | null;
  resources: Record<string, DriverSchema>;
  identities: Record<string, { type: ObjectType; version: number }>;
  lists: Record<string, DriverSchema>;
  actions: Record<string, DriverSchema>;
  provider: DriverSchema;
  capabilities: Msg;
}

/** One object in the driver's state. */
export interface StoredObject {
  type: string;
  value: Rec;
  private: Buffer;
  identity: Rec | null;
}

/** A resource block: `resource "<type>" "<name>" { ... }`. */
export interface ResourceBlock {
  type: string;
  name: string;
  config: Rec;
  /** 1.16: actions run before its destroy (`action_trigger { events = [before_destroy] }`). */
  beforeDestroy?: ActionBlock;
}

/** An import block, by id or (1.12+) by identity. */
export interface ImportBlock {
  to: string;
  id?: string;
  identity?: Rec;
}

/** A list block of a `.tfquery.hcl` file. */
export interface ListBlock {
  type: string;
  name: string;
  config: Rec;
  limit?: number;
  includeResource?: boolean;
}

/** An action block. */
export interface ActionBlock {
  type: string;
  name: string;
  config: Rec;
}

/** What a plan found for one resource. */
export interface PlannedChange {
  address: string;
  action: "create" | "update" | "replace" | "noop" | "delete";
  importing: boolean;
  prior: StoredObject | null;
  planned: Rec | null;
  plannedPrivate: Buffer;
  plannedIdentity: Rec | null;
  config: Rec | null;
}

/** A diagnostic as the version's client decoded it. */
export interface DriverDiagnostic {
  severity: "error" | "warning";
  summary: string;
  detail: string;
  rpc: string;
}

/** An error that stops a command, as Terraform stops it, with the diagnostics so far. */
export class CommandFailed extends Error {
  constructor(
    readonly diagnostics: DriverDiagnostic[],
    readonly during: string,
  ) {
    super(
      `${during} failed: ${diagnostics
        .filter((d) => d.severity === "error")
        .map((d) => `${d.summary}: ${d.detail}`)
        .join("; ")}`,
    );
  }
}

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
class ProviderProcess {
  private constructor(
    private readonly child: ChildProcess,
    private readonly client: grpc.Client,
    private readonly address: string,
    private readonly creds: grpc.ChannelCredentials,
    private readonly stderr: () => string,
    private readonly exited: Promise<void>,
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
    const child = spawn(node ? process.execPath : opts.executable, node ? [opts.executable] : [], {
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout?.on("data", (d) => {
      out += d;
    });
    child.stderr?.on("data", (d) => {
      err += d;
    });
    const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
    const deadline = Date.now() + HANDSHAKE_MS;
    while (!out.includes("\n")) {
      if (child.exitCode !== null) throw new Error(`provider exited before its handshake; stderr: ${err}`);
      if (Date.now() > deadline) {
        child.kill("SIGKILL");
        throw new Error(`no handshake within ${HANDSHAKE_MS} ms; stderr: ${err}`);
      }
      await new Promise((r) => setTimeout(r, 10));
    }
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
    return new ProviderProcess(child, client, hs.address, creds, () => err, exited);
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

const EMPTY = Buffer.alloc(0);

function diagnosticsOf(list: unknown, rpc: string): DriverDiagnostic[] {
  return ((list as Msg[] | undefined) ?? []).map((d) => ({
    severity: d.severity === 2 ? "warning" : "error",
    summary: String(d.summary ?? ""),
    detail: String(d.detail ?? ""),
    rpc,
  }));
}

function decodeDv(dv: unknown, type: CtyType): CtyValue {
  const m = dv as { msgpack?: Buffer } | null | undefined;
  if (!m?.msgpack || m.msgpack.length === 0) return null;
  return decodeMsgpack(m.msgpack, type);
}

function dv(value: CtyValue, type: CtyType): Msg {
  return { msgpack: encodeMsgpack(value, type) };
}

/** Terraform, one version of it, with a state of its own. */
export class TerraformDriver {
  readonly facts: VersionFacts;
  /** Every RPC of every command so far, in order. */
  readonly calls: CallRecord[] = [];
  /** Every diagnostic of every command so far. */
  readonly diagnostics: DriverDiagnostic[] = [];
  /** The state: objects by address. */
  readonly state = new Map<string, StoredObject>();
  private processes = 0;
  private schemaCache: LoadedSchema | undefined;

  constructor(readonly opts: DriverOptions) {
    this.facts = VERSIONS[opts.version];
  }

  /** The capabilities ConfigureProvider and the resource RPCs send. */
  capabilities(apply: boolean): Msg {
    return {
      deferral_allowed: apply,
      write_only_attributes_allowed: true,
      ...(this.facts.v611 ? { store_planned_private: true, computed_blocks_allowed: true } : {}),
    };
  }

  private async withProcess<T>(fn: (call: Caller) => Promise<T>): Promise<T> {
    const index = ++this.processes;
    const p = await ProviderProcess.start(this.opts);
    const caller: Caller = {
      call: async (rpc, req) => {
        this.calls.push({ process: index, rpc });
        const res = await p.call(rpc, req);
        this.opts.onResponse?.(rpc, res);
        return res;
      },
      stream: async (rpc, req, take) => {
        this.calls.push({ process: index, rpc });
        const events = await p.stream(rpc, req, take);
        for (const e of events) this.opts.onResponse?.(rpc, e);
        return events;
      },
    };
    try {
      return await fn(caller);
    } finally {
      await p.close();
    }
  }

  /** The schema load of a process: the first of a command asks, later ones use the cache. */
  private async schema(c: Caller): Promise<LoadedSchema> {
    if (this.schemaCache?.capabilities.get_provider_schema_optional) return this.schemaCache;
    const raw = await c.call("GetProviderSchema", {});
    this.fail(diagnosticsOf(raw.diagnostics, "GetProviderSchema"), "GetProviderSchema");
    const identityRaw = this.facts.identity ? await c.call("GetResourceIdentitySchemas", {}) : null;
    if (identityRaw)
      this.fail(diagnosticsOf(identityRaw.diagnostics, "GetResourceIdentitySchemas"), "schema");
    const map = (m: unknown, get: (v: Msg) => Msg = (v) => v) =>
      Object.fromEntries(
        Object.entries((m as Record<string, Msg> | undefined) ?? {}).map(([k, v]) => [
          k,
          toSchema(
            get(v) as { version?: number; block: { attributes: SchemaAttr[]; block_types: unknown[] } },
          ),
        ]),
      );
    const identities: LoadedSchema["identities"] = {};
    for (const [name, s] of Object.entries((identityRaw?.identity_schemas as Record<string, Msg>) ?? {})) {
      const attrs = s.identity_attributes as { name: string; type: Buffer }[];
      identities[name] = {
        version: Number(s.version),
        type: t.object(Object.fromEntries(attrs.map((a) => [a.name, typeFromBytes(a.type)]))),
      };
    }
    this.schemaCache = {
      raw,
      identityRaw,
      resources: map(raw.resource_schemas),
      identities,
      lists: this.facts.query ? map(raw.list_resource_schemas) : {},
      actions: this.facts.query ? map(raw.action_schemas, (v) => v.schema as Msg) : {},
      provider: toSchema(raw.provider as { block: { attributes: SchemaAttr[]; block_types: unknown[] } }),
      capabilities: (raw.server_capabilities as Msg | null) ?? {},
    };
    return this.schemaCache;
  }

  /** The first process of every command: the schema only. */
  async loadSchema(): Promise<LoadedSchema> {
    this.schemaCache = undefined;
    return this.withProcess((c) => this.schema(c));
  }

  private fail(diags: DriverDiagnostic[], during: string): void {
    this.diagnostics.push(...diags);
    if (diags.some((d) => d.severity === "error")) throw new CommandFailed(this.diagnostics.slice(), during);
  }

  private resourceSchema(s: LoadedSchema, type: string): DriverSchema {
    const r = s.resources[type];
    if (!r) throw new Error(`no resource type ${type}`);
    return r;
  }

  private identityOut(s: LoadedSchema, type: string, data: unknown): Rec | null {
    const id = s.identities[type];
    const d = (data as { identity_data?: unknown } | null | undefined)?.identity_data;
    if (!id || !d) return null;
    const v = decodeDv(d, id.type);
    if (v === null) return null;
    if (!isRecord(v)) throw new Error(`${type}: the identity is not an object`);
    return v as Rec;
  }

  private identityIn(s: LoadedSchema, type: string, value: Rec | null): Msg | null {
    const id = s.identities[type];
    if (!this.facts.identity || !id || !value) return null;
    return { identity_data: dv(value, id.type) };
  }

  private async configure(c: Caller, s: LoadedSchema, apply: boolean): Promise<void> {
    const config = dv(fullObject(s.provider, this.opts.providerConfig), s.provider.type);
    const v = await c.call("ValidateProviderConfig", { config });
    this.fail(diagnosticsOf(v.diagnostics, "ValidateProviderConfig"), "ValidateProviderConfig");
    const r = await c.call("ConfigureProvider", {
      terraform_version: this.facts.terraformVersion,
      config,
      client_capabilities: this.capabilities(apply),
    });
    this.fail(diagnosticsOf(r.diagnostics, "ConfigureProvider"), "ConfigureProvider");
  }

  /** The validate walk (`terraform validate`, and the second process of every plan). */
  private async validateWalk(c: Caller, s: LoadedSchema, blocks: Blocks): Promise<void> {
    const provider = dv(fullObject(s.provider, this.opts.providerConfig), s.provider.type);
    this.fail(
      diagnosticsOf(
        (await c.call("ValidateProviderConfig", { config: provider })).diagnostics,
        "ValidateProviderConfig",
      ),
      "validate",
    );
    for (const r of blocks.resources ?? []) {
      const schema = this.resourceSchema(s, r.type);
      const res = await c.call("ValidateResourceConfig", {
        type_name: r.type,
        config: dv(fullObject(schema, r.config), schema.type),
        client_capabilities: this.capabilities(false),
      });
      this.fail(diagnosticsOf(res.diagnostics, "ValidateResourceConfig"), "validate");
    }
    for (const l of blocks.lists ?? []) {
      const schema = s.lists[l.type];
      if (!schema) throw new Error(`no list resource ${l.type}`);
      const res = await c.call("ValidateListResourceConfig", {
        type_name: l.type,
        config: dv(fullObject(schema, l.config), schema.type),
      });
      this.fail(diagnosticsOf(res.diagnostics, "ValidateListResourceConfig"), "validate");
    }
    for (const a of blocks.actions ?? []) {
      const schema = s.actions[a.type];
      if (!schema) throw new Error(`no action ${a.type}`);
      const res = await c.call("ValidateActionConfig", {
        type_name: a.type,
        config: dv(fullObject(schema, a.config), schema.type),
      });
      this.fail(diagnosticsOf(res.diagnostics, "ValidateActionConfig"), "validate");
    }
  }

  /** Refresh one stored object: UpgradeResourceState, then ReadResource. */
  private async refresh(
    c: Caller,
    s: LoadedSchema,
    address: string,
    obj: StoredObject,
  ): Promise<StoredObject | null> {
    const schema = this.resourceSchema(s, obj.type);
    // Terraform sends the stored attributes as JSON with the schema version stored beside them.
    const up = await c.call("UpgradeResourceState", {
      type_name: obj.type,
      version: schema.version,
      raw_state: { json: Buffer.from(encodeJson(obj.value, schema.type)) },
    });
    this.fail(diagnosticsOf(up.diagnostics, "UpgradeResourceState"), `refresh of ${address}`);
    const current = decodeDv(up.upgraded_state, schema.type) as Rec;
    const read = await c.call("ReadResource", {
      type_name: obj.type,
      current_state: dv(current, schema.type),
      private: obj.private,
      client_capabilities: this.capabilities(false),
      ...(this.identityIn(s, obj.type, obj.identity)
        ? { current_identity: this.identityIn(s, obj.type, obj.identity) }
        : {}),
    });
    this.fail(diagnosticsOf(read.diagnostics, "ReadResource"), `refresh of ${address}`);
    const value = decodeDv(read.new_state, schema.type);
    if (value === null) return null;
    return {
      type: obj.type,
      value: value as Rec,
      private: (read.private as Buffer | undefined) ?? EMPTY,
      identity: this.identityOut(s, obj.type, read.new_identity) ?? obj.identity,
    };
  }

  /** PlanResourceChange for one resource block, with the prior object (null: create). */
  private async planOne(
    c: Caller,
    s: LoadedSchema,
    r: ResourceBlock,
    prior: StoredObject | null,
    opts: { apply: boolean; plannedPrivate?: Buffer },
  ): Promise<PlannedChange> {
    const schema = this.resourceSchema(s, r.type);
    const address = `${r.type}.${r.name}`;
    const config = fullObject(schema, r.config);
    const proposed = proposedNew(schema.attributes, prior?.value ?? null, config);
    const res = await c.call("PlanResourceChange", {
      type_name: r.type,
      prior_state: dv(prior?.value ?? null, schema.type),
      proposed_new_state: dv(proposed, schema.type),
      config: dv(config, schema.type),
      prior_private: prior?.private ?? EMPTY,
      client_capabilities: this.capabilities(opts.apply),
      ...(this.identityIn(s, r.type, prior?.identity ?? null)
        ? { prior_identity: this.identityIn(s, r.type, prior?.identity ?? null) }
        : {}),
      ...(this.facts.v611 && opts.plannedPrivate ? { planned_private: opts.plannedPrivate } : {}),
    });
    this.fail(diagnosticsOf(res.diagnostics, "PlanResourceChange"), `plan of ${address}`);
    const planned = decodeDv(res.planned_state, schema.type) as Rec;
    const replace = ((res.requires_replace as unknown[]) ?? []).length > 0 && prior !== null;
    const same = prior !== null && valuesEqual(prior.value, planned, schema.type);
    return {
      address,
      action: prior === null ? "create" : same ? "noop" : replace ? "replace" : "update",
      importing: false,
      prior,
      planned,
      plannedPrivate: (res.planned_private as Buffer | undefined) ?? EMPTY,
      plannedIdentity: this.identityOut(s, r.type, res.planned_identity),
      config,
    };
  }

  /** ImportResourceState by id or identity, then the refresh of what it returned. */
  private async importOne(c: Caller, s: LoadedSchema, imp: ImportBlock, type: string): Promise<StoredObject> {
    const schema = this.resourceSchema(s, type);
    const byIdentity = imp.identity !== undefined;
    if (byIdentity && !this.facts.identity)
      throw new Error(`Terraform ${this.opts.version} has no import by identity`);
    const identitySchema = s.identities[type];
    if (byIdentity && !identitySchema) throw new Error(`${type} has no identity schema`);
    const res = await c.call("ImportResourceState", {
      type_name: type,
      id: imp.id ?? "",
      client_capabilities: this.capabilities(false),
      ...(byIdentity && identitySchema
        ? {
            identity: {
              identity_data: dv(
                Object.fromEntries(
                  Object.keys(identitySchema.type.attributes).map((k) => [k, imp.identity?.[k] ?? null]),
                ),
                identitySchema.type,
              ),
            },
          }
        : {}),
    });
    this.fail(diagnosticsOf(res.diagnostics, "ImportResourceState"), `import of ${imp.to}`);
    const imported = (res.imported_resources as Msg[])[0];
    if (!imported) throw new Error(`import of ${imp.to} returned no object`);
    const identity = this.identityOut(s, type, imported.identity);
    if (byIdentity && !identity) throw new Error(`import of ${imp.to} didn't return an identity`);
    const stub: StoredObject = {
      type,
      value: decodeDv(imported.state, schema.type) as Rec,
      private: (imported.private as Buffer | undefined) ?? EMPTY,
      identity,
    };
    const refreshed = await this.refresh(c, s, imp.to, stub);
    if (!refreshed) throw new Error(`Cannot import non-existent remote object ${imp.to}`);
    return refreshed;
  }

  /** The plan walk of `terraform plan` (and of `terraform apply`): import, refresh, plan. */
  private async planWalk(
    c: Caller,
    s: LoadedSchema,
    blocks: Blocks,
    opts: { apply: boolean },
  ): Promise<PlannedChange[]> {
    await this.configure(c, s, opts.apply);
    const changes: PlannedChange[] = [];
    const configured = new Set((blocks.resources ?? []).map((r) => `${r.type}.${r.name}`));
    for (const r of blocks.resources ?? []) {
      const address = `${r.type}.${r.name}`;
      const schema = this.resourceSchema(s, r.type);
      const v = await c.call("ValidateResourceConfig", {
        type_name: r.type,
        config: dv(fullObject(schema, r.config), schema.type),
        client_capabilities: this.capabilities(opts.apply),
      });
      this.fail(diagnosticsOf(v.diagnostics, "ValidateResourceConfig"), `plan of ${address}`);
      let prior = this.state.get(address) ?? null;
      let importing = false;
      const imp = (blocks.imports ?? []).find((i) => i.to === address);
      if (!prior && imp) {
        prior = await this.importOne(c, s, imp, r.type);
        importing = true;
      } else if (prior) {
        prior = await this.refresh(c, s, address, prior);
      }
      const change = await this.planOne(c, s, r, prior, opts);
      changes.push({ ...change, importing });
    }
    // Objects in state without configuration: planned for destroy. The provider sets no
    // plan_destroy, so Terraform plans them itself, without PlanResourceChange.
    for (const [address, obj] of this.state) {
      if (configured.has(address)) continue;
      const refreshed = await this.refresh(c, s, address, obj);
      if (!refreshed) continue;
      changes.push({
        address,
        action: "delete",
        importing: false,
        prior: refreshed,
        planned: null,
        plannedPrivate: refreshed.private,
        plannedIdentity: null,
        config: null,
      });
    }
    return changes;
  }

  /** `terraform plan`: the schema, validate and plan processes. */
  async plan(blocks: Blocks): Promise<PlannedChange[]> {
    const s = await this.loadSchema();
    await this.withProcess((c) => this.schema(c).then(() => this.validateWalk(c, s, blocks)));
    return this.withProcess(async (c) => this.planWalk(c, await this.schema(c), blocks, { apply: false }));
  }

  /** `terraform apply`: plan as above, then the apply walk in a process of its own. */
  async apply(blocks: Blocks): Promise<PlannedChange[]> {
    const s = await this.loadSchema();
    await this.withProcess((c) => this.schema(c).then(() => this.validateWalk(c, s, blocks)));
    const changes = await this.withProcess(async (c) => {
      const schema = await this.schema(c);
      const planned = await this.planWalk(c, schema, blocks, { apply: false });
      // 1.16: actions on before_destroy are planned with the destroy.
      for (const ch of planned) {
        const r = this.beforeDestroyOf(blocks, ch);
        if (r) await this.planAction(c, schema, r);
      }
      return planned;
    });
    await this.withProcess(async (c) => {
      const schema = await this.schema(c);
      await this.configure(c, schema, true);
      for (const ch of changes) {
        const block = (blocks.resources ?? []).find((r) => `${r.type}.${r.name}` === ch.address);
        if (ch.action === "noop") {
          if (ch.importing && ch.prior) this.state.set(ch.address, ch.prior);
          continue;
        }
        if (ch.action === "delete") {
          const trigger = this.beforeDestroyOf(blocks, ch);
          if (trigger) await this.invokeAction(c, schema, trigger);
          await this.applyOne(
            c,
            schema,
            ch.address,
            ch.prior!.type,
            ch.prior,
            null,
            null,
            ch.plannedPrivate,
            null,
          );
          this.state.delete(ch.address);
          continue;
        }
        if (!block) continue;
        if (ch.action === "replace") {
          await this.applyOne(
            c,
            schema,
            ch.address,
            block.type,
            ch.prior,
            null,
            null,
            ch.prior?.private ?? EMPTY,
            null,
          );
          this.state.delete(ch.address);
        }
        const prior = ch.action === "replace" ? null : ch.prior;
        // The apply-time plan, with the configuration wholly known.
        const final = await this.planOne(c, schema, block, prior, {
          apply: true,
          plannedPrivate: ch.plannedPrivate,
        });
        const obj = await this.applyOne(
          c,
          schema,
          ch.address,
          block.type,
          prior,
          final.planned,
          final.config,
          final.plannedPrivate,
          final.plannedIdentity,
        );
        if (obj) this.state.set(ch.address, obj);
      }
    });
    return changes;
  }

  private beforeDestroyOf(blocks: Blocks, ch: PlannedChange): ActionBlock | undefined {
    if (ch.action !== "delete" || !this.facts.v611) return undefined;
    return blocks.destroyed?.find((r) => `${r.type}.${r.name}` === ch.address)?.beforeDestroy;
  }

  private async applyOne(
    c: Caller,
    s: LoadedSchema,
    address: string,
    type: string,
    prior: StoredObject | null,
    planned: Rec | null,
    config: Rec | null,
    plannedPrivate: Buffer,
    plannedIdentity: Rec | null,
  ): Promise<StoredObject | null> {
    const schema = this.resourceSchema(s, type);
    const res = await c.call("ApplyResourceChange", {
      type_name: type,
      prior_state: dv(prior?.value ?? null, schema.type),
      planned_state: dv(planned, schema.type),
      config: dv(config, schema.type),
      planned_private: plannedPrivate,
      ...(this.identityIn(s, type, plannedIdentity)
        ? { planned_identity: this.identityIn(s, type, plannedIdentity) }
        : {}),
    });
    const value = decodeDv(res.new_state, schema.type);
    const obj =
      value === null
        ? null
        : {
            type,
            value: value as Rec,
            private: (res.private as Buffer | undefined) ?? EMPTY,
            identity: this.identityOut(s, type, res.new_identity),
          };
    // A failed create that left an object is kept (tainted), as Terraform keeps it.
    if (obj) this.state.set(address, obj);
    this.fail(diagnosticsOf(res.diagnostics, "ApplyResourceChange"), `apply of ${address}`);
    return obj;
  }

  /** `terraform query` (1.14+): list blocks, and with `generateConfig` the configuration to keep. */
  async query(lists: ListBlock[], opts: { generateConfig?: boolean } = {}): Promise<QueryResult> {
    if (!this.facts.query) throw new Error(`Terraform ${this.opts.version} has no terraform query`);
    const s = await this.loadSchema();
    await this.withProcess((c) => this.schema(c).then(() => this.validateWalk(c, s, { lists })));
    return this.withProcess(async (c) => {
      const schema = await this.schema(c);
      await this.configure(c, schema, false);
      const result: QueryResult = { found: [], generated: [] };
      for (const l of lists) {
        const ls = schema.lists[l.type]!;
        const rs = this.resourceSchema(schema, l.type);
        const config = dv(fullObject(ls, l.config), ls.type);
        const v = await c.call("ValidateListResourceConfig", { type_name: l.type, config });
        this.fail(
          diagnosticsOf(v.diagnostics, "ValidateListResourceConfig"),
          `query of list.${l.type}.${l.name}`,
        );
        const limit = l.limit ?? 100;
        const include = opts.generateConfig ? true : (l.includeResource ?? false);
        const events = await c.stream(
          "ListResource",
          { type_name: l.type, config, include_resource_object: include, limit },
          limit,
        );
        const found: QueryResult["found"] = [];
        for (const e of events) {
          const diags = diagnosticsOf(e.diagnostic, "ListResource");
          this.fail(diags, `query of list.${l.type}.${l.name}`);
          const identity = this.identityOut(schema, l.type, e.identity);
          if (!identity) {
            if (diags.length > 0) continue;
            throw new Error(`missing identity data in ListResource event for ${l.type}`);
          }
          found.push({
            list: `list.${l.type}.${l.name}`,
            displayName: String(e.display_name ?? ""),
            identity,
            object: include && e.resource_object ? (decodeDv(e.resource_object, rs.type) as Rec) : null,
          });
        }
        result.found.push(...found);
        if (!opts.generateConfig) continue;
        for (const [i, f] of found.entries()) {
          const state = this.opts.patch === "1.14.0" ? null : f.object;
          const g = await c.call("GenerateResourceConfig", {
            type_name: l.type,
            ...(state ? { state: dv(state, rs.type) } : {}),
          });
          this.fail(diagnosticsOf(g.diagnostics, "GenerateResourceConfig"), `configuration of ${l.type}`);
          result.generated.push({
            address: `${l.type}.${l.name}_${i}`,
            type: l.type,
            attributes: rs.attributes,
            config: decodeDv(g.config, rs.type) as Rec | null,
            identity: f.identity,
            identityAttributes: Object.keys(schema.identities[l.type]!.type.attributes),
          });
        }
      }
      return result;
    });
  }

  private async planAction(c: Caller, s: LoadedSchema, a: ActionBlock): Promise<void> {
    const schema = s.actions[a.type];
    if (!schema) throw new Error(`no action ${a.type}`);
    const res = await c.call("PlanAction", {
      action_type: a.type,
      config: dv(fullObject(schema, a.config), schema.type),
      client_capabilities: this.capabilities(false),
    });
    this.fail(diagnosticsOf(res.diagnostics, "PlanAction"), `plan of action.${a.type}.${a.name}`);
  }

  /** The events of one invocation: progress messages, and the completion's diagnostics. */
  readonly progress: string[] = [];

  private async invokeAction(c: Caller, s: LoadedSchema, a: ActionBlock): Promise<void> {
    const schema = s.actions[a.type]!;
    const events = await c.stream("InvokeAction", {
      action_type: a.type,
      config: dv(fullObject(schema, a.config), schema.type),
      client_capabilities: this.capabilities(true),
    });
    let completed = false;
    for (const e of events) {
      if (e.type === "progress") this.progress.push(String((e.progress as Msg).message));
      else if (e.type === "completed") {
        completed = true;
        this.fail(
          diagnosticsOf((e.completed as Msg).diagnostics, "InvokeAction"),
          `action.${a.type}.${a.name}`,
        );
      } else throw new Error(`unexpected event type ${String(e.type)} in InvokeAction response`);
    }
    if (!completed) throw new Error(`action.${a.type}.${a.name}: the stream ended without a completion`);
  }

  /** `terraform apply -invoke=action.<type>.<name>` (1.14+). */
  async invoke(action: ActionBlock): Promise<void> {
    if (!this.facts.query) throw new Error(`Terraform ${this.opts.version} has no actions`);
    const s = await this.loadSchema();
    await this.withProcess((c) => this.schema(c).then(() => this.validateWalk(c, s, { actions: [action] })));
    await this.withProcess(async (c) => {
      const schema = await this.schema(c);
      await this.configure(c, schema, false);
      await this.planAction(c, schema, action);
    });
    await this.withProcess(async (c) => {
      const schema = await this.schema(c);
      await this.configure(c, schema, true);
      await this.invokeAction(c, schema, action);
    });
  }
}

/** What a command's blocks are. */
export interface Blocks {
  resources?: ResourceBlock[];
  imports?: ImportBlock[];
  lists?: ListBlock[];
  actions?: ActionBlock[];
  /** Resource blocks removed from the configuration, with their lifecycle (1.16 before_destroy). */
  destroyed?: ResourceBlock[];
}

/** What a query found and, with `generateConfig`, the configuration to write. */
export interface QueryResult {
  found: { list: string; displayName: string; identity: Rec; object: Rec | null }[];
  generated: GeneratedResource[];
}

/** One resource of a query's generated configuration. */
export interface GeneratedResource {
  address: string;
  type: string;
  attributes: readonly SchemaAttr[];
  config: Rec | null;
  identity: Rec;
  identityAttributes: string[];
}

interface Caller {
  call(rpc: string, req: Msg): Promise<Decoded>;
  stream(rpc: string, req: Msg, take?: number): Promise<Decoded[]>;
}

export type { SchemaAttr };
