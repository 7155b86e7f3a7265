// What the resources' GenerateResourceConfig (Terraform 1.14+) share: the warning when Terraform
// asks for configuration without sending the object's state.

/** The warning of a GenerateResourceConfig call that carries no state. */
export function noStateToGenerateFrom(type: string): { summary: string; detail: string } {
  return {
    summary: `No configuration generated for ${type}`,
    detail: `Terraform asked for the configuration of a ${type} without its state, so the resource block it writes has no values, and only the import block is of use. Terraform 1.14.0 never sends the state; 1.14.1 and later do (-generate-config-out always asks for the objects): run the query again with a later Terraform, or write the resource block by hand.`,
  };
}
