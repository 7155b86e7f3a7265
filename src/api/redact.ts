// The one definition of what a credential looks like, and how it is masked. Credentials must never
// leave the program in an error, a log line, a diagnostic or a command's output: the client masks
// its errors and log fields here (client.ts), the provider's hclog lines are masked here
// (src/log.ts), and so are the commands' error messages. The client also passes the secrets it
// knows (its own token), which are masked whatever their shape; the patterns catch any other
// credential a server or a file might echo back.
//
// This module imports nothing: the provider's handshake bundle (provider.js) includes it through
// src/log.ts, so it must stay a few hundred bytes of plain code
// (docs/design/provider-process.md, "Start-up time").

/** The text that replaces a credential. */
export const REDACTED = "[REDACTED]";

/**
 * Field names whose value is a credential whatever it looks like: token, secret, password,
 * Authorization, api_key, private_key, cookie, and any name ending in one of them after `_` or
 * `-` (access_token, client_secret, X-Control-Token, Set-Cookie); and secret_env (the values of
 * an instance's secret environment variables).
 */
const CREDENTIAL_KEY =
  /(?:^|[_-])(?:token|secret|password|passwd|authorization|api_?key|private_key|cookie)$|^secret_env/i;

/** What replaces the user name and password of a URL: `http://***@proxy:3128`. */
export const URL_USERINFO_MASK = "***";

