// Where the `gpurental` command runs from. The npm package's bin/gpurental and the standalone
// executable of a release (src/executable/sea.ts) run the same program (main.ts); what differs is
// only where the provider and the example configuration come from, and that is this module.
// Commands ask it instead of looking for the package's files themselves.

/** The standalone executable of a release, as the command sees it. */
export interface StandaloneExecutable {
  /**
   * The executable's own file: the one the user started (on Linux the compact file, not the
   * runtime it unpacked). It is also the provider: Terraform runs it as terraform-provider-gpurental.
   */
  readonly file: string;
  /** A file the executable carries (the HCL example), by its path in the repository; undefined if none. */
  asset(name: string): Buffer | undefined;
}

/** What the command runs from: the npm package (the default), or a standalone executable. */
export interface CommandHost {
  /** Set when the command is the standalone executable; the npm package has none. */
  readonly standalone?: StandaloneExecutable;
}

let current: CommandHost = {};

/** Sets the host for this process (main() does it once, before any command runs). */
export function setCommandHost(host: CommandHost): void {
  current = host;
}

/** The host of this process. */
export function commandHost(): CommandHost {
  return current;
}

/** The standalone executable this command is, or undefined for the npm package. */
export function standaloneExecutable(): StandaloneExecutable | undefined {
  return current.standalone;
}
