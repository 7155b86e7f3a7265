import type { Command } from "commander";

/** Registers the `provider` command (not implemented yet). */
export function register(_program: Command): void {}
