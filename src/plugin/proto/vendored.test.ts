import { readFileSync } from "node:fs";
import { join } from "node:path";
import {
  Enum,
  type Field,
  MapField,
  type Namespace,
  type NamespaceBase,
  parse,
  Root,
  Service,
  Type,
} from "protobufjs";

// The protocol this provider serves (tfplugin6.proto beside this file) is a part of Terraform's
// published protocol, vendored whole in terraform/. Every message, enum, field and RPC served must
// be the published one, field number, type and label alike, or Terraform would read other bytes
// than the provider meant; and what is left out must be only what the provider chose to leave out.

const here = __dirname;
const vendored = join(here, "terraform");

/** Parses .proto files into one root, Timestamp from our own copy of the well-known type. */
function load(...files: string[]): Root {
  const root = new Root();
  for (const file of [join(here, "timestamp.proto"), ...files]) {
    parse(readFileSync(file, "utf8"), root, { keepCase: true, alternateCommentMode: false });
  }
  root.resolveAll();
  return root;
}

/** Every message, enum and service under a namespace, by full name. */
function members(
  ns: NamespaceBase,
  out = new Map<string, Type | Enum | Service>(),
): Map<string, Type | Enum | Service> {
  for (const nested of ns.nestedArray) {
    if (nested instanceof Type || nested instanceof Enum || nested instanceof Service)
      out.set(nested.fullName, nested);
    if ("nestedArray" in nested) members(nested as Namespace, out);
  }
  return out;
}

/** A field as the wire sees it: number, type, label, map key, oneof. */
function wire(f: Field): string {
  const key = f instanceof MapField ? `map<${f.keyType},` : "";
  const label = f.repeated ? "repeated " : f.options?.proto3_optional ? "optional " : "";
  const type = f.resolvedType ? f.resolvedType.fullName : f.type;
  return `${f.id} ${label}${key}${type}${key ? ">" : ""}${f.partOf && !f.options?.proto3_optional ? ` oneof ${f.partOf.name}` : ""}`;
}

const served = members(load(join(here, "tfplugin6.proto")).lookup("tfplugin6") as Namespace);
const published = members(load(join(vendored, "tfplugin6.11.proto")).lookup("tfplugin6") as Namespace);

describe("the served protocol against Terraform's published tfplugin6 6.11", () => {
  it.each([...served.keys()])("%s is the published one", (name) => {
    const ours = served.get(name)!;
    const theirs = published.get(name);
    expect(theirs?.constructor.name).toBe(ours.constructor.name);
    if (ours instanceof Type && theirs instanceof Type) {
      for (const f of ours.fieldsArray)
        expect(`${f.name} ${wire(f)}`).toBe(`${f.name} ${wire(theirs.fields[f.name]!)}`);
      // A field left out of a request would be skipped silently: every field of the published
      // message is served.
      expect(Object.keys(ours.fields).sort()).toEqual(Object.keys(theirs.fields).sort());
    }
    if (ours instanceof Enum && theirs instanceof Enum) expect(ours.values).toEqual(theirs.values);
    if (ours instanceof Service && theirs instanceof Service) {
      for (const m of ours.methodsArray) {
        const p = theirs.methods[m.name];
        expect([m.name, m.requestType, m.responseType, !!m.requestStream, !!m.responseStream]).toEqual([
          m.name,
          p?.requestType,
          p?.responseType,
          !!p?.requestStream,
          !!p?.responseStream,
        ]);
      }
    }
  });

  it("leaves out only the state store RPCs and their messages", () => {
    const provider = (name: string) => (name.startsWith(".") ? name : `.tfplugin6.${name}`);
    const ours = served.get(provider("Provider")) as Service;
    const theirs = published.get(provider("Provider")) as Service;
    const missing = theirs.methodsArray.map((m) => m.name).filter((m) => !ours.methods[m]);
    expect(missing.sort()).toEqual(
      [
        "ConfigureStateStore",
        "DeleteState",
        "GetStates",
        "LockState",
        "ReadStateBytes",
        "UnlockState",
        "ValidateStateStoreConfig",
        "WriteStateBytes",
      ].sort(),
    );
    const stateStore =
      /State(Store|Bytes|Range)|^\.tfplugin6\.(GetStates|DeleteState|LockState|UnlockState|RequestChunkMeta)/;
    const missingMessages = [...published.keys()].filter((n) => !served.has(n) && !stateStore.test(n));
    expect(missingMessages).toEqual([]);
  });
});

describe("the vendored protocol files", () => {
  it.each([
    ["tfplugin6.8.proto", "v1.11.4", "6.8"],
    ["tfplugin6.9.proto", "v1.12.0", "6.9"],
    ["tfplugin6.10.proto", "v1.14.0", "6.10"],
    ["tfplugin6.11.proto", "v1.16.0-alpha20260513", "6.11"],
  ])("%s names its tag %s and is protocol %s", (file, tag, version) => {
    const text = readFileSync(join(vendored, file), "utf8");
    expect(text.split("\n")[0]).toContain(`tag ${tag} (commit `);
    expect(text).toContain(`// Terraform Plugin RPC protocol version ${version}\n`);
    expect(() => load(join(vendored, file))).not.toThrow();
  });
});
