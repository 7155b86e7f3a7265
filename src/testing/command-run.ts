import { runCommand } from "../cli/main";

/**
 * Runs the `gpurental` command in this process, as the binary would with `args`, and returns
 * everything it printed (stdout and stderr together, in order) and its exit code.
 */
export async function runCommandInProcess(
  args: readonly string[],
): Promise<{ printed: string; code: number }> {
  let printed = "";
  const capture = (chunk: string | Uint8Array) => {
    printed += typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8");
    return true;
  };
  const out = jest.spyOn(process.stdout, "write").mockImplementation(capture);
  const err = jest.spyOn(process.stderr, "write").mockImplementation(capture);
  const before = process.exitCode;
  process.exitCode = 0;
  try {
    await runCommand(["node", "gpurental", ...args]);
    return { printed, code: Number(process.exitCode ?? 0) };
  } finally {
    out.mockRestore();
    err.mockRestore();
    process.exitCode = before;
  }
}
