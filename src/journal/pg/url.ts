/**
 * The PostgreSQL journal's address: `journal_url` or GPURENTAL_JOURNAL_URL, a `postgres://` URL of
 * the same form as Terraform's `pg` backend `conn_str` (libpq's: user, password, host, port,
 * database, `sslmode` and the other libpq parameters). Checked here, before anything connects, so
 * that a wrong value fails with the setting, the rule and the value (its password masked); shown
 * everywhere through `maskUrl` (api/redact.ts), the one rule for every URL a message shows.
 */
import { maskUrl } from "../../api/redact";
import { UserFacingError } from "../../user-facing";

/** The environment variable of the PostgreSQL journal. */
export const JOURNAL_URL_ENV = "GPURENTAL_JOURNAL_URL";

/** The schema the journal's tables live in. */
export const JOURNAL_SCHEMA = "gpurental_journal";

/** A journal URL that cannot be used; the message names the setting and shows the value masked. */
export class JournalUrlError extends UserFacingError {}

/** A checked journal URL. */
export interface JournalUrl {
  /** The URL as given (it may hold a password: never show it, use `display`). */
  readonly value: string;
  /** The URL fit for messages and logs. */
  readonly display: string;
  /** Where it came from, e.g. "journal_url in the provider block". */
  readonly source: string;
}

/** libpq's variables passed on to the client (a URL's own values win). */
const LIBPQ_ENV = ["PGUSER", "PGPASSWORD", "PGSSLMODE", "PGSSLROOTCERT", "PGSSLCERT", "PGSSLKEY"];

/** The launch's libpq variables, for what a URL leaves out (as Terraform's `pg` backend reads them). */
export function libpqEnv(env: NodeJS.ProcessEnv | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of LIBPQ_ENV) {
    const v = env?.[k];
    if (v) out[k] = v;
  }
  return out;
}

/** libpq's sslmode values. */
const SSL_MODES = ["disable", "allow", "prefer", "require", "verify-ca", "verify-full"];

/** The rule every percent-encoded part of the URL follows. */
const ENCODING_RULE =
  'each "%" must begin an escape of two hex digits ("%25" for a "%" itself) and the escapes must spell UTF-8 text';

/** Whether `text` decodes as the PostgreSQL client decodes it (decodeURIComponent), without error. */
function decodes(text: string): boolean {
  try {
    decodeURIComponent(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * The first part of `url` that does not decode, named for a message. The client (pg-connection-
 * string) decodes the user name, the password, the host, the database and the query's parameters,
 * and throws a bare "URI malformed" on an escape that is not UTF-8; and it re-encodes the whole URL
 * when a single "%" anywhere begins no escape, which changes what every other escape says.
 */
function undecodablePart(url: URL): string | undefined {
  if (!decodes(url.username)) return "user name";
  if (!decodes(url.password)) return "password";
  if (!decodes(url.hostname)) return "host";
  if (!decodes(url.pathname)) return "database name";
  for (const pair of url.search.replace(/^\?/, "").split("&")) {
    const [name = "", ...value] = pair.split("=");
    if (!decodes(name)) return "query parameter names";
    if (!decodes(value.join("=")))
      return `query parameter ${JSON.stringify(decodeURIComponent(name).slice(0, 60))}`;
  }
  return undefined;
}

/** Checks a journal URL; throws JournalUrlError naming `source`, the rule and the masked value. */
export function parseJournalUrl(value: string, source: string): JournalUrl {
  const shown = JSON.stringify(maskUrl(value).slice(0, 200));
  const fail = (rule: string): never => {
    // "The GPURENTAL_JOURNAL_URL environment variable …" starts a sentence; an attribute keeps its case.
    const named = source.startsWith("the ") ? `The${source.slice(3)}` : source;
    throw new JournalUrlError(`${named} ${rule}; got ${shown}.`);
  };
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return fail(
      'must be a PostgreSQL URL such as "postgres://user:password@db.example:5432/tfstate?sslmode=verify-full"',
    );
  }
  if (url.protocol !== "postgres:" && url.protocol !== "postgresql:") {
    fail("must be a postgres:// (or postgresql://) URL, the form of the pg backend's conn_str");
  }
  const undecodable = undecodablePart(url);
  if (undecodable) fail(`must be percent-encoded correctly in its ${undecodable}: ${ENCODING_RULE}`);
  if (!url.hostname && !url.searchParams.get("host")) fail("must name the database server's host");
  if (!decodeURIComponent(url.pathname.replace(/^\//, ""))) {
    fail("must name the database after the host (postgres://host:5432/<database>)");
  }
  const mode = url.searchParams.get("sslmode");
  if (mode !== null && !SSL_MODES.includes(mode)) {
    fail(`has sslmode=${mode}, which is none of ${SSL_MODES.join(", ")}`);
  }
  return { value, display: maskUrl(value), source };
}
