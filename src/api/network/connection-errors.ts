import type { ConnectionSetupProblem } from "../errors";
import { UNOPENED_CONNECTION } from "../retry-policy";

// What a failed connection says about the settings: a pure function from the error's code and
// message to either a setup problem (certificate, scheme against port, proxy credentials or policy:
// not retried, since it fails the same way until a setting changes) or a clearer wording of a
// transient failure (the proxy cannot be reached, or cannot reach the API). Each message names the
// host and the setting to change. Pinned by connection-errors.test.ts.

/** What the classifier knows of the connection. */
export interface ConnectionContext {
  /** The API's base URL. */
  url: URL;
  /** The setting that gave the base URL, e.g. `base_url in the provider block`. */
  baseUrlSetting: string;
  /** The proxy in use as messages name it (`http://proxy:3128 (HTTPS_PROXY)`), if any. */
  proxy: string | undefined;
  /** The proxy's setting name alone (`HTTPS_PROXY`), if any. */
  proxySetting: string | undefined;
  /** Whether the proxy URL carries credentials. */
  proxyHasCredentials: boolean;
  /** The trust settings to name for an unknown CA. */
  trustSettings: string;
}

/** The verdict on a failed connection. */
export type ConnectionVerdict =
  | { kind: "setup"; problem: ConnectionSetupProblem; message: string; setting: string }
  | { kind: "transient"; message: string }
  | undefined;

const UNKNOWN_CA = new Set([
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "CERT_UNTRUSTED",
]);
const EXPIRED = new Set(["CERT_HAS_EXPIRED", "CERT_NOT_YET_VALID"]);
const INVALID_CERT = new Set([
  "CERT_SIGNATURE_FAILURE",
  "CERT_REVOKED",
  "CERT_REJECTED",
  "INVALID_CA",
  "INVALID_PURPOSE",
  "PATH_LENGTH_EXCEEDED",
  "ERR_TLS_CERT_SIGNATURE_ALGORITHM_UNSUPPORTED",
]);
const NOT_TLS = new Set([
  "ERR_SSL_WRONG_VERSION_NUMBER",
  "ERR_SSL_PACKET_LENGTH_TOO_LONG",
  "ERR_SSL_HTTP_REQUEST",
  "ERR_SSL_RECORD_LAYER_FAILURE",
]);
/**
 * Failures to open a TCP connection; with a proxy in use they are the proxy's. `ETIMEDOUT` is among
 * them but not among the unopened: Node raises it for an idle socket too, after the request left.
 */
export const CONNECT_FAILURES: ReadonlySet<string> = new Set([...UNOPENED_CONNECTION, "ETIMEDOUT"]);

/** The host:port the URL connects to. */
function hostPort(url: URL): string {
  return `${url.hostname}:${url.port || (url.protocol === "https:" ? "443" : "80")}`;
}

/** Classifies a failed connection; `detail` is the error's own (masked) message. */
export function classifyConnectionError(
  code: string | undefined,
  detail: string,
  ctx: ConnectionContext,
): ConnectionVerdict {
  const host = ctx.url.hostname;
  const via = ctx.proxy ? ` (reached through the proxy ${ctx.proxy})` : "";
  if (code && UNKNOWN_CA.has(code)) {
    return {
      kind: "setup",
      problem: "unknown_ca",
      setting: ctx.trustSettings,
      message: `the certificate of ${host}${via} is not signed by an authority this machine trusts (${code}). If ${host} uses a private CA, or a TLS-inspecting proxy or gateway sits in between, set ${ctx.trustSettings} to a PEM file of that CA`,
    };
  }
  if (code === "ERR_TLS_CERT_ALTNAME_INVALID") {
    return {
      kind: "setup",
      problem: "host_mismatch",
      setting: ctx.baseUrlSetting,
      message: `the certificate of ${host}${via} is not valid for that name (${detail}). Use the host name the certificate is for in ${ctx.baseUrlSetting}`,
    };
  }
  if (code && EXPIRED.has(code)) {
    const what = code === "CERT_HAS_EXPIRED" ? "has expired" : "is not valid yet";
    return {
      kind: "setup",
      problem: "expired_certificate",
      setting: ctx.baseUrlSetting,
      message: `the certificate of ${host}${via} ${what} (${code}). The server's certificate must be renewed (or this machine's clock is wrong); nothing in ${ctx.baseUrlSetting} can fix it`,
    };
  }
  if (code && INVALID_CERT.has(code)) {
    return {
      kind: "setup",
      problem: "certificate_invalid",
      setting: ctx.trustSettings,
      message: `the certificate of ${host}${via} is refused (${code}: ${detail})`,
    };
  }
  if ((code && NOT_TLS.has(code)) || /wrong version number|packet length too long/i.test(detail)) {
    if (ctx.proxy && ctx.proxySetting && /^https/.test(ctx.proxy)) {
      return {
        kind: "setup",
        problem: "tls_to_http_port",
        setting: ctx.proxySetting,
        message: `a TLS connection got a plain-HTTP answer (${code ?? detail}): the https:// proxy ${ctx.proxy} or ${hostPort(ctx.url)} does not speak TLS; check the scheme of ${ctx.proxySetting} and of ${ctx.baseUrlSetting}`,
      };
    }
    return {
      kind: "setup",
      problem: "tls_to_http_port",
      setting: ctx.baseUrlSetting,
      message: `${hostPort(ctx.url)}${via} does not speak TLS (${code ?? detail}): ${ctx.baseUrlSetting} says https:// but that port serves plain HTTP. Use http:// or the port of the HTTPS service`,
    };
  }
  const tunnel = /Proxy response \((\d{3})\)/.exec(detail);
  if (tunnel && ctx.proxy) {
    const status = Number(tunnel[1]);
    if (status === 407) {
      return {
        kind: "setup",
        problem: "proxy_auth_required",
        setting: ctx.proxySetting ?? "the proxy setting",
        message: ctx.proxyHasCredentials
          ? `the proxy ${ctx.proxy} refused the credentials in its URL (407 Proxy Authentication Required). Correct the user name and password in ${ctx.proxySetting}`
          : `the proxy ${ctx.proxy} requires credentials (407 Proxy Authentication Required). Put them in ${ctx.proxySetting}, as http://user:password@proxy:port`,
      };
    }
    if (status === 502 || status === 503 || status === 504) {
      return {
        kind: "transient",
        message: `the proxy ${ctx.proxy} could not reach ${hostPort(ctx.url)} (HTTP ${status} to CONNECT)`,
      };
    }
    return {
      kind: "setup",
      problem: "proxy_refused",
      setting: ctx.proxySetting ?? "the proxy setting",
      message: `the proxy ${ctx.proxy} refused to open a connection to ${hostPort(ctx.url)} (HTTP ${status} to CONNECT). Ask for ${host} to be allowed through it, or list ${host} in NO_PROXY if it is reached directly`,
    };
  }
  if (ctx.proxy && code && CONNECT_FAILURES.has(code)) {
    return { kind: "transient", message: `cannot connect to the proxy ${ctx.proxy}: ${detail}` };
  }
  return undefined;
}

/** The verdict for a plain-HTTP request whose port turned out to speak TLS (see the transport's probe). */
export function httpToTlsPort(ctx: ConnectionContext): ConnectionVerdict {
  return {
    kind: "setup",
    problem: "http_to_tls_port",
    setting: ctx.baseUrlSetting,
    message: `${hostPort(ctx.url)} speaks TLS, but ${ctx.baseUrlSetting} says http://: the server closed the connection on the plain-HTTP request. Use https://`,
  };
}
