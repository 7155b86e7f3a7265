import { spawn } from "node:child_process";

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
export function launch(file: string, args: string[], env: NodeJS.ProcessEnv, cwd?: string): Promise<Launch> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { env, ...(cwd ? { cwd } : {}) });
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => {
      out += d;
    });
    child.stderr.on("data", (d) => {
      err += d;
    });
    // A launch that fails exits without reading its input: that is no error of the test.
    child.stdin.on("error", () => {});
    child.stdin.end("from stdin\n");
    child.on("error", reject);
    child.on("close", (code) => resolve({ pid: child.pid ?? -1, code, out, err }));
  });
}
