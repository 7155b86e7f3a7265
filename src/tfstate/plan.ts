import { isJsonObject, type JsonObject, type JsonValue, shownJson } from "./json";
import {
  objectAddress,
  type PlannedImport,
  readRawState,
  readShowJsonValues,
  StateDocumentError,
  type StateSnapshot,
} from "./state";

// Saved plans as `terraform show -json <plan>` prints them: what each resource object will become,
// in Terraform's words (actions, before, after, what is unknown until apply, why a replacement),
// and the state the plan was made from. Also the one place that tells a plan from a state when a
// JSON document could be either.

/** What a plan does to one resource object. Replacements are one action, in either order. */
export type ChangeAction = "create" | "update" | "replace" | "delete" | "no-op" | "read" | "forget";

/** The planned change of one resource object. */
export interface ResourceChange {
  /** The full address, e.g. `module.gpu.gpurental_instance.node[0]`. */
  address: string;
  /** The module instance path; empty for the root module. */
  module: string;
  mode: "managed" | "data";
  type: string;
  name: string;
  indexKey?: number | string;
  /** Set when the change is about a deposed object. */
  deposed?: string;
  action: ChangeAction;
  /** For replacements: whether the old object goes first (Terraform's default) or the new one is created first. */
  replaceOrder?: "delete-first" | "create-first";
  /** The object's values before the change; null for a create. May hold secrets. */
  before: JsonObject | null;
  /** The planned values; null for a delete. Attributes unknown until apply are absent or null here. */
  after: JsonObject | null;
  /** Which attributes of `after` are unknown until apply (true, or a nested structure of trues). */
  afterUnknown: JsonObject;
  /** Which attributes of `before` / `after` are sensitive (true, or a nested structure). */
  beforeSensitive: JsonObject;
  afterSensitive: JsonObject;
  /** The attribute paths that force a replacement. */
  replacePaths: (string | number)[][];
  /** Terraform's reason for the action, e.g. `replace_because_cannot_update`, `delete_because_no_resource_config`. */
  actionReason?: string;
  /** The ID an `import` block adopts, when the change imports the object. */
  importingId?: string;
}

/** A saved plan as `terraform show -json` describes it. */
export interface PlanDocument {
  /** Where it was read from, for messages. */
  source: string;
  terraformVersion?: string;
  /** Every resource change Terraform lists, data sources included, no-ops included. */
  changes: ResourceChange[];
  /** The (refreshed) state the plan starts from. */
  priorState: StateSnapshot;
  /** Whether Terraform could apply it; false when it errored. */
  applyable: boolean;
  /** Whether the plan errored (Terraform saves such plans only in automation). */
  errored: boolean;
  /** When Terraform made it, as it recorded. */
  timestamp?: string;
}

/** A JSON document told apart: a state, or a plan with the state it starts from. */
export type TerraformDocument =
  | { kind: "state"; state: StateSnapshot }
  | { kind: "plan"; plan: PlanDocument };

function actionOf(
  actions: JsonValue | undefined,
  where: string,
  source: string,
): Pick<ResourceChange, "action" | "replaceOrder"> {
  if (!Array.isArray(actions) || actions.some((a) => typeof a !== "string")) {
    throw new StateDocumentError(source, `${where}.change.actions is not a list of strings`);
  }
  const key = actions.join(",");
  switch (key) {
    case "create":
    case "update":
    case "delete":
    case "no-op":
    case "read":
    case "forget":
      return { action: key };
    case "delete,create":
      return { action: "replace", replaceOrder: "delete-first" };
    case "create,delete":
      return { action: "replace", replaceOrder: "create-first" };
    default:
      throw new StateDocumentError(
        source,
        `${where}.change.actions ${shownJson(actions)} is not an action Terraform plans`,
      );
  }
}

function objectOr(v: JsonValue | undefined): JsonObject {
  return isJsonObject(v ?? null) ? (v as JsonObject) : {};
}

function pathsOf(v: JsonValue | undefined): (string | number)[][] {
  if (!Array.isArray(v)) return [];
  return v
    .filter((p): p is JsonValue[] => Array.isArray(p))
    .map((p) => p.filter((s): s is string | number => typeof s === "string" || typeof s === "number"));
}

