// Value helpers the RPCs share that need nothing of the service: laying a handler's result over a
// base value, running attribute validators, reading an operation's timeout, checking an applied
// value against its plan, and the small conversions of the wire.
import { type CtyValue, isRecord, isUnknown, isWhollyKnown, newRecord, valuesEqual } from "../../plugin/cty";
import type * as proto from "../../plugin/tfplugin6";
import { attributeEntries } from "../attribute-entries";
import { type Diagnostics, formatPath, type Path } from "../diagnostics";
import type { Attributes, Schema, TimeoutOperation } from "../schema";
import { parseDuration } from "../timeouts";

/** An object value, as decoded. */
export type Rec = Record<string, CtyValue>;

/** Whether version `v` ("1.9.8", "1.10.0-beta1") is older than `min`; unknown forms are not. */
export function olderThan(v: string, min: string): boolean {
  const parse = (x: string) => /^v?(\d+)\.(\d+)\.(\d+)/.exec(x)?.slice(1).map(Number);
  const a = parse(v);
  const b = parse(min);
  if (!a || !b) return false;
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i]! < b[i]!;
  return false;
}

/** A date as a protobuf timestamp. */
export function toTimestamp(d: Date): proto.Timestamp {
  const ms = d.getTime();
  return { seconds: Math.floor(ms / 1000), nanos: (ms % 1000) * 1_000_000 };
}

/** The value as an object, or null when it is not one. */
export function asRec(value: CtyValue): Rec | null {
  return isRecord(value) ? (value as Rec) : null;
}

/** A null-filled object of the schema with `values` laid over `base` (undefined keeps base). */
export function compose(schema: Schema, base: Rec | null, values: unknown, diags?: Diagnostics): Rec {
  const out = newRecord<CtyValue>();
  const over = isRecord(values) ? (values as Rec) : null;
  for (const [name] of attributeEntries(schema.attributes)) {
    const v = over && Object.hasOwn(over, name) && over[name] !== undefined ? over[name] : base?.[name];
    out[name] = v ?? null;
  }
  for (const name of over ? Object.keys(over) : []) {
    // Reported rather than thrown: after a create, losing the whole state would orphan the object.
    if (!Object.hasOwn(schema.attributes, name)) {
      if (!diags) throw new Error(`the value has an unknown attribute "${name}"`);
      diags.addError(
        "Invalid state",
        `The returned state has an attribute "${name}" the schema does not declare.`,
      );
    }
  }
  return out;
}

/** Runs the attribute validators on the known, non-null values of an object, at any depth. */
export function runValidators(
  attributes: Attributes,
  value: Rec,
  at: Path,
  diags: Diagnostics,
  addressable: boolean,
): void {
  for (const [name, a] of attributeEntries(attributes)) {
    const v = value[name] ?? null;
    if (v === null || isUnknown(v)) continue;
    if (a.validators.length === 0 && !a.nested) continue;
    const here = addressable ? [...at, { attribute: name }] : at;
    for (const validator of a.validators) validator.validate(v, { path: here, diags });
    if (!a.nested) continue;
    const { nesting, attributes: inner } = a.nested;
    if (nesting === "single" && asRec(v)) runValidators(inner, asRec(v)!, here, diags, addressable);
    else if ((nesting === "list" || nesting === "set") && Array.isArray(v)) {
      v.forEach((el, i) => {
        const e = asRec(el);
        if (e)
          runValidators(
            inner,
            e,
            nesting === "list" ? [...here, { index: i }] : here,
            diags,
            addressable && nesting === "list",
          );
      });
    } else if (nesting === "map" && asRec(v)) {
      for (const [k, el] of Object.entries(asRec(v)!)) {
        const e = asRec(el);
        if (e) runValidators(inner, e, [...here, { key: k }], diags, addressable);
      }
    }
  }
}

