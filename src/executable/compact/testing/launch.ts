import { startProcess } from "../../../testing/child-process";

// Runs a launcher (launcher.c, node-launcher.c) around the stand-in runtime (probe.c), for the
// tests beside it.

/** What one launch did. */
export interface Launch {
  pid: number;
  code: number | null;
  out: string;
  err: string;
}

/**
 * Starts `file` with `args`, the environment `env` alone and "from stdin" on its stdin, and waits
 * for it to exit.
 */
export async function launch(
  file: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  cwd?: string,
): Promise<Launch> {
  const { child, result } = startProcess(file, args, { env, cwd: cwd || undefined, input: "from stdin\n" });
  const { code, stdout, stderr } = await result;
  return { pid: child.pid ?? -1, code, out: stdout, err: stderr };
}
