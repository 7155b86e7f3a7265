// Write-only attributes (Terraform 1.11+): the practitioner's value reaches the provider in the
// configuration of ValidateResourceConfig, PlanResourceChange and ApplyResourceChange only, and
// every value the provider returns (planned, applied, read, imported, upgraded state) holds null in
// their place, so Terraform never writes them into a plan or state. This module finds them at any
// depth of nested attributes; the service applies it to every response.
import { type CtyValue, isRecord, newRecord } from "../plugin/cty";
import type { Path } from "./diagnostics";
import type { Attribute, Attributes } from "./schema";

type Rec = Record<string, CtyValue>;

/** Whether any attribute, at any depth, is write-only. */
export function hasWriteOnly(attributes: Attributes): boolean {
  return Object.values(attributes).some(
    (a) => a.writeOnly || (a.nested !== undefined && hasWriteOnly(a.nested.attributes)),
  );
}

/** The object with every write-only attribute, at any depth, set to null; the input is not changed. */
export function nullWriteOnly(attributes: Attributes, value: Rec): Rec {
  const out = newRecord<CtyValue>();
  for (const [name, a] of Object.entries(attributes)) {
    const v = value[name] ?? null;
    out[name] = a.writeOnly ? null : a.nested ? nullNested(a, v) : v;
  }
  return out;
}

function nullNested(a: Attribute, v: CtyValue): CtyValue {
  const { nesting, attributes } = a.nested!;
  // Stryker disable next-line ConditionalExpression: the walk would give an equal value; this saves the copy.
  if (!hasWriteOnly(attributes)) return v;
  const inner = (el: CtyValue) => (isRecord(el) ? nullWriteOnly(attributes, el as Rec) : el);
  switch (nesting) {
    case "single":
      return inner(v);
    case "list":
    // Stryker disable next-line ConditionalExpression: unreachable, as defineSchema refuses write-only attributes in a set.
    case "set":
      return Array.isArray(v) ? v.map(inner) : v;
    case "map": {
      if (!isRecord(v)) return v;
      const out = newRecord<CtyValue>();
      for (const [k, el] of Object.entries(v)) out[k] = inner(el);
      return out;
    }
  }
}

/** Paths of the write-only attributes that hold a value (known or not) in `value`. */
export function writeOnlyValuePaths(attributes: Attributes, value: Rec, at: Path = []): Path[] {
  const found: Path[] = [];
  for (const [name, a] of Object.entries(attributes)) {
    const v = value[name] ?? null;
    if (v === null) continue;
    const here = [...at, { attribute: name }];
    if (a.writeOnly) {
      found.push(here);
      continue;
    }
    if (!a.nested || !hasWriteOnly(a.nested.attributes)) continue;
    const inner = a.nested.attributes;
    const visit = (el: CtyValue, p: Path) => {
      if (isRecord(el)) found.push(...writeOnlyValuePaths(inner, el as Rec, p));
    };
    if (a.nested.nesting === "single") visit(v, here);
    else if (a.nested.nesting === "list" && Array.isArray(v)) {
      for (const [i, el] of v.entries()) visit(el, [...here, { index: i }]);
    } else if (a.nested.nesting === "map" && isRecord(v)) {
      for (const [k, el] of Object.entries(v)) visit(el, [...here, { key: k }]);
    }
  }
  return found;
}
