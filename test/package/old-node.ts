import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { delimiter, join } from "node:path";
import semver from "semver";

/**
 * A Node.js binary older than `below` (this process's, or one on PATH, such as the machine's 20
 * when Jest runs on the tools' Node.js 22 or 24, as in .ci/run), or undefined.
 */
export function olderNode(below: string): { file: string; version: string } | undefined {
  const candidates = [
    process.execPath,
    ...(process.env.PATH ?? "").split(delimiter).map((d) => join(d, "node")),
  ];
  for (const file of candidates) {
    if (!existsSync(file)) continue;
    const version = spawnSync(file, ["--version"], { encoding: "utf8" }).stdout.trim();
    if (semver.valid(version) && semver.lt(version, below)) return { file, version };
  }
  return undefined;
}