/** Reads `terraform show -json` of a saved plan. */
export function readPlanJson(doc: JsonObject, source: string): PlanDocument {
  const terraformVersion = typeof doc.terraform_version === "string" ? doc.terraform_version : undefined;
  const list = doc.resource_changes ?? [];
  if (!Array.isArray(list)) throw new StateDocumentError(source, "`resource_changes` is not a list");
  const changes: ResourceChange[] = list.map((rc, i) => {
    const where = `resource_changes[${i}]`;
    if (!isJsonObject(rc) || !isJsonObject(rc.change ?? null)) {
      throw new StateDocumentError(source, `${where} has no change object`);
    }
    const change = rc.change as JsonObject;
    const type = typeof rc.type === "string" ? rc.type : "";
    const name = typeof rc.name === "string" ? rc.name : "";
    if (!type || !name) throw new StateDocumentError(source, `${where} has no type or name`);
    const module = typeof rc.module_address === "string" ? rc.module_address : "";
    const mode = rc.mode === "data" ? "data" : "managed";
    const indexKey = typeof rc.index === "number" || typeof rc.index === "string" ? rc.index : undefined;
    const importing = isJsonObject(change.importing ?? null) ? (change.importing as JsonObject) : undefined;
    return {
      address:
        typeof rc.address === "string" ? rc.address : objectAddress({ module, mode, type, name, indexKey }),
      module,
      mode,
      type,
      name,
      ...(indexKey !== undefined ? { indexKey } : {}),
      ...(typeof rc.deposed === "string" ? { deposed: rc.deposed } : {}),
      ...actionOf(change.actions, where, source),
      before: isJsonObject(change.before ?? null) ? (change.before as JsonObject) : null,
      after: isJsonObject(change.after ?? null) ? (change.after as JsonObject) : null,
      afterUnknown: objectOr(change.after_unknown),
      beforeSensitive: objectOr(change.before_sensitive),
      afterSensitive: objectOr(change.after_sensitive),
      replacePaths: pathsOf(change.replace_paths),
      ...(typeof rc.action_reason === "string" ? { actionReason: rc.action_reason } : {}),
      ...(importing && typeof importing.id === "string" ? { importingId: importing.id } : {}),
    };
  });
  const prior = objectOr(doc.prior_state);
  const priorState = readShowJsonValues(
    prior.values,
    `${source} (prior state)`,
    "show-json-plan",
    terraformVersion,
  );
  priorState.imports = plannedImports(changes);
  return {
    source,
    ...(terraformVersion ? { terraformVersion } : {}),
    changes,
    priorState,
    applyable: doc.applyable !== false,
    errored: doc.errored === true,
    ...(typeof doc.timestamp === "string" ? { timestamp: doc.timestamp } : {}),
  };
}

/** The objects a plan adopts with `import` blocks. */
export function plannedImports(changes: readonly ResourceChange[]): PlannedImport[] {
  return changes
    .filter((c) => c.importingId !== undefined)
    .map((c) => ({ address: c.address, type: c.type, id: c.importingId! }));
}

/**
 * Tells what a JSON document is: a raw state (version 4), `terraform show -json` of a state, or
 * `terraform show -json` of a plan. Anything else is an error naming the source.
 */
export function readTerraformDocument(doc: JsonValue, source: string): TerraformDocument {
  if (!isJsonObject(doc))
    throw new StateDocumentError(source, "expected a JSON object (a Terraform state or plan)");
  if ("resource_changes" in doc || "planned_values" in doc || "prior_state" in doc) {
    return { kind: "plan", plan: readPlanJson(doc, source) };
  }
  if ("format_version" in doc) {
    const tv = typeof doc.terraform_version === "string" ? doc.terraform_version : undefined;
    return { kind: "state", state: readShowJsonValues(doc.values, source, "show-json-state", tv) };
  }
  if ("version" in doc && ("resources" in doc || "lineage" in doc)) {
    return { kind: "state", state: readRawState(doc, source) };
  }
  throw new StateDocumentError(
    source,
    "is neither a Terraform state (a .tfstate file or `terraform state pull`) nor `terraform show -json` output",
  );
}

/** Whether a nested sensitivity / unknown marker covers a top-level attribute. */
export function marked(markers: JsonObject, attribute: string): boolean {
  const m = markers[attribute];
  return m === true;
}
