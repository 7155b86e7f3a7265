import type { AnyResourceDefinition } from "../framework";
import type { ProviderData } from "../provider/provider-data";
import { apiKeyResource } from "./api-key/resource";
import { instanceResource } from "./instance/resource";

// The provider's resources, one room each; src/provider.ts registers this list.

/** The provider's resource types. */
export const resources: readonly AnyResourceDefinition<ProviderData>[] = [apiKeyResource, instanceResource];
