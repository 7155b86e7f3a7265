import { EXAMPLE_ID, isUuid } from "../api/ids";
import { check, type Validator } from "../framework";

// The validator of every argument that names an object of the API by id (offer_id, template_id,
// ssh_key_id, the data sources' ids): the contract's identifiers are UUIDs, so anything else,
// the empty string included, is refused at plan time on the attribute instead of failing the apply.

/** Shows a refused value: quoted, its control characters escaped, cut after 100 characters. */
function shown(v: string): string {
  const cut = [...v].length > 100 ? `${[...v].slice(0, 100).join("")}…` : v;
  return v === "" ? '"" (an empty string)' : JSON.stringify(cut);
}

/**
 * A string validator requiring an API id; `name` is the attribute, `what` the object it names,
 * `hint` where to find one.
 */
export function apiId(name: string, what: string, hint?: string): Validator<string> {
  return check<string>(
    `The ID of ${what}: a UUID such as "${EXAMPLE_ID}".`,
    (v) => isUuid(v),
    (v) =>
      `${name} must be the ID of ${what}, a UUID such as "${EXAMPLE_ID}"; got ${shown(v)}.${hint ? ` ${hint}` : ""}`,
  );
}
