import { Command, CommanderError } from "commander";
import { redactText } from "../api/redact";
import { version } from "../version";
import { refuseEmptyValues } from "./flags";
import { type CommandHost, setCommandHost } from "./host";
import { guardOutput, printErr, shown } from "./io";
import { removeLinkedNpxEntryAtExit } from "./npx-cache";

// The `gpurental` program. bin/gpurental (the npm package) and the standalone executable of a
// release (src/executable/sea.ts, bundled with this file) both run it through runCommand; the
// standalone one passes a CommandHost saying where its provider and example come from.

/** A subcommand module registers its commands on the root program. */
export interface CommandModule {
  register(program: Command): void;
}

/** Subcommand modules, loaded lazily so that one command never pays for another's imports. */
const modules: Record<string, () => Promise<CommandModule>> = {
  "fake-backend": () => import("./fake-backend"),
  provider: () => import("./provider/provider"),
  demo: () => import("./demo/demo"),
  example: () => import("./demo/example"),
  strays: () => import("./account/strays"),
  "plan-report": () => import("./account/plan-report"),
  journal: () => import("./provider/journal"),
};

/** Builds the `gpurental` program with every subcommand registered. */
export async function buildProgram(): Promise<Command> {
  const program = new Command("gpurental")
    .description("Infrastructure as code for the gpurental GPU rental service")
    .version(version)
    .showHelpAfterError()
    // Commander quotes what it refuses (an unknown option, a flag's value): shown as text, and
    // never a credential. An unknown option is quoted whole with its value (`--token=gps_…` for
    // the --token-file that exists, `--api-key=…`): the value is never shown, whatever it is.
    .configureOutput({ outputError: (text, write) => write(shown(redactText(withoutOptionValues(text)))) })
    .exitOverride();
  refuseEmptyValues(program);
  for (const load of Object.values(modules)) {
    (await load()).register(program);
  }
  return program;
}

/** Commander's error text with the value of every `'--name=value'` it quotes left out. */
function withoutOptionValues(text: string): string {
  return text.replace(/'(--?[^'=\s]+)=[^']*'/g, "'$1=…'");
}

/** Runs the `gpurental` command with the given argv (as in process.argv). */
export async function main(argv: string[], host: CommandHost = {}): Promise<void> {
  setCommandHost(host);
  const program = await buildProgram();
  try {
    await program.parseAsync(argv);
  } catch (err) {
    if (err instanceof CommanderError) {
      process.exitCode = err.exitCode;
      return;
    }
    // runCommand prints the message of anything else: never a credential it quotes.
    if (err instanceof Error) err.message = redactText(err.message);
    throw err;
  }
}

/**
 * Runs the command as a program does: what fails unexpectedly ends it with its message on stderr
 * and exit code 1. The body of bin/gpurental and of the standalone executable named gpurental.
 */
export function runCommand(argv: string[], host: CommandHost = {}): Promise<void> {
  // A closed or full stdout or stderr ends no command with a stack trace (see io.ts).
  guardOutput();
  if (!host.standalone) removeLinkedNpxEntryAtExit(argv[1]);
  return main(argv, host).catch((err: unknown) => {
    printErr(`gpurental: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  });
}
