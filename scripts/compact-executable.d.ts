/** The compact form of a linux executable: launcher, xz stream, trailer (scripts/compact-executable.js). */
export function compactExecutable(executable: string, workDir: string): Buffer;
/** Compiles src/executable/compact/launcher.c into workDir (once) and returns it. */
export function compileLauncher(workDir: string): Buffer;
/** The versions of the toolchain that builds the compact form. */
export function toolchain(): { gcc: string; xz: string; liblzma: string };
export class ToolError extends Error {}
export const COMPACT_PLATFORMS: Record<string, { arch: string }>;
export const TRAILER_SIZE: number;
export const MAGIC: string;
