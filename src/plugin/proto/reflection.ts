import { type INamespace, Root, type Type } from "protobufjs/light";
import descriptor from "./descriptor.json";

// protobufjs's reflection over the protocol descriptor: message types built from the JSON on first
// use, their functions generated at run time. What the tests inspect, and what the codecs are
// outside the production bundle (see codecs.ts).

let root: Root | undefined;

function protoRoot(): Root {
  root ??= Root.fromJSON(descriptor as INamespace);
  return root;
}

/** The protobufjs type of a fully qualified message name, e.g. "tfplugin6.DynamicValue". */
export function messageType(fullName: string): Type {
  return protoRoot().lookupType(fullName);
}
