import type { IncomingMessage } from "node:http";
import { inspect } from "node:util";
import fc from "fast-check";
import { Agent } from "undici";
import { z } from "zod";
import { anyString, generativeRuns, generativeSeed } from "../testing/generative";
import { client, deployBody, type Handler, server, TOKEN } from "../testing/scripted-server";
import type { GpurentalClient } from "./client";
import {
  AmbiguousRequestError,
  ApiError,
  NetworkError,
  ResponseValidationError,
  TimeoutError,
} from "./errors";
import {
  ApiKeySchema,
  BillingOrderSchema,
  CreatedApiKeySchema,
  InstanceSchema,
  MemberSchema,
  MeSchema,
  OfferSchema,
  SpendDaySchema,
  SshKeySchema,
  TemplateSchema,
  TransactionSchema,
} from "./schemas";
import { makeInstance, makeTemplate } from "./testing/fixtures";

// Hostile answers never crash the client or leak its token. Every public method of
// GpurentalClient is called against the scripted server, which answers each attempt with
// generated HTTP written byte by byte: any status from 100 to 599; JSON of any shape, a good
// record with one field of the wrong type, missing or added, huge strings, deep nesting, invalid
// UTF-8, text, empty and truncated bodies, error bodies with and without the documented
// `{"error": {code, message}}` shape; odd Content-Type, Retry-After and X-Request-Id headers
// (control characters, huge values, duplicates); a Content-Length that lies, a connection dropped
// or left hanging; and the client's own bearer token echoed anywhere in the body or the headers.
// A server is not to be trusted, a proxy in front of it even less, and what the client makes of
// their answers ends up in Terraform's diagnostics and logs.
//
// Every call must settle, within its short attempt timeout and few retries, and either resolve
// with a value its own schema accepts or reject with one of the client's error kinds (errors.ts),
// never with a TypeError, RangeError, SyntaxError or any other fault of the program, not even as
// the cause of a coded error. No rendering of the error (message, String, stack, util.inspect,
// JSON) and no log line of the client may hold the token. No promise may be left rejected and
// unhandled: Jest fails the test when one is (jest-circus listens on the real process; a listener
// added here would be on Jest's copy of `process` and never hear of it).
//
// In `npm test` the run is bounded, with a fixed seed; GPURENTAL_GENERATIVE_RUNS and
// GPURENTAL_GENERATIVE_SEED replay or lengthen it, as for src/provider.generative.test.ts.

const RUNS = generativeRuns(600);
const SEED = generativeSeed(20261203);
/** One attempt's time limit: a hung answer costs this much per attempt. */
const ATTEMPT_MS = 100;
/** Longer than any call may take (three attempts within a 3 s deadline): past it, the call hangs. */
const SETTLE_MS = 5_000;

/**
 * The time the whole run may take, shrinking a counterexample included (a hang costs SETTLE_MS
 * for each shrinking step): past it, the run fails with the smallest counterexample found so far.
 * A guard against hangs, not a speed target: six times what the run takes on a quiet machine, so
 * that a busy one (a CI runner running other suites) does not fail it.
 */
const RUN_LIMIT_MS = RUNS > 600 ? 24 * 3600_000 : 60_000;

jest.setTimeout(RUN_LIMIT_MS + 10_000);

const EMPTY = Buffer.alloc(0);
const ID = "5f0c6f9e-1a2b-4c3d-8e9f-000000000001";
const WHEN = "2026-11-22T08:00:00.000Z";

// ---- The methods, each with a good answer and what it resolves to ----------------------------

