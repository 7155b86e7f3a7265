/**
 * The PostgreSQL journal's address: `journal_url` or GPURENTAL_JOURNAL_URL, a `postgres://` URL of
 * the same form as Terraform's `pg` backend `conn_str` (libpq's: user, password, host, port,
 * database, `sslmode` and the other libpq parameters). Checked here, before anything connects, so
 * that a wrong value fails with the setting, the rule and the value (its password masked); shown
 * everywhere through `maskUrl` (api/redact.ts), the one rule for every URL a message shows.
 */
import { maskUrl } from "../../api/redact";

/** The environment variable of the PostgreSQL journal. */
export const JOURNAL_URL_ENV = "GPURENTAL_JOURNAL_URL";

/** The schema the journal's tables live in. */
export const JOURNAL_SCHEMA = "gpurental_journal";

/** A journal URL that cannot be used; the message names the setting and shows the value masked. */
export class JournalUrlError extends Error {}

/** A checked journal URL. */
export interface JournalUrl {
  /** The URL as given (it may hold a password: never show it, use `display`). */
  readonly value: string;
  /** The URL fit for messages and logs. */
  readonly display: string;
  /** Where it came from, e.g. "journal_url in the provider block". */
  readonly source: string;
}

/** libpq's sslmode values. */
const SSL_MODES = ["disable", "allow", "prefer", "require", "verify-ca", "verify-full"];

/** Checks a journal URL; throws JournalUrlError naming `source`, the rule and the masked value. */
export function parseJournalUrl(value: string, source: string): JournalUrl {
  const shown = JSON.stringify(maskUrl(value).slice(0, 200));
  const fail = (rule: string): never => {
    throw new JournalUrlError(`${source[0]!.toUpperCase()}${source.slice(1)} ${rule}; got ${shown}.`);
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
