import { writeFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { actions } from "./actions";
import { dataSources } from "./data-sources";
import { ephemeralResources } from "./ephemeral-resources";
import { maskedService } from "./executable/masked-service";
import type { Schema } from "./framework";
import { createProviderService } from "./framework/server";
import { proposedNew } from "./framework/testing";
import { listResources } from "./list-resources";
import { LOG_ROUTE_KEY, type LogRoute } from "./log";
import {
  CtyCodecError,
  type CtyType,
  type CtyValue,
  decodeJson,
  decodeMsgpack,
  fromDynamicValue,
  isRecord,
  t,
} from "./plugin/cty";
import type { DynamicValue, EventStream, ProviderService, ResourceIdentityData } from "./plugin/tfplugin6";
import { createProvider, providerSchema } from "./provider";
import { resources } from "./resources";
import { useFakeBackend } from "./testing/fake-backend";
import {
  anyPrivate,
  anyString,
  ctyValue,
  dynamicValue,
  generativeSeed,
  LONG_RUN_CASES,
  malformedDynamicValue,
} from "./testing/generative";

// Bad input never crashes the provider. Random configurations, plans, states, identities and
// private data of every resource, data source, ephemeral resource, list resource and action and of
// the provider itself, with a null or an unknown in any position, values of the wrong type, huge
// strings, deep nesting, invalid UTF-8 and garbage, are fed to the RPCs as Terraform reaches them
// (the plugin service, behind the masking layer, decoding msgpack and JSON DynamicValues), against
// the in-process fake backend; and random bytes to the cty decoders. Every answer must be an
// answer: the call resolves, and no error that is a fault of the program (a TypeError,
// RangeError, ReferenceError... caught by the framework and turned into "<what> failed") is
// behind any diagnostic. A diagnostic for bad input is fine. The streaming RPCs (ListResource,
// InvokeAction) are read to their end, or cancelled by the reader after a few events as Terraform
// does at its limit; every event is judged as an answer is, and an invocation ends with exactly one
// completion.
//
// In `npm test` the run is bounded, with a fixed seed. The long run (100,000 cases) is
// `node scripts/testing/generative.js`; its figures are in bench/RESULTS.md.

const RUNS = LONG_RUN_CASES;
const SEED = generativeSeed(20261128);
const DECODE_RUNS = RUNS ? Math.round(RUNS * 0.4) : 800;
const RPC_RUNS = RUNS ? RUNS - DECODE_RUNS : 500;
/** Where the long run leaves its figures (scripts/testing/generative.js). */
const REPORT = process.env.GPURENTAL_GENERATIVE_REPORT;
/** The longest any one call may take before the case fails as a hang. */
const CALL_LIMIT_MS = 60_000;

jest.setTimeout(RUNS ? 24 * 3600_000 : 180_000);

const fake = useFakeBackend({ workDir: "file" });

/** Errors that are faults of the program, never an answer to bad input. */
const PROGRAM_FAULT =
  /^(TypeError|RangeError|ReferenceError|SyntaxError|EvalError|URIError|AggregateError)\b/;
/** What V8 says of such a fault when a handler caught it and quoted its message. */
const ENGINE_MESSAGE =
  /Cannot read propert|Cannot set propert|is not a function|is not iterable|is not a constructor|Cannot convert|Maximum call stack|Invalid array length|Invalid string length|Cannot destructure|is not defined|Cannot access '|Invalid time value/;

/** Faults seen by the services' logs since the last take(). */
let faults: string[] = [];
const take = () => {
  const seen = faults;
  faults = [];
  return seen;
};

// A promise rejected and never handled fails the test by Jest itself (jest-circus listens on the
// real process; a listener added here would be on Jest's copy of `process` and never hear of it).
// The provider's own log lines (API 404s and the like, thousands of them) go nowhere: what this
// suite judges is the answers, and the service's log of failures above.
const routes = globalThis as Record<symbol, unknown>;
beforeAll(() => {
  routes[LOG_ROUTE_KEY] = (): LogRoute => ({ level: "off", sink: () => {} });
});
afterAll(() => {
  delete routes[LOG_ROUTE_KEY];
});

/** The provider's service as the executable serves it, with a log that notes program faults. */
function newService(ended?: AbortSignal): ProviderService {
  const provider = createProvider({
    cwd: fake.workDir,
    env: {},
    ...(ended ? { ended } : {}),
    clientOptions: { dispatcher: fake.agent, retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 2 } },
  });
  return maskedService(
    createProviderService(provider, {
      log: (level, message, fields) => {
        const error = String(fields?.error ?? "");
        if (level === "error" && PROGRAM_FAULT.test(error))
          faults.push(`${message}: ${error.split("\n").slice(0, 4).join(" | ")}`);
      },
    }),
  );
}

