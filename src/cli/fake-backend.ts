import type { Command } from "commander";

/** Registers the `fake-backend` command (not implemented yet). */
export function register(_program: Command): void {}
