// Jest's globalSetup: dist/ rebuilt first when a suite that runs it is selected and a source is newer
// (test/build-if-stale.setup.js), the repository's tools installed when a suite that runs them is
// selected (tools/install.js), then the run's own temp directory (temp-dir.ts), then, when a
// suite that drives terraform is selected, the provider build and mirror they all share
// (test/e2e/shared-provider.ts).
import { existsSync, rmSync } from "node:fs";
import { devNull } from "node:os";
import { delimiter, dirname, join } from "node:path";
import type { Config } from "@jest/types";
import { ensureTools } from "../../tools/install";
import { buildSharedProvider } from "../e2e/shared-provider";
import { setup, sharedDir } from "./temp-dir";

// The build check is plain CommonJS (no TypeScript transform needed to judge whether one is due).
const buildIfStale = require("../build-if-stale.setup.js") as ((
  config: Config.GlobalConfig,
) => Promise<void>) & {
  selects(config: Config.GlobalConfig, patterns: RegExp[]): boolean;
};

/** Suites that drive terraform through TerraformHarness (test/e2e/harness.ts). */
const HARNESS_SUITES = [/[\\/]test[\\/](e2e|protocol)[\\/].+\.e2e\.test\.ts$/];

/**
 * Suites that run the repository's tools (tools/package.json): cdktn-cli and the Node.js 22 and 24
 * binaries. Each caller installs them itself when they are missing; doing it here first keeps that
 * minute out of a test's time limit and the workers from waiting on one another's install.
 */
const TOOL_SUITES = [
  /[\\/]src[\\/]cli[\\/]cdk\.test\.ts$/,
  /[\\/]test[\\/]cdktn[\\/][^\\/]+\.e2e\.test\.ts$/,
  /[\\/]test[\\/]package[\\/]node-lines\.test\.ts$/,
  /[\\/]test[\\/]release[\\/][^\\/]+\.e2e\.test\.ts$/,
];

export default async (globalConfig: Config.GlobalConfig): Promise<void> => {
  await buildIfStale(globalConfig);
  if (buildIfStale.selects(globalConfig, TOOL_SUITES)) ensureTools();
  // Inherited by the workers and so by every program they start, also by those a library spawns
  // with the process's own environment (Jest's sandboxed process.env does not reach them): without
  // it, a terraform started that way (@cdktf/provider-generator probes it) would call HashiCorp's
  // checkpoint service and write ~/.terraform.d/checkpoint_signature.
  process.env.CHECKPOINT_DISABLE = "1";
  // The same programs would print terraform's warning about a configured CLI config file that does
  // not exist (a machine whose profile sets TF_CLI_CONFIG_FILE=~/.terraformrc without the file):
  // an empty one says the same without the noise. Suites that need a config set their own.
  const cliConfigFile = process.env.TF_CLI_CONFIG_FILE;
  if (cliConfigFile && !existsSync(cliConfigFile)) process.env.TF_CLI_CONFIG_FILE = devNull;
  // Likewise, provider processes the tests start are their own (the resident suites turn it on).
  process.env.GPURENTAL_PROVIDER_RESIDENT = "off";
  // Every `node` the tests start (the provider executable's `#!/usr/bin/env node`, cdktf, the
  // bin scripts) is the one running Jest, also when Jest runs on another Node.js than PATH's
  // first, as in .ci/run's runs on Node.js 22 and 24 and under `npx jest` started by such a node.
  process.env.PATH = [dirname(process.execPath), process.env.PATH].filter(Boolean).join(delimiter);
  setup();
  const shared = sharedDir()!;
  if (buildIfStale.selects(globalConfig, HARNESS_SUITES)) {
    try {
      await buildSharedProvider(join(shared, "provider"));
    } catch (err) {
      // Jest runs no teardown after a failed setup.
      rmSync(dirname(shared), { recursive: true, force: true });
      throw err;
    }
  }
};
