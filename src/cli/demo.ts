import type { Command } from "commander";

/** Registers the `demo` command (not implemented yet). */
export function register(_program: Command): void {}
