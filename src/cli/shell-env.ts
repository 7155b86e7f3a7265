import { chmodSync, writeFileSync } from "node:fs";
import { shellQuote } from "../display";
import type { DemoCredentials } from "../fake-backend/types";

// The fake backend's settings for the provider as a file a POSIX shell reads with `.`: what a
// Terraform user needs without Node.js (the credentials file is JSON, which a shell cannot read
// without a tool). Written with mode 0600, like the credentials file: it holds working tokens.

/** The variables the provider and the `gpurental` commands read, for the demo organization's admin. */
export function fakeBackendVariables(
  url: string,
  credentials: DemoCredentials,
  caFile?: string,
): Array<[string, string]> {
  return [
    ["GPURENTAL_BASE_URL", url],
    ["GPURENTAL_TOKEN", credentials.admin_session_token],
    ["GPURENTAL_ORG_ID", credentials.org_id],
    ["GPURENTAL_SSH_KEY_ID", credentials.ssh_key_id],
    ...(caFile ? [["GPURENTAL_CA_CERT_FILE", caFile] as [string, string]] : []),
  ];
}

/** The text of the file: one `export NAME='value'` line per variable, after a comment saying what it is. */
export function shellEnvText(url: string, credentials: DemoCredentials, caFile?: string): string {
  return [
    `# The gpurental fake backend at ${url}, as the demo organization's admin. Read it into a shell`,
    "# with `. <this file>`. It holds a working session token: keep it out of repositories.",
    ...fakeBackendVariables(url, credentials, caFile).map(
      ([name, value]) => `export ${name}=${shellQuote(value)}`,
    ),
    "",
  ].join("\n");
}

/** Writes the file with mode 0600, also over an older file with a wider mode. */
export function writeShellEnv(
  file: string,
  url: string,
  credentials: DemoCredentials,
  caFile?: string,
): void {
  writeFileSync(file, shellEnvText(url, credentials, caFile), { mode: 0o600 });
  chmodSync(file, 0o600);
}
