// Types of tools/install.js, for the TypeScript that calls it.

/** The folder of the tools' manifest, lock file and node_modules. */
export const TOOLS_DIR: string;
/** The Node.js lines the tools carry. */
export const NODE_LINES: readonly string[];
/** Installs the tools unless they already are the lock file's; `log` gets one line as an install starts. */
export function ensureTools(options?: { log?: (line: string) => void }): void;
/** Whether tools/node_modules is the lock file's, complete. */
export function isInstalled(): boolean;
/** The `node` binary of a Node.js line the tools carry. */
export function nodeBinary(line: string | number): string;
/** The folder of a tool package (e.g. "cdktn-cli"). */
export function toolDir(name: string): string;
