// Planning done so that Terraform's plan checks (objchange.AssertPlanValid) always pass:
//  - a configured value is planned exactly as configured;
//  - only computed attributes left unset in configuration are planned freely: unknown on create,
//    the prior value on update (unknown when the prior value is null and the resource changes),
//    then adjusted by plan modifiers and the resource's modifyPlan;
//  - write-only attributes are planned null;
//  - destroy (proposed null) plans null.
import {
  attributeNames,
  type CtyType,
  type CtyValue,
  isRecord,
  isUnknown,
  newRecord,
  unknown,
  valuesEqual,
} from "../plugin/cty";
import { attributeEntries } from "./attribute-entries";
import { type Diagnostics, formatPath, type Path, type PathStep } from "./diagnostics";
import type { Attribute, Attributes, Schema } from "./schema";

type Rec = Record<string, CtyValue>;

function asRec(value: CtyValue | undefined): Rec | null {
  return isRecord(value) ? (value as Rec) : null;
}

function isKnownNonNull(value: CtyValue | undefined): boolean {
  return value !== null && value !== undefined && !isUnknown(value);
}

/** The framework's plan of one resource instance. */
export interface PlannedChange {
  /** The planned object, or null for destroy. */
  planned: Rec | null;
  /** Attribute paths whose change forces replacement. */
  requiresReplace: Path[];
}

/**
 * Whether the configuration asks for a different object than the prior one. Computed attributes
 * the configuration leaves unset are not compared: they follow from the change, not cause it.
 */
function configuredEqual(attributes: Attributes, prior: Rec | null, config: Rec | null): boolean {
  if (!prior || !config) return prior === config;
  return Object.entries(attributes).every(([name, a]) => {
    if (a.writeOnly) return true;
    const c = config[name] ?? null;
    const p = prior[name] ?? null;
    if (a.computed && c === null) return a.default === undefined || valuesEqual(a.default, p, a.type);
    if (!a.nested || !isKnownNonNull(c) || !isKnownNonNull(p)) return valuesEqual(c, p, a.type);
    return nestedConfiguredEqual(a, p, c);
  });
}

function nestedConfiguredEqual(a: Attribute, p: CtyValue, c: CtyValue): boolean {
  const inner = a.nested!.attributes;
  switch (a.nested!.nesting) {
    case "single":
      return configuredEqual(inner, asRec(p), asRec(c));
    case "list":
      return (
        Array.isArray(c) &&
        Array.isArray(p) &&
        c.length === p.length &&
        c.every((el, i) => configuredEqual(inner, asRec(p[i] ?? null), asRec(el)))
      );
    case "map": {
      const cm = asRec(c);
      const pm = asRec(p);
      if (!cm || !pm || Object.keys(cm).length !== Object.keys(pm).length) return false;
      return Object.keys(cm).every(
        (k) => Object.hasOwn(pm, k) && configuredEqual(inner, asRec(pm[k]!), asRec(cm[k]!)),
      );
    }
    case "set": {
      if (!Array.isArray(c) || !Array.isArray(p) || c.length !== p.length) return false;
      const unused = [...p];
      return c.every((el) => {
        const j = unused.findIndex((q) => configuredEqual(inner, asRec(q), asRec(el)));
        if (j >= 0) unused.splice(j, 1);
        return j >= 0;
      });
    }
  }
}

interface Walk {
  readonly resourceChanges: boolean;
  readonly replace: Path[];
  readonly private: Buffer;
}

function planObject(
  attributes: Attributes,
  prior: Rec | null,
  proposed: Rec,
  config: Rec | null,
  walk: Walk,
  at: Path,
  addressable: boolean,
): Rec {
  const out = newRecord<CtyValue>();
  for (const [name, a] of attributeEntries(attributes)) {
    out[name] = planAttribute(
      a,
      prior ? (prior[name] ?? null) : null,
      proposed[name] ?? null,
      config ? (config[name] ?? null) : null,
      prior === null,
      walk,
      addressable ? [...at, { attribute: name }] : at,
      addressable,
    );
  }
  return out;
}

