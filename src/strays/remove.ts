import type { GpurentalClient } from "../api/client";
import { GpurentalError } from "../api/errors";
import type { Instance } from "../api/schemas";
import { waitForInstance } from "../api/waiter";
import type { CredentialKind } from "../provider/provider-data";
import type { StrayReport } from "./find";

// Destroying stray instances and revoking stray API keys, once the caller has confirmed. Each object
// is handled on its own: one failure is reported and the others still go. The key the command
// authenticates with is never revoked; keys are not attempted with an API key credential, which the
// contract refuses (403 ADMIN_REQUIRED) — that needs a signed-in session.

/** What happened to one stray. */
export interface RemovalOutcome {
  type: "instance" | "api_key";
  id: string;
  /** The label or key name. */
  name: string | null;
  result: "destroyed" | "destroying" | "revoked" | "skipped" | "failed";
  /** Why, for skipped and failed ones. */
  detail?: string;
}

/** Options of {@link removeStrays}. */
export interface RemovalOptions {
  credential: CredentialKind;
  /** Wait until each instance is destroyed (default), or return once the API accepted the destroy. */
  wait: boolean;
  /** How long to wait for each instance. */
  waitTimeoutMs: number;
  /** One line per object as it is handled. */
  progress: (line: string) => void;
}

function reason(err: unknown): string {
  if (err instanceof GpurentalError) return err.message;
  return err instanceof Error ? err.message : String(err);
}

/** Destroys the report's instances and revokes its keys (never this command's own); returns one outcome each. */
export async function removeStrays(
  client: GpurentalClient,
  report: StrayReport,
  opts: RemovalOptions,
): Promise<RemovalOutcome[]> {
  const out: RemovalOutcome[] = [];
  const record = (o: RemovalOutcome) => {
    out.push(o);
    const what = o.type === "instance" ? "instance" : "API key";
    opts.progress(
      `${what} ${o.id}${o.name ? ` (${o.name})` : ""}: ${o.result}${o.detail ? `: ${o.detail}` : ""}`,
    );
  };
  // All destroys are sent first, then waited for together: instances stop billing sooner. Each
  // accepted destroy is said at once: the wait can be long, and a command stopped during it must
  // not have destroyed anything unsaid.
  const sent: Instance[] = [];
  for (const s of report.instances) {
    const i = s.instance;
    let accepted: Instance;
    try {
      accepted = await client.destroyInstance(i.id);
    } catch (err) {
      record({ type: "instance", id: i.id, name: i.label, result: "failed", detail: reason(err) });
      continue;
    }
    sent.push(accepted);
    if (opts.wait) {
      opts.progress(
        `instance ${i.id}${i.label ? ` (${i.label})` : ""}: destroy accepted, waiting until destroyed`,
      );
    }
  }
  await Promise.all(
    sent.map(async (i) => {
      if (!opts.wait) {
        record({
          type: "instance",
          id: i.id,
          name: i.label,
          result: i.status === "destroyed" ? "destroyed" : "destroying",
        });
        return;
      }
      try {
        await waitForInstance(client, i.id, {
          target: "destroyed",
          notFound: "done",
          timeoutMs: opts.waitTimeoutMs,
        });
        record({ type: "instance", id: i.id, name: i.label, result: "destroyed" });
      } catch (err) {
        record({ type: "instance", id: i.id, name: i.label, result: "failed", detail: reason(err) });
      }
    }),
  );
  for (const k of report.apiKeys) {
    const base = { type: "api_key" as const, id: k.key.id, name: k.key.name };
    if (k.thisCredential) {
      record({ ...base, result: "skipped", detail: "this command's own credential is never revoked" });
    } else if (opts.credential === "api_key") {
      record({
        ...base,
        result: "skipped",
        detail: "revoking API keys needs a signed-in session (an API key is refused with ADMIN_REQUIRED)",
      });
    } else {
      try {
        await client.revokeApiKey(k.key.id);
        record({ ...base, result: "revoked" });
      } catch (err) {
        record({ ...base, result: "failed", detail: reason(err) });
      }
    }
  }
  return out;
}