const apiKey = {
  id: ID,
  name: "ci",
  kind: "team",
  prefix: "gpr_cd34",
  creator_email: "admin@example.com",
  creator_id: ID,
  created_at: WHEN,
  last_used_at: null,
  creator_is_member: true,
};
const offer = {
  id: ID,
  availability: "available",
  next_maintenance: null,
  machine: { id: ID, disk_gb: 500, available_disk_gb: 400, cuda_version: "12.4" },
  gpu_model: "RTX 4090",
  num_gpus: 1,
  price_per_hour_micro: 2_500_000,
  free_units: 1,
};
const template = makeTemplate({ id: ID, env: [{ key: "A", value: "b", secret: false }] });
const sshKey = { id: ID, name: "laptop", fingerprint: "SHA256:abc" };
const instance = makeInstance();

/** A public method of the client, the body of a good 2xx answer, and the schema of its result. */
interface Method {
  name: string;
  call: (c: GpurentalClient) => Promise<unknown>;
  /** The body of a good answer; undefined for the 204 of a DELETE that returns nothing. */
  good: unknown;
  /** What the method resolves to, by the client's own schemas. */
  result: z.ZodType;
}

const METHOD_LIST: readonly Method[] = [
  { name: "getInstance", call: (c) => c.getInstance(ID), good: instance, result: InstanceSchema },
  {
    name: "listInstances",
    call: (c) => c.listInstances({ include_destroyed: true }),
    good: { items: [instance, makeInstance({ status: "stopped" })] },
    result: z.array(InstanceSchema),
  },
  {
    name: "deployInstance",
    call: (c) => c.deployInstance(deployBody),
    good: instance,
    result: InstanceSchema,
  },
  { name: "stopInstance", call: (c) => c.stopInstance(ID), good: instance, result: InstanceSchema },
  { name: "startInstance", call: (c) => c.startInstance(ID), good: instance, result: InstanceSchema },
  {
    name: "destroyInstance",
    call: (c) => c.destroyInstance(ID),
    good: makeInstance({ status: "destroying" }),
    result: InstanceSchema,
  },
  {
    name: "getInstanceLogs",
    call: (c) => c.getInstanceLogs(ID, { tail: 5 }),
    good: { lines: ["booting", "ready"] },
    result: z.array(z.string()),
  },
  {
    name: "createApiKey",
    call: (c) => c.createApiKey({ name: "ci", kind: "team" }),
    good: { key: apiKey, secret: `gpr_${"cd34".repeat(12)}` },
    result: CreatedApiKeySchema,
  },
  {
    name: "listApiKeys",
    call: (c) => c.listApiKeys(),
    good: { items: [apiKey] },
    result: z.array(ApiKeySchema),
  },
  { name: "revokeApiKey", call: (c) => c.revokeApiKey(ID), good: undefined, result: z.undefined() },
  { name: "listOffers", call: (c) => c.listOffers(), good: { items: [offer] }, result: z.array(OfferSchema) },
  { name: "getOffer", call: (c) => c.getOffer(ID), good: offer, result: OfferSchema },
  {
    name: "listTemplates",
    call: (c) => c.listTemplates({ mode: "ssh" }),
    good: { items: [template] },
    result: z.array(TemplateSchema),
  },
  { name: "getTemplate", call: (c) => c.getTemplate(ID), good: template, result: TemplateSchema },
  {
    name: "listSshKeys",
    call: (c) => c.listSshKeys(),
    good: { items: [sshKey] },
    result: z.array(SshKeySchema),
  },
  {
    name: "createSshKey",
    call: (c) => c.createSshKey({ name: "laptop", public_key: "ssh-ed25519 AAAA" }),
    good: sshKey,
    result: SshKeySchema,
  },
  {
    name: "getMe",
    call: (c) => c.getMe(),
    good: {
      user: { id: ID, email: "admin@example.com" },
      organization: { id: ID, name: "acme", balance_micro: 5 },
      role: "admin",
    },
    result: MeSchema,
  },
  {
    name: "listMembers",
    call: (c) => c.listMembers(),
    good: { items: [{ user_id: ID, email: null, role: "member" }] },
    result: z.array(MemberSchema),
  },
  { name: "removeMember", call: (c) => c.removeMember(ID), good: undefined, result: z.undefined() },
  {
    name: "listTransactions",
    call: (c) => c.listTransactions({ limit: 3 }),
    good: { items: [{ id: ID, created_at: WHEN, kind: "gpu", amount_micro: 7 }] },
    result: z.array(TransactionSchema),
  },
  {
    name: "getSpendDaily",
    call: (c) => c.getSpendDaily({ days: 7 }),
    good: { items: [{ date: "2026-11-22", spend_micro: 3 }] },
    result: z.array(SpendDaySchema),
  },
  {
    name: "createBillingOrder",
    call: (c) => c.createBillingOrder({ amount_micro: 1_000_000 }),
    good: { id: ID, amount_micro: 1_000_000, status: "paid", balance_micro: 2_000_000 },
    result: BillingOrderSchema,
  },
];

