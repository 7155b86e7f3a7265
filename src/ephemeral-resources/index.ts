import { apiKeyEphemeral } from "./api-key";
import { instanceAccessEphemeral } from "./instance-access";

// The provider's ephemeral resources (Terraform 1.10 or later), one module each; src/provider.ts
// registers this list.

/** Every ephemeral resource of the provider, in documentation order. */
export const ephemeralResources = [apiKeyEphemeral, instanceAccessEphemeral] as const;

export { apiKeyEphemeral, instanceAccessEphemeral };
