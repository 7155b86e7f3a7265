import { realpathSync, rmSync } from "node:fs";
import { sep } from "node:path";

// `npx --no -- gpurental ...` run inside a clone of this repository: npm finds `gpurental` among
// the bins of the project's own package.json and, to run it, installs the project into its npx
// cache (`<npm cache>/_npx/<hash>`, a link to the clone), even with --no. That entry serves
// nothing afterwards (the clone runs bin/gpurental directly, or `npm run gpurental -- ...`) and
// outlives the clone as a dangling link. The command removes it when it ends. An npx install of
// the published package is a copy inside the cache, never a link, and is left alone.

/** The npx cache entry that links to this package, when the command was started through one. */
export function linkedNpxEntry(script: string | undefined): string | undefined {
  if (!script) return undefined;
  const marker = `${sep}_npx${sep}`;
  const at = script.lastIndexOf(marker);
  if (at === -1) return undefined;
  const rest = script.slice(at + marker.length).split(sep);
  // <cache>/_npx/<hash>/node_modules/.bin/gpurental
  if (
    rest.length !== 4 ||
    !/^[0-9a-f]{8,64}$/.test(rest[0] ?? "") ||
    rest[1] !== "node_modules" ||
    rest[2] !== ".bin"
  )
    return undefined;
  const entry = script.slice(0, at + marker.length + (rest[0] as string).length);
  try {
    // A link: the script really lives outside the entry (in the clone).
    return realpathSync(script).startsWith(`${realpathSync(entry)}${sep}`) ? undefined : entry;
  } catch {
    return undefined;
  }
}

/** Removes the linked npx entry the command was started through, when the process exits. */
export function removeLinkedNpxEntryAtExit(script: string | undefined): void {
  const entry = linkedNpxEntry(script);
  if (!entry) return;
  process.once("exit", () => {
    try {
      rmSync(entry, { recursive: true, force: true });
    } catch {
      // npm makes it again next time; nothing depends on its removal.
    }
  });
}