/** Credentials inside free text, each with its replacement. */
const CREDENTIAL_TEXT: readonly (readonly [RegExp, string])[] = [
  // API key secrets (gpr_) and session tokens (gps_): a 4-character prefix and hex digits, whatever
  // comes before it (`id_gps_…`, a percent escape's `%20gps_…` in a path).
  [/gp[rs]_[0-9a-fA-F]{8,}/g, REDACTED],
  // A bearer credential, as in an Authorization header.
  [/\b(Bearer)\s+[^\s"',;]+/gi, `$1 ${REDACTED}`],
  // An Authorization header's value: its scheme and credential.
  [/\b(authorization)(["']?\s*[:=]\s*["']?)[^\s"',;]+(?:\s+[^\s"',;]+)?/gi, `$1$2${REDACTED}`],
  // `token=…`, `"secret": "…"`, `access_token: …`, and the `?token=` query of jupyter_url and
  // open_url. The name may end a longer one (access_token, X-Control-Token), and libpq's
  // PGPASSWORD and sslpassword are passwords too; a JSON boolean or null after it (an env entry's
  // `"secret": true`) is no credential.
  [
    /(?<![A-Za-z0-9])(token|secret|(?:pg|ssl)?password|passwd|api_?key|private_key)(["']?\s*[:=]\s*["']?)(?!(?:true|false|null)\b)[^\s"',;&]+/gi,
    `$1$2${REDACTED}`,
  ],
  // The user name and password of a URL in free text (`https://user:pass@host`), up to the last @
  // of its authority, as maskUrl masks a URL on its own.
  [/\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#]*@/gi, `$1${URL_USERINFO_MASK}@`],
];

/** Query or fragment parameters of a URL whose value is a credential whatever it looks like. */
const CREDENTIAL_PARAM = /pass|pwd|token|secret|key|auth|sig|credential|session|cookie/i;

/**
 * A URL-shaped value fit for a message, a log line or an error: the one rule for every address the
 * project prints (base_url, proxies, journal or database URLs), whether or not it parses as a URL.
 * The user name and password are replaced by `***` (a user name alone may be a token, as in
 * `https://<token>@host`), and so is the value of every query or fragment parameter whose name
 * looks like a credential (`?password=`, `&sslpassword=`, `#access_token=`, `X-Amz-Signature`).
 * Mask first, then cut to a length: a cut first could leave a long password without its `@`.
 */
export function maskUrl(value: string | URL): string {
  const text = typeof value === "string" ? value : value.href;
  // The authority's user information, up to its last @, as URL parsers read it (a scheme is
  // optional: proxies are often given as `user:pw@proxy:3128`).
  let out = text.replace(
    /^(\s*(?:[a-z][a-z0-9+.-]*:)?\/\/|\s*)([^/?#\\\s]*)@/i,
    (_, before: string) => `${before}${URL_USERINFO_MASK}@`,
  );
  const url = parsedUrl(text);
  if (url && (url.username || url.password)) {
    // A URL parser takes spaces in the user information (and encodes them), and a backslash too
    // where the scheme is not one of the web's (postgres://u:a\b@h): so does the mask.
    const userinfo = SPECIAL_SCHEMES.has(url.protocol)
      ? /^(\s*[a-z][a-z0-9+.-]*:\/\/)([^/?#\\]*)@/i
      : /^(\s*[a-z][a-z0-9+.-]*:\/\/)([^/?#]*)@/i;
    out = out.replace(userinfo, (_, before: string) => `${before}${URL_USERINFO_MASK}@`);
  }
  if (!url) {
    // Not a URL a client would use: a password holding "/", "?" or a space may hide its @ further
    // on. After a scheme, mask up to the text's last @; without one, up to the last @ of its first
    // word (a proxy as `user:pw@proxy:3128`).
    out = /^\s*[a-z][a-z0-9+.-]*:\/\//i.test(out)
      ? out.replace(
          /^(\s*[a-z][a-z0-9+.-]*:\/\/)(?:[^@]*@)+/i,
          (_, before: string) => `${before}${URL_USERINFO_MASK}@`,
        )
      : out.replace(/^(\s*)(?:[^\s@]*@)+/i, (_, before: string) => `${before}${URL_USERINFO_MASK}@`);
  }
  // A parameter's name as a client decodes it: `%70assword` is libpq's `password`.
  return out.replace(/([?&#;])([^=&#;?\s]*)=([^&#;\s]*)/g, (whole, sep: string, name: string) =>
    CREDENTIAL_PARAM.test(name) || CREDENTIAL_PARAM.test(decodedName(name))
      ? `${sep}${name}=${REDACTED}`
      : whole,
  );
}

/** A query parameter's name percent-decoded (`+` as a space), or as it is when it cannot be. */
function decodedName(name: string): string {
  try {
    return decodeURIComponent(name.replace(/\+/g, " "));
  } catch {
    return name;
  }
}

/** The schemes whose URLs end their user information at a backslash too (WHATWG's special ones). */
const SPECIAL_SCHEMES = new Set(["http:", "https:", "ws:", "wss:", "ftp:", "file:"]);

function parsedUrl(text: string): URL | undefined {
  try {
    return new URL(text.trim());
  } catch {
    return undefined;
  }
}

/** Whether a field name names a credential (token, client_secret, Authorization, secret_env, ...). */
export function isCredentialKey(key: string): boolean {
  return CREDENTIAL_KEY.test(key);
}

/**
 * Masks the given secrets and anything that looks like a credential in `text`. Secrets shorter
 * than 8 characters are not masked: they would mask unrelated text (real tokens are 52 characters).
 */
// Stryker disable next-line ArrayDeclaration: a default secret is observable only in text that holds it.
export function redactText(text: string, secrets: readonly string[] = []): string {
  let out = text;
  for (const secret of secrets) {
    if (secret.length < 8) continue;
    out = out.split(secret).join(REDACTED);
    // As a JSON string quotes it (a server that echoes the request's body): "p\"ss…".
    const quoted = JSON.stringify(secret).slice(1, -1);
    if (quoted !== secret) out = out.split(quoted).join(REDACTED);
  }
  for (const [pattern, replacement] of CREDENTIAL_TEXT) out = out.replace(pattern, replacement);
  return out;
}

/**
 * Deep-copies a value for an error or a log record: every string masked, the value of every
 * credential-named key replaced (a boolean or null stays: it is no credential), and the value of
 * an env entry marked `secret: true` replaced. Errors become their masked `name: message`, buffers
 * their length, bigints their digits; nesting deeper than `maxDepth` is cut.
 */
// Stryker disable next-line ArrayDeclaration: a default secret is observable only in text that holds it.
export function redactValue(value: unknown, secrets: readonly string[] = [], depth = 0): unknown {
  if (typeof value === "string") return redactText(value, secrets);
  if (typeof value === "bigint") return value.toString();
  if (value === null || typeof value !== "object") return value;
  if (depth > MAX_DEPTH) return "[…]";
  if (value instanceof Error) return redactText(`${value.name}: ${value.message}`, secrets);
  if (Buffer.isBuffer(value)) return `<${value.length} bytes>`;
  if (Array.isArray(value)) return value.map((v) => redactValue(v, secrets, depth + 1));
  const secretEntry = (value as { secret?: unknown }).secret === true;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    const masked =
      (isCredentialKey(k) && typeof v !== "boolean" && v !== null) ||
      (secretEntry && k === "value" && v !== null);
    out[redactText(k, secrets)] = masked ? REDACTED : redactValue(v, secrets, depth + 1);
  }
  return out;
}

/** How deep {@link redactValue} copies. */
const MAX_DEPTH = 8;