async function bounded<T>(what: string, p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`${what} gave no answer within ${CALL_LIMIT_MS} ms`)),
          CALL_LIMIT_MS,
        );
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** The RPCs that answer with a stream of events. */
const STREAMING = new Set(["ListResource", "InvokeAction"]);

/** Calls one RPC and fails the case when it throws, hangs or hides a program fault. */
async function answer(
  service: ProviderService,
  rpc: string,
  request: unknown,
  cancelAfter: number | null = null,
): Promise<void> {
  const fn = (service as unknown as Record<string, (req: unknown, stream?: unknown) => Promise<unknown>>)[
    rpc
  ]!;
  const streamed = STREAMING.has(rpc) ? reader(cancelAfter) : undefined;
  let res: unknown;
  try {
    res = await bounded(rpc, fn.call(service, request, streamed));
  } catch (err) {
    throw new Error(`${rpc} threw instead of answering: ${err instanceof Error ? err.stack : String(err)}`);
  }
  const seen = take();
  if (seen.length > 0) throw new Error(`${rpc} answered over a program fault: ${seen[0]}`);
  if (streamed) {
    judgeEvents(rpc, streamed);
    res = streamed.events;
  }
  judgeDiagnostics(rpc, (res as { diagnostics?: Diag[] } | undefined)?.diagnostics);
  // The provider's own credential is in no answer, whatever the input made it say.
  const token = fake.creds.admin_session_token;
  // Buffers (msgpack values, private data) become their bytes as text, so the token is seen in them.
  const bytes = (_k: string, v: unknown) =>
    v && typeof v === "object" && (v as { type?: unknown }).type === "Buffer"
      ? Buffer.from((v as { data: number[] }).data).toString("latin1")
      : v;
  if (JSON.stringify(res, bytes).includes(token))
    throw new Error(`${rpc} answered with the provider's token in it`);
}

interface Diag {
  severity: number;
  summary: string;
  detail?: string;
}

/** Where a streaming RPC writes: its events kept; the reader cancels after `cancelAfter` of them. */
interface Reader extends EventStream<unknown> {
  readonly events: unknown[];
  readonly cancelled: boolean;
}

function reader(cancelAfter: number | null): Reader {
  const events: unknown[] = [];
  const cancel = new AbortController();
  return {
    events,
    signal: cancel.signal,
    get cancelled() {
      return cancel.signal.aborted;
    },
    // As the transport does: after the call was cancelled, a send does nothing.
    send: async (event) => {
      if (cancel.signal.aborted) return;
      events.push(event);
      if (cancelAfter !== null && events.length >= cancelAfter) cancel.abort();
    },
  };
}

/** A stream's events: each one's diagnostics judged; an invocation ends with one completion. */
function judgeEvents(rpc: string, stream: Reader): void {
  for (const e of stream.events) {
    if (e === null || typeof e !== "object") throw new Error(`${rpc} sent an event that is no object: ${e}`);
    const event = e as { diagnostic?: Diag[]; completed?: { diagnostics?: Diag[] } };
    judgeDiagnostics(rpc, event.diagnostic);
    judgeDiagnostics(rpc, event.completed?.diagnostics);
  }
  if (rpc === "InvokeAction" && !stream.cancelled) {
    const completions = stream.events.filter((e) => (e as { completed?: unknown }).completed);
    if (completions.length !== 1 || !(stream.events.at(-1) as { completed?: unknown }).completed)
      throw new Error(
        `InvokeAction sent ${completions.length} completions, the last event being ${JSON.stringify(stream.events.at(-1))}`,
      );
  }
}

function judgeDiagnostics(rpc: string, diagnostics: Diag[] | undefined): void {
  for (const d of diagnostics ?? []) {
    if (d.severity !== 1 && d.severity !== 2)
      throw new Error(`${rpc}: a diagnostic of severity ${d.severity}`);
    const text = `${d.summary}\n${d.detail ?? ""}`;
    if (ENGINE_MESSAGE.test(text)) throw new Error(`${rpc} quoted a program fault: ${text}`);
  }
}

// --------------------------------------------------------------------------------------------
// What is generated

