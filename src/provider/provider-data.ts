import type { GpurentalClient } from "../api/client";
import type { DeployJournal } from "../journal";
import type { SharedReads } from "./shared-reads";

// What the provider's configure hands to every resource, data source and ephemeral resource: one
// record holding the /v1 client, what kind of credential it carries (API keys cannot create API
// keys nor list SSH keys; only a session can read the balance), which the client itself rightly
// hides, and how creates are journaled. While the provider configuration holds values not known
// yet (planning only), the record says so and holds no client.

/** The kind of credential, told apart by the documented prefixes (`gpr_` key, `gps_` session). */
export type CredentialKind = "api_key" | "session" | "unknown";

/** What the resources know about the configured credential. */
export interface CredentialInfo {
  kind: CredentialKind;
  /** The organization named by org_id, when one was configured. */
  orgId: string | undefined;
}

/** Tells the credential kind from a token's prefix. */
export function credentialKindOf(token: string): CredentialKind {
  if (token.startsWith("gpr_")) return "api_key";
  if (token.startsWith("gps_")) return "session";
  return "unknown";
}

/** Raised by every API call of a provider whose configuration was not known yet. */
export class ProviderNotConfiguredError extends Error {
  constructor(which: readonly string[]) {
    super(
      `The provider configuration is not known yet (${which.join(", ")} depend on values known only after apply), so the API cannot be called in this step.`,
    );
    this.name = "ProviderNotConfiguredError";
  }
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
  /**
   * The first create this process plans says that a lost run would go unseen here: automation, a
   * file journal with no history for a state that outlives the runner (journal-notes.ts).
   */
  announceLostRuns?: boolean;
}

/** The deploy settings of a provider without a journal: in-memory tests, or before configuration. */
export const NO_JOURNAL: DeploySettings = {
  journal: null,
  reconcileTimeoutMs: DEFAULT_RECONCILE_TIMEOUT_MS,
  partial: false,
  account: { base_url: "", org_id: null },
};

/** A configured provider: the client and what goes with it. */
export interface ConfiguredProvider {
  readonly configured: true;
  readonly client: GpurentalClient;
  readonly credential: CredentialInfo;
  readonly deploy: DeploySettings;
  /** The reads in flight of this configuration, which the plan-time checks of its instances share. */
  readonly reads: SharedReads;
}

/**
 * A provider whose configuration holds values known only after apply (planning only): planning
 * goes ahead without API checks, and any API call fails with {@link ProviderNotConfiguredError}.
 */
export interface UnconfiguredProvider {
  readonly configured: false;
  /** The provider arguments whose values are not known yet (empty after a configuration error). */
  readonly pending: readonly string[];
}

/** What the provider's configure hands to the resources, data sources and ephemeral resources. */
export type ProviderData = ConfiguredProvider | UnconfiguredProvider;

/** The record of a provider whose configuration is not known yet. */
export function unconfiguredProvider(pending: readonly string[]): UnconfiguredProvider {
  return { configured: false, pending: [...pending] };
}

/** The client of a configured provider; throws {@link ProviderNotConfiguredError} otherwise. */
export function clientOf(data: ProviderData): GpurentalClient {
  if (!data.configured) throw new ProviderNotConfiguredError(data.pending);
  return data.client;
}

/** The deploy settings of a provider; one not configured yet has no journal. */
export function deployOf(data: ProviderData): DeploySettings {
  return data.configured ? data.deploy : NO_JOURNAL;
}

/** The kind of credential a provider holds; unknown until it is configured. */
export function credentialKindOfProvider(data: ProviderData): CredentialKind {
  return data.configured ? data.credential.kind : "unknown";
}
