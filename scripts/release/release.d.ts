/** One archive of a release. */
export interface BuiltArchive {
  platform: string;
  /** The Node.js version the executable was built from. */
  node: string;
  /** "compact" (launcher and compressed runtime, src/executable/compact) or "sea" (the plain SEA). */
  form: "compact" | "sea";
  /** Why a platform that has a compact form got the plain SEA, else "". */
  formNote: string;
  /** The executable's size in bytes. */
  size: number;
  filename: string;
  /** The zip's SHA-256, hex (Terraform's zh: hash). */
  shasum: string;
  /** Terraform's h1: hash of the zip's contents. */
  h1: string;
  /** What `--version` printed when the executable ran on the build machine, else "". */
  executed: string;
  /** The same executable in the `gpurental` command's archive (gpurental_<v>_<os>_<arch>.zip). */
  command: {
    filename: string;
    /** The zip's SHA-256, hex. */
    shasum: string;
    /** What `gpurental --version` printed on the build machine, else "". */
    executed: string;
  };
}
/** What release() wrote. */
export interface ReleaseResult {
  outDir: string;
  /** The static folder: provider registry and network mirror. */
  site: string;
  version: string;
  built: BuiltArchive[];
  skipped: { platform: string; reason: string }[];
  keyId: string;
  /** Whether it was signed with a key made for this build and deleted after it (--throwaway-key). */
  throwawayKey: boolean;
  /** The release files in outDir (both kinds of archives, manifest, SHA256SUMS and its signature). */
  files: string[];
}
/** Builds, signs and writes the release; see scripts/release/release.js. */
export function release(opts?: {
  platforms?: string[];
  outDir?: string;
  nodeCache?: string;
  env?: NodeJS.ProcessEnv;
  /**
   * "auto" (default): the compact form on Linux where this machine has its toolchain, else the
   * plain SEA with the reason in the notes; "compact": required, or fail; "sea": the plain SEA.
   */
  form?: "auto" | "compact" | "sea";
  /** The Node.js LTS line to build from: "22" or "24" (default "22"). */
  node?: string;
  /** Today, for the check that the Node.js line still has security support. */
  now?: Date;
  log?: (line: string) => void;
  /**
   * Sign with a key made for this build in a temp GnuPG home and deleted after it, instead of
   * GPURENTAL_RELEASE_GPG_KEY (which must then be unset); the notes say it is not for production.
   */
  throwawayKey?: boolean;
}): Promise<ReleaseResult>;
/** Terraform's h1: hash of a package holding these files. */
export function h1(files: { name: string; data: Buffer }[]): string;
/** A reproducible zip holding one executable. */
export function zipOne(name: string, data: Buffer, opts?: { compress?: boolean }): Promise<Buffer>;
export class ReleaseError extends Error {}
export const PLATFORMS: Record<string, { pkg: string; bin: string; macho?: boolean; exe?: boolean }>;
export const MIRROR_HOSTS: readonly string[];
