import { GpurentalClient } from "../../api/client";
import {
  ClientConfigError,
  ConnectionSetupError,
  GpurentalError,
  NetworkError,
  TimeoutError,
} from "../../api/errors";
import { maskUrl, redactText } from "../../api/redact";
import { formatBytes, readBounded, TooLargeError } from "../../bounded-read";
import { terminalText } from "../../display";
import { type CredentialKind, credentialKindOf } from "../../provider/provider-data";
import { UserFacingError } from "../../user-facing";

// The /v1 client of a `gpurental` command that reads the service (strays, plan-report): settings from
// flags, else the provider's own environment variables, checked with errors that name the flag or
// the variable. The token has no flag of its own: a secret on the command line is visible to every
// user of the machine (ps, /proc) and kept in shell history and CI logs; `--token-file` reads it
// from a file instead.

/** The environment variables the provider reads, read alike here. */
export const API_ENV = {
  baseUrl: "GPURENTAL_BASE_URL",
  token: "GPURENTAL_TOKEN",
  orgId: "GPURENTAL_ORG_ID",
  caCertFile: "GPURENTAL_CA_CERT_FILE",
} as const;

/** The flags a command takes for the API. */
export interface ApiFlags {
  baseUrl?: string;
  tokenFile?: string;
  orgId?: string;
  /** A PEM file of extra CAs to trust, as the provider's `ca_cert_file`. */
  caCertFile?: string;
}

/** A client and what is known about the credential it holds. */
export interface ApiAccess {
  client: GpurentalClient;
  /** `api_key` (gpr_), `session` (gps_) or `unknown`. */
  credential: CredentialKind;
  /** For an API key: its prefix (the first 12 characters, which the service lists), to know it among the keys. */
  keyPrefix?: string;
}

