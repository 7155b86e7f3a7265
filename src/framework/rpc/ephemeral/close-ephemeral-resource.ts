// CloseEphemeralResource: closes one ephemeral resource; and, at shutdown, every one Terraform
// opened and never closed (it skips Close after an error or a Ctrl-C).
import type * as proto from "../../../plugin/tfplugin6";
import type { HandlerContext } from "../../definitions";
import { Diagnostics, errorDiagnostic } from "../../diagnostics";
import {
  ephemeralFor,
  fail,
  type LooseEphemeral,
  notConfigured,
  openedKey,
  out,
  type ServerCore,
} from "../core";

/** How long a close may take: Terraform's stop does not cut it short, this does. */
const CLOSE_TIMEOUT_MS = 60_000;

async function closeEphemeral<P>(
  core: ServerCore<P>,
  e: LooseEphemeral<P>,
  priv: Buffer,
  diags: Diagnostics,
): Promise<void> {
  if (!e.close) return;
  if (!core.providerData) throw notConfigured();
  // Not the stop signal: after a Ctrl-C, what was opened is still closed.
  const ctx: HandlerContext<P> = {
    diags,
    providerData: core.providerData.value,
    signal: AbortSignal.timeout(CLOSE_TIMEOUT_MS),
    timeoutMs: CLOSE_TIMEOUT_MS,
  };
  await e.close({ private: priv }, ctx);
}

/** Closes an ephemeral resource and forgets it. */
export async function closeEphemeralResource<P>(
  core: ServerCore<P>,
  req: proto.CloseEphemeralResource.Request,
): Promise<proto.CloseEphemeralResource.Response> {
  const diags = new Diagnostics();
  const e = ephemeralFor(core, req.type_name, diags);
  if (!e?.close) return { diagnostics: out(diags) };
  const priv = req.private ?? Buffer.alloc(0);
  core.opened.delete(openedKey(req.type_name, priv));
  try {
    await closeEphemeral(core, e, priv, diags);
  } catch (err) {
    fail(core, diags, `Closing ${req.type_name}`, err);
  }
  return { diagnostics: out(diags) };
}

/** Closes every ephemeral resource opened and not closed (at shutdown); never throws. */
export async function closeOpenEphemeralResources<P>(core: ServerCore<P>): Promise<void> {
  const left = [...core.opened.values()];
  core.opened.clear();
  await Promise.all(
    left.map(async (o) => {
      const e = core.ephemerals.get(o.typeName);
      const diags = new Diagnostics();
      try {
        if (e) await closeEphemeral(core, e, o.private, diags);
      } catch (err) {
        diags.add(errorDiagnostic(`Closing ${o.typeName} failed`, err));
      }
      for (const d of diags.items) {
        core.log?.(d.severity === "error" ? "error" : "warn", `closing ${o.typeName} at shutdown`, {
          summary: d.summary,
          detail: d.detail,
        });
      }
    }),
  );
}
