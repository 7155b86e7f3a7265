import { actions } from "./actions";
import { type Logger as ClientLogger, type LogLevel as ClientLogLevel, GpurentalClient } from "./api/client";
import { ClientConfigError } from "./api/errors";
import { dataSources } from "./data-sources";
import { ephemeralResources } from "./ephemeral-resources";
import {
  attr,
  type ConfigureContext,
  type ConfigureRequest,
  defineSchema,
  durationValidator,
  type ProviderDefinition,
} from "./framework";
import {
  currentRun,
  DeployJournal,
  journalDirProblem,
  locateJournal,
  parentCommand,
  type RunIdentity,
} from "./journal";
import { lateArrivalDiagnostics } from "./journal/late";
import { legacyStoreOf } from "./journal/open";
import { DEFAULT_JOURNAL_TIMEOUT_MS, PgStore } from "./journal/pg/store";
import { settleAtShutdown } from "./journal/settle";
import { listResources } from "./list-resources";
import { logger } from "./log";
import { checkApiAddress } from "./provider/configure/api-address";
import { checkOrgId, checkToken } from "./provider/configure/credential";
import { emptySetting, invalidConfiguration, RUNTIME_IN_MEMORY } from "./provider/configure/diagnostics";
import {
  durationVariable,
  JOURNAL_TIMEOUT_ENV,
  REQUEST_TIMEOUT_ENV,
  reconcileTimeout,
} from "./provider/configure/durations";
import { journalUrlOf, reportUnusableJournalDir } from "./provider/configure/journal";
import { networkOf, proxyArguments } from "./provider/configure/network";
import {
  type Given,
  PROVIDER_ENV,
  type Resolved,
  resolve,
  type Setting,
} from "./provider/configure/settings";
import { budgetOf, within } from "./provider/deadline";
import { orphanedEntriesWarning, reopenedEntriesWarning } from "./provider/journal-notes";
import { credentialKindOf, type ProviderData, unconfiguredProvider } from "./provider/provider-data";
import { SharedReads } from "./provider/shared-reads";
import { inAutomation } from "./resident/resident";
import { resources } from "./resources";

// The gpurental provider: its configuration (where the API is, which credential, which
// organization), how that becomes the /v1 client every resource and data source uses, and the list
// of resource and data source types.

