import {
  CtyCodecError,
  CtyNumber,
  canonicalDecimal,
  Dynamic,
  decodeJson,
  decodeMsgpack,
  encodeJson,
  encodeMsgpack,
  exactDecimalOfDouble,
  isUnknown,
  t,
  typeFromBytes,
  typeToBytes,
  Unknown,
  unknown,
  valuesEqual,
} from "./index";

const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");
const bytes = (h: string) => Buffer.from(h.replace(/\s+/g, ""), "hex");
const str = (s: string) => {
  const b = Buffer.from(s, "utf8");
  return (
    (b.length < 32 ? (0xa0 | b.length).toString(16) : `d9${b.length.toString(16).padStart(2, "0")}`) +
    b.toString("hex")
  );
};

describe("type JSON", () => {
  it.each([
    [t.string, '"string"'],
    [t.list(t.number), '["list","number"]'],
    [t.set(t.bool), '["set","bool"]'],
    [t.map(t.dynamic), '["map","dynamic"]'],
    [t.object({ b: t.string, a: t.number }), '["object",{"a":"number","b":"string"}]'],
    [t.object({ a: t.number }, ["a"]), '["object",{"a":"number"},["a"]]'],
    [t.tuple([t.bool, t.string]), '["tuple",["bool","string"]]'],
  ])("encodes %j as %s and back", (type, json) => {
    expect(typeToBytes(type).toString()).toBe(json);
    expect(typeToBytes(typeFromBytes(json)).toString()).toBe(json);
  });

  it.each(['"strin"', "[]", '["list"]', '["object",[]]', '["object",{"a":"string"},["b"]]', "{"])(
    "rejects %s",
    (json) => {
      expect(() => typeFromBytes(json)).toThrow();
    },
  );
});

