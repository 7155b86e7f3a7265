import { closeSync, existsSync, fstatSync, openSync, readSync, realpathSync, statSync } from "node:fs";
import { basename, delimiter, resolve } from "node:path";

// Which program the standalone executable is, and which file. One executable answers to two names
// (docs/design/standalone-command.md): started under a name that begins with terraform-provider-
// it is the provider, as Terraform always starts it; under any other name (gpurental, in the
// command's archive) it is the `gpurental` command. The name is argv[0] as the process was given
// it: the compact executable's launcher keeps it when it runs the unpacked runtime, whose own file
// (process.execPath) is always named terraform-provider-gpurental-<id> in the runtime cache.

/** What the executable does when started under a name. */
export type Program = "provider" | "command";

/** The program a name stands for (argv[0], a path or a bare name; `.exe` or not). */
export function programOf(argv0: string): Program {
  const name = argv0.split(/[\\/]/).pop() ?? "";
  return name.toLowerCase().startsWith("terraform-provider-") ? "provider" : "command";
}

/** The compact executable's trailer (src/executable/compact/launcher.c): its size, magic and id. */
const TRAILER_SIZE = 104;
const MAGIC = "gpurental-rt-v1\n";

/** The runtime id a compact file names in its trailer (64 hex digits), or undefined. */
function compactId(file: string): string | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(file, "r");
    const size = fstatSync(fd).size;
    if (size < TRAILER_SIZE) return undefined;
    const trailer = Buffer.alloc(TRAILER_SIZE);
    if (readSync(fd, trailer, 0, TRAILER_SIZE, size - TRAILER_SIZE) !== TRAILER_SIZE) return undefined;
    if (trailer.toString("latin1", 0, MAGIC.length) !== MAGIC) return undefined;
    const id = trailer.toString("latin1", 40, 104);
    return /^[0-9a-f]{64}$/.test(id) ? id : undefined;
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * Whether `file` is the executable this process runs: the same file, or the compact file whose
 * runtime this is (the launcher names the unpacked runtime after the id in the file's trailer).
 */
export function isThisExecutable(file: string, execPath: string): boolean {
  try {
    if (realpathSync(file) === realpathSync(execPath)) return true;
  } catch {
    return false;
  }
  const id = compactId(file);
  return id !== undefined && basename(execPath) === `terraform-provider-gpurental-${id.slice(0, 32)}`;
}

/**
 * The file the user started: argv[0] resolved as the shell found it (a path against the working
 * directory, a bare name on PATH), when it is this executable. Else the running file itself (on
 * Linux, the unpacked runtime of a compact executable: a larger file, but the same program).
 */
export function startedFile(
  argv0: string,
  execPath: string,
  env: NodeJS.ProcessEnv = process.env,
  cwd: string = process.cwd(),
): string {
  const windows = process.platform === "win32";
  const candidates = /[\\/]/.test(argv0)
    ? [resolve(cwd, argv0)]
    : (env.PATH ?? "")
        .split(delimiter)
        .filter(Boolean)
        .flatMap((dir) =>
          windows && !/\.exe$/i.test(argv0) ? [`${dir}\\${argv0}.exe`] : [resolve(dir, argv0)],
        );
  for (const file of candidates) {
    if (existsSync(file) && statSync(file).isFile() && isThisExecutable(file, execPath)) return file;
  }
  return execPath;
}
