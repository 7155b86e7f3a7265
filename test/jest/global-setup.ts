// Jest's globalSetup: dist/ rebuilt first when a suite that runs it is selected and a source is newer
// (test/build-if-stale.setup.js), then the run's own temp directory (temp-dir.ts).
import type { Config } from "@jest/types";
import { setup } from "./temp-dir";

// The build check is plain CommonJS (no TypeScript transform needed to judge whether one is due).
const buildIfStale = require("../build-if-stale.setup.js") as (config: Config.GlobalConfig) => Promise<void>;

export default async (globalConfig: Config.GlobalConfig): Promise<void> => {
  await buildIfStale(globalConfig);
  setup();
};
