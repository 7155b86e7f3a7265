import { resolve as resolvePath } from "node:path";
import { actions } from "../actions";
import { type Logger as ClientLogger, GpurentalClient } from "../api/client";
import { ClientConfigError } from "../api/errors";
import { isUuid } from "../api/ids";
import { Network, TrustSettingError } from "../api/network/network";
import { ProxySettingError, type ProxySettings } from "../api/network/proxy";
import { maskUrl } from "../api/redact";
import { dataSources } from "../data-sources";
import { ephemeralResources } from "../ephemeral-resources";
import {
  attr,
  type ConfigureContext,
  type ConfigureRequest,
  defineSchema,
  durationValidator,
  isUnknown,
  type ProviderDefinition,
  parseDuration,
  path,
} from "../framework";
import {
  DeployJournal,
  JOURNAL_DIR_ENV,
  journalDirProblem,
  locateJournal,
  parentCommand,
  type RunIdentity,
} from "../journal";
import { DEFAULT_LATE_ARRIVAL_WATCH_MS, LATE_ARRIVAL_WATCH_ENV } from "../journal/late";
import { DEFAULT_JOURNAL_TIMEOUT_MS, PgStore } from "../journal/pg/store";
import { JOURNAL_URL_ENV, type JournalUrl, JournalUrlError, parseJournalUrl } from "../journal/pg/url";
import { settleAtShutdown } from "../journal/settle";
import { listResources } from "../list-resources";
import { logger } from "../log";
import { inAutomation } from "../resident/resident";
import { resources } from "../resources";
import { lateArrivalsOf, lateArrivalWarning } from "../resources/late-arrivals";
import { budgetOf, within } from "./deadline";
import { orphanedEntriesWarning } from "./journal-notes";
import {
  credentialKindOf,
  DEFAULT_RECONCILE_TIMEOUT_MS,
  type ProviderData,
  unconfiguredProvider,
} from "./provider-data";
import { SharedReads } from "./shared-reads";

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

/** The provider's configuration schema. */
export const providerSchema = schema;

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
const PROXY_ARGS = ["https_proxy", "http_proxy", "no_proxy"] as const;

type Setting = keyof typeof PROVIDER_ENV;

/** A setting resolved from the configuration or the environment. */
type Resolved =
  | { kind: "value"; value: string; from: "config" | "env" }
  | { kind: "unknown" }
  | { kind: "empty" }
  | { kind: "missing" };

function resolve(config: unknown, name: Setting, env: NodeJS.ProcessEnv): Resolved {
  if (isUnknown(config)) return { kind: "unknown" };
  // An explicit "" is most often a variable that came out empty: an error, not a silent fallback
  // to a credential from the environment the configuration did not ask for.
  if (config === "") return { kind: "empty" };
  if (typeof config === "string") return { kind: "value", value: config, from: "config" };
  const fromEnv = env[PROVIDER_ENV[name]];
  if (fromEnv !== undefined && fromEnv !== "") return { kind: "value", value: fromEnv, from: "env" };
  return { kind: "missing" };
}

function where(name: Setting, r: { from: "config" | "env" }): string {
  return r.from === "config" ? `The ${name} argument` : `The ${PROVIDER_ENV[name]} environment variable`;
}

/** How long one request to the PostgreSQL journal may take (a duration; default 15 s). */
export const JOURNAL_TIMEOUT_ENV = "GPURENTAL_JOURNAL_TIMEOUT";

