// StopProvider: aborts the signal every handler listens to (Terraform's answer to a Ctrl-C).
import type * as proto from "../../../plugin/tfplugin6";
import type { ServerCore } from "../core";

/** Aborts every in-flight and future handler signal (also what the service's `stop()` does). */
export function stopAll<P>(core: ServerCore<P>): void {
  core.stopper.abort(new Error("the provider was asked to stop"));
}

/** Aborts every in-flight and future handler signal. */
export async function stopProvider<P>(
  core: ServerCore<P>,
  _req: proto.StopProvider.Request,
): Promise<proto.StopProvider.Response> {
  stopAll(core);
  return { Error: "" };
}