/** The methods, shown by name in a counterexample (not as their schemas). */
const METHODS = METHOD_LIST.map((m) => Object.assign(m, { [fc.toStringMethod]: () => m.name }));

// ---- Hostile answers ------------------------------------------------------------------------

/** The client's own token, as a server or a proxy might echo it back. */
const echoed = fc.constantFrom(
  TOKEN,
  `Bearer ${TOKEN}`,
  `x${TOKEN}y`,
  `token=${TOKEN}`,
  `{"token":"${TOKEN}"}`,
  `é ${TOKEN} 🚀`,
  `${"y".repeat(180)}${TOKEN}`,
  TOKEN.repeat(2),
);

/** Any JSON value, a string (awkward, huge, echoing the token) or a value of the wrong type. */
const anyValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  anyString(),
  echoed,
  fc.constantFrom<unknown>(null, -1, 0, 1.5, 1e308, -0, "", true, [], {}, "2026-13-45T99:99:99Z"),
  fc.integer({ min: 1, max: 3_000 }).map((n) => JSON.parse(`${"[".repeat(n)}1${"]".repeat(n)}`) as unknown),
);

/** Where a value sits in a JSON value: the member names and indexes that lead to it. */
type Path = (string | number)[];

/** Every position in a JSON value: the value itself, and each member and element, recursively. */
function positions(v: unknown, at: Path = []): Path[] {
  const out: Path[] = [at];
  const members: [string | number, unknown][] = Array.isArray(v)
    ? v.map((e, i): [number, unknown] => [i, e])
    : v !== null && typeof v === "object"
      ? Object.entries(v)
      : [];
  for (const [k, e] of members) out.push(...positions(e, [...at, k]));
  return out;
}

interface Mutation {
  pick: number;
  op: "set" | "delete" | "add";
  key: string;
  value: unknown;
}

/** The good body with one field replaced, removed or added, at any depth. */
function mutate(good: unknown, m: Mutation): unknown {
  const root: unknown = structuredClone(good ?? {});
  const all = positions(root);
  const path = all[m.pick % all.length]!;
  if (path.length === 0) {
    if (m.op === "set") return m.value;
    if (m.op === "add" && root !== null && typeof root === "object")
      Object.defineProperty(root, m.key, { value: m.value, enumerable: true, writable: true });
    return root;
  }
  let parent = root as Record<string | number, unknown>;
  for (const step of path.slice(0, -1)) parent = parent[step] as Record<string | number, unknown>;
  const last = path[path.length - 1]!;
  const target = parent[last];
  if (m.op === "delete") {
    if (Array.isArray(parent)) parent.splice(Number(last), 1);
    else delete parent[last];
  } else if (m.op === "add" && Array.isArray(target)) {
    target.push(m.value);
  } else if (m.op === "add" && target !== null && typeof target === "object") {
    // defineProperty: a key named __proto__ becomes a member, as JSON.parse makes it.
    Object.defineProperty(target, m.key, { value: m.value, enumerable: true, writable: true });
  } else {
    parent[last] = m.value;
  }
  return root;
}

