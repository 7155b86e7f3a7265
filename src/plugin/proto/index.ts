import type { MethodDefinition, ServiceDefinition } from "@grpc/grpc-js";
import type { IConversionOptions } from "protobufjs/light";
import { type MessageCodec, messageCodec } from "./codecs";
import descriptor from "./descriptor.json";

// The descriptor is generated from the .proto files beside this module at build time
// (scripts/build/bundle-provider.js; a test keeps it in step). Building the grpc-js service definitions
// here from the JSON skips @grpc/proto-loader, which eagerly builds reflection descriptors for
// every message, and the messages are encoded by the codecs of codecs.ts (in the production
// bundle, generated at build time): all of that is start-up time Terraform pays 2-5 times per
// command.

/** The shape proto-loader would give messages with these options: snake_case, Number, Buffer. */
export const CONVERSION: IConversionOptions = {
  longs: Number,
  enums: Number,
  bytes: Buffer,
  defaults: true,
  oneofs: true,
};

interface MethodJson {
  requestType: string;
  responseType: string;
  requestStream?: boolean;
  responseStream?: boolean;
}

/** The methods of a service straight from the descriptor JSON, without building protobufjs types. */
function serviceMethods(fullName: string): Record<string, MethodJson> {
  let node: unknown = descriptor;
  for (const part of fullName.split(".")) {
    node = (node as { nested?: Record<string, unknown> }).nested?.[part];
  }
  const methods = (node as { methods?: Record<string, MethodJson> } | undefined)?.methods;
  if (!methods) throw new Error(`no service ${fullName} in the descriptor`);
  return methods;
}

/**
 * grpc-js definition of the methods of a service, e.g. "tfplugin6.Provider". Message codecs are
 * made on the first call of each method: grpc-js needs only the functions before the handshake.
 */
export function serviceDefinition(fullName: string): ServiceDefinition {
  const pkg = fullName.slice(0, fullName.lastIndexOf("."));
  const def: Record<string, MethodDefinition<object, object>> = {};
  for (const [name, m] of Object.entries(serviceMethods(fullName))) {
    const req = lazyType(`${pkg}.${m.requestType}`);
    const res = lazyType(`${pkg}.${m.responseType}`);
    def[name] = {
      path: `/${fullName}/${name}`,
      requestStream: Boolean(m.requestStream),
      responseStream: Boolean(m.responseStream),
      requestSerialize: (value) => serialize(req(), value),
      requestDeserialize: (bytes) => deserialize(req(), bytes),
      responseSerialize: (value) => serialize(res(), value),
      responseDeserialize: (bytes) => deserialize(res(), bytes),
      originalName: name,
    };
  }
  return def;
}

/** The names of the RPCs of a service, in .proto order. */
export function methodNames(fullName: string): string[] {
  return Object.keys(serviceMethods(fullName));
}

function lazyType(fullName: string): () => MessageCodec {
  let codec: MessageCodec | undefined;
  return () => {
    codec ??= messageCodec(fullName);
    return codec;
  };
}

/** Encodes a message; a Buffer is a message encoded already (see encodeResponse) and passes as is. */
function serialize(codec: MessageCodec, value: object): Buffer {
  if (Buffer.isBuffer(value)) return value;
  return Buffer.from(codec.encode(codec.fromObject(value)).finish());
}

function deserialize(codec: MessageCodec, bytes: Buffer): object {
  return codec.toObject(codec.decode(bytes), CONVERSION);
}