/** The required attributes of an object value that are null, at any depth of nested attributes. */
export function missingRequired(attributes: Attributes, value: Rec, at: Path = []): Path[] {
  const missing: Path[] = [];
  for (const [name, a] of attributeEntries(attributes)) {
    const v = value[name] ?? null;
    const here: Path = [...at, { attribute: name }];
    if (v === null) {
      if (a.required) missing.push(here);
      continue;
    }
    if (isUnknown(v) || !a.nested) continue;
    const { nesting, attributes: inner } = a.nested;
    if (nesting === "single" && asRec(v)) missing.push(...missingRequired(inner, asRec(v)!, here));
    else if ((nesting === "list" || nesting === "set") && Array.isArray(v)) {
      v.forEach((el, i) => {
        const e = asRec(el);
        if (e)
          missing.push(...missingRequired(inner, e, nesting === "list" ? [...here, { index: i }] : here));
      });
    } else if (nesting === "map" && asRec(v)) {
      for (const [k, el] of Object.entries(asRec(v)!)) {
        const e = asRec(el);
        if (e) missing.push(...missingRequired(inner, e, [...here, { key: k }]));
      }
    }
  }
  return missing;
}

/**
 * Checks a configuration or planned value as Terraform's validation would have left it: every
 * required attribute set and every validator passed. Terraform sends nothing else, but the
 * handlers must not depend on that: what breaks these rules gets diagnostics, and no handler runs.
 * Returns whether the value passed.
 */
export function checkAsValidated(schema: Schema, value: Rec, what: string, diags: Diagnostics): boolean {
  const before = diags.items.length;
  for (const at of missingRequired(schema.attributes, value)) {
    diags.addAttributeError(
      at,
      "Missing required argument",
      `${what} has no value for ${formatPath(at)}, which is required.`,
    );
  }
  runValidators(schema.attributes, value, [], diags, true);
  return !diags.items.slice(before).some((d) => d.severity === "error");
}

/**
 * Checks a stored state: it never holds an unknown value (Terraform stores only what apply
 * returned). One that does is refused with a diagnostic before a handler sees it. Returns whether
 * it passed.
 */
export function checkStored(value: Rec | null, what: string, diags: Diagnostics): boolean {
  if (value === null || isWhollyKnown(value)) return true;
  diags.addError(
    "Invalid state",
    `${what} holds values that are not known, which no stored state can hold; Terraform never sends such a state.`,
  );
  return false;
}

/** The timeout of `op` in milliseconds from the schema's `timeouts` attribute, if it has one. */
export function timeoutFor(
  schema: Schema,
  value: Rec | null,
  op: TimeoutOperation,
  diags: Diagnostics,
): number | undefined {
  for (const [name, a] of attributeEntries(schema.attributes)) {
    if (!a.timeoutDefaults) continue;
    const given = asRec(value?.[name] ?? null)?.[op];
    const text = typeof given === "string" ? given : a.timeoutDefaults[op];
    if (text === undefined) return undefined;
    const ms = parseDuration(text);
    if (ms === undefined || ms === 0) {
      diags.addAttributeError(
        [{ attribute: name }, { attribute: op }],
        "Invalid duration",
        `${name}.${op} = ${JSON.stringify(text)} is not a duration of at most 480h; use e.g. "20m" or "1h30m".`,
      );
      return undefined;
    }
    return ms;
  }
  return undefined;
}

/**
 * Reports attributes whose applied value differs from a known planned value, naming them, since
 * Terraform would reject the result with only "Provider produced inconsistent result after apply".
 */
export function checkApplied(
  schema: Schema,
  planned: Rec,
  applied: Rec,
  diags: Diagnostics,
  typeName: string,
): void {
  for (const [name, a] of attributeEntries(schema.attributes)) {
    const p = planned[name] ?? null;
    if (a.writeOnly || !isWhollyKnown(p) || valuesEqual(p, applied[name] ?? null, a.type)) continue;
    diags.addAttributeError(
      [{ attribute: name }],
      "Applied value differs from the plan",
      `${typeName}: ${name} was planned as a known value, but apply returned a different one. Plan it as unknown (a plan modifier or modifyPlan) if the API may change it.`,
    );
  }
}
