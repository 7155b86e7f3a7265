import type { Diagnostics } from "../../framework";
import { JOURNAL_URL_ENV, type JournalUrl, JournalUrlError, parseJournalUrl } from "../../journal/pg/url";
import { invalidJournalUrl, journalDirUnused, unusableJournalDir } from "./diagnostics";
import { type Resolved, where } from "./settings";

// Where the deploy journal is kept: journal_url (or GPURENTAL_JOURNAL_URL), a PostgreSQL database,
// wins over journal_dir (or GPURENTAL_JOURNAL_DIR), a directory; by default a directory in
// Terraform's data directory (src/journal/README.md).

/** The PostgreSQL journal's URL, when one is set and valid; a bad one, or a journal_dir it leaves unused, is reported. */
export function journalUrlOf(
  setting: Resolved,
  journalDir: Resolved,
  diags: Diagnostics,
): JournalUrl | undefined {
  if (setting.kind !== "value") return undefined;
  let journalUrl: JournalUrl | undefined;
  try {
    journalUrl = parseJournalUrl(
      setting.value,
      setting.from === "config"
        ? "journal_url in the provider block"
        : `the ${JOURNAL_URL_ENV} environment variable`,
    );
  } catch (err) {
    if (!(err instanceof JournalUrlError)) throw err;
    diags.add(invalidJournalUrl(setting.from, err.message));
  }
  if (journalUrl && journalDir.kind === "value" && journalDir.from === "config") {
    diags.add(journalDirUnused(journalUrl.source === "journal_url in the provider block", journalDir.value));
  }
  return journalUrl;
}

/** Reports a journal directory that cannot be kept (`problem`, from journalDirProblem). */
export function reportUnusableJournalDir(
  journalDir: Resolved,
  dir: string,
  problem: string,
  diags: Diagnostics,
): void {
  const named =
    journalDir.kind === "value"
      ? where("journal_dir", journalDir)
      : "The deploy journal's default directory (in Terraform's data directory, TF_DATA_DIR)";
  diags.add(
    unusableJournalDir(named, dir, problem, journalDir.kind === "value" && journalDir.from === "config"),
  );
}