const clientLog = logger.child("api");
const journalLog = logger.child("journal");
const logToProvider: ClientLogger = (level, msg, fields) => clientLog.log(level, msg, fields);

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
export const RUNTIME_IN_MEMORY = {
  summary: "The provider unpacks itself into memory at every launch",
  detail:
    "The standalone provider found no private directory to keep its unpacked runtime in " +
    "($XDG_CACHE_HOME/gpurental/runtime, ~/.cache/gpurental/runtime, $TMPDIR/gpurental-runtime-<uid>: " +
    "each must be yours and not writable by others, nor any directory above it), so every launch " +
    "takes about a second more. Set GPURENTAL_RUNTIME_DIR to a directory of yours, for example one " +
    "that your CI caches between runs. Terraform's debug log (TF_LOG=debug) has the reasons.",
};

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
  if (env[RUNTIME_IN_MEMORY_ENV] === "1")
    ctx.diags.addWarning(RUNTIME_IN_MEMORY.summary, RUNTIME_IN_MEMORY.detail);
  const baseUrl = resolve(req.config.base_url, "base_url", env);
  const token = resolve(req.config.token, "token", env);
  const orgId = resolve(req.config.org_id, "org_id", env);
  const journalDir = resolve(req.config.journal_dir, "journal_dir", env);
  const journalUrlSetting = resolve(req.config.journal_url, "journal_url", env);
  const reconcile = resolve(req.config.reconcile_timeout, "reconcile_timeout", env);
  const caCertFile = resolve(req.config.ca_cert_file, "ca_cert_file", env);

  const proxy: ProxySettings = {};
  const proxyPending: string[] = [];
  for (const name of PROXY_ARGS) {
    const v: unknown = req.config[name];
    if (isUnknown(v)) proxyPending.push(name);
    else if (v === "") {
      ctx.diags.addAttributeError(
        path(name),
        `Empty ${name}`,
        `${name} is set to an empty string in the provider block. Remove the argument to use the ${name.toUpperCase()} environment variable, or give it a value.`,
      );
    } else if (typeof v === "string") {
      const key = name === "https_proxy" ? "httpsProxy" : name === "http_proxy" ? "httpProxy" : "noProxy";
      proxy[key] = { value: v, source: `${name} in the provider block` };
    }
  }

  for (const [name, r] of [
    ["base_url", baseUrl],
    ["token", token],
    ["org_id", orgId],
    ["journal_dir", journalDir],
    ["journal_url", journalUrlSetting],
    ["reconcile_timeout", reconcile],
    ["ca_cert_file", caCertFile],
  ] as const) {
    if (r.kind === "empty") {
      ctx.diags.addAttributeError(
        path(name),
        `Empty ${name}`,
        `${name} is set to an empty string in the provider block. Remove the argument to use the ${PROVIDER_ENV[name]} environment variable${name === "org_id" ? " or the credential's own organization" : name === "base_url" || name === "token" ? "" : " or the default"}, or give it a value.`,
      );
    }
  }

  if (baseUrl.kind === "missing") {
    ctx.diags.addAttributeError(
      path("base_url"),
      "Missing API address",
      `Set base_url in the provider block or the ${PROVIDER_ENV.base_url} environment variable to the gpurental API's address, e.g. "https://api.gpurental.example".`,
    );
  } else if (baseUrl.kind === "value") {
    let ok = false;
    try {
      const u = new URL(baseUrl.value);
      ok =
        (u.protocol === "http:" || u.protocol === "https:") &&
        !u.username &&
        !u.password &&
        !u.search &&
        !u.hash;
      if (ok && /\/v1\/?$/.test(u.pathname)) {
        ctx.diags.addAttributeError(
          path("base_url"),
          "API address includes /v1",
          `${where("base_url", baseUrl)} must be the address without the /v1 path, which the provider adds itself: use ${JSON.stringify(maskUrl(baseUrl.value.replace(/\/v1\/?$/, "")))}.`,
        );
      }
    } catch {
      ok = false;
    }
    if (!ok) {
      ctx.diags.addAttributeError(
        path("base_url"),
        "Invalid API address",
        `${where("base_url", baseUrl)} must be an http or https URL without credentials, query or fragment, e.g. "https://api.gpurental.example"; got ${JSON.stringify(maskUrl(baseUrl.value).slice(0, 200))}.`,
      );
    }
  }
  if (token.kind === "missing") {
    ctx.diags.addAttributeError(
      path("token"),
      "Missing credential",
      `Set token in the provider block or the ${PROVIDER_ENV.token} environment variable to an API key secret (gpr_…) or a session token (gps_…).`,
    );
  } else if (token.kind === "value" && !/^[\x21-\x7e]+$/.test(token.value)) {
    // Never echo the value: it is a credential.
    ctx.diags.addAttributeError(
      path("token"),
      "Invalid credential",
      `${where("token", token)} must be a single word of printable ASCII characters (an API key secret or a session token); check for spaces, line breaks or quotes copied along with it.`,
    );
  }
  if (orgId.kind === "value" && !isUuid(orgId.value)) {
    ctx.diags.addAttributeError(
      path("org_id"),
      "Invalid organization ID",
      `${where("org_id", orgId)} must be an organization ID (a UUID such as "00000000-0000-4000-8000-000000000001"); got ${JSON.stringify(orgId.value.slice(0, 100))}.`,
    );
  }
  let reconcileTimeoutMs = DEFAULT_RECONCILE_TIMEOUT_MS;
  if (reconcile.kind === "value") {
    const ms = parseDuration(reconcile.value);
    if (ms === undefined || ms === 0) {
      ctx.diags.addAttributeError(
        path("reconcile_timeout"),
        "Invalid reconcile_timeout",
        `${where("reconcile_timeout", reconcile)} must be a duration such as "2m" or "30s" (a number followed by ms, s, m or h); got ${JSON.stringify(reconcile.value.slice(0, 100))}.`,
      );
    } else reconcileTimeoutMs = ms;
  }
  let journalUrl: JournalUrl | undefined;
  if (journalUrlSetting.kind === "value") {
    try {
      journalUrl = parseJournalUrl(
        journalUrlSetting.value,
        journalUrlSetting.from === "config"
          ? "journal_url in the provider block"
          : `the ${JOURNAL_URL_ENV} environment variable`,
      );
    } catch (err) {
      if (!(err instanceof JournalUrlError)) throw err;
      if (journalUrlSetting.from === "config")
        ctx.diags.addAttributeError(path("journal_url"), "Invalid journal_url", err.message);
      else ctx.diags.addError(`Invalid ${JOURNAL_URL_ENV}`, err.message);
    }
    if (journalUrl && journalDir.kind === "value" && journalDir.from === "config") {
      ctx.diags.addAttributeWarning(
        path("journal_dir"),
        "journal_dir is not used",
        `The deploy journal is kept in PostgreSQL (${journalUrl.source === "journal_url in the provider block" ? "journal_url" : JOURNAL_URL_ENV}), so the directory ${JSON.stringify(journalDir.value)} is not read or written. Remove journal_dir, or move what it holds with gpurental journal import.`,
      );
    }
  }
  let journalTimeoutMs = DEFAULT_JOURNAL_TIMEOUT_MS;
  if (env[JOURNAL_TIMEOUT_ENV]) {
    const ms = parseDuration(env[JOURNAL_TIMEOUT_ENV]);
    if (!ms) {
      ctx.diags.addError(
        `Invalid ${JOURNAL_TIMEOUT_ENV}`,
        `The ${JOURNAL_TIMEOUT_ENV} environment variable must be a duration such as "15s"; got ${JSON.stringify(env[JOURNAL_TIMEOUT_ENV].slice(0, 100))}.`,
      );
    } else journalTimeoutMs = ms;
  }
  if (ctx.diags.hasErrors()) return unconfiguredProvider([]);

  const pending = [
    ...(
      [
        "base_url",
        "token",
        "org_id",
        "journal_dir",
        "journal_url",
        "reconcile_timeout",
        "ca_cert_file",
      ] as const
    ).filter(
      (n) =>
        (
          ({
            base_url: baseUrl,
            token,
            org_id: orgId,
            journal_dir: journalDir,
            journal_url: journalUrlSetting,
            reconcile_timeout: reconcile,
            ca_cert_file: caCertFile,
          }) as const
        )[n].kind === "unknown",
    ),
    ...proxyPending,
  ];
  if (pending.length > 0 || baseUrl.kind !== "value" || token.kind !== "value") {
    // Values from resources not created yet: plan without the API; apply configures again.
    return unconfiguredProvider(pending);
  }

  // The time limit of one request attempt, for tests and slow links; not a provider argument.
  const requestTimeout = env.GPURENTAL_REQUEST_TIMEOUT
    ? parseDuration(env.GPURENTAL_REQUEST_TIMEOUT)
    : undefined;
  if (env.GPURENTAL_REQUEST_TIMEOUT && !requestTimeout) {
    ctx.diags.addError(
      "Invalid GPURENTAL_REQUEST_TIMEOUT",
      `The GPURENTAL_REQUEST_TIMEOUT environment variable must be a duration such as "30s"; got ${JSON.stringify(env.GPURENTAL_REQUEST_TIMEOUT.slice(0, 100))}.`,
    );
    return unconfiguredProvider([]);
  }
  // The proxy and the CAs: from the arguments, else this launch's environment (a resident
  // process's sessions each have their own).
  let network: Network;
  try {
    network = new Network(new URL(baseUrl.value), {
      env,
      proxy,
      ...(caCertFile.kind === "value"
        ? {
            caCertFile: {
              value: resolvePath(opts.cwd ?? process.cwd(), caCertFile.value),
              source:
                caCertFile.from === "config"
                  ? "ca_cert_file in the provider block"
                  : `the ${PROVIDER_ENV.ca_cert_file} environment variable`,
            },
          }
        : {}),
    });
  } catch (err) {
    if (err instanceof ProxySettingError || err instanceof TrustSettingError) {
      const arg = err instanceof TrustSettingError ? "ca_cert_file" : err.source.split(" ")[0]!;
      const onArgument = (PROXY_ARGS as readonly string[]).includes(arg) || arg === "ca_cert_file";
      if (onArgument && err.source.endsWith("provider block")) {
        ctx.diags.addAttributeError(path(arg), "Invalid network setting", err.message);
      } else {
        ctx.diags.addError("Invalid network setting", err.message);
      }
      return unconfiguredProvider([]);
    }
    throw err;
  }
  const appended = env.TF_APPEND_USER_AGENT?.trim();
  try {
    const client = new GpurentalClient({
      baseUrl: baseUrl.value,
      token: token.value,
      orgId: orgId.kind === "value" ? orgId.value : undefined,
      userAgent: `Terraform/${req.terraformVersion || "unknown"} terraform-provider-gpurental${appended ? ` ${appended}` : ""}`,
      // Connection errors name the address and where it came from, so the reader knows what to fix.
      baseUrlSource:
        baseUrl.from === "config"
          ? "base_url in the provider block"
          : `the ${PROVIDER_ENV.base_url} environment variable`,
      network,
      logger: logToProvider,
      signal: ctx.signal,
      ...(requestTimeout ? { timeoutMs: requestTimeout } : {}),
      ...opts.clientOptions,
    });
    logger.child("provider").debug("configured", {
      base_url: client.baseUrl,
      proxy: network.describeProxy() ?? null,
      ca_cert_file: network.caCertFile?.value ?? null,
      org_id: client.orgId ?? null,
      credential: credentialKindOf(token.value),
      token_from: token.from,
    });
    const location = locateJournal({
      configured: journalDir.kind === "value" ? journalDir.value : undefined,
      env,
      cwd: opts.cwd,
    });
    // An apply writes the journal before its first deploy: a directory it could never create fails
    // the plan instead, where nothing has been done yet. With journal_url no directory is written.
    const problem = journalUrl ? undefined : journalDirProblem(location.dir);
    if (problem) {
      const named =
        journalDir.kind === "value"
          ? where("journal_dir", journalDir)
          : "The deploy journal's default directory (in Terraform's data directory, TF_DATA_DIR)";
      const detail = `${named} is ${JSON.stringify(location.dir)}, where the deploy journal cannot be kept: ${problem}. Every deploy and API key creation is recorded there before it is sent. Set journal_dir (or ${PROVIDER_ENV.journal_dir}) to a directory this user can create or write.`;
      if (journalDir.kind === "value" && journalDir.from === "config")
        ctx.diags.addAttributeError(path("journal_dir"), "Unusable journal directory", detail);
      else ctx.diags.addError("Unusable journal directory", detail);
      return unconfiguredProvider([]);
    }
    const log = (level: "debug" | "warn", msg: string, fields?: Record<string, unknown>) =>
      journalLog.log(level, msg, fields);
    const journal = new DeployJournal(location, {
      log,
      ...(journalUrl
        ? { store: new PgStore(journalUrl, location, { env, timeoutMs: journalTimeoutMs, log }) }
        : {}),
      ...(opts.run ? { run: opts.run } : {}),
      ...(opts.ended ? { ended: opts.ended } : {}),
      ...(ctx.signal ? { stopped: ctx.signal } : {}),
    });
    // The PostgreSQL journal is read once here, asynchronously: a command that writes nothing
    // (a plan with no changes) then starts no worker thread for it.
    if (journal.store instanceof PgStore) await journal.store.prime();
    settleAtShutdown(journal, opts.ended);
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
        partial: parentCommand(env, opts.ppid).partial,
        announceLostRuns:
          !journalUrl && location.backend !== "local" && inAutomation(env) && !journal.store.exists(),
        account: { base_url: client.baseUrl, org_id: client.orgId ?? null },
      },
      reads: new SharedReads(),
    };
    const orphaned = orphanedEntriesWarning(journal);
    if (orphaned) ctx.diags.addWarning(orphaned.summary, orphaned.detail);
    await warnLateArrivals(journal, client, env, ctx);
    return data;
  } catch (err) {
    if (err instanceof ClientConfigError) {
      const attribute = err.field === "baseUrl" ? "base_url" : err.field === "orgId" ? "org_id" : "token";
      ctx.diags.addAttributeError(path(attribute), "Invalid provider configuration", err.message);
      return unconfiguredProvider([]);
    }
    throw err;
  }
}

