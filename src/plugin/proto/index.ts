import type { MethodDefinition, ServiceDefinition } from "@grpc/grpc-js";
import { type IConversionOptions, type INamespace, Root, type Type } from "protobufjs/light";
import descriptor from "./descriptor.json";

// The descriptor is generated from the .proto files beside this module at build time
// (scripts/bundle-provider.js; a test keeps it in step). Reading JSON with protobufjs/light skips
// the .proto parser, and building the grpc-js service definitions here skips @grpc/proto-loader,
// which eagerly builds reflection descriptors for every message: both cost start-up time that
// Terraform pays 2-5 times per command.

/** The shape proto-loader would give messages with these options: snake_case, Number, Buffer. */
export const CONVERSION: IConversionOptions = {
  longs: Number,
  enums: Number,
  bytes: Buffer,
  defaults: true,
  oneofs: true,
};

let root: Root | undefined;

function protoRoot(): Root {
  root ??= Root.fromJSON(descriptor as INamespace);
  return root;
}

/** The protobufjs type of a fully qualified message name, e.g. "tfplugin6.DynamicValue". */
export function messageType(fullName: string): Type {
  return protoRoot().lookupType(fullName);
}

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
 * grpc-js definition of the methods of a service, e.g. "tfplugin6.Provider". Message types are
 * built on the first call of each method: grpc-js needs only the functions before the handshake,
 * and building protobufjs types for the whole protocol would delay the handshake line.
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

function lazyType(fullName: string): () => Type {
  let type: Type | undefined;
  return () => {
    type ??= messageType(fullName);
    return type;
  };
}

/** Encodes a message; a Buffer is a message encoded already (see encodeResponse) and passes as is. */
function serialize(type: Type, value: object): Buffer {
  if (Buffer.isBuffer(value)) return value;
  return Buffer.from(type.encode(type.fromObject(value)).finish());
}

function deserialize(type: Type, bytes: Buffer): object {
  return type.toObject(type.decode(bytes), CONVERSION);
}
