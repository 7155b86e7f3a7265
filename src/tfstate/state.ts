import { UserFacingError } from "../user-facing";
import { isJsonObject, type JsonObject, type JsonValue, shownJson } from "./json";

// Terraform states as gpurental reads them: the raw state file (format version 4, what
// `terraform state pull` prints and what a local backend writes) and the state half of
// `terraform show -json` (a state's `values`, or a plan's `prior_state`). Both become one list of
// managed resource objects with their full address, however deep the module and whatever the
// `count` or `for_each` key, so a reader never walks either format itself. Data sources are left
// out: reading an object does not hold it.

/** Where a state came from and how it was written. */
export type StateFormat = "state-v4" | "show-json-state" | "show-json-plan";

/** One object of a managed resource in a state. */
export interface StateObject {
  /** The full address, e.g. `module.gpu["a"].gpurental_instance.node[1]`. */
  address: string;
  /** The module instance path, e.g. `module.gpu["a"]`; empty for the root module. */
  module: string;
  type: string;
  name: string;
  /** The `count` index or `for_each` key; absent for a single resource. */
  indexKey?: number | string;
  /** Set for an object `create_before_destroy` left behind to be destroyed (still real, still held). */
  deposed?: string;
  /** Whether the object is tainted (the next apply replaces it; it exists until then). */
  tainted: boolean;
  /** The object's attributes as recorded. May hold secrets: never print them whole. */
  values: JsonObject;
}

/** A state read from one place. */
export interface StateSnapshot {
  /** Where it was read from, for messages: a file, `terraform state pull in <dir>`, a CDKTF stack. */
  source: string;
  format: StateFormat;
  /** The Terraform version that wrote it, when recorded. */
  terraformVersion?: string;
  /** Managed resource objects, in the order the state lists them. */
  objects: StateObject[];
  /** Objects a plan adopts with an `import` block (only in a plan). */
  imports: PlannedImport[];
  /** Why the state is empty, when it is for a reason worth saying (no state file yet). */
  note?: string;
}

/** An object a plan imports: it exists already and the plan gives it an address. */
export interface PlannedImport {
  address: string;
  type: string;
  /** The ID being imported. */
  id: string;
}

/** Raised when a document is JSON but no state Terraform writes; names the source and what is wrong. */
export class StateDocumentError extends UserFacingError {
  constructor(
    readonly source: string,
    detail: string,
  ) {
    super(`${source}: ${detail}`);
    this.name = "StateDocumentError";
  }
}

/** The `[0]` / `["key"]` suffix of an instance address. */
export function indexSuffix(key: number | string | undefined): string {
  if (key === undefined) return "";
  return typeof key === "number" ? `[${key}]` : `[${JSON.stringify(key)}]`;
}

/** The address of a resource object from its parts. */
export function objectAddress(parts: {
  module?: string;
  mode?: string;
  type: string;
  name: string;
  indexKey?: number | string;
}): string {
  const prefix = parts.module ? `${parts.module}.` : "";
  const data = parts.mode === "data" ? "data." : "";
  return `${prefix}${data}${parts.type}.${parts.name}${indexSuffix(parts.indexKey)}`;
}

function str(v: JsonValue | undefined): string | undefined {
  return typeof v === "string" ? v : undefined;
}

function indexKeyOf(v: JsonValue | undefined): number | string | undefined {
  if (typeof v === "number" || typeof v === "string") return v;
  if (typeof v === "bigint") return Number(v);
  return undefined;
}

