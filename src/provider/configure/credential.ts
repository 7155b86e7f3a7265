import { isUuid } from "../../api/ids";
import type { Diagnostics } from "../../framework";
import { invalidCredential, invalidOrgId, missingCredential } from "./diagnostics";
import { type Resolved, where } from "./settings";

// token (or GPURENTAL_TOKEN), required, and org_id (or GPURENTAL_ORG_ID), optional: the credential
// and the organization it acts for.

/** Reports a missing token, or one that cannot be a credential (never echoing it). */
export function checkToken(token: Resolved, diags: Diagnostics): void {
  if (token.kind === "missing") diags.add(missingCredential());
  else if (token.kind === "value" && !/^[\x21-\x7e]+$/.test(token.value))
    diags.add(invalidCredential(where("token", token)));
}

/** Reports an org_id that is no organization ID. */
export function checkOrgId(orgId: Resolved, diags: Diagnostics): void {
  if (orgId.kind === "value" && !isUuid(orgId.value))
    diags.add(invalidOrgId(where("org_id", orgId), orgId.value));
}
