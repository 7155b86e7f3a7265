import type { ApiKeyKind, TemplateMode } from "./schemas";

// The shapes a caller of the client passes in: per-call options, request bodies and queries of
// the /v1 endpoints (contract 4, docs/api-shapes.md). The client's methods are in client.ts.

/** Per-call options every method accepts. */
export interface RequestOptions {
  /** Cancels this call (in-flight attempt and retry waits). */
  signal?: AbortSignal | undefined;
  /**
   * This call's time budget in ms, attempts and retry waits included: what is left of the
   * operation it belongs to (a resource's `timeouts` value or default). Failed attempts are retried
   * until it runs out (see retry-policy.ts); a wait that would outlast it, a Retry-After included,
   * ends the call at once with the last error rather than an abort. Default: the client's
   * `retry.deadlineMs`.
   */
  deadlineMs?: number | undefined;
  /**
   * Goes on after the client's own signal (Terraform's StopProvider) fires, bounded by this call's
   * `signal`, which it must have, and deadline: for what an interruption must still do at once, as
   * finding and recording what an interrupted request created, or revoking a key whose secret was
   * lost with the answer. Without a `signal` of its own the call stops with the client as any other.
   */
  outlivesStop?: boolean | undefined;
}

/** Body of POST /v1/api-keys. */
export interface CreateApiKeyRequest {
  /** 1 to 64 characters. */
  name: string;
  /** Default personal. */
  kind?: ApiKeyKind;
}

/** One entry of `env_overrides` in a deploy request. */
export interface EnvOverride {
  key: string;
  /** null drops the variable. */
  value: string | null;
  secret: boolean;
}

/** Body of POST /v1/instances (contract 4.2). */
export interface DeployInstanceRequest {
  offer_id: string;
  template_id: string;
  /** 10 to 20000, and at most the machine's disk. */
  disk_gb: number;
  label?: string | null;
  ssh_key_id?: string | null;
  env_overrides?: EnvOverride[];
}

/** Query of GET /v1/instances. */
export interface ListInstancesQuery {
  /** Include destroyed instances. Default false. */
  include_destroyed?: boolean;
}

/** Query of GET /v1/instances/{id}/logs. */
export interface LogsQuery {
  /** 1 to 1000; default 200. */
  tail?: number;
}

/** Query of GET /v1/offers. */
export interface ListOffersQuery {
  /** Exact GPU model, case-insensitive. */
  gpu_model?: string;
  num_gpus?: number;
  /** Default newest first. */
  sort?: "price_asc" | "price_desc";
  /** Also list sold-out and withdrawn offers. Default false. */
  include_unavailable?: boolean;
}

/** Query of GET /v1/templates. */
export interface ListTemplatesQuery {
  /** Default all. */
  tab?: "recommended" | "system" | "public" | "mine" | "all";
  mode?: TemplateMode;
}

/** Query of GET /v1/billing/transactions. */
export interface ListTransactionsQuery {
  instance_id?: string;
  /** 1 to 1000; default 100. */
  limit?: number;
}

/** Query of GET /v1/billing/spend-daily. */
export interface SpendDailyQuery {
  /** 1 to 90; default 30. */
  days?: number;
}

/** Body of POST /v1/ssh-keys. */
export interface CreateSshKeyRequest {
  name: string;
  public_key: string;
}

/** Body of POST /v1/billing/orders. */
export interface CreateBillingOrderRequest {
  amount_micro: number;
}
