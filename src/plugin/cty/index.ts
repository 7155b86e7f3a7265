// The cty type system and its wire forms: types, the value model, msgpack and JSON codecs.
import type { DynamicValue, DynamicValueOut } from "../tfplugin6";
import { decodeJson } from "./json";
import { decodeMsgpack, encodeMsgpack } from "./msgpack";
import type { CtyType } from "./types";
import type { CtyValue } from "./values";

export { decodeJson, decodeJsonUntyped, encodeJson, type JsonDecodeOptions } from "./json";
export { attributeNames, CtyCodecError, decodeMsgpack, encodeMsgpack } from "./msgpack";
export * from "./types";
export * from "./values";

/** Decodes a DynamicValue: msgpack when present (what Terraform sends), else JSON; empty is null. */
export function fromDynamicValue(
  dv: DynamicValue | DynamicValueOut | null | undefined,
  type: CtyType,
): CtyValue {
  if (!dv) return null;
  if (dv.msgpack && dv.msgpack.length > 0) return decodeMsgpack(dv.msgpack, type);
  if (dv.json && dv.json.length > 0) return decodeJson(dv.json, type);
  return null;
}

/** Encodes a value as a DynamicValue in msgpack, the form Terraform reads reliably. */
export function toDynamicValue(value: CtyValue | undefined, type: CtyType): DynamicValueOut {
  return { msgpack: encodeMsgpack(value, type) };
}
