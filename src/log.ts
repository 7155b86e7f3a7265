// Provider logs are hclog JSON lines on stderr. Terraform reads the provider's stderr line by line
// and re-logs each JSON line at its @level under its provider logger, so `TF_LOG=debug terraform
// plan` shows them; stdout belongs to the go-plugin handshake and must never be written to.
//
// Two details decide whether Terraform parses a line at all: @timestamp must carry exactly six
// fractional digits (Go layout 2006-01-02T15:04:05.000000Z07:00; three digits make the whole line
// plain text at DEBUG), and one line per record. Everything is redacted before it is written, by
// the one definition of a credential (api/redact.ts) that the client's errors and logs use too,
// and every string escaped as a terminal needs it (display.ts).

import { REDACTED, redactText, redactValue } from "./api/redact";
import { firstUnsafeCharacter, terminalText } from "./display";

/** Log levels, as hclog names them. */
export type LogLevel = "trace" | "debug" | "info" | "warn" | "error";

/** Extra key/value fields of a log record. */
export type LogFields = Readonly<Record<string, unknown>>;

const RANK: Record<LogLevel | "off", number> = { trace: 0, debug: 1, info: 2, warn: 3, error: 4, off: 5 };

/** The text that replaces a secret in a log line; the credential patterns live in api/redact.ts. */
export { REDACTED, redactText };

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
  // "off" and the levels are RANK's keys; anything else, "json" included, is trace.
  if (Object.hasOwn(RANK, raw)) return raw as LogLevel | "off";
  return "trace";
}

/** Where log lines go; stderr unless a test says otherwise. */
export type LogSink = (line: string) => void;

/** Where the records of the current call go, and from which level, when they do not go to stderr. */
export interface LogRoute {
  level: LogLevel | "off";
  sink: LogSink;
}

/**
 * The global under which a resident provider process (src/resident/resident-daemon.ts) installs a function
 * that names the route of the session whose call is running. Every copy of this module (each
 * production bundle has one) looks there, so the module-level loggers of the resources follow the
 * session too. Unset in a provider process of its own: records go to the logger's own sink.
 */
export const LOG_ROUTE_KEY = Symbol.for("gpurental.provider.logRoute");

function currentRoute(): LogRoute | undefined {
  const route = (globalThis as Record<symbol, unknown>)[LOG_ROUTE_KEY];
  return typeof route === "function" ? (route as () => LogRoute | undefined)() : undefined;
}

/** A structured logger writing hclog JSON lines. */
export class Logger {
  /**
   * Creates a logger for `module` at `level`, writing whole lines to `sink`. Without a sink, its
   * records follow the route of the session whose call is running (LOG_ROUTE_KEY), else stderr;
   * with one, they go there at `level`, whatever session runs.
   */
  constructor(
    readonly module: string,
    private level: LogLevel | "off" = levelFromEnv(),
    private readonly sink?: LogSink,
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
    return RANK[level] >= RANK[(this.sink ? undefined : currentRoute())?.level ?? this.level];
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
    const route = this.sink ? undefined : currentRoute();
    if (RANK[level] < RANK[route?.level ?? this.level]) return;
    const head = {
      "@level": level,
      "@message": shownText(redactText(message)),
      "@module": this.module,
      "@timestamp": hclogTimestamp(),
    };
    let line: string;
    try {
      const extra: Record<string, unknown> = {};
      for (const [k, v] of Object.entries({ ...this.fields, ...fields })) {
        if (!k.startsWith("@")) extra[k] = v; // @-keys are hclog's
      }
      line = JSON.stringify({ ...head, ...(redactValue(extra) as object) }, shownStrings);
    } catch {
      // A field that cannot be read or serialized (a throwing getter or toJSON) must not turn a
      // log call into a crash: the record is written without its fields.
      line = JSON.stringify({ ...head, fields: "[unserializable]" });
    }
    const sink = this.sink ?? route?.sink;
    if (sink) sink(`${line}\n`);
    else process.stderr.write(`${line}\n`);
  }
}

/**
 * A record's text with nothing a terminal obeys. Terraform decodes each JSON line and writes its
 * message and fields through hclog as they are (a JSON `\u001b` comes out as ESC), to the terminal
 * under TF_LOG; and what a record quotes may come from outside (an API's id or message, a path).
 * Line feeds and tabs stay: stacks are multi-line, and hclog shows them as blocks.
 */
function shownText(text: string): string {
  return terminalText(text, { multiline: true, maxLength: Number.POSITIVE_INFINITY });
}

/** JSON.stringify's replacer: every string, and every key of an object, as shownText has it. */
function shownStrings(_key: string, value: unknown): unknown {
  if (typeof value === "string") return shownText(value);
  if (value === null || typeof value !== "object" || Array.isArray(value)) return value;
  const keys = Object.keys(value);
  if (keys.every((k) => firstUnsafeCharacter(k) === undefined)) return value;
  return Object.fromEntries(keys.map((k) => [shownText(k), (value as Record<string, unknown>)[k]]));
}

/** The provider's root logger (module "gpurental"); other modules take children of it. */
export const logger = new Logger("gpurental");
