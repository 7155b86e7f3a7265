import { join } from "node:path";
import { runProcess } from "../../../src/testing/child-process";
import type { RunResult } from "../harness";

export { type TestIO, testIO } from "../../../src/testing/command-io";

// In-process IO for the report commands (src/testing/command-io.ts), and a runner for the built
// `gpurental` binary for the exit codes as a shell sees them.

const BIN = join(__dirname, "..", "..", "..", "bin", "gpurental");

/** Runs the built `gpurental` binary (dist/, made by `npm run build`) with exactly `env`. */
export function runBinary(args: readonly string[], env: NodeJS.ProcessEnv, cwd: string): Promise<RunResult> {
  return runProcess(process.execPath, [BIN, ...args], { cwd, env });
}
