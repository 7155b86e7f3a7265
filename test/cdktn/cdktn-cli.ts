import { cdktnCommand } from "../../src/cli/cdk";

/** How the suites run the real cdktn-cli: under a Node it supports (see src/cli/cdk.ts). */
export function cdktnCli(root: string): { command: string; argv: string[] } {
  return cdktnCommand(root);
}
