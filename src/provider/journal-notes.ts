import type { DeployJournal, JournalEntry } from "../journal";
import { logger } from "../log";

// What the resources say about the deploy journal (src/journal) outside a create: the warning
// about requests an interrupted apply left behind, and journal writes that must never fail the
// operation around them (a claim, a completion after the request already landed).

const log = logger.child("journal");

/** Runs a journal write whose failure must not undo what already happened; logs it instead. */
export function bestEffort(what: string, fn: () => void): void {
  try {
    fn();
  } catch (err) {
    log.warn(`deploy journal: could not record ${what}`, {
      error: err instanceof Error ? err.message : String(err),
    });
  }
}

function describe(e: JournalEntry): string {
  const what =
    e.kind === "instance"
      ? e.id
        ? `instance ${e.id}`
        : `a deploy (label ${JSON.stringify(e.request.label ?? null)}) whose answer was lost`
      : e.id
        ? `API key ${e.id} (${JSON.stringify(e.request.name ?? "")})`
        : `an API key creation (${JSON.stringify(e.request.name ?? "")}) whose answer was lost`;
  return `  - ${what}, sent at ${e.sent_at}`;
}

const announced = new WeakSet<DeployJournal>();

/**
 * Once per journal (one provider process), at the first create its plan shows: a run in automation
 * whose file journal has no history for a state that lives elsewhere (a backend other than local)
 * cannot know what a lost runner of the same state deployed. Null every other time.
 */
export function lostRunNotice(journal: DeployJournal): { summary: string; detail: string } | null {
  if (announced.has(journal)) return null;
  announced.add(journal);
  return {
    summary: "A run of this state that was lost would go unseen here",
    detail: `This runner's deploy journal is new (${journal.file}), and the state lives in a ${journal.location.backend} backend that outlives the runner. If an earlier run of this state was lost (a job killed, a runner gone) after the API accepted a deploy, its instance is billed outside the state, and this plan deploys another instead of adopting it. Keep the journal beside the state: set GPURENTAL_JOURNAL_URL (or journal_url) to a PostgreSQL database every runner reaches. To find such instances now: gpurental strays. This is said once per plan, and only while the journal has no history.`,
  };
}

/**
 * Settles the entries that ended runs closed pending their state's write (a `pg` backend:
 * DeployJournal.resolvePending), and warns about those that write never saved: they are in no
 * state, and the next apply adopts or revokes them. Said by the command that finds them. Only a
 * command holding the state's lock settles (`settle`).
 */
export function reopenedEntriesWarning(
  journal: DeployJournal,
  settle: boolean,
): { summary: string; detail: string } | null {
  let reopened: JournalEntry[];
  try {
    reopened = journal.resolvePending(settle);
  } catch (err) {
    log.warn("deploy journal: could not settle the entries pending a state write", {
      error: err instanceof Error ? err.message : String(err),
    });
    return null;
  }
  if (reopened.length === 0) return null;
  const n = reopened.length;
  return {
    summary: `An apply's state write failed: ${n} object${n === 1 ? "" : "s"} it created ${n === 1 ? "is" : "are"} in no state`,
    detail: `An earlier apply of this state created these, and Terraform could not write the state after it (it kept errored.tfstate on the machine that ran it):\n${reopened.map(describe).join("\n")}\nThe next apply adopts each instance into a gpurental_instance of the same configuration that it creates, instead of deploying another, and revokes the API keys, whose secret only errored.tfstate holds. To keep that apply's state instead, push it before any other apply: terraform state push errored.tfstate. terraform destroy does not see them; gpurental strays lists what no state holds.\nDeploy journal: ${journal.file}`,
  };
}

/**
 * The warning about what interrupted applies created and no Terraform state can hold (it was never
 * returned to Terraform): instances the next matching create adopts, keys the next apply revokes.
 */
export function orphanedEntriesWarning(journal: DeployJournal): { summary: string; detail: string } | null {
  let orphans: JournalEntry[];
  try {
    orphans = journal.live().filter((e) => e.handed_at === null && journal.isAdoptable(e));
  } catch {
    return null;
  }
  if (orphans.length === 0) return null;
  const instances = orphans.filter((e) => e.kind === "instance");
  const keys = orphans.filter((e) => e.kind === "api_key");
  const parts: string[] = [];
  if (instances.length > 0) {
    parts.push(
      `Deploys an interrupted apply sent before Terraform recorded them (they may be billing):\n${instances.map(describe).join("\n")}\nThe next apply adopts each into a gpurental_instance of the same configuration that it creates, instead of deploying another. terraform destroy does not see them; gpurental strays lists what no state holds.`,
    );
  }
  if (keys.length > 0) {
    parts.push(
      `API keys created by interrupted or lost requests, whose secret nobody holds:\n${keys.map(describe).join("\n")}\nThe next apply or destroy revokes them.`,
    );
  }
  const n = orphans.length;
  return {
    summary: `The deploy journal holds ${n} request${n === 1 ? "" : "s"} no Terraform state has claimed`,
    detail: `${parts.join("\n\n")}\nDeploy journal: ${journal.file}`,
  };
}
