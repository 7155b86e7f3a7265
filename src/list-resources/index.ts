import { apiKeyList } from "./api-keys";
import { instanceList } from "./instances";

// The provider's list resources (Terraform 1.14 or later, `terraform query`), one module each;
// src/provider.ts registers this list. Each lists objects of the managed resource type of its
// name, identified by that resource's identity (src/resources/identity.ts).

/** Every list resource of the provider, in documentation order. */
export const listResources = [apiKeyList, instanceList] as const;

export { apiKeyList, instanceList };
