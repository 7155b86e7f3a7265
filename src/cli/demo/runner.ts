/**
 * The children of `gpurental demo`: the terraform CLI it checks for, and the CDK CLI (cdktf or
 * cdktn) run in a process group of its own with an environment that reads none of the user's
 * configuration, its output captured into a log.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { createWriteStream, existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { StringDecoder } from "node:string_decoder";
import { terminalText } from "../../display";
import { DemoError } from "./output";

/**
 * cdktf-cli 0.21 runs terraform through @cdktf/node-pty-prebuilt-multiarch, a native module
 * shipped built for each Node.js ABI up to Node.js 22's: on a newer Node.js, `cdktf deploy`
 * fails deep inside with "Cannot find module '../build/Release/pty.node'". Say so up front.
 */
export function checkTerminalModule(cliDir: string, abi = process.versions.modules): void {
  let ptyDir: string;
  try {
    ptyDir = dirname(require.resolve("@cdktf/node-pty-prebuilt-multiarch/package.json", { paths: [cliDir] }));
  } catch {
    return; // another cdktf-cli, which may not use it
  }
  const prebuilt = join(ptyDir, "prebuilds", `${process.platform}-${process.arch}`, `node.abi${abi}.node`);
  const built = join(ptyDir, "build", "Release", "pty.node");
  if (existsSync(prebuilt) || existsSync(built)) return;
  throw new DemoError(
    `cdktf-cli cannot run on Node.js ${process.version}: its terminal module (@cdktf/node-pty-prebuilt-multiarch) has no build for this Node.js (ABI ${abi}). Run the demo with Node.js 20 or 22, or with CDK Terrain: gpurental demo --cdk cdktn.`,
  );
}

/** The node_modules folders this package's dependencies are installed in. */
export function dependencyDirs(root: string): string[] {
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
    dependencies?: Record<string, string>;
    peerDependencies?: Record<string, string>;
  };
  const dirs = new Set([join(root, "node_modules")]);
  for (const name of Object.keys({ ...pkg.dependencies, ...pkg.peerDependencies })) {
    try {
      const manifest = require.resolve(`${name}/package.json`, { paths: [root] });
      dirs.add(resolve(dirname(manifest), ...name.split("/").map(() => "..")));
    } catch {
      // A dependency whose package.json is not exported is found through its neighbours.
    }
  }
  return [...dirs];
}

/** The terraform CLI to run: $TERRAFORM_BINARY_NAME, else `terraform` on PATH. */
export function terraformBinary(): string {
  return process.env.TERRAFORM_BINARY_NAME || "terraform";
}

/** Checks that the terraform CLI runs and returns its version. */
export async function terraformVersion(binary = terraformBinary()): Promise<string> {
  return new Promise((done, fail) => {
    execFile(binary, ["version", "-json"], { timeout: 30_000, env: quietEnv() }, (err, stdout) => {
      if (err) {
        const code = (err as NodeJS.ErrnoException).code;
        fail(
          new DemoError(
            code === "ENOENT"
              ? `the terraform CLI was not found (looked for "${binary}" on PATH). Install Terraform 1.5 or later from https://developer.hashicorp.com/terraform/install, or point TERRAFORM_BINARY_NAME at it.`
              : `"${binary} version" failed: ${err.message}`,
          ),
        );
        return;
      }
      try {
        done(String((JSON.parse(stdout) as { terraform_version?: unknown }).terraform_version ?? "unknown"));
      } catch {
        done("unknown");
      }
    });
  });
}

/** The environment without variables that would make terraform or cdktf read the user's config. */
export function quietEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, CHECKPOINT_DISABLE: "1", ...extra };
  for (const name of ["TF_LOG", "TF_LOG_PATH", "TF_PLUGIN_CACHE_DIR", "TF_DATA_DIR", "TF_WORKSPACE"]) {
    if (!(name in extra)) delete env[name];
  }
  if (!extra.TF_CLI_CONFIG_FILE) delete env.TF_CLI_CONFIG_FILE;
  return env;
}

/** Runs cdktf in its own process group, capturing its output into `log`, and kills the group on abort or timeout. */
export class ChildRunner {
  private readonly children = new Set<ChildProcess>();
  private readonly onExit = () => this.killAll("SIGKILL");

