import { readdirSync, readFileSync } from "node:fs";

/**
 * The resident provider processes serving a socket under `dir` (`node <provider> --resident
 * <dir>/<socket>`), found in Linux's /proc, so that tests can wait for them and stop them.
 */
export function residentPids(dir: string): number[] {
  return pidsWhose((args) => {
    const i = args.indexOf("--resident");
    return i !== -1 && (args[i + 1] ?? "").startsWith(`${dir}/`);
  });
}

/** The command's provider processes serving the launches of process `owner` (`--owner <pid>`). */
export function ownedPids(owner: number): number[] {
  return pidsWhose((args) => {
    const i = args.indexOf("--owner");
    return i !== -1 && args[i + 1] === String(owner);
  });
}

/** The processes whose arguments (Linux's /proc) `match` accepts. */
function pidsWhose(match: (args: string[]) => boolean): number[] {
  const pids: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (match(readFileSync(`/proc/${name}/cmdline`, "utf8").split("\0"))) pids.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}