function planAttribute(
  a: Attribute,
  prior: CtyValue,
  proposed: CtyValue,
  config: CtyValue,
  isCreate: boolean,
  walk: Walk,
  at: Path,
  addressable: boolean,
): CtyValue {
  if (a.writeOnly) return null;
  let plan: CtyValue = proposed;
  if (a.computed && config === null) {
    if (a.default !== undefined) plan = a.default;
    else if (isCreate) plan = unknown;
    // Keep the prior value (Terraform's proposal normally holds it already; nested elements it
    // could not pair are paired here), unless there was nothing yet and the object changes: the
    // API may fill it in now.
    else if (prior === null && walk.resourceChanges) plan = unknown;
    else plan = prior;
  } else if (a.nested && isKnownNonNull(config) && isKnownNonNull(plan)) {
    plan = planNested(a, prior, plan, config, walk, at, addressable);
  }
  for (const modifier of a.planModifiers) {
    const res = modifier.modify({
      path: at,
      config,
      state: isCreate ? null : prior,
      plan,
      type: a.type,
      isCreate,
      resourceChanges: walk.resourceChanges,
      private: walk.private,
    });
    if (!res) continue;
    if (res.plan !== undefined) plan = res.plan;
    if (res.requiresReplace && !isCreate) walk.replace.push(at);
  }
  return plan;
}

function planNested(
  a: Attribute,
  prior: CtyValue,
  plan: CtyValue,
  config: CtyValue,
  walk: Walk,
  at: Path,
  addressable: boolean,
): CtyValue {
  const nested = a.nested!;
  const attrs = nested.attributes;
  switch (nested.nesting) {
    case "single": {
      const p = asRec(plan);
      return p ? planObject(attrs, asRec(prior), p, asRec(config), walk, at, addressable) : plan;
    }
    case "list": {
      if (!Array.isArray(plan) || !Array.isArray(config)) return plan;
      const priorList = Array.isArray(prior) ? prior : [];
      return plan.map((el, i) => {
        const p = asRec(el);
        return p
          ? planObject(
              attrs,
              asRec(priorList[i]),
              p,
              asRec(config[i]),
              walk,
              [...at, { index: i }],
              addressable,
            )
          : el;
      });
    }
    case "map": {
      const p = asRec(plan);
      const c = asRec(config);
      if (!p || !c) return plan;
      const priorMap = asRec(prior);
      const out = newRecord<CtyValue>();
      for (const [k, el] of Object.entries(p)) {
        const e = asRec(el);
        out[k] = e
          ? planObject(attrs, asRec(priorMap?.[k]), e, asRec(c[k]), walk, [...at, { key: k }], addressable)
          : el;
      }
      return out;
    }
    case "set": {
      // Set elements have no stable address: pair each planned element with a prior element whose
      // configured attributes are equal, so computed attributes keep their values.
      if (!Array.isArray(plan) || !Array.isArray(config)) return plan;
      const unused = Array.isArray(prior) ? [...prior] : [];
      return plan.map((el, i) => {
        const e = asRec(el);
        if (!e) return el;
        const j = unused.findIndex((p) => configuredEqual(attrs, asRec(p), asRec(config[i] ?? null) ?? e));
        const match = j >= 0 ? asRec(unused.splice(j, 1)[0]) : null;
        return planObject(attrs, match, e, asRec(config[i]) ?? e, walk, at, false);
      });
    }
  }
}

/**
 * Plans a resource change from Terraform's prior state, proposed new state and configuration.
 * Prior null means create (or the create half of a replacement); proposed null means destroy.
 */
