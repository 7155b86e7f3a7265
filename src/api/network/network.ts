import { X509Certificate } from "node:crypto";
import { readdirSync, readFileSync, readlinkSync, statSync } from "node:fs";
import { join } from "node:path";
import { createSecureContext, rootCertificates, type SecureContext } from "node:tls";
import { Agent, type Dispatcher, ProxyAgent } from "undici";
import { formatBytes, readBounded, TooLargeError } from "../../bounded-read";
import { displayProxy, type ProxySettings, proxyFor, proxySettingsFromEnv, type SourcedValue } from "./proxy";

// How the client reaches the API: directly or through the proxy the environment (or the provider
// block) names, trusting Node's roots plus what Go would trust on this machine (SSL_CERT_FILE or
// the system bundle, SSL_CERT_DIR or the system directories), NODE_EXTRA_CA_CERTS and an extra
// bundle of the user's (ca_cert_file). Nothing here turns verification off. Everything is read
// from the environment given, not process.env, so each session of a resident process keeps the
// settings of the terraform command that started it. Dispatchers are shared per settings, so a
// provider process keeps its connections alive between calls; certificates are read on the first
// HTTPS request, never at start-up.

/** What decides the network path of a client. */
export interface NetworkOptions {
  /** The environment the proxy and trust variables are read from; default process.env. */
  env?: NodeJS.ProcessEnv | undefined;
  /** Settings that replace the environment's proxy variables one by one (provider arguments). */
  proxy?: ProxySettings | undefined;
  /** A PEM bundle of extra CAs to trust (`ca_cert_file`). */
  caCertFile?: SourcedValue | undefined;
}

/** A trust setting that cannot be used (an unreadable or empty CA file); names the setting. */
export class TrustSettingError extends Error {
  /** The setting at fault, e.g. `ca_cert_file in the provider block`. */
  readonly source: string;

  constructor(source: string, message: string) {
    super(message);
    this.name = "TrustSettingError";
    this.source = source;
  }
}

/** The resolved network path to one API address. */
export class Network {
  /** The proxy requests go through, if any (`source` names the setting). */
  readonly proxy: { url: URL; source: string } | undefined;
  /** The extra CA bundle, if any. */
  readonly caCertFile: SourcedValue | undefined;
  readonly #env: NodeJS.ProcessEnv;
  readonly #tls: boolean;
  #dispatcher: Dispatcher | undefined;

