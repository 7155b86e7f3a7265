import { createProviderService } from "../framework/server";

export { settleRun } from "../journal/settle";

import { logger } from "../log";
import type { ProviderService } from "../plugin/tfplugin6";
import { type CreateProviderOptions, createProvider, provider } from "../provider";
import { maskedService } from "./masked-service";

// Everything behind the transport: the framework, the provider definition, its resources and the
// API client. The production bundle builds this module as a second file (provider-impl.js) that
// main.ts requires only after the handshake, so start-up neither parses nor runs any of it.

/**
 * Builds the gpurental provider service: for this process by default, or, in a resident provider
 * process, for one Terraform session (its environment, working directory and run identity).
 */
export function createService(session?: CreateProviderOptions): ProviderService {
  const log = logger.child("framework");
  return maskedService(
    createProviderService(session ? createProvider(session) : provider, {
      log: (level, message, fields) => log.log(level, message, fields),
    }),
  );
}
