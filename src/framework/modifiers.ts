// Plan modifiers and validators as small named factories.
import { firstUnsafeCharacter } from "../display";
import { type CtyValue, isUnknown, type NumberValue, toNumber, unknown, valuesEqual } from "../plugin/cty";
import type { PlanModifier, PlanModifierRequest, Validator } from "./schema";

/**
 * Keeps the prior state value instead of "known after apply" for a computed attribute the
 * configuration leaves unset, for values that never change once set (ids, creation times).
 */
export function useStateForUnknown(): PlanModifier {
  return {
    description: "Once set, the value does not change unless the resource is replaced.",
    modify: (req) =>
      !req.isCreate && req.state !== null && req.config === null && isUnknown(req.plan)
        ? { plan: req.state }
        : undefined,
  };
}

/** Plans replacement when the attribute's value changes (or is not yet known) on an update. */
export function requiresReplace(): PlanModifier {
  return requiresReplaceIf(() => true, "Changing the value replaces the resource.");
}

/** Like `requiresReplace`, but only when `when` says so for the change at hand. */
export function requiresReplaceIf(
  when: (req: PlanModifierRequest) => boolean,
  description: string,
): PlanModifier {
  return {
    description,
    modify: (req) =>
      !req.isCreate && !valuesEqual(req.state, req.plan, req.type) && when(req)
        ? { requiresReplace: true }
        : undefined,
  };
}

/**
 * Marks a computed attribute "known after apply" whenever the resource changes in an update, for
 * values the API recomputes on every change (e.g. `updated_at`).
 */
export function unknownOnUpdate(): PlanModifier {
  return {
    description: "The value is recomputed whenever the resource changes.",
    modify: (req) =>
      !req.isCreate && req.resourceChanges && req.config === null ? { plan: unknown } : undefined,
  };
}

/** A validator from a predicate over known values; `message` explains what is wrong with `value`. */
export function check<V>(
  description: string,
  ok: (value: V) => boolean,
  message: (value: V) => string,
): Validator<V> {
  return {
    description,
    validate(value, ctx) {
      if (!ok(value)) ctx.diags.addAttributeError(ctx.path, "Invalid attribute value", message(value));
    },
  };
}

/** A string validator requiring one of the given values. */
export function oneOf(...allowed: string[]): Validator<string> {
  return check(
    `One of: ${allowed.join(", ")}.`,
    (v) => allowed.includes(v),
    (v) => `${JSON.stringify(v)} is not one of ${allowed.map((a) => JSON.stringify(a)).join(", ")}.`,
  );
}

/**
 * A number validator: a whole number from `min` to `max`. The message names the attribute, the
 * range, where the limit comes from (`what`, when it is not plain) and the value.
 */
export function wholeNumber(name: string, min: number, max: number, what?: string): Validator<NumberValue> {
  return check<NumberValue>(
    `A whole number from ${min} to ${max}.`,
    (v) => Number.isInteger(toNumber(v)) && toNumber(v) >= min && toNumber(v) <= max,
    (v) =>
      `${name} must be a whole number from ${min} to ${max}${what ? ` (${what})` : ""}; got ${quotedNumber(v)}.`,
  );
}

/** A number as typed when that is short, else as it reads (1e1000 as Infinity). */
function quotedNumber(v: NumberValue): string {
  const exact = String(v);
  return exact.length <= 30 ? exact : String(toNumber(v));
}

/** A string validator refusing an empty value or one of spaces only, naming the attribute. */
export function notBlank(name: string): Validator<string> {
  return check<string>(
    "Not empty or blank.",
    (v) => v.trim() !== "",
    () => `${name} must not be empty.`,
  );
}

/** A string validator requiring a length within bounds (in characters). */
export function lengthBetween(min: number, max: number): Validator<string> {
  return check(
    `Between ${min} and ${max} characters.`,
    (v) => [...v].length >= min && [...v].length <= max,
    (v) => `The value has ${[...v].length} characters; it must have between ${min} and ${max}.`,
  );
}

/**
 * A string validator refusing control characters (NUL, ESC, BEL, CR, line feeds, tabs, C1) and
 * bidirectional overrides in a name people read: the console, `gpurental strays`, a plan report in
 * a pull request and every diagnostic show it, and such a character there is either invisible,
 * rewritten as an escape, or a command to the terminal. `what` names the attribute.
 */
export function printable(what: string): Validator<string> {
  return check(
    "No control characters or bidirectional overrides.",
    (v) => firstUnsafeCharacter(v) === undefined,
    (v) => {
      const c = firstUnsafeCharacter(v)!;
      const at = [...v].findIndex((ch) => firstUnsafeCharacter(ch) !== undefined) + 1;
      return `${what} contains the character ${c} (at character ${at} of ${[...v].length}). ${what} is shown in the console, in \`gpurental strays\`, in plan reports and in Terraform's messages, where a control character (a line break, a tab, ESC, BEL, NUL) or a bidirectional override cannot be shown as it is: remove it (for example with trimspace() or replace()).`;
    },
  );
}

/** Whether a value is worth validating: known and not null (validators skip the rest). */
export function isValidatable(value: CtyValue | undefined): boolean {
  return value !== null && value !== undefined && !isUnknown(value);
}