  constructor(baseUrl: URL, opts: NetworkOptions = {}) {
    this.#env = opts.env ?? process.env;
    const fromEnv = proxySettingsFromEnv(this.#env);
    const settings: ProxySettings = {
      httpsProxy: opts.proxy?.httpsProxy ?? fromEnv.httpsProxy,
      httpProxy: opts.proxy?.httpProxy ?? fromEnv.httpProxy,
      noProxy: opts.proxy?.noProxy ?? fromEnv.noProxy,
    };
    this.proxy = proxyFor(baseUrl, settings);
    this.caCertFile = opts.caCertFile;
    if (opts.caCertFile) readBundle(opts.caCertFile.value, opts.caCertFile.source); // fail now, not at the first request
    this.#tls = baseUrl.protocol === "https:" || this.proxy?.url.protocol === "https:";
  }

  /** The proxy as messages name it, credentials hidden: `http://proxy:3128 (HTTPS_PROXY)`. */
  describeProxy(): string | undefined {
    return this.proxy ? `${displayProxy(this.proxy.url)} (${this.proxy.source})` : undefined;
  }

  /** The settings a certificate error points to. */
  trustSettings(): string {
    return this.caCertFile
      ? `${this.caCertFile.source}`
      : "ca_cert_file (GPURENTAL_CA_CERT_FILE) or SSL_CERT_FILE";
  }

  /** The undici dispatcher for this path, shared with every client of the same settings. */
  dispatcher(): Dispatcher | undefined {
    if (this.#dispatcher) return this.#dispatcher;
    if (!this.#tls && !this.proxy) return undefined; // plain HTTP, direct: undici's global agent
    const secureContext = this.#tls ? trustContext(this.#env, this.caCertFile) : undefined;
    const tls = secureContext ? { secureContext } : {};
    const key = `${this.proxy?.url.href ?? "direct"}\n${secureContext ? contextKey(this.#env, this.caCertFile) : ""}`;
    let d = dispatchers.get(key);
    if (!d) {
      d = this.proxy
        ? new ProxyAgent({ uri: this.proxy.url.href, requestTls: tls, proxyTls: tls })
        : new Agent({ connect: tls });
      dispatchers.set(key, d);
    }
    this.#dispatcher = d;
    return d;
  }
}

const dispatchers = new Map<string, Dispatcher>();
const contexts = new Map<string, SecureContext>();

// A resident process lives for many commands: a CA file replaced in between is read again.
function contextKey(env: NodeJS.ProcessEnv, caFile: SourcedValue | undefined): string {
  const files = [env.SSL_CERT_FILE, env.NODE_EXTRA_CA_CERTS, caFile?.value];
  return JSON.stringify([env.SSL_CERT_DIR, ...files.map((f) => (f ? `${f}@${mtimeOf(f)}` : null))]);
}

function mtimeOf(path: string): number {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return 0;
  }
}

function trustContext(env: NodeJS.ProcessEnv, caFile: SourcedValue | undefined): SecureContext {
  const key = contextKey(env, caFile);
  let ctx = contexts.get(key);
  if (!ctx) {
    const ca = new Set<string>(rootCertificates);
    for (const pem of systemRoots(env)) ca.add(pem);
    const extra = env.NODE_EXTRA_CA_CERTS;
    if (extra) for (const pem of pemBlocks(readOrEmpty(extra))) ca.add(pem);
    if (caFile) for (const pem of readBundle(caFile.value, caFile.source)) ca.add(pem);
    try {
      ctx = createSecureContext({ ca: [...ca] });
    } catch {
      // A damaged file among the system's: keep every certificate that can be read.
      ctx = createSecureContext({ ca: [...ca].filter(parses) });
    }
    contexts.set(key, ctx);
  }
  return ctx;
}

/** Go's bundle files on Linux, the first that exists is read (crypto/x509 root_linux.go). */
const GO_CERT_FILES = [
  "/etc/ssl/certs/ca-certificates.crt",
  "/etc/pki/tls/certs/ca-bundle.crt",
  "/etc/ssl/ca-bundle.pem",
  "/etc/pki/tls/cacert.pem",
  "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",
  "/etc/ssl/cert.pem",
];
/** Go's certificate directories on Linux, every file of each is read. */
const GO_CERT_DIRS = ["/etc/ssl/certs", "/etc/pki/tls/certs"];

/**
 * The roots Go would load on this machine: SSL_CERT_FILE instead of the bundle files, SSL_CERT_DIR
 * (colon-separated) instead of the directories. Unreadable files are skipped, as Go skips them.
 */
export function systemRoots(env: NodeJS.ProcessEnv): string[] {
  const out: string[] = [];
  const files = env.SSL_CERT_FILE ? [env.SSL_CERT_FILE] : GO_CERT_FILES;
  for (const f of files) {
    const text = readOrUndefined(f);
    if (text !== undefined) {
      out.push(...pemBlocks(text));
      break;
    }
  }
  const dirs = env.SSL_CERT_DIR ? env.SSL_CERT_DIR.split(":") : GO_CERT_DIRS;
  for (const d of dirs) {
    let names: string[];
    try {
      names = readdirSync(d);
    } catch {
      continue;
    }
    for (const n of names) {
      const p = join(d, n);
      // Like Go, a link to a file of the same directory is skipped: that file is read itself.
      if (isSameDirLink(p)) continue;
      out.push(...pemBlocks(readOrEmpty(p)));
    }
  }
  return out;
}

/**
 * The most a CA file the user names is read: the largest system bundles are well under 1 MiB, and
 * a device such as /dev/zero never ends.
 */
export const MAX_CA_FILE_BYTES = 16 * 1024 * 1024;

/** The certificates of a PEM file the user named; an error naming the setting when there are none. */
export function readBundle(path: string, source: string): string[] {
  let text: string;
  try {
    text = readBounded(path, MAX_CA_FILE_BYTES).toString("utf8");
  } catch (err) {
    if (err instanceof TooLargeError) {
      throw new TrustSettingError(
        source,
        `${source}: the CA file ${path} gives more than ${formatBytes(MAX_CA_FILE_BYTES)}: it is no CA bundle; give a PEM file of certificates`,
      );
    }
    const code = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
    throw new TrustSettingError(source, `${source}: the CA file ${path} cannot be read (${code})`);
  }
  const blocks = pemBlocks(text);
  if (blocks.length === 0) {
    throw new TrustSettingError(
      source,
      `${source}: ${path} holds no PEM certificate (-----BEGIN CERTIFICATE-----); give a CA bundle in PEM form`,
    );
  }
  for (const [i, pem] of blocks.entries()) {
    try {
      new X509Certificate(pem);
    } catch (err) {
      throw new TrustSettingError(
        source,
        `${source}: certificate ${i + 1} of ${path} cannot be read (${(err as Error).message})`,
      );
    }
  }
  return blocks;
}

function parses(pem: string): boolean {
  try {
    new X509Certificate(pem);
    return true;
  } catch {
    return false;
  }
}

function isSameDirLink(path: string): boolean {
  try {
    return !readlinkSync(path).includes("/");
  } catch {
    return false; // not a link
  }
}

function pemBlocks(text: string): string[] {
  return text.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
}

function readOrUndefined(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
}

function readOrEmpty(path: string): string {
  return readOrUndefined(path) ?? "";
}
