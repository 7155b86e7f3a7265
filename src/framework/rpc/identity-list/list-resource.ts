// ListResource (Terraform 1.14+, `terraform query`): the objects a list block finds, streamed one
// event each with its identity (from which Terraform writes import blocks), its display name and,
// when the query asks (`include_resource = true`), the whole object. The definition yields objects
// as it reads them; the framework pulls one at a time, so a client that reads slowly slows the
// listing, and it stops at the limit or when Terraform cancels the call.
import { fromDynamicValue, isWhollyKnown } from "../../../plugin/cty";
import type * as proto from "../../../plugin/tfplugin6";
import { Diagnostics, inBlock, toProtoDiagnostic } from "../../diagnostics";
import { context, encode, fail, finish, identityOut, listResourceFor, type ServerCore } from "../core";
import { asRec, checkAsValidated, compose, olderThan } from "../values";

/** The first Terraform that adds the `config` step to ListResource's diagnostic paths itself. */
const ADDS_CONFIG_STEP = "1.16.0";

/** Streams what a list block finds; problems go out as events carrying only diagnostics. */
export async function listResource<P>(
  core: ServerCore<P>,
  req: proto.ListResource.Request,
  stream: proto.EventStream<proto.ListResource.Event>,
): Promise<void> {
  const diags = new Diagnostics();
  // Diagnostics go out with the event that follows them, or alone at the end.
  let sentDiags = 0;
  // Older ones resolve the paths in the list block's body, away from the filters (see inBlock).
  const addStep = core.clientVersion !== "" && olderThan(core.clientVersion, ADDS_CONFIG_STEP);
  const pending = () => {
    const items = diags.items
      .slice(sentDiags)
      .map(toProtoDiagnostic)
      .map((d) => (addStep ? inBlock("config", d) : d));
    sentDiags = diags.items.length;
    return items;
  };
  const l = listResourceFor(core, req.type_name, diags);
  const r = core.resources.get(req.type_name);
  if (l && !r?.identity)
    diags.addError(
      "List resource without identity",
      `${req.type_name} has no managed resource type with an identity to list objects by.`,
    );
  if (!l || !r?.identity || diags.hasErrors()) {
    await stream.send({ diagnostic: pending() });
    return;
  }
  try {
    const config = asRec(fromDynamicValue(req.config, l.schema.type)) ?? compose(l.schema, null, null);
    // A query runs with its configuration known; a client that sends an unknown gets a diagnostic,
    // and no listing filters on a value it cannot compare.
    if (!isWhollyKnown(config))
      diags.addError(
        "List configuration not known",
        `${req.type_name}'s list block needs a wholly known configuration.`,
      );
    else checkAsValidated(l.schema, config, "The list block's configuration", diags);
    const limit = Math.max(0, Math.floor(req.limit));
    if (diags.hasErrors() || limit === 0) {
      if (diags.items.length > 0) await stream.send({ diagnostic: pending() });
      return;
    }
    const base = context(core, diags, undefined);
    const signal = AbortSignal.any([base.signal, stream.signal]);
    const ctx = { ...base, signal };
    let sent = 0;
    const found = l.list({ config, limit, includeResource: req.include_resource_object }, ctx);
    for await (const item of found) {
      if (signal.aborted) break;
      const state = finish(r.schema, null, item.state, diags, "list");
      const identity = identityOut(core, r, state, null, diags);
      const event: proto.ListResource.Event = { display_name: item.displayName, identity: identity ?? null };
      if (req.include_resource_object)
        event.resource_object = encode(core, r.schema, state, diags, "Listing");
      event.diagnostic = pending();
      await stream.send(event);
      sent += 1;
      // Checked before pulling the next object, so a cancelled listing reads nothing more.
      if (sent >= limit || diags.hasErrors() || signal.aborted) break;
    }
  } catch (err) {
    if (!stream.signal.aborted) fail(core, diags, `Listing ${req.type_name}`, err);
  }
  const left = pending();
  if (left.length > 0 && !stream.signal.aborted) await stream.send({ diagnostic: left });
}