const schema = defineSchema({
  description:
    "The gpurental provider manages API keys and GPU instances of the gpurental GPU rental service through its `/v1` API. Every argument can instead come from an environment variable, so that no credential needs to be written into a configuration: an argument left unset falls back to its variable, while one set to an empty string is an error (it is most often a variable that came out empty).",
  attributes: {
    base_url: attr.string({
      optional: true,
      description:
        "Base address of the gpurental API, `http` or `https`, without the `/v1` path (e.g. `https://api.gpurental.example`). Falls back to the `GPURENTAL_BASE_URL` environment variable; one of the two is required.",
    }),
    token: attr.string({
      optional: true,
      sensitive: true,
      description:
        "Credential sent as `Authorization: Bearer`: an API key secret (`gpr_…`) or a signed-in session token (`gps_…`). Falls back to `GPURENTAL_TOKEN`; one of the two is required. Creating or revoking API keys (`gpurental_api_key`) needs a session token, and team keys an admin's session.",
    }),
    org_id: attr.string({
      optional: true,
      description:
        "ID of the organization to act in, sent as `X-Org-Id`. Falls back to `GPURENTAL_ORG_ID`. When unset, the credential's own organization is used; an organization the credential does not belong to is refused with `ORG_MISMATCH`.",
    }),
    journal_dir: attr.string({
      optional: true,
      description:
        "Directory of the deploy journal, where every deploy and API key creation is recorded before it is sent, so that the next apply adopts an instance (or revokes a key) that an interrupted or late request created instead of creating another. Falls back to `GPURENTAL_JOURNAL_DIR`, else `gpurental-journal` in Terraform's data directory (`TF_DATA_DIR`, default `.terraform`). A relative path is taken from the working directory. Each workspace and backend has its own file in it. Keep it with the working directory. On CI runners, which may be lost with their disk, keep the journal in PostgreSQL instead (`journal_url`). A directory that cannot be created or written (under a file, read-only) is an error when the provider is configured, so the plan fails rather than the apply.",
    }),
    journal_url: attr.string({
      optional: true,
      sensitive: true,
      description:
        "PostgreSQL database of the deploy journal, in place of `journal_dir`: a `postgres://user:password@host:5432/database?sslmode=verify-full` URL of the same form as the `pg` backend's `conn_str` (libpq's parameters; `sslmode` defaults to `require`, and `PGUSER`, `PGPASSWORD` and the `PGSSL*` variables fill what the URL leaves out). Every runner that reaches the database shares the journal, so a runner that is lost (a job killed, a machine gone) leaves nothing the next runner cannot adopt. The journal keeps its own schema, `gpurental_journal`, created on first use; entries are kept per workspace and backend, as in the directory. If the database cannot be reached, a create fails before anything is sent. Falls back to `GPURENTAL_JOURNAL_URL`; prefer the variable, since a password written in the configuration is kept in saved plans.",
    }),
    ca_cert_file: attr.string({
      optional: true,
      description:
        "Path of a PEM file of CA certificates to trust for the API, in addition to Node's roots, the system's (`SSL_CERT_FILE` or the system bundle, `SSL_CERT_DIR` or the system directories, as Go programs read them) and `NODE_EXTRA_CA_CERTS`: for an API behind a private CA or a TLS-inspecting proxy. Falls back to `GPURENTAL_CA_CERT_FILE`. A relative path is taken from the working directory. Certificate verification cannot be turned off.",
    }),
    https_proxy: attr.string({
      optional: true,
      sensitive: true,
      description:
        "Proxy for an `https` base_url, e.g. `http://proxy.example:3128`; credentials may be given in it (`http://user:password@proxy.example:3128`) and are never logged. Overrides the `HTTPS_PROXY` (or `https_proxy`) environment variable, which is otherwise used as Go providers use it. `localhost` and loopback addresses are never proxied.",
    }),
    http_proxy: attr.string({
      optional: true,
      sensitive: true,
      description:
        "Proxy for an `http` base_url. Overrides the `HTTP_PROXY` (or `http_proxy`) environment variable.",
    }),
    no_proxy: attr.string({
      optional: true,
      description:
        "Comma-separated hosts reached without the proxy, as Go reads `NO_PROXY`: `example.com` (and its subdomains), `.example.com` (subdomains only), IPs, CIDRs such as `10.0.0.0/8`, each with an optional `:port`, or `*`. Overrides the `NO_PROXY` (or `no_proxy`) environment variable.",
    }),
    reconcile_timeout: attr.string({
      optional: true,
      description:
        'How long a deploy or key creation whose answer was lost is looked for by listing before the apply fails with "outcome unknown" (it is never sent twice), e.g. `"2m"` or `"30s"`; bounded by the create timeout. Falls back to `GPURENTAL_RECONCILE_TIMEOUT`; default `"2m"`.',
      validators: [durationValidator()],
    }),
  },
});

export { JOURNAL_TIMEOUT_ENV, PROVIDER_ENV, RUNTIME_IN_MEMORY };

/** The provider's configuration schema. */
export const providerSchema = schema;

const clientLog = logger.child("api");
const journalLog = logger.child("journal");
const logToProvider: ClientLogger = Object.assign(
  (level: ClientLogLevel, msg: string, fields: Record<string, unknown>) => clientLog.log(level, msg, fields),
  { enabled: (level: ClientLogLevel) => clientLog.enabled(level) },
);

/** Options for building the provider, for tests. */
export interface CreateProviderOptions {
  /** Environment to read the fallbacks from; default process.env. */
  env?: NodeJS.ProcessEnv;
  /** Extra client options (a dispatcher, faster retries) used by in-memory tests. */
  clientOptions?: Partial<ConstructorParameters<typeof GpurentalClient>[0]>;
  /** Terraform's working directory, where the deploy journal is kept; default the process's. */
  cwd?: string;
  /** The provider process as the journal records it; tests stand in for several processes. */
  run?: RunIdentity;
  /** The pid of the terraform command that started the provider; default the process's parent. */
  ppid?: number;
  /**
   * Aborted when the process Terraform started for this provider has ended while this code still
   * runs (a session of a resident provider process, ended by Terraform's Shutdown or with its
   * launch gone): the deploy journal then records nothing more, as the journal of an ended
   * provider process would not.
   */
  ended?: AbortSignal;
}

/**
 * Set by the compact standalone executable's launcher (src/executable/compact) when it found no
 * private directory to unpack its runtime into and runs it from memory, at about a second per
 * launch: every command says so until the user gives it one.
 */
export const RUNTIME_IN_MEMORY_ENV = "GPURENTAL_RUNTIME_IN_MEMORY";
/**
 * Builds the provider data (the /v1 client, its credential's kind and the deploy settings) from
 * the provider configuration, reporting problems on their attribute.
 */
