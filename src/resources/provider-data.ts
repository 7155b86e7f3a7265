import { GpurentalClient } from "../api/client";
import type { DeployJournal } from "../journal";

// What the provider's configure hands to every resource and data source: the /v1 client. The
// resources also want to know what kind of credential the client holds (API keys cannot create
// API keys nor list SSH keys; only a session can read the balance), which the client itself
// rightly hides; it is recorded here beside the client instead.

/** The kind of credential, told apart by the documented prefixes (`gpr_` key, `gps_` session). */
export type CredentialKind = "api_key" | "session" | "unknown";

/** What the resources know about the configured credential. */
export interface CredentialInfo {
  kind: CredentialKind;
  /** The organization named by org_id, when one was configured. */
  orgId: string | undefined;
  /** False while the provider configuration holds values not known yet (planning only). */
  configured: boolean;
}

const infos = new WeakMap<object, CredentialInfo>();

/** Tells the credential kind from a token's prefix. */
export function credentialKindOf(token: string): CredentialKind {
  if (token.startsWith("gpr_")) return "api_key";
  if (token.startsWith("gps_")) return "session";
  return "unknown";
}

/** Records what is known about the credential behind a client. */
export function registerCredential(client: object, info: CredentialInfo): void {
  infos.set(client, info);
}

/** What is known about the credential behind a client; a client built elsewhere counts as configured. */
export function credentialOf(client: object): CredentialInfo {
  return infos.get(client) ?? { kind: "unknown", orgId: undefined, configured: true };
}

/** Raised by every call of a client whose configuration was not known yet. */
export class ProviderNotConfiguredError extends Error {
  constructor(which: readonly string[]) {
    super(
      `The provider configuration is not known yet (${which.join(", ")} depend on values known only after apply), so the API cannot be called in this step.`,
    );
    this.name = "ProviderNotConfiguredError";
  }
}

/**
 * A client standing in while the provider configuration holds unknown values (e.g. a token that
 * comes from a resource created in the same apply). Planning goes ahead without API checks; any
 * call fails with {@link ProviderNotConfiguredError}.
 */
export function unconfiguredClient(which: readonly string[]): GpurentalClient {
  const placeholder = new GpurentalClient({ baseUrl: "http://unconfigured.invalid", token: "unconfigured" });
  const client = new Proxy(placeholder, {
    get(target, prop, receiver) {
      const v: unknown = Reflect.get(target, prop, receiver);
      if (typeof v === "function" && typeof prop === "string" && !prop.startsWith("to")) {
        return () => Promise.reject(new ProviderNotConfiguredError(which));
      }
      return v;
    },
  });
  registerCredential(client, { kind: "unknown", orgId: undefined, configured: false });
  return client;
}

/** The default of the provider's reconcile_timeout: how long a lost deploy answer is looked for. */
export const DEFAULT_RECONCILE_TIMEOUT_MS = 120_000;

/** How creates are journaled and reconciled (the provider's journal_dir and reconcile_timeout). */
export interface DeploySettings {
  /** The deploy journal of the working directory's state; null when there is none (in-memory tests). */
  journal: DeployJournal | null;
  /** How long listings look for what a request with a lost answer created, within the create timeout. */
  reconcileTimeoutMs: number;
  /** The command planned only part of the configuration (`-target`): unclaimed entries prove less. */
  partial: boolean;
  /** Where the API is and which organization: part of every fingerprint, so another account never matches. */
  account: { base_url: string; org_id: string | null };
}

const settings = new WeakMap<object, DeploySettings>();

/** Records the deploy settings of a client. */
export function registerDeploySettings(client: object, s: DeploySettings): void {
  settings.set(client, s);
}

/** The deploy settings of a client; a client built elsewhere has no journal and the default window. */
export function deploySettingsOf(client: object): DeploySettings {
  return (
    settings.get(client) ?? {
      journal: null,
      reconcileTimeoutMs: DEFAULT_RECONCILE_TIMEOUT_MS,
      partial: false,
      account: { base_url: "", org_id: null },
    }
  );
}
