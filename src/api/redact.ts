// Credentials must never leave the client in an error, a log line or a debug dump. The client knows
// its own token and masks it; the patterns also catch any other credential a server might echo back
// (a secret in a create response that ends up in an error, another key named in a message).

const CREDENTIAL_PATTERNS: readonly RegExp[] = [
  /\bgp[rs]_[0-9a-fA-F]{8,}/g,
  /\b(Bearer)\s+[^\s"',;]+/gi,
  /\b(authorization)(["']?\s*[:=]\s*["']?)[^\s"',;]+(?:\s+[^\s"',;]+)?/gi,
];

/** The text that replaces a credential. */
export const REDACTED = "[REDACTED]";

/** Masks the given secrets and anything that looks like a gpurental credential in `text`. */
export function redactText(text: string, secrets: readonly string[] = []): string {
  let out = text;
  for (const secret of secrets) {
    // Very short strings would mask unrelated text; real tokens are 52 characters.
    if (secret.length >= 8) out = out.split(secret).join(REDACTED);
  }
  out = out.replace(CREDENTIAL_PATTERNS[0]!, REDACTED);
  out = out.replace(CREDENTIAL_PATTERNS[1]!, `$1 ${REDACTED}`);
  out = out.replace(CREDENTIAL_PATTERNS[2]!, `$1$2${REDACTED}`);
  return out;
}

/** Deep-copies plain data, masking credentials in every string and the value of any credential-named key. */
export function redactValue(value: unknown, secrets: readonly string[] = [], depth = 0): unknown {
  if (typeof value === "string") return redactText(value, secrets);
  if (value === null || typeof value !== "object") return value;
  if (depth > 8) return "[…]";
  if (value instanceof Error) return redactText(`${value.name}: ${value.message}`, secrets);
  if (Array.isArray(value)) return value.map((v) => redactValue(v, secrets, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    out[k] = isCredentialKey(k) ? REDACTED : redactValue(v, secrets, depth + 1);
  }
  return out;
}

function isCredentialKey(key: string): boolean {
  return /^(authorization|token|secret|password|x-control-token|cookie|set-cookie)$/i.test(key);
}
