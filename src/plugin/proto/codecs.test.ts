import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Enum, type Field, type INamespace, type Namespace, Root, Type } from "protobufjs/light";
import { generateCodecs } from "../../../scripts/build/proto-codecs";
import { CONVERSION } from ".";
import type { MessageCodec } from "./codecs";
import { messageType } from "./reflection";

// The production bundle encodes and decodes with codecs generated at build time
// (scripts/build/proto-codecs.js); everything else with protobufjs's reflection (codecs.ts). Every message
// of the protocol, filled in and empty, must come out the same from both.

const descriptor = JSON.parse(readFileSync(join(__dirname, "descriptor.json"), "utf8")) as INamespace;

function loadGenerated(): (fullName: string) => MessageCodec {
  const module = { exports: {} as { messageCodec: (fullName: string) => MessageCodec } };
  new Function("module", "exports", "require", generateCodecs(descriptor))(module, module.exports, require);
  return module.exports.messageCodec;
}

function messageNames(ns: Namespace, out: string[] = []): string[] {
  for (const nested of ns.nestedArray) {
    if (nested instanceof Type) out.push(nested.fullName.slice(1));
    if ("nestedArray" in nested) messageNames(nested as Namespace, out);
  }
  return out;
}

const SCALARS: Record<string, unknown> = {
  string: "text ü",
  bool: true,
  bytes: Buffer.from([0, 1, 2, 255]),
  double: 1.5,
  float: 0.25,
  int32: -7,
  uint32: 7,
  sint32: -9,
  fixed32: 11,
  sfixed32: -13,
  int64: 1234567890123,
  uint64: 1234567890123,
  sint64: -1234567890123,
  fixed64: 99,
  sfixed64: -99,
};

/** A message with every field set (nested messages to a depth of 3). */
function sample(type: Type, depth: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const field of type.fieldsArray) {
    const value = () => fieldValue(field, depth);
    if (field.map) out[field.name] = { a: value(), b: value() };
    else if (field.repeated) out[field.name] = [value(), value()];
    else out[field.name] = value();
  }
  return out;
}

function fieldValue(field: Field, depth: number): unknown {
  const resolved = field.resolve().resolvedType;
  if (resolved instanceof Enum) return Object.values(resolved.values).at(-1);
  if (resolved instanceof Type) return depth > 0 ? sample(resolved, depth - 1) : {};
  return SCALARS[field.type];
}

describe("the protocol codecs generated at build time", () => {
  const generated = loadGenerated();
  const names = messageNames(Root.fromJSON(descriptor));

  it("cover the whole protocol", () => {
    expect(names.length).toBeGreaterThan(50);
    for (const name of names)
      expect(generated(name)).toEqual(expect.objectContaining({ encode: expect.any(Function) }));
    expect(() => generated("tfplugin6.Nope")).toThrow(/no message type/);
  });

  it.each(names)("encode and decode %s as protobufjs's reflection does", (name) => {
    const reflected = messageType(name) as unknown as MessageCodec;
    const built = generated(name);
    for (const value of [sample(messageType(name), 3), {}]) {
      const expected = Buffer.from(reflected.encode(reflected.fromObject(value)).finish());
      const actual = Buffer.from(built.encode(built.fromObject(value)).finish());
      expect(actual.toString("hex")).toBe(expected.toString("hex"));
      expect(built.toObject(built.decode(expected), CONVERSION)).toEqual(
        reflected.toObject(reflected.decode(expected), CONVERSION),
      );
    }
  });
});