/** What a value is generated for: a schema's attribute names and its cty type. */
interface Shape {
  type: CtyType;
  attributes: Readonly<Record<string, unknown>>;
}
interface Kind {
  typeName: string;
  schema: Schema;
  /** A resource's identity schema, if it has one. */
  identity?: Shape;
}
const resourceKinds: Kind[] = resources.map((r) => {
  const identity = (r as { identity?: { schema: Shape } }).identity?.schema;
  return { typeName: r.typeName, schema: r.schema as Schema, ...(identity ? { identity } : {}) };
});
const dataKinds: Kind[] = (dataSources as readonly { typeName: string; schema: unknown }[]).map((d) => ({
  typeName: d.typeName,
  schema: d.schema as Schema,
}));
const ephemeralKinds: Kind[] = ephemeralResources.map((e) => ({
  typeName: e.typeName,
  schema: e.schema as Schema,
}));
const kindsOf = (defs: readonly { typeName: string; schema: unknown }[]): Kind[] =>
  defs.map((d) => ({ typeName: d.typeName, schema: d.schema as Schema }));
const listKinds = kindsOf(listResources as readonly { typeName: string; schema: unknown }[]);
const actionKinds = kindsOf(actions as readonly { typeName: string; schema: unknown }[]);
/** The identity of gpurental_instance, for the identities of a type that has none or is unknown. */
const someIdentity = resourceKinds.find((k) => k.identity)?.identity;
/** A type name the provider does not have, now and then. */
const strangeKind: Kind = { typeName: "gpurental_nothing", schema: providerSchema as Schema };

/** Strings worth trying often: the seed's real ids, so that plans get past "no such offer". */
let knownIds: string[] = [];
/** Values worth trying often for attributes of these names (set with the seed's objects). */
let hints: Record<string, string[]> = {};

function kindOf(kinds: Kind[]): fc.Arbitrary<Kind> {
  return fc.oneof(
    { weight: 12, arbitrary: fc.constantFrom(...kinds) },
    { weight: 1, arbitrary: fc.constant(strangeKind) },
  );
}

/** A DynamicValue of a schema: mostly a well-typed value with holes, sometimes anything at all. */
function value(schema: Shape, unknowns: boolean): fc.Arbitrary<DynamicValue> {
  return fc.oneof(
    {
      weight: 4,
      arbitrary: fc
        .tuple(ctyValue(schema.type, { known: knownIds, unknowns, hints }), fc.boolean())
        .map(([v, json]) => dynamicValue(v, schema.type, json && !unknowns)),
    },
    { weight: 1, arbitrary: malformedDynamicValue(Object.keys(schema.attributes)) },
  );
}

/** A plan request: a well-typed configuration with Terraform's proposed new state, or anything. */
function planRequest(k: Kind) {
  const typed = fc
    .tuple(
      ctyValue(k.schema.type, { known: knownIds, unknowns: true, holes: 0.15, hints }),
      fc.option(ctyValue(k.schema.type, { known: knownIds, unknowns: false, holes: 0.15, hints })),
    )
    .map(([config, prior]) => {
      const c = isRecord(config) ? (config as Record<string, CtyValue>) : null;
      const p = isRecord(prior) ? (prior as Record<string, CtyValue>) : null;
      return {
        config: dynamicValue(config, k.schema.type),
        prior_state: dynamicValue(prior, k.schema.type),
        proposed_new_state: dynamicValue(c ? proposedNew(k.schema.attributes, p, c) : config, k.schema.type),
      };
    });
  const loose = fc.record({
    config: value(k.schema, true),
    prior_state: value(k.schema, false),
    proposed_new_state: value(k.schema, true),
  });
  return fc.oneof({ weight: 3, arbitrary: typed }, { weight: 1, arbitrary: loose });
}

const capabilities = fc.record({
  deferral_allowed: fc.boolean(),
  write_only_attributes_allowed: fc.boolean(),
});

/**
 * The identity a request carries (Terraform 1.12+): none (an older Terraform), an empty one, a
 * value of the type's identity schema with holes (an unknown now and then, which no Terraform
 * sends), or anything at all; for a type without an identity, another type's.
 */
function identityData(k: Kind): fc.Arbitrary<ResourceIdentityData | null | undefined> {
  const shape = k.identity ?? someIdentity;
  return fc.oneof(
    { weight: 2, arbitrary: fc.constantFrom<ResourceIdentityData | null | undefined>(undefined, null) },
    { weight: 1, arbitrary: fc.constant({ identity_data: null }) },
    ...(shape
      ? [
          { weight: 4, arbitrary: value(shape, false).map((identity_data) => ({ identity_data })) },
          { weight: 1, arbitrary: value(shape, true).map((identity_data) => ({ identity_data })) },
        ]
      : []),
  );
}