describe("msgpack vectors from Terraform 1.11.4", () => {
  it('decodes the provider config {endpoint = "http://x"}', () => {
    const wire = bytes(`81 ${str("endpoint")} ${str("http://x")}`);
    expect(decodeMsgpack(wire, t.object({ endpoint: t.string }))).toEqual({ endpoint: "http://x" });
    expect(hex(encodeMsgpack({ endpoint: "http://x" }, t.object({ endpoint: t.string })))).toBe(hex(wire));
  });

  it("decodes an unknown name and a big number sent as a string", () => {
    const type = t.object({ id: t.string, name: t.string, size: t.number });
    const wire = bytes(
      `83 ${str("id")} c0 ${str("name")} d4 00 00 ${str("size")} ${str("12345678901234567890")}`,
    );
    const value = decodeMsgpack(wire, type) as Record<string, unknown>;
    expect(value.id).toBeNull();
    expect(isUnknown(value.name)).toBe(true);
    expect(value.size).toBeInstanceOf(CtyNumber);
    expect(String(value.size)).toBe("12345678901234567890");
  });

  it("writes unknown as d4 00 00 and every attribute of an object, keys sorted", () => {
    const type = t.object({ size: t.number, id: t.string, name: t.string });
    const out = encodeMsgpack({ id: unknown, size: unknown, name: "b" }, type);
    expect(hex(out)).toBe(`83${str("id")}d40000${str("name")}${str("b")}${str("size")}d40000`);
    expect(hex(encodeMsgpack({ name: "b" }, type))).toBe(
      `83${str("id")}c0${str("name")}${str("b")}${str("size")}c0`,
    );
  });

  it("decodes null as c0 and empty bytes as null", () => {
    expect(decodeMsgpack(bytes("c0"), t.object({ a: t.string }))).toBeNull();
    expect(decodeMsgpack(Buffer.alloc(0), t.string)).toBeNull();
    expect(hex(encodeMsgpack(null, t.object({ a: t.string })))).toBe("c0");
  });

  it("decodes a dynamic value [bin typeJSON, value]", () => {
    const typeJson = '["object",{"x":"number","y":["tuple",["bool"]]}]';
    const wire = Buffer.concat([
      bytes(`92 c4 ${typeJson.length.toString(16)}`),
      Buffer.from(typeJson),
      bytes(`82 ${str("x")} 01 ${str("y")} 91 c3`),
    ]);
    const value = decodeMsgpack(wire, t.dynamic);
    expect(value).toBeInstanceOf(Dynamic);
    const dyn = value as Dynamic;
    expect(typeToBytes(dyn.type).toString()).toBe(typeJson);
    expect(dyn.value).toEqual({ x: 1, y: [true] });
    expect(hex(encodeMsgpack(dyn, t.dynamic))).toBe(hex(wire));
    // go-cty also accepts the type as a str.
    const asStr = Buffer.concat([bytes(`92 d9 ${typeJson.length.toString(16)}`), wire.subarray(3)]);
    expect(decodeMsgpack(asStr, t.dynamic)).toEqual(dyn);
  });

  it("treats every extension as unknown and reads ext 12 refinements", () => {
    // {1: false, 2: "foo", 5: 1}
    const refined = bytes(`83 01 c2 02 ${str("foo")} 05 01`);
    const wire = Buffer.concat([bytes(`c7 ${refined.length.toString(16).padStart(2, "0")} 0c`), refined]);
    const value = decodeMsgpack(wire, t.string);
    expect(value).toBeInstanceOf(Unknown);
    expect((value as Unknown).refinements).toEqual({ notNull: true, stringPrefix: "foo", lengthLower: 1 });
    expect((decodeMsgpack(bytes("c7 00 00"), t.string) as Unknown).refinements).toBeUndefined();
    expect(isUnknown(decodeMsgpack(bytes("d5 05 01 02"), t.list(t.string)))).toBe(true);
    expect(isUnknown(decodeMsgpack(bytes("c7 03 0c ff ff ff"), t.string))).toBe(true);
    // Refinements are never sent back.
    expect(hex(encodeMsgpack(value, t.string))).toBe("d40000");
  });

  it("keeps a __proto__ map key as plain data", () => {
    const wire = bytes(`81 ${str("__proto__")} ${str("x")}`);
    const value = decodeMsgpack(wire, t.map(t.string)) as Record<string, unknown>;
    expect(Object.keys(value)).toEqual(["__proto__"]);
    expect(Object.getOwnPropertyDescriptor(value, "__proto__")?.value).toBe("x");
    expect(({} as Record<string, unknown>).x).toBeUndefined();
    expect(hex(encodeMsgpack(value as never, t.map(t.string)))).toBe(hex(wire));
  });

  it("rejects an attribute the object type does not declare", () => {
    expect(() => decodeMsgpack(bytes(`81 ${str("zz")} c0`), t.object({ a: t.string }))).toThrow(
      CtyCodecError,
    );
  });

  it("names where a nested value does not fit its type, decoding and encoding", () => {
    const type = t.object({ a: t.list(t.object({ b: t.number })), m: t.map(t.bool) });
    // {a: [{b: 1}, {b: true}], m: {}}
    const wire = bytes(`82 ${str("a")} 92 81 ${str("b")} 01 81 ${str("b")} c3 ${str("m")} 80`);
    expect(() => decodeMsgpack(wire, type)).toThrow(
      expect.objectContaining({ message: "number expected, got boolean at a[1].b", path: ["a", 1, "b"] }),
    );
    expect(() => encodeMsgpack({ a: [{ b: 1 }], m: { k: "yes" } } as never, type)).toThrow(
      expect.objectContaining({ message: "bool expected for bool, got string at m.k", path: ["m", "k"] }),
    );
    expect(() => decodeMsgpack(bytes(`81 ${str("a")} 91 81 ${str("b")} ${str("1x")}`), type)).toThrow(
      /at a\[0\]\.b$/,
    );
  });

  it("decodes non-ASCII strings and keys", () => {
    const text = "Grüße 🚀";
    const utf8 = Buffer.from(text, "utf8");
    const wire = Buffer.concat([
      bytes(`81 a${utf8.length.toString(16)}`),
      utf8,
      bytes(`a${utf8.length.toString(16)}`),
      utf8,
    ]);
    expect(decodeMsgpack(wire, t.map(t.string))).toEqual({ [text]: text });
    expect(() => decodeMsgpack(bytes("a2 c3 28"), t.string)).toThrow();
  });
});

describe("numbers", () => {
  it.each([
    // wire bytes, expected model value (as decimal), re-encoded bytes
    ["01", "1", "01"],
    ["cb 3f f8 00 00 00 00 00 00", "1.5", "cb3ff8000000000000"],
    [str("0.1"), "0.1", str("0.1")],
    [str("12345678901234567890"), "12345678901234567890", "cfab54a98ceb1f0ad2"],
    [
      str("123456789012345678901234567890"),
      "123456789012345678901234567890",
      str("123456789012345678901234567890"),
    ],
    ["cf 7f ff ff ff ff ff ff ff", "9223372036854775807", "cf7fffffffffffffff"],
    ["d3 80 00 00 00 00 00 00 00", "-9223372036854775808", "d38000000000000000"],
    [
      "cb 3f b9 99 99 99 99 99 9a",
      "0.1000000000000000055511151231257827021181583404541015625",
      "cb3fb999999999999a",
    ],
    [str("1e3"), "1000", "cd03e8"],
  ])("%s decodes to %s and encodes as %s", (wire, decimal, again) => {
    const value = decodeMsgpack(bytes(wire), t.number);
    expect(String(value)).toBe(decimal);
    expect(hex(encodeMsgpack(value, t.number))).toBe(again.replace(/\s+/g, ""));
  });

  it("gives plain JS numbers where they are exact", () => {
    expect(decodeMsgpack(bytes(str("0.1")), t.number)).toBe(0.1);
    expect(decodeMsgpack(bytes("cd 03 e8"), t.number)).toBe(1000);
    expect(decodeMsgpack(bytes(str("9007199254740993")), t.number)).toBeInstanceOf(CtyNumber);
  });

  it("canonicalizes decimals", () => {
    expect(canonicalDecimal("-0.000")).toBe("0");
    expect(canonicalDecimal("00120.5000")).toBe("120.5");
    expect(canonicalDecimal("1.5e-3")).toBe("0.0015");
    expect(canonicalDecimal("1e+21")).toBe("1000000000000000000000");
    expect(() => canonicalDecimal("1e999999")).toThrow();
    expect(() => canonicalDecimal("abc")).toThrow();
    expect(exactDecimalOfDouble(0.5)).toBe("0.5");
  });

  it("compares numbers by value", () => {
    expect(valuesEqual(new CtyNumber("0.10"), 0.1, t.number)).toBe(true);
    expect(valuesEqual(new CtyNumber("12345678901234567890"), 2 ** 64, t.number)).toBe(false);
  });
});