  public constructor() {
    process.once("exit", this.onExit);
  }

  public run(
    args: { command: string; argv: string[]; cwd: string; env: NodeJS.ProcessEnv; log: string },
    opts: { verbose: boolean; out: NodeJS.WritableStream; timeoutMs: number; signal?: AbortSignal },
    onLine: (line: string) => void,
  ): Promise<number> {
    return new Promise((done, fail) => {
      if (opts.signal?.aborted) {
        fail(new DemoError("interrupted"));
        return;
      }
      const log = createWriteStream(args.log, { flags: "a" });
      // The log is a copy for the user: a folder that cannot take it fails nothing of the run.
      log.on("error", () => {});
      const child = spawn(args.command, args.argv, {
        cwd: args.cwd,
        env: args.env,
        detached: true,
        stdio: ["ignore", "pipe", "pipe"],
      });
      this.children.add(child);
      // A line is relayed once whole: a character or an escape sequence split across chunks is
      // neither cut nor let through.
      const line = (text: string) => {
        if (opts.verbose) opts.out.write(`${verboseLine(text)}\n`);
        onLine(text);
      };
      const streams = [child.stdout, child.stderr].map((stream) => {
        const decoder = new StringDecoder("utf8");
        const state = { pending: "" };
        stream?.on("data", (chunk: Buffer) => {
          log.write(chunk);
          state.pending += decoder.write(chunk);
          const lines = state.pending.split("\n");
          state.pending = lines.pop() ?? "";
          for (const text of lines) line(text);
        });
        return { decoder, state };
      });
      const flush = () => {
        for (const { decoder, state } of streams) {
          const rest = state.pending + decoder.end();
          if (rest) line(rest);
        }
      };
      let reason: string | undefined;
      const stop = (why: string) => {
        reason = why;
        this.kill(child, "SIGTERM");
        setTimeout(() => this.kill(child, "SIGKILL"), 5000).unref();
      };
      const timer = setTimeout(
        () => stop(`timed out after ${Math.round(opts.timeoutMs / 1000)}s`),
        opts.timeoutMs,
      );
      const onAbort = () => stop("interrupted");
      opts.signal?.addEventListener("abort", onAbort, { once: true });
      child.on("error", (err) => {
        clearTimeout(timer);
        opts.signal?.removeEventListener("abort", onAbort);
        this.children.delete(child);
        const error = new DemoError(`could not start ${args.argv[1] ?? args.command}: ${err.message}`);
        log.end(() => fail(error));
      });
      child.on("close", (code, sig) => {
        clearTimeout(timer);
        opts.signal?.removeEventListener("abort", onAbort);
        // Whatever the child left behind in its group (a provider, a terraform) goes with it.
        this.kill(child, "SIGKILL");
        this.children.delete(child);
        flush();
        // Settled once the log is on disk: a failure shows its end, and the work folder it is in
        // may be removed right after.
        log.end(() => {
          if (reason) fail(new DemoError(reason));
          else done(code ?? (sig ? 128 : 1));
        });
      });
    });
  }

  private kill(child: ChildProcess, signal: NodeJS.Signals): void {
    if (child.pid === undefined) return;
    try {
      process.kill(-child.pid, signal);
    } catch {
      // The group is already gone.
    }
  }

  public killAll(signal: NodeJS.Signals = "SIGTERM"): void {
    for (const child of this.children) this.kill(child, signal);
  }

  public dispose(): void {
    this.killAll("SIGKILL");
    process.removeListener("exit", this.onExit);
  }
}

/**
 * A line of cdktf's or terraform's output as --verbose shows it: its text as it is, but control
 * characters and bidirectional overrides escaped (a provider's message or an API label quoted in
 * an error could otherwise set the terminal's title or rewrite the screen), and a line ending's
 * carriage return dropped. The children run with NO_COLOR, so no colour is lost.
 */
export function verboseLine(text: string): string {
  // One line at a time: multiline keeps its tabs (a Go stack trace's), and it holds no line feed.
  return terminalText(text.endsWith("\r") ? text.slice(0, -1) : text, {
    multiline: true,
    maxLength: Number.POSITIVE_INFINITY,
  });
}