/** A stored identity's JSON (UpgradeResourceIdentity): of the schema, of any shape, or garbage. */
function rawIdentity(k: Kind) {
  const shape = k.identity ?? someIdentity ?? (providerSchema as Schema);
  return fc.oneof(
    { weight: 1, arbitrary: fc.constant(null) },
    {
      weight: 6,
      arbitrary: value(shape, false).map((dv) => ({
        json: dv.json.length > 0 ? dv.json : dv.msgpack,
        flatmap: {},
      })),
    },
  );
}

/** An int64 as the transport decodes one (longs as Numbers): small, negative, huge. */
const int64 = fc.oneof(
  fc.integer({ min: -3, max: 12 }),
  fc.constantFrom(0, -1, 2 ** 31, 2 ** 53, -(2 ** 63), 2 ** 63 - 1),
);

/** A DynamicValue of a primitive type (a list block's `limit`, `include_resource`), or anything. */
function primitive(type: CtyType): fc.Arbitrary<DynamicValue | null> {
  return fc.oneof(
    { weight: 1, arbitrary: fc.constant(null) },
    {
      weight: 4,
      arbitrary: fc
        .tuple(ctyValue(type, { unknowns: true }), fc.boolean())
        .map(([v, json]) => dynamicValue(v, type, json)),
    },
    { weight: 1, arbitrary: malformedDynamicValue([]) },
  );
}

/** After how many events the reader of a stream cancels it (as Terraform does at its limit), if ever. */
const cancelAfter = fc.oneof(
  { weight: 3, arbitrary: fc.constant(null) },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 3 }) },
);

