// What the resources' GenerateResourceConfig (Terraform 1.14+) share: the warning when Terraform
// asks for configuration without sending the object's state.

/** The warning of a GenerateResourceConfig call that carries no state. */
export function noStateToGenerateFrom(type: string): { summary: string; detail: string } {
  return {
    summary: `No configuration generated for ${type}`,
    detail: `Terraform asked for the configuration of a ${type} without its state, so only the import block is useful: add include_resource = true to the list block and run the query again (Terraform 1.14.0 never sends the state; 1.14.1 and later do).`,
  };
}
