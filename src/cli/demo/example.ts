import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import type { Command } from "commander";
import { fsReason } from "../../tfstate/sources";
import { packageName } from "../../version";
import { standaloneExecutable } from "../host";
import { printErr, printOut } from "../io";
import { folderProblem } from "./workdir";

// The plain Terraform example (examples/hcl) as the command carries it: `gpurental demo --hcl`
// runs it, and `gpurental example hcl <dir>` writes it out for a person to plan, apply and destroy
// with nothing but terraform. The npm package ships examples/hcl/*.tf (package.json `files`); the
// standalone executable carries the same files as assets (scripts/release/release.js).

/** The files of examples/hcl that make up the configuration, in the order they are written. */
export const HCL_EXAMPLE_FILES = ["main.tf", "variables.tf", "outputs.tf"] as const;

/** One file of an example. */
export interface ExampleFile {
  name: string;
  text: string;
}

/**
 * Why the example cannot be written: a file of it cannot be found (the package or the executable
 * is incomplete), or the folder named cannot take it.
 */
export class ExampleError extends Error {}

/** The package root (the folder of our package.json), from dist/cli/demo or src/cli/demo alike. */
function packageRoot(): string | undefined {
  for (let dir = __dirname; ; dir = dirname(dir)) {
    const file = join(dir, "package.json");
    if (existsSync(file)) {
      try {
        if ((JSON.parse(readFileSync(file, "utf8")) as { name?: unknown }).name === packageName) return dir;
      } catch {
        // Another package.json on the way up; keep looking.
      }
    }
    if (dirname(dir) === dir) return undefined;
  }
}

/** The files of examples/hcl, from the standalone executable or the package. */
export function hclExample(): ExampleFile[] {
  const standalone = standaloneExecutable();
  const root = standalone ? undefined : packageRoot();
  return HCL_EXAMPLE_FILES.map((name) => {
    const path = `examples/hcl/${name}`;
    if (standalone) {
      const data = standalone.asset(path);
      if (!data) throw new ExampleError(`the executable carries no ${path}: download it again`);
      return { name, text: data.toString("utf8") };
    }
    const file = root && join(root, path);
    if (!file || !existsSync(file))
      throw new ExampleError(`${path} is missing from the ${packageName} package: install it again`);
    return { name, text: readFileSync(file, "utf8") };
  });
}

/**
 * Writes the HCL example into `dir` (created when missing). Refuses to replace a file that is
 * there, before writing anything: a person's own main.tf must never be overwritten by an example.
 */
export function writeHclExample(dir: string): string[] {
  const target = resolve(dir);
  const files = hclExample();
  const present = files.map((f) => join(target, f.name)).filter((f) => existsSync(f));
  if (present.length > 0)
    throw new ExampleError(
      `${present.join(", ")} already ${present.length === 1 ? "exists" : "exist"}: choose an empty or new folder`,
    );
  let path = target;
  try {
    mkdirSync(target, { recursive: true });
    for (const f of files) {
      path = join(target, f.name);
      writeFileSync(path, f.text, { flag: "wx" });
    }
  } catch (err) {
    const why = path === target ? folderProblem(err) : fsReason(err);
    throw new ExampleError(
      `<dir> ${dir}: cannot ${path === target ? "create the folder" : "write"} ${path}: ${why}`,
    );
  }
  return files.map((f) => join(target, f.name));
}

/** Registers `gpurental example`. */
export function register(program: Command): void {
  program
    .command("example")
    .description(
      "Write an example configuration into a folder: hcl, the plain Terraform one (examples/hcl) that `demo --hcl` runs",
    )
    .argument("<name>", "the example: hcl")
    .argument("<dir>", "the folder to write it into (created if missing; existing files are never replaced)")
    .action((name: string, dir: string, _opts: unknown, cmd: Command) => {
      if (name !== "hcl")
        cmd.error(`error: unknown example "${name}"; the examples are: hcl`, { exitCode: 1 });
      try {
        const written = writeHclExample(dir);
        printOut(
          `Wrote ${written.length} files of examples/hcl into ${resolve(dir)}:\n${written.map((f) => `  ${f}\n`).join("")}` +
            "With GPURENTAL_BASE_URL and GPURENTAL_TOKEN set: terraform init, plan, apply, destroy there.\n",
        );
      } catch (err) {
        if (!(err instanceof ExampleError) && !isFsError(err)) throw err;
        printErr(`gpurental example: ${err.message}\n`);
        process.exitCode = 1;
      }
    });
}

function isFsError(err: unknown): err is NodeJS.ErrnoException {
  return err instanceof Error && typeof (err as NodeJS.ErrnoException).code === "string";
}