/** One RPC of a configured provider, its request and, for a stream, when its reader cancels it. */
function rpcCase(): fc.Arbitrary<{ rpc: string; request: unknown; cancelAfter?: number | null }> {
  const on = <T>(kinds: Kind[], build: (k: Kind) => fc.Arbitrary<T>) => kindOf(kinds).chain(build);
  const rpc = (name: string) => (request: unknown) => ({ rpc: name, request });
  return fc.oneof(
    on(resourceKinds, (k) =>
      fc
        .record({
          type_name: fc.constant(k.typeName),
          config: value(k.schema, true),
          client_capabilities: capabilities,
        })
        .map(rpc("ValidateResourceConfig")),
    ),
    on(resourceKinds, (k) =>
      fc
        .record({
          req: planRequest(k),
          prior_private: anyPrivate,
          client_capabilities: capabilities,
          prior_identity: identityData(k),
        })
        .map(({ req, ...rest }) => ({ type_name: k.typeName, provider_meta: null, ...req, ...rest }))
        .map(rpc("PlanResourceChange")),
    ),
    on(resourceKinds, (k) =>
      fc
        .record({
          type_name: fc.constant(k.typeName),
          prior_state: value(k.schema, false),
          planned_state: fc.oneof(
            value(k.schema, false),
            fc.constant({ msgpack: Buffer.from([0xc0]), json: Buffer.alloc(0) }),
          ),
          config: value(k.schema, false),
          planned_private: anyPrivate,
          provider_meta: fc.constant(null),
          planned_identity: identityData(k),
        })
        .map(rpc("ApplyResourceChange")),
    ),
    on(resourceKinds, (k) =>
      fc
        .record({
          type_name: fc.constant(k.typeName),
          current_state: value(k.schema, false),
          private: anyPrivate,
          provider_meta: fc.constant(null),
          client_capabilities: capabilities,
          current_identity: identityData(k),
        })
        .map(rpc("ReadResource")),
    ),
    on(resourceKinds, (k) =>
      fc
        .record({
          type_name: fc.constant(k.typeName),
          id: anyString(knownIds),
          client_capabilities: capabilities,
          identity: identityData(k),
        })
        .map(rpc("ImportResourceState")),
    ),
    fc.constant(rpc("GetResourceIdentitySchemas")({})),
    on(resourceKinds, (k) =>
      fc
        .record({
          type_name: fc.constant(k.typeName),
          version: fc.integer({ min: -1, max: 3 }),
          raw_identity: rawIdentity(k),
        })
        .map(rpc("UpgradeResourceIdentity")),
    ),
    on(resourceKinds, (k) =>
      fc
        .record({
          type_name: fc.constant(k.typeName),
          state: fc.oneof(fc.constant(null), value(k.schema, false)),
        })
        .map(rpc("GenerateResourceConfig")),
    ),
    on(listKinds, (k) =>
      fc
        .record({
          type_name: fc.constant(k.typeName),
          config: value(k.schema, true),
          include_resource_object: primitive(t.bool),
          limit: primitive(t.number),
        })
        .map(rpc("ValidateListResourceConfig")),
    ),
    on(listKinds, (k) =>
      fc
        .record({
          type_name: fc.constant(k.typeName),
          config: fc.oneof(fc.constant(null), value(k.schema, false)),
          include_resource_object: fc.boolean(),
          limit: int64,
        })
        .chain((request) =>
          cancelAfter.map((after) => ({ rpc: "ListResource", request, cancelAfter: after })),
        ),
    ),
    on(actionKinds, (k) =>
      fc
        .record({ type_name: fc.constant(k.typeName), config: value(k.schema, true) })
        .map(rpc("ValidateActionConfig")),
    ),
    on(actionKinds, (k) =>
      fc
        .record({
          action_type: fc.constant(k.typeName),
          config: value(k.schema, true),
          client_capabilities: capabilities,
        })
        .map(rpc("PlanAction")),
    ),
    on(actionKinds, (k) =>
      fc
        .record({
          action_type: fc.constant(k.typeName),
          // Terraform sends a wholly known configuration; a client that does not is refused.
          config: fc.oneof(
            { weight: 4, arbitrary: value(k.schema, false) },
            { weight: 1, arbitrary: value(k.schema, true) },
          ),
          client_capabilities: fc.oneof(fc.constant(null), capabilities),
        })
        .chain((request) =>
          cancelAfter.map((after) => ({ rpc: "InvokeAction", request, cancelAfter: after })),
        ),
    ),
    on(resourceKinds, (k) =>
      fc
        .record({
          type_name: fc.constant(k.typeName),
          version: fc.integer({ min: -1, max: 3 }),
          raw_state: fc.record({
            json: value(k.schema, false).map((dv) => (dv.json.length > 0 ? dv.json : dv.msgpack)),
            flatmap: fc.constant({}),
          }),
        })
        .map(rpc("UpgradeResourceState")),
    ),
    on(dataKinds, (k) =>
      fc
        .record({ type_name: fc.constant(k.typeName), config: value(k.schema, true) })
        .map(rpc("ValidateDataResourceConfig")),
    ),
    on(dataKinds, (k) =>
      fc
        .record({
          type_name: fc.constant(k.typeName),
          config: value(k.schema, false),
          provider_meta: fc.constant(null),
          client_capabilities: capabilities,
        })
        .map(rpc("ReadDataSource")),
    ),
    on(ephemeralKinds, (k) =>
      fc
        .record({ type_name: fc.constant(k.typeName), config: value(k.schema, true) })
        .map(rpc("ValidateEphemeralResourceConfig")),
    ),
    on(ephemeralKinds, (k) =>
      fc
        .record({
          type_name: fc.constant(k.typeName),
          config: value(k.schema, false),
          client_capabilities: capabilities,
        })
        .map(rpc("OpenEphemeralResource")),
    ),
    on(ephemeralKinds, (k) =>
      fc
        .record({ type_name: fc.constant(k.typeName), private: anyPrivate })
        .chain((req) =>
          fc.constantFrom(rpc("RenewEphemeralResource")(req), rpc("CloseEphemeralResource")(req)),
        ),
    ),
    fc.record({ config: value(providerSchema as Schema, true) }).map(rpc("ValidateProviderConfig")),
  );
}

/** A provider block: the fake backend's address and token now and then, the journal kept inside the test's folder. */
function providerConfig(): fc.Arbitrary<DynamicValue> {
  const type = (providerSchema as Schema).type;
  return fc
    .tuple(
      ctyValue(type, { known: [fake.url, fake.creds.admin_session_token, "/dev/null/j"], unknowns: true }),
      fc.constantFrom<CtyValue>(null, "journal", "/dev/null/j", join(fake.workDir, "journals")),
      fc.boolean(),
    )
    .map(([config, journal, json]) => {
      // Never a journal where a random path would put it (the root directory, say).
      if (isRecord(config)) (config as Record<string, CtyValue>).journal_dir = journal;
      return dynamicValue(config, type, json);
    });
}

// --------------------------------------------------------------------------------------------

