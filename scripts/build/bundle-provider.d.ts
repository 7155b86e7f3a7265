/** Parses the provider's .proto files into protobufjs JSON (snake_case names kept). */
export function buildDescriptor(): object;
/** The text of src/plugin/proto/descriptor.json as the build writes it. */
export function descriptorText(): string;
/**
 * Bundles one entry point with esbuild the way the provider bundle is built; resolves to the
 * outfile. With `split`, `./grpc-server` and `./provider-impl` stay separate files
 * (provider-transport.js and provider-impl.js beside it).
 */
export function bundle(
  entry: string,
  outfile: string,
  opts?: { split?: boolean; sourcemap?: boolean },
): Promise<string>;
/**
 * Builds the production bundles and the pre-encoded GetProviderSchema answer (SCHEMA_FILE) into
 * `outDir`, and, unless `nodeLaunchers` is false, the npm provider's launcher
 * (node-launcher-<platform>) for each linux platform this machine can compile it for; resolves to
 * `outDir`.
 */
export function buildProvider(
  outDir: string,
  opts?: { sourcemap?: boolean; nodeLaunchers?: boolean },
): Promise<string>;
/**
 * Writes a bundle's content id into it, which names its code cache (see code-cache-loader.ts); with
 * `ascii`, refuses a bundle with any character beyond ASCII (the provider's, read as latin1).
 */
export function markBundle(file: string, opts?: { ascii?: boolean }): void;
/** The file name of the pre-encoded GetProviderSchema answer. */
export const SCHEMA_FILE: string;
/** The .proto files that make up the descriptor. */
export const PROTO_FILES: readonly string[];
