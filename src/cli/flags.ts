import type { Command } from "commander";

// Values of the command's flags that more than one command takes, read one way.

/**
 * A port given on the command line: 0 to 65535 in decimal digits only, or undefined. `Number()`
 * alone would take " ", "\r" or "0x10" for a port.
 */
export function portOf(value: string): number | undefined {
  if (!/^\d{1,5}$/.test(value)) return undefined;
  const port = Number(value);
  return port <= 65535 ? port : undefined;
}

/** Whether a flag's or an argument's value is empty, or holds an empty one (repeated, variadic). */
function empty(value: unknown): boolean {
  return value === "" || (Array.isArray(value) && value.includes(""));
}

/**
 * Why a command line gives an empty value, naming the flag or the argument as typed; undefined
 * when it gives none. No flag or argument of the command means anything by an empty value: an
 * empty path would be taken for the current directory (`--dir ""`, `example hcl ""`), an empty host
 * for every interface, so each is refused rather than read as something the user did not write.
 */
export function emptyValueProblem(cmd: Command): string | undefined {
  const values = cmd.opts() as Record<string, unknown>;
  for (const option of cmd.options) {
    if ((option.required || option.optional) && empty(values[option.attributeName()])) {
      return `${option.long ?? option.short} must not be empty`;
    }
  }
  for (const [i, argument] of cmd.registeredArguments.entries()) {
    if (empty(cmd.processedArgs[i])) return `the argument <${argument.name()}> must not be empty`;
  }
  return undefined;
}

/**
 * Refuses, before its action runs, a command line that gives any flag or argument an empty value:
 * an error naming it, with exit code 1 (the code of every bad flag).
 */
export function refuseEmptyValues(program: Command): Command {
  return program.hook("preAction", (_program, action) => {
    const problem = emptyValueProblem(action);
    if (problem) action.error(`error: ${problem}`, { exitCode: 1, code: "gpurental.emptyValue" });
  });
}
