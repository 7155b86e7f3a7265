import { parseApiAddress } from "../../api/ids";
import type { Diagnostics } from "../../framework";
import { apiAddressWithV1, invalidApiAddress, missingApiAddress } from "./diagnostics";
import { type Resolved, where } from "./settings";

// base_url (or GPURENTAL_BASE_URL): required, an http or https URL without credentials, query or
// fragment (the one parser of src/api/ids.ts), and without the /v1 the client adds itself.

/** Reports what is wrong with the API address, if anything. */
export function checkApiAddress(baseUrl: Resolved, diags: Diagnostics): void {
  if (baseUrl.kind === "missing") {
    diags.add(missingApiAddress());
  } else if (baseUrl.kind === "value") {
    const address = parseApiAddress(baseUrl.value);
    if (address.problem) diags.add(invalidApiAddress(where("base_url", baseUrl), baseUrl.value));
    else if (/\/v1\/?$/.test(address.url.pathname))
      diags.add(apiAddressWithV1(where("base_url", baseUrl), baseUrl.value));
  }
}