export async function configureClient(
  req: ConfigureRequest<typeof schema>,
  ctx: ConfigureContext,
  opts: CreateProviderOptions = {},
): Promise<ProviderData> {
  const env = opts.env ?? process.env;
  const diags = ctx.diags;
  if (env[RUNTIME_IN_MEMORY_ENV] === "1")
    diags.addWarning(RUNTIME_IN_MEMORY.summary, RUNTIME_IN_MEMORY.detail);
  const settings = {
    base_url: resolve(req.config.base_url, "base_url", env),
    token: resolve(req.config.token, "token", env),
    org_id: resolve(req.config.org_id, "org_id", env),
    journal_dir: resolve(req.config.journal_dir, "journal_dir", env),
    journal_url: resolve(req.config.journal_url, "journal_url", env),
    reconcile_timeout: resolve(req.config.reconcile_timeout, "reconcile_timeout", env),
    ca_cert_file: resolve(req.config.ca_cert_file, "ca_cert_file", env),
  } as const;
  const {
    base_url: baseUrl,
    token,
    org_id: orgId,
    journal_dir: journalDir,
    ca_cert_file: caCertFile,
  } = settings;

  const { proxy, pending: proxyPending } = proxyArguments(req.config, diags);
  for (const [name, r] of Object.entries(settings) as [Setting, Resolved][]) {
    if (r.kind === "empty") diags.add(emptySetting(name));
  }
  checkApiAddress(baseUrl, diags);
  checkToken(token, diags);
  checkOrgId(orgId, diags);
  const reconcileTimeoutMs = reconcileTimeout(settings.reconcile_timeout, diags);
  const journalUrl = journalUrlOf(settings.journal_url, journalDir, diags);
  const journalTimeoutMs =
    durationVariable(env, JOURNAL_TIMEOUT_ENV, "15s", DEFAULT_JOURNAL_TIMEOUT_MS, diags) ??
    DEFAULT_JOURNAL_TIMEOUT_MS;
  if (diags.hasErrors()) return unconfiguredProvider([]);

  const pending = [
    ...(Object.keys(settings) as Setting[]).filter((n) => settings[n].kind === "unknown"),
    ...proxyPending,
  ];
  if (pending.length > 0 || baseUrl.kind !== "value" || token.kind !== "value") {
    // Values from resources not created yet: plan without the API; apply configures again.
    return unconfiguredProvider(pending);
  }

  const requestTimeout = durationVariable(env, REQUEST_TIMEOUT_ENV, "30s", undefined, diags);
  if (diags.hasErrors()) return unconfiguredProvider([]);
  const network = networkOf(baseUrl.value, proxy, caCertFile, env, opts.cwd ?? process.cwd(), diags);
  if (!network) return unconfiguredProvider([]);
  try {
    const client = newClient(req, ctx, opts, {
      baseUrl: baseUrl.value,
      baseUrlFrom: baseUrl.from,
      token,
      orgId: orgId.kind === "value" ? orgId.value : undefined,
      network,
      requestTimeout,
      env,
    });
    const parent = parentCommand(env, opts.ppid);
    const opened = await openJournal(ctx, opts, {
      journalDir,
      journalUrl,
      journalTimeoutMs,
      env,
      stateElsewhere: parent.stateElsewhere,
    });
    if (!opened) return unconfiguredProvider([]);
    const { journal, location } = opened;
    const data: ProviderData = {
      configured: true,
      client,
      credential: {
        kind: credentialKindOf(token.value),
        orgId: orgId.kind === "value" ? orgId.value : undefined,
      },
      deploy: {
        journal,
        reconcileTimeoutMs,
        partial: parent.partial,
        announceLostRuns:
          !journalUrl && location.backend !== "local" && inAutomation(env) && !journal.store.exists(),
        account: { base_url: client.baseUrl, org_id: client.orgId ?? null },
      },
      reads: new SharedReads(),
    };
    // Without the state's lock (-lock=false, console, query, test), another runner's apply may
    // still be writing the state: what it left pending is not settled here.
    const reopened = reopenedEntriesWarning(journal, parent.locked);
    if (reopened) ctx.diags.addWarning(reopened.summary, reopened.detail);
    const orphaned = orphanedEntriesWarning(journal);
    if (orphaned) ctx.diags.addWarning(orphaned.summary, orphaned.detail);
    ctx.diags.add(
      ...(await lateArrivalDiagnostics(
        journal,
        () => client.listInstances({}, within(budgetOf(LATE_ARRIVAL_LISTING_MS, ctx.signal))),
        env,
      )),
    );
    return data;
  } catch (err) {
    if (err instanceof ClientConfigError) {
      const attribute = err.field === "baseUrl" ? "base_url" : err.field === "orgId" ? "org_id" : "token";
      diags.add(invalidConfiguration(attribute, err.message));
      return unconfiguredProvider([]);
    }
    throw err;
  }
}

