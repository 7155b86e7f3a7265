// Where each CDK's command-line tool is and the Node.js it runs under. cdktf-cli 0.21 runs under the
// Node running this command; cdktn-cli 0.24 needs Node 22.19 or later (its deploy fails under Node
// 20 with "util.markAsUncloneable is not a function"), so under an older Node the first of
// $GPURENTAL_CDKTN_NODE and, in a clone of the repository, the Node.js 24 of its tools runs it.
// A clone has cdktn-cli among its tools too (tools/package.json, installed on first use by
// tools/install.js); a project installs its own. A package has no tools folder.

import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { delimiter, dirname, join } from "node:path";
import semver from "semver";

/** The CDKs the example app and the commands know. */
export const CDKS = ["cdktf", "cdktn"] as const;
/** A CDK: CDK for Terraform (cdktf) or CDK Terrain (cdktn). */
export type Cdk = (typeof CDKS)[number];

/** The lowest Node.js cdktn-cli 0.24 runs under. */
export const CDKTN_MIN_NODE = "22.19.0";

/** Node.js lines past their end of life, and when it came (nodejs.org's release schedule). */
export const NODE_END_OF_LIFE: Readonly<Record<number, string>> = { 18: "2025-04-30", 20: "2026-04-30" };

/**
 * One line for a Node.js too old for a tool: what it needs, what runs, and how to get a newer one.
 * The README's CDK Terrain recipe prints the same words (test/package/node-lines.test.ts).
 */
export function nodeTooOld(tool: string, min: string, running: string = process.version): string {
  const major = Number(running.replace(/^v/, "").split(".")[0]);
  const eol = NODE_END_OF_LIFE[major];
  return `${tool} needs Node.js ${min.replace(/\.0$/, "")} or later, and this is Node.js ${running.replace(/^v/, "")}${eol ? `, past its end of life (${eol})` : ""}: install Node.js 24 or 22 (https://nodejs.org/en/download, or: nvm install 24)`;
}

/** A CDK's command line: the program to spawn and the arguments before the command's own. */
export interface CdkCommand {
  command: string;
  argv: string[];
  /**
   * Put first on PATH: the folder of the Node that runs the CLI, when it is not this process's.
   * The CLI checks `node --version` on PATH and runs the app with that `node`.
   */
  pathPrefix?: string;
}

/** `env` with the command's folder first on PATH, when it has one. */
export function withCdkPath(cmd: CdkCommand, env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  if (!cmd.pathPrefix) return env;
  return { ...env, PATH: [cmd.pathPrefix, env.PATH].filter(Boolean).join(delimiter) };
}

function packageDir(name: string, root: string): string | undefined {
  try {
    return dirname(require.resolve(`${name}/package.json`, { paths: [root] }));
  } catch {
    return undefined;
  }
}

/** cdktf-cli, found from `root` (a project or this package), under this process's Node. */
export function cdktfCommand(root: string): CdkCommand {
  const dir = packageDir("cdktf-cli", root);
  if (!dir) throw new Error(`cdktf-cli is not installed in ${root}: npm install --save-dev cdktf-cli@0.21`);
  return { command: process.execPath, argv: [join(dir, "bundle", "bin", "cdktf")] };
}

/**
 * The node_modules of a clone's tools, installed first when they are missing or out of date (one
 * line on stdout, then about 25 s from npm's cache here); undefined where `root` has no tools
 * folder, as in an installed package.
 */
export function cloneTools(root: string): string | undefined {
  const installer = join(root, "tools", "install.js");
  if (!existsSync(installer)) return undefined;
  const r = spawnSync(process.execPath, [installer], {
    stdio: ["ignore", "inherit", "pipe"],
    encoding: "utf8",
  });
  if (r.status !== 0) throw new Error((r.stderr || r.error?.message || `${installer} failed`).trim());
  return join(root, "tools", "node_modules");
}

/** A Node.js binary new enough for cdktn-cli; see the file comment. */
export function cdktnNode(root: string, env: NodeJS.ProcessEnv = process.env): string {
  if (env.GPURENTAL_CDKTN_NODE) return env.GPURENTAL_CDKTN_NODE;
  if (semver.gte(process.versions.node, CDKTN_MIN_NODE)) return process.execPath;
  const tools = cloneTools(root);
  if (tools) return join(tools, "node-v24", "bin", "node");
  throw new Error(
    `${nodeTooOld("CDK Terrain (cdktn-cli 0.24)", CDKTN_MIN_NODE)}, or name one in GPURENTAL_CDKTN_NODE`,
  );
}

/** cdktn-cli, found from `root`, under a Node it supports. */
export function cdktnCommand(root: string, env: NodeJS.ProcessEnv = process.env): CdkCommand {
  // The Node.js first: installing cdktn-cli would not help on one it cannot run under.
  const node = cdktnNode(root, env);
  const tools = cloneTools(root);
  const dir = tools ? join(tools, "cdktn-cli") : packageDir("cdktn-cli", root);
  if (!dir) throw new Error(`cdktn-cli is not installed in ${root}: npm install --save-dev cdktn-cli@0.24`);
  return {
    command: node,
    argv: [join(dir, "bin", "cdktn")],
    ...(node === process.execPath ? {} : { pathPrefix: dirname(node) }),
  };
}

/** The command line of `cdk`'s tool. */
export function cdkCommand(cdk: Cdk, root: string, env: NodeJS.ProcessEnv = process.env): CdkCommand {
  return cdk === "cdktf" ? cdktfCommand(root) : cdktnCommand(root, env);
}