/** Raised for missing or malformed API settings; names the flag or variable, never the token's value. */
export class ApiSettingsError extends UserFacingError {
  constructor(message: string) {
    super(message);
    this.name = "ApiSettingsError";
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function setting(flag: string | undefined, flagName: string, env: NodeJS.ProcessEnv, variable: string) {
  if (flag !== undefined) {
    if (flag.trim() === "") throw new ApiSettingsError(`${flagName} must not be empty`);
    return { value: flag, where: flagName };
  }
  const v = env[variable];
  if (v !== undefined && v !== "") return { value: v, where: variable };
  return undefined;
}

/**
 * How long a command retries one failing request (the client's own default is two minutes): a
 * transient failure is ridden out, and a wrong address fails a nightly job within seconds.
 */
export const COMMAND_REQUEST_BUDGET_MS = 20_000;

/** The most --token-file is read: a token is one short line, and /dev/zero never ends. */
const MAX_TOKEN_FILE_BYTES = 64 * 1024;

/** Builds the client from flags and the environment; `userAgent` names the command. */
export function apiAccess(flags: ApiFlags, env: NodeJS.ProcessEnv, userAgent: string): ApiAccess {
  const base = setting(flags.baseUrl, "--base-url", env, API_ENV.baseUrl);
  if (!base) {
    throw new ApiSettingsError(
      `the API address is not set: pass --base-url or set ${API_ENV.baseUrl} (e.g. https://api.gpurental.example)`,
    );
  }
  let url: URL | undefined;
  try {
    url = new URL(base.value);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== "http:" && url.protocol !== "https:") || url.username || url.password) {
    throw new ApiSettingsError(
      `${base.where} must be an http or https URL without credentials, got ${JSON.stringify(maskUrl(base.value).slice(0, 200))}`,
    );
  }
  if (/\/v1\/?$/.test(url.pathname)) {
    throw new ApiSettingsError(
      `${base.where} must be the address without the /v1 path, which is added to every request`,
    );
  }

  let token: { value: string; where: string } | undefined;
  if (flags.tokenFile !== undefined) {
    let text: string;
    try {
      text = readBounded(flags.tokenFile, MAX_TOKEN_FILE_BYTES).toString("utf8");
    } catch (err) {
      if (err instanceof TooLargeError) {
        throw new ApiSettingsError(
          `--token-file ${flags.tokenFile} gives more than ${formatBytes(MAX_TOKEN_FILE_BYTES)}: it is no token file (one line: an API key secret or a session token)`,
        );
      }
      throw new ApiSettingsError(
        `--token-file ${flags.tokenFile} cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
      );
    }
    token = { value: text.trim(), where: `--token-file ${flags.tokenFile}` };
  } else {
    const v = env[API_ENV.token];
    if (v !== undefined && v !== "") token = { value: v, where: API_ENV.token };
  }
  if (!token || token.value === "") {
    throw new ApiSettingsError(
      `no credential: set ${API_ENV.token} (or pass --token-file) to an API key secret (gpr_…) or a session token (gps_…)`,
    );
  }
  if (!/^[\x21-\x7e]+$/.test(token.value)) {
    // Never echo the value: it is a credential.
    throw new ApiSettingsError(
      `${token.where} must hold a single word of printable ASCII characters (an API key secret or a session token)`,
    );
  }
  const org = setting(flags.orgId, "--org-id", env, API_ENV.orgId);
  if (org && !UUID.test(org.value)) {
    throw new ApiSettingsError(
      `${org.where} must be an organization ID (a UUID), got ${JSON.stringify(org.value.slice(0, 100))}`,
    );
  }
  const credential = credentialKindOf(token.value);
  const caFile = setting(flags.caCertFile, "--ca-cert-file", env, API_ENV.caCertFile);
  let client: GpurentalClient;
  try {
    client = new GpurentalClient({
      baseUrl: base.value,
      token: token.value,
      orgId: org?.value,
      userAgent,
      baseUrlSource: base.where,
      retry: { deadlineMs: COMMAND_REQUEST_BUDGET_MS },
      // Proxies and CAs as the provider reads them, from this command's environment.
      network: {
        env,
        ...(caFile ? { caCertFile: { value: caFile.value, source: caFile.where } } : {}),
      },
    });
  } catch (err) {
    if (err instanceof ClientConfigError) {
      // The client names its own option (`baseUrl must not have a query…`): the person typed a
      // flag or set a variable, and the message names that instead.
      const where: Record<string, string | undefined> = {
        baseUrl: base.where,
        token: token.where,
        orgId: org?.where,
      };
      const named = where[err.field];
      throw new ApiSettingsError(
        named && err.message.startsWith(`${err.field} `)
          ? `${named}${err.message.slice(err.field.length)}`
          : err.message,
      );
    }
    throw err;
  }
  return { client, credential, ...(credential === "api_key" ? { keyPrefix: token.value.slice(0, 12) } : {}) };
}

/**
 * Whether a command prints `err` as one message and exits with its failure code: an error of the
 * API (its message says what the service refused or why it could not be reached) or one marked
 * {@link UserFacingError}. Anything else is a fault of the program and is thrown on.
 */
export function isUserFacing(err: unknown): err is Error {
  return err instanceof GpurentalError || err instanceof UserFacingError;
}

/** An error of a reading command for a person: a failure to reach the API also says where the address came from. */
export function commandErrorText(err: Error): string {
  // A flag or a file may hold a credential pasted in the wrong place (a token given as --org-id, a
  // URL with ?token=), and messages quote what they refuse: mask before anything is printed. A
  // server's message is no terminal command either (src/display.ts).
  const shown = (text: string) => terminalText(redactText(text), { multiline: true });
  if (err instanceof ConnectionSetupError) return shown(err.message);
  if (err instanceof NetworkError || err instanceof TimeoutError) {
    return shown(`${err.message} (the API address comes from --base-url or ${API_ENV.baseUrl})`);
  }
  return shown(err.message);
}