const json = (v: unknown) => Buffer.from(JSON.stringify(v) ?? "null");

/** JSON text of an object with these members, in order, duplicates and `__proto__` kept. */
const objectText = (entries: readonly (readonly [string, unknown])[]) =>
  `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v) ?? "null"}`).join(",")}}`;

const KNOWN_CODES = [
  "TOKEN_INVALID",
  "API_KEY_NOT_FOUND",
  "INSTANCE_NOT_FOUND",
  "INVALID_STATE",
  "DISK_TOO_LARGE",
  "VALIDATION_ERROR",
  "RATE_LIMITED",
  "INTERNAL",
  "SERVICE_UNAVAILABLE",
  "START_UNAVAILABLE",
];
const MEMBER_NAMES = [
  "balance_micro",
  "required_micro",
  "max_disk_gb",
  "available_disk_gb",
  "requested_disk_gb",
  "next_maintenance",
  "limit",
  "field",
  "value",
  "secret",
  "token",
  "__proto__",
  "constructor",
  "toString",
];

/** An error body: the documented shape with any members, or a near miss of it. */
const errorBody: fc.Arbitrary<Buffer> = fc
  .tuple(
    fc.option(fc.oneof(fc.constantFrom(...KNOWN_CODES), anyString(), echoed, anyValue)),
    fc.option(fc.oneof(anyString(), echoed, anyValue)),
    fc.option(fc.oneof(fc.constant("req-body"), anyString(), echoed)),
    fc.array(fc.tuple(fc.oneof(fc.constantFrom(...MEMBER_NAMES), anyString(), echoed), anyValue), {
      maxLength: 4,
    }),
    fc.constantFrom("documented", "top-level", "error-not-object"),
  )
  .map(([code, message, requestId, extra, shape]) => {
    const members: [string, unknown][] = [];
    if (code !== null) members.push(["code", code]);
    if (message !== null) members.push(["message", message]);
    if (requestId !== null) members.push(["request_id", requestId]);
    members.push(...extra);
    const inner = objectText(members);
    if (shape === "top-level") return Buffer.from(inner);
    if (shape === "error-not-object") return Buffer.from(`{"error":${JSON.stringify(code ?? message)}}`);
    return Buffer.from(`{"error":${inner}}`);
  });

/** Bytes that are not one JSON value: text, HTML, invalid UTF-8, JSON cut short, nothing. */
function brokenBody(good: unknown): fc.Arbitrary<Buffer> {
  const goodText = JSON.stringify(good ?? { error: { code: "INTERNAL", message: "x" } });
  return fc.oneof(
    anyString().map((s) => Buffer.from(s)),
    echoed.map((s) => Buffer.from(`<html>upstream rejected Authorization: ${s}</html>`)),
    fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b)),
    fc
      .tuple(fc.constantFrom(...KNOWN_CODES), fc.uint8Array({ minLength: 1, maxLength: 16 }))
      .map(([code, b]) =>
        Buffer.concat([
          Buffer.from(`{"error":{"code":"${code}","message":"`),
          Buffer.from(b),
          Buffer.from('"}}'),
        ]),
      ),
    fc.nat().map((n) => Buffer.from(goodText.slice(0, n % goodText.length))),
    fc.constant(EMPTY),
  );
}

/** Nesting far deeper than any record, as arrays or objects, bare or inside an error body. */
const deepBody: fc.Arbitrary<Buffer> = fc
  .tuple(fc.integer({ min: 10, max: 100_000 }), fc.constantFrom("array", "object", "in-error", "unclosed"))
  .map(([n, how]) => {
    if (how === "array") return Buffer.from(`${"[".repeat(n)}${"]".repeat(n)}`);
    if (how === "object") return Buffer.from(`${'{"a":'.repeat(n)}1${"}".repeat(n)}`);
    if (how === "in-error")
      return Buffer.from(
        `{"error":{"code":"INTERNAL","message":"deep","value":${"[".repeat(n)}${"]".repeat(n)}}}`,
      );
    return Buffer.from("[".repeat(n));
  });

