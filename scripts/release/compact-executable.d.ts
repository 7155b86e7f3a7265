/** The compact form of a linux executable: launcher, xz stream, trailer (scripts/release/compact-executable.js). */
export function compactExecutable(executable: string, workDir: string, platform?: string): Buffer;
/** Compiles src/executable/compact/launcher.c for a platform into workDir (once) and returns it. */
export function compileLauncher(workDir: string, platform?: string): Buffer;
/** Compiles the npm provider's launcher (src/executable/compact/node-launcher.c) for a platform to `out`. */
export function compileNodeLauncher(out: string, platform: string, cc?: string): void;
/** What this machine lacks to build a platform's compact form, or undefined. */
export function missingToolchain(platform: string): string | undefined;
/** The toolchain that builds the compact forms of these platforms, a line each (release notes). */
export function toolchain(platforms: string[]): string[];
/** Runs another architecture's compact executable under its emulator; its `--version`, or undefined. */
export function runEmulated(
  platform: string,
  compactFile: string,
  sea: Buffer,
  workDir: string,
): string | undefined;
export class ToolError extends Error {}
export const COMPACT_PLATFORMS: Record<
  string,
  { cc: string; filter: string; liblzma: string; packages: string; emulator?: string }
>;
export const TRAILER_SIZE: number;
export const MAGIC: string;
