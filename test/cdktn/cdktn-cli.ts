import { cdktnCommand, withCdkPath } from "../../src/cli/cdk";

/** How the suites run the real cdktn-cli: under a Node it supports, which is also the app's (see src/cli/cdk.ts). */
export function cdktnCli(
  root: string,
  env: NodeJS.ProcessEnv,
): { command: string; argv: string[]; env: NodeJS.ProcessEnv } {
  const cli = cdktnCommand(root);
  return { command: cli.command, argv: cli.argv, env: withCdkPath(cli, env) };
}