/** A huge body: a good record with a field several megabytes long, or megabytes of one byte. */
function hugeBody(good: unknown): fc.Arbitrary<Buffer> {
  return fc
    .tuple(fc.nat(), fc.integer({ min: 100_000, max: 3_000_000 }), fc.constantFrom("x", "é", '"', "\\", "a:"))
    .map(([pick, n, c]) =>
      c === "x" && pick % 3 === 0
        ? Buffer.alloc(n, "x")
        : json(mutate(good, { pick, op: "set", key: "huge", value: c.repeat(n / c.length) })),
    );
}

function body(good: unknown): fc.Arbitrary<Buffer> {
  const mutation = fc.record({
    pick: fc.nat(),
    op: fc.constantFrom<Mutation["op"]>("set", "set", "delete", "add"),
    key: fc.oneof(anyString(), echoed, fc.constantFrom("__proto__", "id", "status")),
    value: anyValue,
  });
  return fc.oneof(
    { weight: 3, arbitrary: fc.constant(good === undefined ? EMPTY : json(good)) },
    { weight: 6, arbitrary: mutation.map((m) => json(mutate(good, m))) },
    { weight: 5, arbitrary: errorBody },
    { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 5 }).map(json) },
    { weight: 3, arbitrary: brokenBody(good) },
    { weight: 1, arbitrary: deepBody },
    { weight: 1, arbitrary: hugeBody(good) },
  );
}

/**
 * Odd header text: usual values, most often; text of any byte a header line can hold (tabs and
 * Latin-1, which HTTP allows); control characters (never a line break, which would end the
 * header), which HTTP does not; or the token.
 */
function headerText(usual: fc.Arbitrary<string>): fc.Arbitrary<string> {
  const bytes = (min: number) =>
    fc
      .array(
        fc.integer({ min, max: 255 }).filter((c) => c !== 10 && c !== 13 && c !== 127),
        { maxLength: 30 },
      )
      .map((codes) => String.fromCharCode(...codes));
  return fc.oneof(
    { weight: 8, arbitrary: usual },
    { weight: 2, arbitrary: bytes(32).map((s) => `\t${s}`) },
    { weight: 1, arbitrary: bytes(0) },
    { weight: 2, arbitrary: echoed },
  );
}

const RETRY_AFTERS = [
  "0",
  "1",
  "2",
  "1.5",
  " 3 ",
  "-1",
  "1e3",
  "0x10",
  "NaN",
  "Infinity",
  "99999999999999999999",
  "9".repeat(400),
  "",
  "soon",
  "Wed, 21 Oct 2015 07:28:00 GMT",
  "Fri, 31 Dec 9999 23:59:59 GMT",
  "Mon, 99 Foo 2026 99:99:99 GMT",
  "Tue, 01 Jan 2030 00:00:00 GMT",
];

/** Headers of an answer beside its framing: Content-Type, Retry-After, X-Request-Id and others. */
const headers: fc.Arbitrary<[string, string][]> = fc
  .tuple(
    fc.option(
      headerText(
        fc.constantFrom(
          "application/json",
          "application/json; charset=utf-8",
          "application/problem+json",
          "text/html",
          "text/plain; charset=iso-8859-1",
          "application/octet-stream",
          "",
        ),
      ),
      { freq: 5 },
    ),
    fc.array(headerText(fc.constantFrom(...RETRY_AFTERS)), { maxLength: 2 }),
    fc.array(
      headerText(
        fc.oneof(
          fc.constant("req-1"),
          fc.integer({ min: 200, max: 20_000 }).map((n) => "r".repeat(n)),
        ),
      ),
      { maxLength: 2 },
    ),
    fc.option(
      fc.tuple(
        fc.constantFrom("x-echo", "authorization", "set-cookie", "www-authenticate", "location"),
        echoed,
      ),
    ),
  )
  .map(([type, retryAfter, requestId, extra]) => {
    const out: [string, string][] = [];
    if (type !== null) out.push(["content-type", type]);
    for (const v of retryAfter) out.push(["retry-after", v]);
    for (const v of requestId) out.push(["x-request-id", v]);
    if (extra) out.push(extra);
    return out;
  });

