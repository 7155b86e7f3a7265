import type { Attribute, Attributes } from "./schema";

// A schema's attributes never change once defined, and every RPC walks them, several times: their
// entries are listed once per attribute map instead of once per walk.

const cache = new WeakMap<Attributes, readonly (readonly [string, Attribute])[]>();

/** `Object.entries(attributes)`, computed once per attribute map. */
export function attributeEntries(attributes: Attributes): readonly (readonly [string, Attribute])[] {
  let entries = cache.get(attributes);
  if (!entries) {
    entries = Object.entries(attributes);
    cache.set(attributes, entries);
  }
  return entries;
}
