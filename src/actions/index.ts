import { instancePowerAction } from "./instance-power";

// The provider's actions (Terraform 1.14 or later), one module each; src/provider.ts registers
// this list. Why there is no key rotation action: docs/design/actions-and-identity.md.

/** Every action of the provider, in documentation order. */
export const actions = [instancePowerAction] as const;

export { instancePowerAction };
