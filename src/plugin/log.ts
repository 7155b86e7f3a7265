// Provider logs are hclog JSON lines on stderr. Terraform reads the provider's stderr line by line
// and re-logs each JSON line at its @level under its provider logger, so `TF_LOG=debug terraform
// plan` shows them; stdout belongs to the go-plugin handshake and must never be written to.
//
// Two details decide whether Terraform parses a line at all: @timestamp must carry exactly six
// fractional digits (Go layout 2006-01-02T15:04:05.000000Z07:00; three digits make the whole line
// plain text at DEBUG), and one line per record. Everything is redacted before it is written.

/** Log levels, as hclog names them. */
export type LogLevel = "trace" | "debug" | "info" | "warn" | "error";

/** Extra key/value fields of a log record. */
export type LogFields = Readonly<Record<string, unknown>>;

const RANK: Record<LogLevel | "off", number> = { trace: 0, debug: 1, info: 2, warn: 3, error: 4, off: 5 };

/** The text that replaces a secret in a log line. */
export const REDACTED = "[REDACTED]";

const SECRET_KEY =
  /(^|_|-)(token|secret|password|passwd|authorization|access_token|api_key|apikey|private_key|cookie)$/i;
const SECRET_TEXT: readonly [RegExp, string][] = [
  [/\bgp[rs]_[0-9a-fA-F]{8,}/g, REDACTED],
  [/\b(Bearer)\s+[^\s"',;]+/gi, `$1 ${REDACTED}`],
  [
    /\b(authorization|token|secret|password|access_token)(["']?\s*[:=]\s*["']?)[^\s"',;&]+/gi,
    `$1$2${REDACTED}`,
  ],
];

/** Masks anything that looks like a credential inside free text. */
export function redactText(text: string): string {
  let out = text;
  for (const [pattern, replacement] of SECRET_TEXT) out = out.replace(pattern, replacement);
  return out;
}

/** Whether a field name names a credential (token, client_secret, Authorization, ...). */
export function isSecretKey(key: string): boolean {
  return SECRET_KEY.test(key);
}

/** Deep-copies a field value for logging: credential-named keys masked, strings scrubbed. */
export function redactValue(value: unknown, depth = 0): unknown {
  if (typeof value === "string") return redactText(value);
  if (typeof value === "bigint") return value.toString();
  if (value === null || typeof value !== "object") return value;
  if (depth > 6) return "[…]";
  if (value instanceof Error) return redactText(`${value.name}: ${value.message}`);
  if (Buffer.isBuffer(value)) return `<${value.length} bytes>`;
  if (Array.isArray(value)) return value.map((v) => redactValue(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = isSecretKey(k) ? REDACTED : redactValue(v, depth + 1);
  return out;
}

/** An hclog timestamp: RFC 3339 in UTC with exactly six fractional digits. */
export function hclogTimestamp(date: Date = new Date()): string {
  // Date has millisecond precision; pad to the microseconds Go's layout expects.
  return `${date.toISOString().slice(0, 23)}000Z`;
}

/**
 * The level from the environment, as Terraform's own logger reads it: TF_LOG_PROVIDER wins over
 * TF_LOG; "json" means trace; unset means warn (Terraform hides provider output unless TF_LOG is
 * set, so little is worth writing); an unknown value means trace, as Terraform treats it.
 */
export function levelFromEnv(env: NodeJS.ProcessEnv = process.env): LogLevel | "off" {
  const raw = (env.TF_LOG_PROVIDER || env.TF_LOG || "").trim().toLowerCase();
  if (raw === "") return "warn";
  if (raw === "off") return "off";
  if (raw === "json") return "trace";
  if (raw in RANK) return raw as LogLevel;
  return "trace";
}

/** Where log lines go; stderr unless a test says otherwise. */
export type LogSink = (line: string) => void;

/** A structured logger writing hclog JSON lines. */
export class Logger {
  /** Creates a logger for `module` at `level`, writing whole lines to `sink`. */
  constructor(
    readonly module: string,
    private level: LogLevel | "off" = levelFromEnv(),
    private readonly sink: LogSink = (line) => process.stderr.write(line),
    private readonly fields: LogFields = {},
  ) {}

  /** A logger with a sub-module name (`module.sub`) and extra fields on every record. */
  child(sub: string, fields: LogFields = {}): Logger {
    return new Logger(`${this.module}.${sub}`, this.level, this.sink, { ...this.fields, ...fields });
  }

  /** Changes the level of this logger (children made later inherit it). */
  setLevel(level: LogLevel | "off"): void {
    this.level = level;
  }

  /** Whether a record at `level` would be written; lets callers skip building costly fields. */
  enabled(level: LogLevel): boolean {
    return RANK[level] >= RANK[this.level];
  }

  /** Logs at trace level. */
  trace(message: string, fields?: LogFields): void {
    this.log("trace", message, fields);
  }

  /** Logs at debug level. */
  debug(message: string, fields?: LogFields): void {
    this.log("debug", message, fields);
  }

  /** Logs at info level. */
  info(message: string, fields?: LogFields): void {
    this.log("info", message, fields);
  }

  /** Logs at warn level. */
  warn(message: string, fields?: LogFields): void {
    this.log("warn", message, fields);
  }

  /** Logs at error level. */
  error(message: string, fields?: LogFields): void {
    this.log("error", message, fields);
  }

  /** Writes one record if `level` is enabled. */
  log(level: LogLevel, message: string, fields?: LogFields): void {
    if (!this.enabled(level)) return;
    const record: Record<string, unknown> = {
      "@level": level,
      "@message": redactText(message),
      "@module": this.module,
      "@timestamp": hclogTimestamp(),
    };
    for (const [k, v] of Object.entries({ ...this.fields, ...fields })) {
      if (k.startsWith("@")) continue; // reserved by hclog
      record[k] = isSecretKey(k) ? REDACTED : redactValue(v);
    }
    let line: string;
    try {
      line = JSON.stringify(record);
    } catch {
      line = JSON.stringify({ ...record, fields: "[unserializable]" });
    }
    this.sink(`${line}\n`);
  }
}

/** The provider's root logger (module "gpurental"); other modules take children of it. */
export const logger = new Logger("gpurental");
