import { BlockList, isIP } from "node:net";
import { domainToASCII } from "node:url";
import { maskUrl } from "../redact";

// Which proxy a request goes through, decided as Go's `httpproxy.FromEnvironment` decides it for
// Terraform and Go providers, so that one set of HTTPS_PROXY / HTTP_PROXY / NO_PROXY variables
// means the same to all of them: the upper-case variable before the lower-case one; an https URL
// uses HTTPS_PROXY only and an http URL HTTP_PROXY only; `localhost` and loopback addresses are
// never proxied; NO_PROXY is a comma-separated list of `*`, CIDRs, IPs (with an optional port),
// and domains (`example.com` also matches its subdomains, `.example.com` and `*.example.com` only
// them), each with an optional `:port`. undici's EnvHttpProxyAgent matches NO_PROXY differently (no
// CIDRs, no loopback rule), hence this file; its ProxyAgent does the proxying.

/** One proxy-related setting and where it came from (a variable's or an argument's name). */
export interface SourcedValue {
  value: string;
  /** Named in errors, e.g. `HTTPS_PROXY` or `https_proxy in the provider block`. */
  source: string;
}

/** The proxy settings in force: each absent when unset. */
export interface ProxySettings {
  httpsProxy?: SourcedValue | undefined;
  httpProxy?: SourcedValue | undefined;
  noProxy?: SourcedValue | undefined;
}

/** A proxy setting that cannot be used; names the setting. */
export class ProxySettingError extends Error {
  /** The setting at fault, e.g. `HTTPS_PROXY`. */
  readonly source: string;

  constructor(source: string, message: string) {
    super(message);
    this.name = "ProxySettingError";
    this.source = source;
  }
}

function envAny(env: NodeJS.ProcessEnv, ...names: string[]): SourcedValue | undefined {
  for (const n of names) {
    const v = env[n];
    if (v !== undefined && v !== "") return { value: v, source: n };
  }
  return undefined;
}

/** The proxy settings of an environment, read as Go reads them (upper case first). */
export function proxySettingsFromEnv(env: NodeJS.ProcessEnv): ProxySettings {
  return {
    httpsProxy: envAny(env, "HTTPS_PROXY", "https_proxy"),
    httpProxy: envAny(env, "HTTP_PROXY", "http_proxy"),
    noProxy: envAny(env, "NO_PROXY", "no_proxy"),
  };
}

/**
 * A proxy address as Go reads it: a URL with scheme http or https, or `host[:port]` taken as http.
 * Go ignores a value it cannot read; here it is an error naming the setting, since a proxy that
 * is silently not used fails later with a far less helpful message.
 */
export function parseProxyUrl(setting: SourcedValue): URL {
  const raw = setting.value.trim();
  let url: URL | undefined;
  try {
    url = new URL(raw);
  } catch {
    url = undefined;
  }
  if (!url || !/^https?:$/.test(url.protocol) || !url.host) {
    if (url && /^socks/.test(url.protocol)) {
      throw new ProxySettingError(
        setting.source,
        `${setting.source} names a SOCKS proxy (${url.protocol}//${url.host}); only http:// and https:// proxies are supported`,
      );
    }
    try {
      url = new URL(`http://${raw}`);
    } catch {
      url = undefined;
    }
  }
  if (!url?.host || (url.pathname !== "/" && url.pathname !== "")) {
    throw new ProxySettingError(
      setting.source,
      `${setting.source} must be a proxy address such as http://proxy.example:3128 or proxy.example:3128; got ${JSON.stringify(displayProxy(raw))}`,
    );
  }
  // The user name and password are sent decoded (Proxy-Authorization): an escape that does not
  // decode would fail every request later, far from this setting. Neither is ever shown.
  for (const [part, text] of [
    ["user name", url.username],
    ["password", url.password],
  ] as const) {
    try {
      decodeURIComponent(text);
    } catch {
      throw new ProxySettingError(
        setting.source,
        `${setting.source}: the proxy's ${part} holds a percent escape that does not decode (each % begins two hex digits of UTF-8 text; write %25 for a % itself); got ${JSON.stringify(displayProxy(raw))}`,
      );
    }
  }
  return url;
}

/** A proxy URL fit for logs and messages: any user name or password replaced (maskUrl's rule). */
export function displayProxy(value: string | URL): string {
  if (typeof value === "string") return maskUrl(value);
  return maskUrl(`${value.protocol}//${value.username || value.password ? "user@" : ""}${value.host}`);
}

const DEFAULT_PORTS: Record<string, string> = { "http:": "80", "https:": "443" };

type Matcher = (host: string, port: string, ip: string | undefined) => boolean;

/** The rules of a NO_PROXY value. */
export class NoProxy {
  readonly #ipMatchers: Matcher[] = [];
  readonly #domainMatchers: Matcher[] = [];

