import type { MethodDefinition, ServiceDefinition } from "@grpc/grpc-js";
import { type IConversionOptions, type INamespace, Root, type Service, type Type } from "protobufjs/light";
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

function serializer(type: Type): (value: object) => Buffer {
  return (value) => Buffer.from(type.encode(type.fromObject(value)).finish());
}

function deserializer(type: Type): (bytes: Buffer) => object {
  return (bytes) => type.toObject(type.decode(bytes), CONVERSION);
}

/** grpc-js definition of the unary methods of a service, e.g. "tfplugin6.Provider". */
export function serviceDefinition(fullName: string): ServiceDefinition {
  const service = protoRoot().lookupService(fullName) as Service;
  const def: Record<string, MethodDefinition<object, object>> = {};
  for (const method of service.methodsArray) {
    method.resolve();
    const req = method.resolvedRequestType!;
    const res = method.resolvedResponseType!;
    def[method.name] = {
      path: `/${fullName}/${method.name}`,
      requestStream: Boolean(method.requestStream),
      responseStream: Boolean(method.responseStream),
      requestSerialize: serializer(req),
      requestDeserialize: deserializer(req),
      responseSerialize: serializer(res),
      responseDeserialize: deserializer(res),
      originalName: method.name,
    };
  }
  return def;
}

/** The names of the RPCs of a service, in .proto order. */
export function methodNames(fullName: string): string[] {
  return (protoRoot().lookupService(fullName) as Service).methodsArray.map((m) => m.name);
}
