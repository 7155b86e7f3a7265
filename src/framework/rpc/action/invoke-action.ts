// InvokeAction (Terraform 1.14+): runs an action, streaming its progress messages as events, and
// ends the stream with one `completed` event carrying its diagnostics (Terraform reads errors
// there, not as a gRPC failure). StopProvider (Ctrl-C) and a cancelled call abort its signal.
import { fromDynamicValue, isWhollyKnown } from "../../../plugin/cty";
import type * as proto from "../../../plugin/tfplugin6";
import type { ActionContext } from "../../definitions";
import { Diagnostics } from "../../diagnostics";
import { actionFor, context, fail, out, type ServerCore } from "../core";
import { asRec, checkAsValidated } from "../values";

/** Invokes an action: progress events, then its completion. */
export async function invokeAction<P>(
  core: ServerCore<P>,
  req: proto.InvokeAction.Request,
  stream: proto.EventStream<proto.InvokeAction.Event>,
): Promise<void> {
  const diags = new Diagnostics();
  const a = actionFor(core, req.action_type, diags);
  try {
    if (a) {
      const config = asRec(fromDynamicValue(req.config, a.schema.type));
      if (!config || !isWhollyKnown(config))
        diags.addError(
          "Action configuration not known",
          `${req.action_type} needs a wholly known configuration.`,
        );
      // As Terraform's validation left it (a required argument set): a client that skipped it
      // gets diagnostics, and the action never runs on a null it does not expect.
      else if (checkAsValidated(a.schema, config, "The action's configuration", diags))
        await a.validateConfig?.({ config }, { diags });
      if (!diags.hasErrors() && config) {
        const base = context(core, diags, undefined);
        const ctx: ActionContext<P> = {
          ...base,
          signal: AbortSignal.any([base.signal, stream.signal]),
          progress: (message) => stream.send({ progress: { message } }),
        };
        await a.invoke({ config }, ctx);
      }
    }
  } catch (err) {
    fail(core, diags, `Invoking action ${req.action_type}`, err);
  }
  await stream.send({ completed: { diagnostics: out(diags) } });
}