describe("JSON form (raw_state)", () => {
  const type = t.object({
    id: t.string,
    size: t.number,
    price: t.number,
    any: t.dynamic,
    tags: t.map(t.string),
  });

  it("keeps big numbers and decodes dynamic {value,type}", () => {
    const raw = `{
      "id": "x", "size": 12345678901234567890, "price": 0.1,
      "any": {"value": {"a": [1, 2]}, "type": ["object", {"a": ["list", "number"]}]},
      "tags": {"__proto__": "p"}, "removed": true
    }`;
    const value = decodeJson(raw, type, { ignoreUndefinedAttributes: true }) as Record<string, unknown>;
    expect(String(value.size)).toBe("12345678901234567890");
    expect(value.price).toBe(0.1);
    expect(value.any).toEqual(new Dynamic(t.object({ a: t.list(t.number) }), { a: [1, 2] }));
    expect(Object.keys(value.tags as object)).toEqual(["__proto__"]);
    expect(() => decodeJson(raw, type)).toThrow(/removed/);
    expect(encodeJson(value as never, type)).toBe(
      '{"any":{"value":{"a":[1,2]},"type":["object",{"a":["list","number"]}]},"id":"x","price":0.1,"size":12345678901234567890,"tags":{"__proto__":"p"}}',
    );
  });

  it("reads states of small integers and of other numbers alike", () => {
    const small = '{"id": "a\\"1.5", "size": 42, "price": -7, "any": null, "tags": {"n": "2.5e3"}}';
    expect(decodeJson(small, type)).toEqual({
      id: 'a"1.5',
      size: 42,
      price: -7,
      any: null,
      tags: { n: "2.5e3" },
    });
    const other = '{"id": "b", "size": 9007199254740993, "price": 2.50, "any": null, "tags": null}';
    const value = decodeJson(other, type) as Record<string, unknown>;
    expect(String(value.size)).toBe("9007199254740993");
    expect(value.price).toBe(2.5);
    expect(() => decodeJson('{"id": 1}', type)).toThrow(/string expected at id/);
    expect(() => decodeJson('{"id": "x",', type)).toThrow(/invalid JSON/);
  });

  it("fills missing attributes with null", () => {
    expect(decodeJson('{"id":"x"}', type)).toEqual({
      id: "x",
      size: null,
      price: null,
      any: null,
      tags: null,
    });
  });
});

describe("infinite numbers", () => {
  it("round-trip as float64 and compare only to themselves", () => {
    expect(hex(encodeMsgpack(Number.POSITIVE_INFINITY, t.number))).toBe("cb7ff0000000000000");
    expect(decodeMsgpack(bytes("cb 7f f0 00 00 00 00 00 00"), t.number)).toBe(Number.POSITIVE_INFINITY);
    expect(valuesEqual(Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY, t.number)).toBe(true);
    expect(valuesEqual(Number.POSITIVE_INFINITY, 1, t.number)).toBe(false);
    expect(valuesEqual(1, Number.NEGATIVE_INFINITY, t.number)).toBe(false);
    expect(() => encodeMsgpack(Number.NaN, t.number)).toThrow(CtyCodecError);
  });
});

describe("bytes no Terraform sends", () => {
  it.each([
    [
      "a string of invalid UTF-8",
      Buffer.from([0xa3, 0xed, 0xa0, 0x80]),
      t.string,
      "a string is not valid UTF-8",
    ],
    [
      "an array claiming 4 billion elements",
      Buffer.from([0xdd, 0xff, 0xff, 0xff, 0xff, 0xc0]),
      t.list(t.string),
      "truncated msgpack value",
    ],
    [
      "a map claiming 4 billion entries",
      Buffer.from([0xdf, 0xff, 0xff, 0xff, 0xff, 0xc0]),
      t.map(t.string),
      "truncated msgpack value",
    ],
  ])("%s is a CtyCodecError, not a crash", (_what, bytes, type, message) => {
    expect(() => decodeMsgpack(bytes, type)).toThrow(new CtyCodecError(message));
  });
});