export function planChange(
  schema: Schema,
  prior: CtyValue,
  proposed: CtyValue,
  config: CtyValue,
  priorPrivate: Buffer = Buffer.alloc(0),
): PlannedChange {
  const proposedRec = asRec(proposed);
  if (!proposedRec) return { planned: null, requiresReplace: [] };
  const priorRec = asRec(prior);
  const resourceChanges = !configuredEqual(schema.attributes, priorRec, asRec(config));
  const walk: Walk = { resourceChanges, replace: [], private: priorRec ? priorPrivate : Buffer.alloc(0) };
  const planned = planObject(schema.attributes, priorRec, proposedRec, asRec(config), walk, [], true);
  return { planned, requiresReplace: walk.replace };
}

/**
 * Checks a finished plan against the rules Terraform enforces, so a resource's modifyPlan mistake
 * is reported with the attribute's name instead of Terraform's "Provider produced invalid plan".
 */
export function checkPlan(schema: Schema, planned: Rec, config: Rec | null, diags: Diagnostics): void {
  checkObject(schema.attributes, planned, config, [], diags);
}

function checkObject(
  attributes: Attributes,
  planned: Rec,
  config: Rec | null,
  at: Path,
  diags: Diagnostics,
): void {
  for (const [name, a] of attributeEntries(attributes)) {
    const p = planned[name] ?? null;
    const c = config ? (config[name] ?? null) : null;
    if (a.writeOnly) {
      if (p !== null) invalid(diags, at, name, "a write-only attribute must be planned as null");
      continue;
    }
    if (a.computed && c === null) continue;
    if (isUnknown(c)) {
      if (!isUnknown(p))
        invalid(diags, at, name, "the configuration value is unknown, so the plan must be too");
      continue;
    }
    if (a.nested && a.nested.nesting === "single" && asRec(p) && asRec(c)) {
      checkObject(a.nested.attributes, asRec(p)!, asRec(c), [...at, { attribute: name }], diags);
      continue;
    }
    if (a.nested && a.nested.nesting !== "single") continue; // elements may carry computed values
    if (!valuesEqual(p, c, a.type, true) && !(p === null && c === null)) {
      invalid(diags, at, name, "a configured value must be planned exactly as configured");
    }
  }
}

/** A wrong plan of attribute `name` of the object at `at`. */
function invalid(diags: Diagnostics, at: Path, name: string, why: string): void {
  const here: Path = [...at, { attribute: name }];
  diags.addAttributeError(here, "Invalid plan", `The provider planned ${formatPath(here)} wrongly: ${why}.`);
}

/** Replaces every unknown left in a value by null; returns the paths where it did. */
export function nullUnknowns(
  value: CtyValue,
  type: CtyType,
  at: Path = [],
): { value: CtyValue; paths: Path[] } {
  const paths: Path[] = [];
  // The path of the value being walked, built into a Path only where an unknown is found.
  const steps: PathStep[] = [...at];
  const walk = (v: CtyValue, ty: CtyType): CtyValue => {
    if (isUnknown(v)) {
      paths.push([...steps]);
      return null;
    }
    if (v === null) return v;
    if (ty.kind === "object" && isRecord(v)) {
      const out = newRecord<CtyValue>();
      for (const k of attributeNames(ty).declared) {
        steps.push({ attribute: k });
        out[k] = walk(v[k] ?? null, ty.attributes[k]!);
        steps.pop();
      }
      return out;
    }
    if (ty.kind === "map" && isRecord(v)) {
      const out = newRecord<CtyValue>();
      for (const k of Object.keys(v)) {
        steps.push({ key: k });
        out[k] = walk(v[k]!, ty.element);
        steps.pop();
      }
      return out;
    }
    if ((ty.kind === "list" || ty.kind === "set") && Array.isArray(v)) {
      return v.map((el, i) => {
        // Set elements have no address: the path stops at the set.
        if (ty.kind === "set") return walk(el, ty.element);
        steps.push({ index: i });
        const r = walk(el, ty.element);
        steps.pop();
        return r;
      });
    }
    if (ty.kind === "tuple" && Array.isArray(v)) {
      return v.map((el, i) => {
        steps.push({ index: i });
        const r = walk(el, ty.elements[i]!);
        steps.pop();
        return r;
      });
    }
    return v;
  };
  return { value: walk(value, type), paths };
}
