// ApplyResourceChange: create, update or delete through the definition's handlers; what exists
// after a failure is kept in state (tainted after a create) rather than lost.
import { fromDynamicValue } from "../../../plugin/cty";
import type * as proto from "../../../plugin/tfplugin6";
import { Diagnostics } from "../../diagnostics";
import { decodeIdentity, type IdentityValue } from "../../identity";
import type { TimeoutOperation } from "../../schema";
import { context, encode, fail, finish, identityOut, out, resourceFor, type ServerCore } from "../core";
import { asRec, checkApplied, checkAsValidated, checkStored, type Rec, timeoutFor } from "../values";

/** Applies a planned create, update or delete through the definition's handlers. */
export async function applyResourceChange<P>(
  core: ServerCore<P>,
  req: proto.ApplyResourceChange.Request,
): Promise<proto.ApplyResourceChange.Response> {
  const diags = new Diagnostics();
  const r = resourceFor(core, req.type_name, diags);
  if (!r) return { diagnostics: out(diags) };
  const type = r.schema.type;
  let prior: Rec | null = null;
  let planned: Rec | null = null;
  // Terraform (1.13 and later) keeps in state, with an object a failed apply leaves, the identity
  // the answer carries, and none when it carries none: whatever keeps the prior object keeps its
  // identity too, as the plan had it; a delete's request carries none, and it is made as a refresh
  // would make it.
  let plannedIdentity: IdentityValue | null = null;
  const identityOf = (state: Rec | null) => identityOut(core, r, state, plannedIdentity, diags) ?? null;
  try {
    plannedIdentity = r.identity ? decodeIdentity(r.identity.schema, req.planned_identity) : null;
    prior = asRec(fromDynamicValue(req.prior_state, type));
    planned = asRec(fromDynamicValue(req.planned_state, type));
    const config = asRec(fromDynamicValue(req.config, type));
    if (!checkStored(prior, "The prior state", diags)) {
      // Kept as Terraform sent it, and so is its identity.
      return {
        new_state: req.prior_state,
        diagnostics: out(diags),
        new_identity: req.planned_identity?.identity_data
          ? { identity_data: req.planned_identity.identity_data }
          : null,
      };
    }
    if (!planned) {
      if (prior) {
        await r.delete({ state: prior }, context(core, diags, timeoutFor(r.schema, prior, "delete", diags)));
      }
      // A failed delete keeps the object in state so it can be retried.
      const next = diags.hasErrors() ? prior : null;
      return {
        new_state: encode(core, r.schema, next, diags, "Deleting"),
        diagnostics: out(diags),
        new_identity: identityOf(next),
      };
    }
    // Terraform sends the plan this provider made from a validated configuration; anything else is
    // refused before a handler sees it.
    if (!checkAsValidated(r.schema, planned, "The planned state", diags)) {
      return {
        new_state: encode(core, r.schema, prior, diags, "Applying"),
        diagnostics: out(diags),
        new_identity: identityOf(prior),
      };
    }
    if (config && !checkAsValidated(r.schema, config, "The configuration", diags)) {
      return {
        new_state: encode(core, r.schema, prior, diags, "Applying"),
        diagnostics: out(diags),
        new_identity: identityOf(prior),
      };
    }
    const op: TimeoutOperation = prior ? "update" : "create";
    const ctx = context(core, diags, timeoutFor(r.schema, planned, op, diags));
    const request = {
      plan: planned,
      config: config ?? planned,
      state: prior,
      // A create gets what its plan recorded too (e.g. which object it adopts).
      private: req.planned_private ?? Buffer.alloc(0),
    };
    const result = prior ? await r.update(request, ctx) : await r.create(request, ctx);
    if (result === null || result === undefined) {
      if (!prior && diags.hasErrors()) {
        return { new_state: encode(core, r.schema, null, diags, "Creating"), diagnostics: out(diags) };
      }
      if (!prior)
        diags.addError(
          "Create returned no state",
          `${req.type_name}: create returned neither state nor error.`,
        );
    }
    const next = finish(r.schema, planned, result ?? null, diags, op);
    if (!diags.hasErrors()) checkApplied(r.schema, planned, next, diags, req.type_name);
    return {
      new_state: encode(core, r.schema, next, diags, "Applying"),
      private: request.private,
      diagnostics: out(diags),
      new_identity: identityOf(next),
    };
  } catch (err) {
    fail(core, diags, `Applying ${req.type_name}`, err);
    // After a throw, what exists is unknown to us; keep the prior object (null on create), its
    // identity and the private data that came with it.
    return {
      new_state: encode(core, r.schema, prior, diags, "Applying"),
      private: prior ? req.planned_private : Buffer.alloc(0),
      diagnostics: out(diags),
      new_identity: identityOf(prior),
    };
  }
}
