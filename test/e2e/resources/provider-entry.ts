import { createProviderService } from "../../../src/framework/server";
import { logger } from "../../../src/plugin/log";
import { runProvider } from "../../../src/plugin/main";
import { provider } from "../../../src/provider";

// The gpurental provider executable as the resource suites install it: the real provider
// definition behind the real plugin server.

/** Runs the provider executable. */
export function main(argv: readonly string[]): Promise<void> {
  return runProvider(
    () =>
      createProviderService(provider, {
        log: (level, message, fields) => logger.child("framework").log(level, message, fields),
      }),
    argv,
  );
}
