import { Command, CommanderError } from "commander";
import { redactText } from "../api/redact";
import { version } from "../version";

/** A subcommand module registers its commands on the root program. */
export interface CommandModule {
  register(program: Command): void;
}

/** Subcommand modules, loaded lazily so that one command never pays for another's imports. */
const modules: Record<string, () => Promise<CommandModule>> = {
  "fake-backend": () => import("./fake-backend"),
  provider: () => import("./provider"),
  demo: () => import("./demo"),
  strays: () => import("./strays"),
  "plan-report": () => import("./plan-report"),
  journal: () => import("./journal"),
};

/** Builds the `gpurental` program with every subcommand registered. */
export async function buildProgram(): Promise<Command> {
  const program = new Command("gpurental")
    .description("Infrastructure as code for the gpurental GPU rental service")
    .version(version)
    .showHelpAfterError()
    .exitOverride();
  for (const load of Object.values(modules)) {
    (await load()).register(program);
  }
  return program;
}

/** Runs the `gpurental` command with the given argv (as in process.argv). */
export async function main(argv: string[]): Promise<void> {
  const program = await buildProgram();
  try {
    await program.parseAsync(argv);
  } catch (err) {
    if (err instanceof CommanderError) {
      process.exitCode = err.exitCode;
      return;
    }
    // bin/gpurental prints the message of anything else: never a credential it quotes.
    if (err instanceof Error) err.message = redactText(err.message);
    throw err;
  }
}
