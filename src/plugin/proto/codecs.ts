import type { IConversionOptions, Writer } from "protobufjs/light";
import { messageType } from "./reflection";

// How the gRPC layer encodes and decodes a message. Here, protobufjs's reflection: types built from
// the descriptor and their functions generated on first use, in every process. The production
// bundle replaces this module with codecs generated from the same descriptor at build time
// (scripts/build/proto-codecs.js), so that a provider process only runs them; a test checks that both
// encode and decode every message of the protocol alike.

/** The functions of one message type, as protobufjs generates them. */
export interface MessageCodec {
  encode(message: object): Writer;
  decode(bytes: Uint8Array): object;
  fromObject(value: object): object;
  toObject(message: object, options: IConversionOptions): object;
}

/** The codec of a fully qualified message name, e.g. "tfplugin6.DynamicValue". */
export function messageCodec(fullName: string): MessageCodec {
  return messageType(fullName) as unknown as MessageCodec;
}
