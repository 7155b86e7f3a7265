// The deploy journal: a durable record, kept with the working directory, of every deploy and key
// creation the provider sends, so that what an interrupted or late request created is found again
// (README.md beside this file).

export { JournalError, journalFiles, readJournalFile } from "./disk";
export { fingerprintOf, secretDigest } from "./fingerprint";
export {
  JOURNAL_DIR_ENV,
  type JournalLocation,
  journalDirProblem,
  locateJournal,
  stableJson,
} from "./location";
export {
  CLOCK_SKEW_MS,
  createdInWindow,
  LATE_COMMIT_HORIZON_MS,
  type LandedShape,
  type ListingLoop,
  landedCandidates,
  listUntilFound,
  matchesRequest,
} from "./lost-requests";
export {
  type CloseReason,
  type EntryKind,
  JOURNAL_FORMAT,
  JOURNAL_VERSION,
  type JournalEntry,
  type JournalHeader,
  type JournalRecord,
  type ParsedJournal,
  parseJournal,
} from "./records";
export {
  currentRun,
  newRun,
  type ParentCommand,
  parentCommand,
  type RunIdentity,
  runAlive,
} from "./run";
export { CLOSED_KEPT_MS, DeployJournal, type DeployJournalOptions } from "./store";
