import { isUnknown } from "../../framework";
import { JOURNAL_DIR_ENV } from "../../journal/location";
import { JOURNAL_URL_ENV } from "../../journal/pg/url";

// Where each provider setting comes from: the argument in the provider block, else its environment
// variable. An argument set to "" is an error of its own (diagnostics.ts), never a silent fallback.

/** Environment variables the provider reads when an argument is unset. */
export const PROVIDER_ENV = {
  base_url: "GPURENTAL_BASE_URL",
  token: "GPURENTAL_TOKEN",
  org_id: "GPURENTAL_ORG_ID",
  journal_dir: JOURNAL_DIR_ENV,
  journal_url: JOURNAL_URL_ENV,
  reconcile_timeout: "GPURENTAL_RECONCILE_TIMEOUT",
  ca_cert_file: "GPURENTAL_CA_CERT_FILE",
} as const;

/** Proxy arguments, each overriding its environment variables (read as Go reads them, upper case first). */
export const PROXY_ARGS = ["https_proxy", "http_proxy", "no_proxy"] as const;

/** A provider argument that falls back to an environment variable. */
export type Setting = keyof typeof PROVIDER_ENV;

/** A setting resolved from the configuration or the environment. */
export type Resolved =
  | { kind: "value"; value: string; from: "config" | "env" }
  | { kind: "unknown" }
  | { kind: "empty" }
  | { kind: "missing" };

/** A resolved setting that has a value. */
export type Given = Extract<Resolved, { kind: "value" }>;

/** Resolves a setting from its argument (`config`) and its environment variable. */
export function resolve(config: unknown, name: Setting, env: NodeJS.ProcessEnv): Resolved {
  if (isUnknown(config)) return { kind: "unknown" };
  // An explicit "" is most often a variable that came out empty: an error, not a silent fallback
  // to a credential from the environment the configuration did not ask for.
  if (config === "") return { kind: "empty" };
  if (typeof config === "string") return { kind: "value", value: config, from: "config" };
  const fromEnv = env[PROVIDER_ENV[name]];
  if (fromEnv !== undefined && fromEnv !== "") return { kind: "value", value: fromEnv, from: "env" };
  return { kind: "missing" };
}

/** The setting as messages name it: `The base_url argument` or `The GPURENTAL_BASE_URL environment variable`. */
export function where(name: Setting, r: { from: "config" | "env" }): string {
  return r.from === "config" ? `The ${name} argument` : `The ${PROVIDER_ENV[name]} environment variable`;
}
