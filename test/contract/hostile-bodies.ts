// Hostile request bodies for test/contract/requests.generative.test.ts: what becomes of a route's
// valid body (a field of another type, removed or unknown fields, huge strings, deep nesting, text
// that is not JSON, invalid UTF-8...), the bytes it is sent as, and the generators of such plans
// and of content types. Nothing here knows the fake backend's routes or its world.
import fc, { type JsonValue } from "fast-check";

type Json = JsonValue;
type JsonObject = { [key: string]: Json };
type Key = string | number;

/** What becomes of a route's valid body. */
export type BodyPlan =
  | { kind: "valid" }
  | { kind: "any JSON"; value: Json }
  | { kind: "field of another type"; at: number; value: Json }
  | { kind: "another record's id"; at: number; which: number }
  | { kind: "field removed"; at: number }
  | { kind: "unknown fields"; fields: [string, Json][] }
  | { kind: "huge string"; at: number; length: number }
  | { kind: "deep nesting"; at: number | "whole"; depth: number; open: "[" | "{" }
  | { kind: "array for an object"; at: number | "whole" }
  | { kind: "text"; text: string }
  | { kind: "invalid UTF-8"; bytes: Uint8Array; at: number | "whole" }
  | { kind: "empty" };

const UNRESERVED = /^[A-Za-z0-9._~-]$/;
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** Percent-encodes every byte but the unreserved ones, as a path segment or query part. */
export function pct(value: string | Uint8Array): string {
  const bytes = typeof value === "string" ? Buffer.from(value, "utf8") : Buffer.from(value);
  let out = "";
  for (const b of bytes) {
    const c = String.fromCharCode(b);
    out += UNRESERVED.test(c) ? c : `%${b.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

/** Every path into `v` (fields and items at any depth), the root left out. */
function pathsOf(v: Json, prefix: Key[] = []): Key[][] {
  const out: Key[][] = [];
  const entries: [Key, Json][] = Array.isArray(v)
    ? v.map((x, i) => [i, x])
    : v !== null && typeof v === "object"
      ? (Object.entries(v) as [string, Json][])
      : [];
  for (const [k, x] of entries) out.push([...prefix, k], ...pathsOf(x, [...prefix, k]));
  return out;
}

function valueAt(root: Json, path: readonly Key[]): Json | undefined {
  let cur: Json | undefined = root;
  for (const k of path) {
    cur = cur !== null && typeof cur === "object" ? (cur as Record<Key, Json>)[k] : undefined;
  }
  return cur;
}

/** A copy of `root` with the value at `path` replaced, or removed when `to` is undefined. */
export function withAt(root: Json, path: readonly Key[], to: Json | undefined): Json {
  const [head, ...rest] = path;
  if (head === undefined) return to ?? null;
  if (Array.isArray(root)) {
    const copy = [...root];
    if (rest.length === 0 && to === undefined) copy.splice(Number(head), 1);
    else copy[Number(head)] = withAt(copy[Number(head)] ?? null, rest, to);
    return copy;
  }
  if (root === null || typeof root !== "object") return root;
  const copy = { ...root } as JsonObject;
  if (rest.length === 0 && to === undefined) delete copy[head];
  else define(copy, String(head), withAt(copy[head] ?? null, rest, to));
  return copy;
}

/** Sets a field as JSON.parse would, `__proto__` included. */
function define(o: JsonObject, key: string, value: Json): void {
  Object.defineProperty(o, key, { value, enumerable: true, writable: true, configurable: true });
}

/** The path `at` picks in `v`, or none when `v` has no fields. */
export const pick = (v: Json, at: number): Key[] | undefined => {
  const paths = pathsOf(v);
  return paths.length === 0 ? undefined : paths[at % paths.length];
};

/** Holes stand where raw bytes go into the JSON text (deep nesting, invalid UTF-8). */
const HOLE = "\u0000hole\u0000";
function withHole(v: Json, at: number | "whole", fill: Buffer): Buffer {
  const path = at === "whole" ? [] : (pick(v, at) ?? ["x"]);
  const text = JSON.stringify(withAt(v, path, HOLE));
  const hole = JSON.stringify(HOLE);
  const i = text.indexOf(hole);
  return Buffer.concat([Buffer.from(text.slice(0, i)), fill, Buffer.from(text.slice(i + hole.length))]);
}

/** `ids`: the ids of the world's records, for a field naming the wrong one. */
export function encodeBody(valid: JsonObject, plan: BodyPlan, ids: string[]): Buffer {
  const json = (v: Json) => Buffer.from(JSON.stringify(v));
  switch (plan.kind) {
    case "valid":
      return json(valid);
    case "any JSON":
      return json(plan.value);
    case "field of another type":
      return json(withAt(valid, pick(valid, plan.at) ?? ["x"], plan.value));
    case "another record's id": {
      // In a field that names a record when there is one (offer_id, template_id, ssh_key_id...).
      const named = pathsOf(valid).filter((p) => {
        const v = valueAt(valid, p);
        return typeof v === "string" && UUID.test(v);
      });
      const path = named.length > 0 ? named[plan.at % named.length] : pick(valid, plan.at);
      return json(withAt(valid, path ?? ["x"], ids[plan.which % ids.length] ?? null));
    }
    case "field removed": {
      const path = pick(valid, plan.at);
      return json(path ? withAt(valid, path, undefined) : valid);
    }
    case "unknown fields": {
      const copy: JsonObject = { ...valid };
      for (const [k, v] of plan.fields) define(copy, k, v);
      return json(copy);
    }
    case "huge string":
      return json(withAt(valid, pick(valid, plan.at) ?? ["x"], "x".repeat(plan.length)));
    case "deep nesting": {
      const close = plan.open === "[" ? "]" : "}";
      const open = plan.open === "[" ? "[" : '{"a":';
      return withHole(valid, plan.at, Buffer.from(`${open.repeat(plan.depth)}1${close.repeat(plan.depth)}`));
    }
    case "array for an object": {
      if (plan.at === "whole") return json([valid]);
      const path = pick(valid, plan.at);
      return json(path ? withAt(valid, path, [valid]) : [valid]);
    }
    case "text":
      return Buffer.from(plan.text);
    case "invalid UTF-8":
      return plan.at === "whole"
        ? Buffer.from(plan.bytes)
        : withHole(valid, plan.at, Buffer.concat([Buffer.from('"'), plan.bytes, Buffer.from('"')]));
    case "empty":
      return Buffer.alloc(0);
  }
}

export const json = fc.jsonValue({ maxDepth: 3 });
const awkwardKey = fc.oneof(
  fc.constantFrom("__proto__", "constructor", "prototype", "toString", "id", "secret", "value", ""),
  fc.string({ maxLength: 12 }),
);
const at = fc.nat(50);
/** A value for a field that wants another: of another type, or of its type in a wrong form. */
const other = fc.oneof(
  { weight: 3, arbitrary: json },
  { weight: 2, arbitrary: fc.string({ maxLength: 20 }) },
  { weight: 1, arbitrary: fc.oneof(fc.integer(), fc.double()) },
  {
    weight: 3,
    arbitrary: fc.constantFrom<Json>(
      null,
      true,
      0,
      -0,
      -1,
      1.5,
      1e308,
      2 ** 53 + 2,
      "",
      " ",
      "NaN",
      "-1",
      "1e999",
      "0x10",
      "not a date",
      "2026-13-45T99:99:99Z",
      "0000-01-01T00:00:00Z",
      "9999-12-31T23:59:59Z",
      [],
      {},
      [null],
      { "": null },
    ),
  },
);

export const bodyPlan: fc.Arbitrary<BodyPlan> = fc.oneof(
  { weight: 2, arbitrary: fc.constant<BodyPlan>({ kind: "valid" }) },
  { weight: 3, arbitrary: json.map((value): BodyPlan => ({ kind: "any JSON", value })) },
  {
    weight: 6,
    arbitrary: fc.record({ kind: fc.constant("field of another type" as const), at, value: other }),
  },
  // A sold-out offer, a coming-soon template, someone else's SSH key, an instance for an offer...
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant("another record's id" as const), at, which: fc.nat(40) }),
  },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("field removed" as const), at }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("unknown fields" as const),
      fields: fc.array(fc.tuple(awkwardKey, json), { minLength: 1, maxLength: 4 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("huge string" as const),
      at,
      // Past the limits of every field, and, now and then, past the 1 MiB body limit.
      length: fc.oneof(
        { weight: 6, arbitrary: fc.integer({ min: 65, max: 20_000 }) },
        { weight: 1, arbitrary: fc.constantFrom(1_048_000, 1_048_600) },
      ),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("deep nesting" as const),
      at: fc.oneof(at, fc.constant("whole" as const)),
      depth: fc.oneof(fc.integer({ min: 1, max: 100 }), fc.integer({ min: 1000, max: 100_000 })),
      open: fc.constantFrom("[" as const, "{" as const),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("array for an object" as const),
      at: fc.oneof(at, fc.constant("whole" as const)),
    }),
  },
  {
    weight: 2,
    arbitrary: fc
      .oneof(
        fc.string({ maxLength: 40 }),
        fc.constantFrom(
          "{",
          "[",
          '{"name": ',
          "{'a': 1}",
          "nul",
          "1e999",
          "NaN",
          "{,}",
          '{"a":1}x',
          "\u0000",
        ),
      )
      .map((text): BodyPlan => ({ kind: "text", text })),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("invalid UTF-8" as const),
      bytes: fc.oneof(
        fc.uint8Array({ minLength: 1, maxLength: 24 }),
        fc.constantFrom(
          Uint8Array.from([0xff]),
          Uint8Array.from([0xc3, 0x28]),
          Uint8Array.from([0xed, 0xa0, 0x80]),
          Uint8Array.from([0xf8, 0x88, 0x80, 0x80, 0x80]),
        ),
      ),
      at: fc.oneof(at, fc.constant("whole" as const)),
    }),
  },
  { weight: 1, arbitrary: fc.constant<BodyPlan>({ kind: "empty" }) },
);

export const contentType = fc.oneof(
  { weight: 12, arbitrary: fc.constant("application/json") },
  {
    weight: 3,
    arbitrary: fc.constantFrom<string | null>(
      null,
      "",
      "application/json; charset=utf-8",
      "APPLICATION/JSON",
      "application/json; charset=latin1",
      "application/json;;",
      "text/plain",
      "text/json",
      "application/x-www-form-urlencoded",
      "multipart/form-data; boundary=x",
      "application/jsonx",
      "application/vnd.api+json",
      "*/*",
      ";",
      "application/",
    ),
  },
);
