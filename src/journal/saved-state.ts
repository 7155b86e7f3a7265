/**
 * What the local backend's state file holds, as the journal's settle and reopen rules read it: the
 * ids of its objects, and its lineage and serial (the state mark a settled entry is closed with).
 * An entry closed with a mark is open again while the state file is an earlier state of the same
 * lineage, another lineage, or no file at all (see DeployJournal.isOpen and settleHanded).
 */
import { readFileSync, statSync } from "node:fs";
import type { JsonObject } from "../tfstate/json";
import { objectId, readRawState } from "../tfstate/state";
import type { StateMark } from "./records";

/** What the local backend's state file holds: its objects' ids, and its lineage and serial. */
export interface SavedState {
  ids: Set<string>;
  mark?: StateMark;
}

/** The last read of a state file, keyed by its inode, size and mtime. */
export interface SavedStateCache {
  key: string;
  state: SavedState | null;
}

/**
 * The state file as it is now, read again only when it changed since `cache`: null when there is
 * none, undefined when it cannot be read (cut short or being written). Returns the cache to keep.
 */
export function readSavedState(
  file: string,
  cache: SavedStateCache | null,
): { state: SavedState | null | undefined; cache: SavedStateCache | null } {
  let key: string;
  try {
    const st = statSync(file);
    key = `${st.ino}:${st.size}:${st.mtimeMs}`;
  } catch (err) {
    return { state: (err as NodeJS.ErrnoException).code === "ENOENT" ? null : undefined, cache };
  }
  if (cache?.key === key) return { state: cache.state ?? undefined, cache };
  let state: SavedState | null;
  try {
    const doc = JSON.parse(readFileSync(file, "utf8")) as JsonObject;
    const ids = new Set(
      readRawState(doc, file)
        .objects.map(objectId)
        .filter((id): id is string => id !== undefined),
    );
    state = {
      ids,
      ...(typeof doc.lineage === "string" && typeof doc.serial === "number"
        ? { mark: { lineage: doc.lineage, serial: doc.serial } }
        : {}),
    };
  } catch {
    state = null;
  }
  return { state: state ?? undefined, cache: { key, state } };
}

/**
 * Whether an entry closed with `mark` is open again given the state file now: none (null), or an
 * earlier state of the same lineage, or another lineage. A file that cannot be read (undefined),
 * or a later state of the same lineage, keeps it closed.
 */
export function reopenedBy(mark: StateMark, now: SavedState | null | undefined): boolean {
  if (now === undefined) return false;
  if (now === null) return true;
  if (!now.mark) return false;
  return now.mark.lineage !== mark.lineage || now.mark.serial < mark.serial;
}