/**
 * Warns about every instance that landed after its deploy was given up (src/resources/late-arrivals.ts),
 * on every command that configures the provider, while the deploy is watched
 * (GPURENTAL_LATE_ARRIVAL_WATCH, default 48 h from when it was sent).
 */
async function warnLateArrivals(
  journal: DeployJournal,
  client: GpurentalClient,
  env: NodeJS.ProcessEnv,
  ctx: ConfigureContext,
): Promise<void> {
  const raw = env[LATE_ARRIVAL_WATCH_ENV];
  const watchMs = raw ? parseDuration(raw) : DEFAULT_LATE_ARRIVAL_WATCH_MS;
  if (!watchMs) {
    ctx.diags.addError(
      `Invalid ${LATE_ARRIVAL_WATCH_ENV}`,
      `The ${LATE_ARRIVAL_WATCH_ENV} environment variable must be a duration such as "48h"; got ${JSON.stringify((raw ?? "").slice(0, 100))}.`,
    );
    return;
  }
  try {
    const { arrivals, watchEnds } = await lateArrivalsOf(
      journal,
      () => client.listInstances({}, within(budgetOf(LATE_ARRIVAL_LISTING_MS, ctx.signal))),
      Date.now(),
      watchMs,
    );
    for (const a of arrivals) {
      const w = lateArrivalWarning(a, watchEnds(a.entry));
      ctx.diags.addWarning(w.summary, w.detail);
    }
  } catch (err) {
    journalLog.log("debug", "could not look for late arrivals", {
      error: err instanceof Error ? err.message : String(err),
    });
  }
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
