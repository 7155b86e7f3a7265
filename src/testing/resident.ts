import { readdirSync, readFileSync } from "node:fs";

/**
 * The resident provider processes serving a socket under `dir` (`node <provider> --resident
 * <dir>/<socket>`), found in Linux's /proc, so that tests can wait for them and stop them.
 */
export function residentPids(dir: string): number[] {
  const pids: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const args = readFileSync(`/proc/${name}/cmdline`, "utf8").split("\0");
      const i = args.indexOf("--resident");
      if (i !== -1 && (args[i + 1] ?? "").startsWith(`${dir}/`)) pids.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}