  constructor(spec: string) {
    for (const entry of spec.split(",")) {
      const p = entry.trim().toLowerCase();
      if (p === "") continue;
      if (p === "*") {
        this.#ipMatchers.splice(0, Infinity, () => true);
        this.#domainMatchers.splice(0, Infinity, () => true);
        return;
      }
      const cidr = parseCidr(p);
      if (cidr) {
        this.#ipMatchers.push(
          (_h, _p, ip) => ip !== undefined && cidr.check(ip, isIP(ip) === 6 ? "ipv6" : "ipv4"),
        );
        continue;
      }
      const hp = splitHostPort(p);
      let phost: string;
      let pport = "";
      if (hp) {
        if (hp.host === "") continue;
        phost = hp.host;
        pport = hp.port;
      } else {
        phost = p;
      }
      if (isIP(phost)) {
        const want = canonicalIp(phost);
        this.#ipMatchers.push(
          (_h, port, ip) => ip !== undefined && canonicalIp(ip) === want && (pport === "" || pport === port),
        );
        continue;
      }
      if (phost === "") continue;
      if (phost.startsWith("*.")) phost = phost.slice(1);
      let matchHost = false;
      if (!phost.startsWith(".")) {
        matchHost = true;
        phost = `.${phost}`;
      }
      const ascii = domainToASCII(phost.slice(1));
      if (ascii) phost = `.${ascii}`;
      const suffix = phost;
      this.#domainMatchers.push(
        (host, port) =>
          (host.endsWith(suffix) || (matchHost && host === suffix.slice(1))) &&
          (pport === "" || pport === port),
      );
    }
  }

  /** Whether a request to `url` goes through a proxy, as Go's `useProxy` decides it. */
  useProxy(url: URL): boolean {
    let host = url.hostname.toLowerCase();
    if (host.startsWith("[") && host.endsWith("]")) host = host.slice(1, -1);
    const port = url.port || DEFAULT_PORTS[url.protocol] || "";
    if (host === "localhost") return false;
    const ip = isIP(host) ? host : undefined;
    if (ip && isLoopback(ip)) return false;
    if (ip && this.#ipMatchers.some((m) => m(host, port, ip))) return false;
    return !this.#domainMatchers.some((m) => m(host, port, ip));
  }
}

/** The proxy a request to `url` goes through, if any; throws when the applicable setting is unusable. */
export function proxyFor(url: URL, settings: ProxySettings): { url: URL; source: string } | undefined {
  const setting =
    url.protocol === "https:"
      ? settings.httpsProxy
      : url.protocol === "http:"
        ? settings.httpProxy
        : undefined;
  if (!setting) return undefined;
  const proxy = parseProxyUrl(setting);
  if (!new NoProxy(settings.noProxy?.value ?? "").useProxy(url)) return undefined;
  return { url: proxy, source: setting.source };
}

const loopback = new BlockList();
loopback.addSubnet("127.0.0.0", 8, "ipv4");
loopback.addAddress("::1", "ipv6");

function isLoopback(ip: string): boolean {
  const v4 = mappedV4(ip);
  return v4 ? loopback.check(v4, "ipv4") : loopback.check(ip, isIP(ip) === 6 ? "ipv6" : "ipv4");
}

function mappedV4(ip: string): string | undefined {
  const m = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  return m?.[1];
}

/** An IP in one spelling per address, so that `::0001` equals `::1` and `::ffff:1.2.3.4` equals `1.2.3.4`. */
function canonicalIp(ip: string): string {
  const v4 = mappedV4(ip);
  if (v4 || isIP(ip) === 4) return v4 ?? ip;
  const list = new BlockList();
  list.addAddress(ip, "ipv6");
  // BlockList's rules render addresses canonically: "Address: IPv6 ::1".
  return list.rules[0]?.replace(/^Address: IPv6 /, "") ?? ip;
}

function parseCidr(p: string): BlockList | undefined {
  const m = /^([^/]+)\/(\d{1,3})$/.exec(p);
  if (!m) return undefined;
  const family = isIP(m[1]!);
  const bits = Number(m[2]);
  if (family === 0 || bits > (family === 4 ? 32 : 128)) return undefined;
  const list = new BlockList();
  list.addSubnet(m[1]!, bits, family === 4 ? "ipv4" : "ipv6");
  return list;
}

/** `host:port` or `[v6]:port` split as Go's net.SplitHostPort does it; undefined without a port. */
function splitHostPort(p: string): { host: string; port: string } | undefined {
  const bracket = /^\[([^\]]*)\]:([^:]*)$/.exec(p);
  if (bracket) return { host: bracket[1]!, port: bracket[2]! };
  const i = p.lastIndexOf(":");
  if (i < 0 || p.indexOf(":") !== i) return undefined;
  return { host: p.slice(0, i), port: p.slice(i + 1) };
}