/** Counts of the run, for the long run's report. */
const counted = { decoded: 0, rpcs: 0, configures: 0 };

afterAll(() => {
  if (REPORT)
    writeFileSync(
      REPORT,
      JSON.stringify({ seed: SEED, ...counted, total: counted.decoded + counted.rpcs + counted.configures }),
    );
});

const typesToDecode: CtyType[] = [
  (providerSchema as Schema).type,
  ...[...resourceKinds, ...dataKinds, ...ephemeralKinds].map((k) => k.schema.type),
];

test("the cty decoders answer any bytes with a value or a CtyCodecError", () => {
  fc.assert(
    fc.property(
      fc.constantFrom(...typesToDecode),
      fc.oneof(
        malformedDynamicValue(["label", "env", "offer_filter", "timeouts", "id", "name"]),
        fc.uint8Array({ maxLength: 256 }).map((b) => ({ msgpack: Buffer.from(b), json: Buffer.from(b) })),
      ),
      (type, dv) => {
        counted.decoded++;
        for (const decode of [
          () => fromDynamicValue(dv, type),
          () => decodeMsgpack(dv.msgpack, type),
          () => decodeJson(dv.json, type),
        ]) {
          try {
            decode();
          } catch (err) {
            if (!(err instanceof CtyCodecError)) throw err;
          }
        }
      },
    ),
    { seed: SEED, numRuns: DECODE_RUNS },
  );
});

test("ConfigureProvider answers any provider block with diagnostics, never a fault", async () => {
  await fc.assert(
    fc.asyncProperty(providerConfig(), async (config) => {
      counted.configures++;
      const ended = new AbortController();
      try {
        await answer(newService(ended.signal), "ConfigureProvider", {
          terraform_version: "1.11.4",
          config,
          client_capabilities: { deferral_allowed: false, write_only_attributes_allowed: true },
        });
      } finally {
        ended.abort();
      }
    }),
    { seed: SEED, numRuns: Math.max(20, Math.round(RPC_RUNS / 10)) },
  );
});

test("every RPC answers any configuration, plan, state, identity or private data, never a fault", async () => {
  const service = newService();
  // Objects to list, import by identity and power: running and stopped instances, one of them
  // with a label that is a terminal command, and an API key. The actions' instances are named
  // only by `instance_id`, so that no random destroy of a resource takes them early in the run.
  const client = fake.client();
  const deploy = (label: string) =>
    client.deployInstance({
      offer_id: fake.creds.offer_id,
      template_id: fake.creds.template_id,
      disk_gb: 20,
      label,
    });
  const running = await deploy("evil\u001b]0;PWNED\u0007\u202ex");
  const stopped = await deploy("stopped");
  await client.stopInstance(stopped.id);
  const powered = [await deploy("power-running"), await deploy("power-stopped")];
  await client.stopInstance(powered[1]!.id);
  const key = await client.createApiKey({ name: "generative", kind: "team" });
  knownIds = [
    fake.creds.offer_id,
    fake.creds.template_id,
    running.id,
    stopped.id,
    key.key.id,
    ...Object.values(fake.creds).filter(
      (v): v is string => typeof v === "string" && /^[0-9a-f-]{36}$/.test(v),
    ),
  ];
  hints = {
    id: [running.id, stopped.id, key.key.id],
    instance_id: powered.map((i) => i.id),
    org_id: [fake.creds.org_id],
    state: ["running", "stopped", "restarted"],
    status: ["running", "stopped", "creating"],
    timeout: ["1ms", "0s", "20m"],
    label_prefix: ["evil", "stop", ""],
    gpu_model: ["RTX 4090", "rtx 4090"],
    created_after: ["2020-01-01T00:00:00Z", "2999-01-01T00:00:00+09:00"],
    kind: ["team", "personal"],
  };
  await answer(service, "ConfigureProvider", {
    terraform_version: "1.11.4",
    config: dynamicValue(
      {
        ...Object.fromEntries(Object.keys((providerSchema as Schema).attributes).map((k) => [k, null])),
        base_url: fake.url,
        token: fake.creds.admin_session_token,
      },
      (providerSchema as Schema).type,
    ),
    client_capabilities: { deferral_allowed: false, write_only_attributes_allowed: true },
  });
  await fc.assert(
    fc.asyncProperty(rpcCase(), async ({ rpc, request, cancelAfter }) => {
      counted.rpcs++;
      await answer(service, rpc, request, cancelAfter ?? null);
    }),
    { seed: SEED, numRuns: RPC_RUNS },
  );
});