/** What {@link newClient} is built from: the settings configure checked. */
interface ClientSettings {
  baseUrl: string;
  baseUrlFrom: Given["from"];
  token: Given;
  orgId: string | undefined;
  network: NonNullable<ReturnType<typeof networkOf>>;
  requestTimeout: number | undefined;
  env: NodeJS.ProcessEnv;
}

/** The /v1 client of a configured provider; its configuration errors are thrown (ClientConfigError). */
function newClient(
  req: ConfigureRequest<typeof schema>,
  ctx: ConfigureContext,
  opts: CreateProviderOptions,
  s: ClientSettings,
): GpurentalClient {
  const appended = s.env.TF_APPEND_USER_AGENT?.trim();
  const client = new GpurentalClient({
    baseUrl: s.baseUrl,
    token: s.token.value,
    orgId: s.orgId,
    userAgent: `Terraform/${req.terraformVersion || "unknown"} terraform-provider-gpurental${appended ? ` ${appended}` : ""}`,
    // Connection errors name the address and where it came from, so the reader knows what to fix.
    baseUrlSource:
      s.baseUrlFrom === "config"
        ? "base_url in the provider block"
        : `the ${PROVIDER_ENV.base_url} environment variable`,
    network: s.network,
    logger: logToProvider,
    signal: ctx.signal,
    ...(s.requestTimeout ? { timeoutMs: s.requestTimeout } : {}),
    ...opts.clientOptions,
  });
  logger.child("provider").debug("configured", {
    base_url: client.baseUrl,
    proxy: s.network.describeProxy() ?? null,
    ca_cert_file: s.network.caCertFile?.value ?? null,
    org_id: client.orgId ?? null,
    credential: credentialKindOf(s.token.value),
    token_from: s.token.from,
  });
  return client;
}

/**
 * The deploy journal of this working directory and state, in its directory or in PostgreSQL
 * (journal_url); undefined, with an error on journal_dir, when the directory could never be written.
 */
async function openJournal(
  ctx: ConfigureContext,
  opts: CreateProviderOptions,
  s: {
    journalDir: Resolved;
    journalUrl: ReturnType<typeof journalUrlOf>;
    journalTimeoutMs: number;
    env: NodeJS.ProcessEnv;
    stateElsewhere: boolean;
  },
): Promise<{ journal: DeployJournal; location: ReturnType<typeof locateJournal> } | undefined> {
  const { journalDir, journalUrl, env } = s;
  const location = locateJournal({
    configured: journalDir.kind === "value" ? journalDir.value : undefined,
    env,
    cwd: opts.cwd,
    stateElsewhere: s.stateElsewhere,
  });
  // An apply writes the journal before its first deploy: a directory it could never create fails
  // the plan instead, where nothing has been done yet. With journal_url no directory is written.
  const problem = journalUrl ? undefined : journalDirProblem(location.dir);
  if (problem) {
    reportUnusableJournalDir(journalDir, location.dir, problem, ctx.diags);
    return undefined;
  }
  const log = (level: "debug" | "warn", msg: string, fields?: Record<string, unknown>) =>
    journalLog.log(level, msg, fields);
  const run = opts.run ?? currentRun();
  const legacy = legacyStoreOf(location, journalUrl, { env, run, timeoutMs: s.journalTimeoutMs, log });
  const journal = new DeployJournal(location, {
    log,
    ...(journalUrl
      ? { store: new PgStore(journalUrl, location, { env, timeoutMs: s.journalTimeoutMs, log }) }
      : {}),
    run,
    ...(opts.ended ? { ended: opts.ended } : {}),
    ...(ctx.signal ? { stopped: ctx.signal } : {}),
    legacy,
  });
  // The PostgreSQL journal is read once here, asynchronously: a command that writes nothing
  // (a plan with no changes) then starts no worker thread for it; so is the state's journal under
  // its older key, where there is one (nothing there, it is done with).
  if (journal.store instanceof PgStore) await journal.store.prime();
  if (legacy instanceof PgStore) await legacy.prime();
  settleAtShutdown(journal, opts.ended);
  return { journal, location };
}

/** The time limit of the listing that looks for late arrivals. */
const LATE_ARRIVAL_LISTING_MS = 10_000;

/** Builds the gpurental provider definition; options are for tests. */
export function createProvider(
  opts: CreateProviderOptions = {},
): ProviderDefinition<typeof schema, ProviderData> {
  return {
    typeName: "gpurental",
    schema,
    configure: (req, ctx) => configureClient(req, ctx, opts),
    resources,
    dataSources,
    ephemeralResources,
    listResources,
    actions,
  };
}

/** The gpurental provider, configured from its provider block and the environment. */
export const provider = createProvider();
