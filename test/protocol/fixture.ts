// What the protocol suites share: the resource suites' set-up (test/e2e/resources/helpers.ts: the
// fake backend in-process on port 0 over TLS, a terraform working directory with the shipped
// provider installed and initialised), and drivers that start that very installed executable,
// with an environment of their own inside the suite's folder.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { type Suite, startSuite } from "../e2e/resources/helpers";
import { type DriverOptions, TerraformDriver, type TerraformVersion } from "./driver";

/** How long one protocol test may take on a loaded machine: each command starts 3 or 4 processes. */
export const PROTOCOL_TEST_MS = 240_000;

/** Starts the suite; `driver` gives a Terraform of a version with an empty state. */
export async function startProtocolSuite(): Promise<Suite> {
  return startSuite();
}

let journals = 0;

/** A driver for `version` against the suite's backend, with a deploy journal of its own. */
export function driverFor(
  s: Suite,
  version: TerraformVersion,
  opts: {
    providerConfig?: DriverOptions["providerConfig"];
    patch?: string;
    onResponse?: DriverOptions["onResponse"];
  } = {},
): TerraformDriver {
  const journal = join(s.tf.root, `driver-journal-${++journals}`);
  mkdirSync(journal, { recursive: true });
  const env: NodeJS.ProcessEnv = {
    PATH: s.tf.env.PATH,
    HOME: s.tf.env.HOME,
    TMPDIR: s.tf.env.TMPDIR,
    GPURENTAL_PROVIDER_RESIDENT: "off",
    GPURENTAL_PROVIDER_CODE_CACHE_DIR: s.tf.env.GPURENTAL_PROVIDER_CODE_CACHE_DIR,
    GPURENTAL_JOURNAL_DIR: journal,
    GPURENTAL_CA_CERT_FILE: s.tf.env.GPURENTAL_CA_CERT_FILE,
  };
  for (const k of Object.keys(env)) if (env[k] === undefined) delete env[k];
  return new TerraformDriver({
    version,
    // PROTOCOL_PROVIDER_EXECUTABLE runs another build (to record older-client.e2e.test.ts's
    // transcript from the provider before a change); by default, the installed provider.
    executable: process.env.PROTOCOL_PROVIDER_EXECUTABLE ?? s.tf.install.executable,
    env,
    providerConfig: opts.providerConfig ?? { base_url: s.backend.url, token: s.creds.admin_session_token },
    ...(opts.patch ? { patch: opts.patch } : {}),
    ...(opts.onResponse ? { onResponse: opts.onResponse } : {}),
  });
}

/** The RPC names of a driver's calls, in order, from the call at `from` on. */
export function rpcs(d: TerraformDriver, from = 0): string[] {
  return d.calls.slice(from).map((c) => c.rpc);
}