const status = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(200, 201, 204) },
  { weight: 4, arbitrary: fc.constantFrom(400, 401, 403, 404, 409, 422, 429, 429, 500, 502, 503, 504) },
  { weight: 3, arbitrary: fc.integer({ min: 100, max: 599 }) },
);

/**
 * How the body is framed: a true Content-Length; none, the body ending with the connection; one
 * that promises more than is sent before the connection closes; or one that promises more and
 * then nothing ever comes (the attempt times out).
 */
type Framing = "length" | "until-close" | "short" | "stall";

type Answer =
  | { kind: "http"; status: number; headers: [string, string][]; body: Buffer; framing: Framing }
  | { kind: "drop" }
  | { kind: "hang" };

/** How an answer is shown in a counterexample: megabytes of body would drown it. */
function shown(a: Answer): string {
  if (a.kind !== "http") return a.kind;
  const text = a.body.toString("latin1");
  const cut = text.length > 300 ? `${text.slice(0, 300)}... (${a.body.length} bytes)` : text;
  const hs = a.headers.map(
    ([k, v]) => `${k}: ${JSON.stringify(v.length > 200 ? `${v.slice(0, 200)}...` : v)}`,
  );
  return `HTTP ${a.status} [${a.framing}] {${hs.join(", ")}} ${JSON.stringify(cut)}`;
}

/** Whether the answer holds the token, in its body or a header. */
function echoes(a: Answer): boolean {
  return a.kind === "http" && (a.body.includes(TOKEN) || a.headers.some(([, v]) => v.includes(TOKEN)));
}

function answer(good: unknown): fc.Arbitrary<Answer> {
  const http = fc
    .record({
      status,
      headers,
      body: body(good),
      framing: fc.oneof(
        { weight: 30, arbitrary: fc.constant<Framing>("length") },
        { weight: 2, arbitrary: fc.constantFrom<Framing>("until-close", "short") },
        { weight: 1, arbitrary: fc.constant<Framing>("stall") },
      ),
    })
    .map((r): Answer => ({ kind: "http", ...r }));
  return fc
    .oneof(
      { weight: 60, arbitrary: http },
      { weight: 2, arbitrary: fc.constant<Answer>({ kind: "drop" }) },
      { weight: 1, arbitrary: fc.constant<Answer>({ kind: "hang" }) },
    )
    .map((a) => Object.assign(a, { [fc.toStringMethod]: () => shown(a) }));
}

/** The answer written as raw bytes: the server's own checks of statuses and headers never apply. */
function handler(a: Answer): Handler {
  return (req: IncomingMessage) => {
    if (a.kind === "drop") return void req.socket.destroy();
    if (a.kind === "hang") return;
    const length =
      a.framing === "length" ? a.body.length : a.framing === "until-close" ? undefined : a.body.length + 10;
    const head = [
      `HTTP/1.1 ${a.status} Whatever`,
      ...a.headers.map(([k, v]) => `${k}: ${v}`),
      ...(length === undefined ? [] : [`content-length: ${length}`]),
      "connection: close",
    ];
    const bytes = Buffer.concat([Buffer.from(`${head.join("\r\n")}\r\n\r\n`, "latin1"), a.body]);
    if (a.framing === "stall") req.socket.write(bytes);
    else req.socket.end(bytes);
  };
}

// ---- The judgement --------------------------------------------------------------------------

/** The client's error kinds a call may reject with (errors.ts). */
const CODED = [ApiError, AmbiguousRequestError, NetworkError, TimeoutError, ResponseValidationError] as const;

