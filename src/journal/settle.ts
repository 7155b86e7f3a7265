import type { DeployJournal } from "./store";

// The journals a run (one provider process, or one session of a resident process) opened, settled
// when Terraform ends the run normally (GRPCController.Shutdown): their handed entries that the
// saved state holds are closed, so that an object Terraform saved and a user later removed from
// the state (`terraform state rm`, an import elsewhere) is never adopted back (store.ts,
// settleHanded). Kept apart from the store so that the plugin server can call it without loading
// the provider. The wire layer knows nothing of it: the executable hands the plugin server and the
// resident process an onShutdown hook that calls settleRun of the provider it loaded
// (src/executable/provider-impl.ts re-exports it), so the provider registers and settles through
// one copy of this module even where the production build bundles the two apart.

const byRun = new Map<string, Set<DeployJournal>>();

/** Records a journal of a run, to be settled when the run ends normally. */
export function settleAtShutdown(journal: DeployJournal, ended?: AbortSignal): void {
  const id = journal.run.id;
  const set = byRun.get(id) ?? new Set<DeployJournal>();
  byRun.set(id, set);
  set.add(journal);
  // A run that ends otherwise (its launch gone) settles nothing; its journals are let go.
  ended?.addEventListener("abort", () => byRun.delete(id), { once: true });
}

/**
 * Settles the journals of a run (without one: of every run of the process) that Terraform ended
 * normally; failures are told to `warn`, never
 * thrown (the entries then stay open, as after a crash).
 */
export function settleRun(runId?: string, warn: (message: string) => void = () => {}): void {
  const ids = runId === undefined ? [...byRun.keys()] : [runId];
  const journals = ids.flatMap((id) => [...(byRun.get(id) ?? [])]);
  for (const id of ids) byRun.delete(id);
  for (const journal of journals) {
    try {
      journal.settleHanded();
    } catch (err) {
      warn(`deploy journal ${journal.file}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
}
