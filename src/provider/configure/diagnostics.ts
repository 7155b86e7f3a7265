import { maskUrl } from "../../api/redact";
import { type Diagnostic, path } from "../../framework";
import { JOURNAL_URL_ENV } from "../../journal/pg/url";
import { PROVIDER_ENV, type Setting } from "./settings";

// The catalogue of what configuring the provider can report: every diagnostic of the provider
// block and its environment variables, in one place, so their words are read (and kept) together.
// The settings' modules decide when; this file says what. Messages are pinned by the provider's
// tests and the end-to-end suites: change them only on purpose.

/** An error on an argument of the provider block, shown at its place in the configuration. */
function onArgument(name: string, summary: string, detail: string): Diagnostic {
  return { severity: "error", summary, detail, path: path(name) };
}

/** An error not tied to an argument (an environment variable's). */
function general(summary: string, detail: string): Diagnostic {
  return { severity: "error", summary, detail };
}

/** The standalone executable runs from memory (src/executable/compact): a second more per launch. */
export const RUNTIME_IN_MEMORY = {
  summary: "The provider unpacks itself into memory at every launch",
  detail:
    "The standalone provider found no private directory to keep its unpacked runtime in " +
    "($XDG_CACHE_HOME/gpurental/runtime, ~/.cache/gpurental/runtime, $TMPDIR/gpurental-runtime-<uid>: " +
    "each must be yours and not writable by others, nor any directory above it), so every launch " +
    "takes about a second more. Set GPURENTAL_RUNTIME_DIR to a directory of yours, for example one " +
    "that your CI caches between runs. Terraform's debug log (TF_LOG=debug) has the reasons.",
};

/** A proxy argument set to "". */
export function emptyProxy(name: string): Diagnostic {
  return onArgument(
    name,
    `Empty ${name}`,
    `${name} is set to an empty string in the provider block. Remove the argument to use the ${name.toUpperCase()} environment variable, or give it a value.`,
  );
}

/** An argument with an environment variable set to "". */
export function emptySetting(name: Setting): Diagnostic {
  return onArgument(
    name,
    `Empty ${name}`,
    `${name} is set to an empty string in the provider block. Remove the argument to use the ${PROVIDER_ENV[name]} environment variable${name === "org_id" ? " or the credential's own organization" : name === "base_url" || name === "token" ? "" : " or the default"}, or give it a value.`,
  );
}

/** Neither base_url nor its variable is set. */
export function missingApiAddress(): Diagnostic {
  return onArgument(
    "base_url",
    "Missing API address",
    `Set base_url in the provider block or the ${PROVIDER_ENV.base_url} environment variable to the gpurental API's address, e.g. "https://api.gpurental.example".`,
  );
}

/** The API address ends in /v1, which the provider adds itself. */
export function apiAddressWithV1(where: string, value: string): Diagnostic {
  return onArgument(
    "base_url",
    "API address includes /v1",
    `${where} must be the address without the /v1 path, which the provider adds itself: use ${JSON.stringify(maskUrl(value.replace(/\/v1\/?$/, "")))}.`,
  );
}

/** The API address is no http(s) URL, or carries credentials, a query or a fragment. */
export function invalidApiAddress(where: string, value: string): Diagnostic {
  return onArgument(
    "base_url",
    "Invalid API address",
    `${where} must be an http or https URL without credentials, query or fragment, e.g. "https://api.gpurental.example"; got ${JSON.stringify(maskUrl(value).slice(0, 200))}.`,
  );
}

/** Neither token nor its variable is set. */
export function missingCredential(): Diagnostic {
  return onArgument(
    "token",
    "Missing credential",
    `Set token in the provider block or the ${PROVIDER_ENV.token} environment variable to an API key secret (gpr_…) or a session token (gps_…).`,
  );
}

/** The token is not one word of printable ASCII; the value is never echoed (it is a credential). */
export function invalidCredential(where: string): Diagnostic {
  return onArgument(
    "token",
    "Invalid credential",
    `${where} must be a single word of printable ASCII characters (an API key secret or a session token); check for spaces, line breaks or quotes copied along with it.`,
  );
}

/** org_id is no UUID. */
export function invalidOrgId(where: string, value: string): Diagnostic {
  return onArgument(
    "org_id",
    "Invalid organization ID",
    `${where} must be an organization ID (a UUID such as "00000000-0000-4000-8000-000000000001"); got ${JSON.stringify(value.slice(0, 100))}.`,
  );
}

/** reconcile_timeout is no duration, or zero. */
export function invalidReconcileTimeout(where: string, value: string): Diagnostic {
  return onArgument(
    "reconcile_timeout",
    "Invalid reconcile_timeout",
    `${where} must be a duration such as "2m" or "30s" (a number followed by ms, s, m or h, at most 480h); got ${JSON.stringify(value.slice(0, 100))}.`,
  );
}

/** journal_url (or its variable) is no PostgreSQL URL the journal can use. */
export function invalidJournalUrl(from: "config" | "env", message: string): Diagnostic {
  return from === "config"
    ? onArgument("journal_url", "Invalid journal_url", message)
    : general(`Invalid ${JOURNAL_URL_ENV}`, message);
}

/** journal_dir is given while the journal is kept in PostgreSQL. */
export function journalDirUnused(urlFromConfig: boolean, dir: string): Diagnostic {
  return {
    severity: "warning",
    summary: "journal_dir is not used",
    detail: `The deploy journal is kept in PostgreSQL (${urlFromConfig ? "journal_url" : JOURNAL_URL_ENV}), so the directory ${JSON.stringify(dir)} is not read or written. Remove journal_dir, or move what it holds with gpurental journal import.`,
    path: path("journal_dir"),
  };
}

/** An environment variable that must be a duration (`example`, e.g. "15s") is not one. */
export function invalidDurationVariable(name: string, example: string, value: string): Diagnostic {
  return general(
    `Invalid ${name}`,
    `The ${name} environment variable must be a duration such as "${example}" (at most 480h); got ${JSON.stringify(value.slice(0, 100))}.`,
  );
}

/** A proxy or trust setting the network cannot use; on its argument when one gave it. */
export function invalidNetworkSetting(argument: string | undefined, message: string): Diagnostic {
  return argument
    ? onArgument(argument, "Invalid network setting", message)
    : general("Invalid network setting", message);
}

/** The journal's directory cannot be created or written. */
export function unusableJournalDir(
  named: string,
  dir: string,
  problem: string,
  onJournalDir: boolean,
): Diagnostic {
  const detail = `${named} is ${JSON.stringify(dir)}, where the deploy journal cannot be kept: ${problem}. Every deploy and API key creation is recorded there before it is sent. Set journal_dir (or ${PROVIDER_ENV.journal_dir}) to a directory this user can create or write.`;
  return onJournalDir
    ? onArgument("journal_dir", "Unusable journal directory", detail)
    : general("Unusable journal directory", detail);
}

/** The client refused a setting the checks above let through. */
export function invalidConfiguration(argument: string, message: string): Diagnostic {
  return onArgument(argument, "Invalid provider configuration", message);
}