/** Names of errors that are faults of the program, never an answer to a bad response. */
const PROGRAM_FAULT = /^(TypeError|RangeError|ReferenceError|SyntaxError|EvalError|URIError|AggregateError)$/;

/** Every way an error is shown to a person or a log. */
function renderings(err: Error): string[] {
  return [
    err.message,
    String(err),
    err.stack ?? "",
    inspect(err, { depth: 10, showHidden: true }),
    JSON.stringify(err),
  ];
}

type Settled = { ok: true; value: unknown } | { ok: false; error: unknown };

/** The call's outcome, or a failure of the case when it has none within SETTLE_MS. */
async function settle(what: string, p: Promise<unknown>): Promise<Settled> {
  let timer: NodeJS.Timeout | undefined;
  const outcome = p.then(
    (value): Settled => ({ ok: true, value }),
    (error: unknown): Settled => ({ ok: false, error }),
  );
  try {
    return await Promise.race([
      outcome,
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`${what} did not settle within ${SETTLE_MS} ms`)),
          SETTLE_MS,
        );
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** What the cases came to, so that the run is seen to reach every branch it judges. */
const reached = new Map<string, number>();
const note = (what: string) => reached.set(what, (reached.get(what) ?? 0) + 1);

test("any answer, however hostile, settles the call with a valid value or a coded error that never shows the token", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc
        .constantFrom(...METHODS)
        .chain((m) => fc.tuple(fc.constant(m), fc.array(answer(m.good), { minLength: 1, maxLength: 3 }))),
      async ([method, answers]) => {
        // Attempt n gets answer n, the last one every attempt after (and the read-back of a destroy).
        const left = answers.map(handler);
        server.always((req, res, body) => (left.length > 1 ? left.shift()! : left[0]!)(req, res, body));
        const lines: unknown[] = [];
        // An agent of its own: a call that never settles leaves no request behind for the next case.
        const dispatcher = new Agent({ keepAliveTimeout: 10 });
        const c = client({
          dispatcher,
          timeoutMs: ATTEMPT_MS,
          retry: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 2, deadlineMs: 3_000 },
          logger: (level, msg, fields) => lines.push({ level, msg, fields }),
        });

        let outcome: Settled;
        try {
          outcome = await settle(method.name, method.call(c));
        } finally {
          await dispatcher.destroy();
        }
        if (outcome.ok) {
          const checked = method.result.safeParse(outcome.value);
          if (!checked.success)
            throw new Error(
              `${method.name} resolved with a value its schema refuses: ${checked.error.message}`,
            );
          note("resolved");
        } else {
          const err = outcome.error;
          const kind = CODED.find((k) => err instanceof k);
          if (!kind || !(err instanceof Error))
            throw new Error(`${method.name} rejected with a program fault: ${inspect(err)}`);
          note(kind.name);
          for (let cause: unknown = err.cause; cause instanceof Error; cause = cause.cause) {
            if (PROGRAM_FAULT.test(cause.name))
              throw new Error(`${method.name} rejected with a program fault as the cause: ${inspect(err)}`);
          }
          for (const text of renderings(err)) {
            if (text.includes(TOKEN))
              throw new Error(
                `${method.name} rejected with an error that shows the token: ${text.slice(0, 2000)}`,
              );
          }
          if (answers.some(echoes)) note("token echoed");
        }
        if (JSON.stringify(lines).includes(TOKEN)) throw new Error(`${method.name} logged the token`);
      },
    ),
    { seed: SEED, numRuns: RUNS, interruptAfterTimeLimit: RUN_LIMIT_MS, markInterruptAsFailure: true },
  );
  // Not a vacuous run: values and every error kind were judged, and errors after an echoed token.
  const never = ["resolved", "token echoed", ...CODED.map((k) => k.name)].filter((w) => !reached.has(w));
  expect(never).toEqual([]);
});