/** Reads a raw state (`terraform state pull`, a `.tfstate` file): format version 4. */
export function readRawState(doc: JsonObject, source: string): StateSnapshot {
  const version = doc.version;
  if (version !== 4) {
    throw new StateDocumentError(
      source,
      `state format version ${shownJson(version)} is not supported; gpurental reads version 4, written by Terraform 0.12 and later (run \`terraform state pull\` with a current Terraform to upgrade it)`,
    );
  }
  const resources = doc.resources ?? [];
  if (!Array.isArray(resources)) throw new StateDocumentError(source, "`resources` is not a list");
  const objects: StateObject[] = [];
  resources.forEach((r, i) => {
    if (!isJsonObject(r)) throw new StateDocumentError(source, `resources[${i}] is not an object`);
    if (r.mode !== "managed") return;
    const type = str(r.type);
    const name = str(r.name);
    if (!type || !name) throw new StateDocumentError(source, `resources[${i}] has no type or name`);
    const module = str(r.module) ?? "";
    const instances = r.instances ?? [];
    if (!Array.isArray(instances)) {
      throw new StateDocumentError(source, `resources[${i}].instances is not a list`);
    }
    instances.forEach((inst, j) => {
      if (!isJsonObject(inst) || !isJsonObject(inst.attributes ?? null)) {
        throw new StateDocumentError(
          source,
          `resources[${i}].instances[${j}] (${objectAddress({ module, type, name })}) has no attributes object`,
        );
      }
      const indexKey = indexKeyOf(inst.index_key);
      const deposed = str(inst.deposed);
      objects.push({
        address: objectAddress({ module, type, name, indexKey }),
        module,
        type,
        name,
        ...(indexKey !== undefined ? { indexKey } : {}),
        ...(deposed ? { deposed } : {}),
        tainted: inst.status === "tainted",
        values: inst.attributes as JsonObject,
      });
    });
  });
  const terraformVersion = str(doc.terraform_version);
  return {
    source,
    format: "state-v4",
    ...(terraformVersion ? { terraformVersion } : {}),
    objects,
    imports: [],
  };
}

/**
 * Reads the `values` of `terraform show -json` (a state, or a plan's `prior_state`): the root module
 * and every child module, recursively.
 */
export function readShowJsonValues(
  values: JsonValue | undefined,
  source: string,
  format: StateFormat,
  terraformVersion?: string,
): StateSnapshot {
  const objects: StateObject[] = [];
  const walk = (mod: JsonValue, where: string) => {
    if (!isJsonObject(mod)) throw new StateDocumentError(source, `${where} is not an object`);
    const module = str(mod.address) ?? "";
    const resources = mod.resources ?? [];
    if (!Array.isArray(resources)) throw new StateDocumentError(source, `${where}.resources is not a list`);
    resources.forEach((r, i) => {
      if (!isJsonObject(r)) throw new StateDocumentError(source, `${where}.resources[${i}] is not an object`);
      if (r.mode !== "managed") return;
      const type = str(r.type);
      const name = str(r.name);
      if (!type || !name)
        throw new StateDocumentError(source, `${where}.resources[${i}] has no type or name`);
      const indexKey = indexKeyOf(r.index);
      const deposed = str(r.deposed_key);
      objects.push({
        address: str(r.address) ?? objectAddress({ module, type, name, indexKey }),
        module,
        type,
        name,
        ...(indexKey !== undefined ? { indexKey } : {}),
        ...(deposed ? { deposed } : {}),
        tainted: r.tainted === true,
        values: isJsonObject(r.values ?? null) ? (r.values as JsonObject) : {},
      });
    });
    const children = mod.child_modules ?? [];
    if (!Array.isArray(children))
      throw new StateDocumentError(source, `${where}.child_modules is not a list`);
    children.forEach((c, i) => {
      walk(c, `${where}.child_modules[${i}]`);
    });
  };
  if (isJsonObject(values ?? null) && (values as JsonObject).root_module !== undefined) {
    walk((values as JsonObject).root_module!, "values.root_module");
  }
  return { source, format, ...(terraformVersion ? { terraformVersion } : {}), objects, imports: [] };
}

/** The objects of one resource type in a state. */
export function objectsOfType(snapshot: StateSnapshot, type: string): StateObject[] {
  return snapshot.objects.filter((o) => o.type === type);
}

/** The recorded `id` of an object, when it has one. */
export function objectId(o: StateObject): string | undefined {
  const id = o.values.id;
  return typeof id === "string" && id !== "" ? id : undefined;
}
