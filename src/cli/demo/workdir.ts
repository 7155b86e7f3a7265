/**
 * Where `gpurental demo` works: its work folder (a temp folder removed on every way out, or a
 * --work-dir that is kept), the package it comes from, and the example app set up in the folder.
 */
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fsReason } from "../../tfstate/sources";
import { packageName } from "../../version";
import { DemoError } from "./output";

/** Finds the package root (the folder with our package.json), from dist/cli/demo or src/cli/demo alike. */
export function packageRoot(): string {
  let dir = __dirname;
  for (;;) {
    const file = join(dir, "package.json");
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, "utf8")) as { name?: unknown };
      if (pkg.name === packageName) return dir;
    }
    const up = dirname(dir);
    if (up === dir) throw new DemoError("cannot find the gpurental package folder");
    dir = up;
  }
}

/** The demo's work folder. */
export interface WorkDir {
  dir: string;
  /** A --work-dir: kept afterwards. */
  kept: boolean;
  /** Removes a temp work folder (and the exit hook that would remove it otherwise). */
  remove(): void;
}

/** Opens the work folder: `workDir` (kept), else a new temp folder under `tempDir`. */
export function openWorkDir(workDir: string | undefined, tempDir: string | undefined): WorkDir {
  const kept = workDir !== undefined;
  const dir = kept ? resolve(workDir) : mkdtempSync(join(tempDir ?? tmpdir(), "gpurental-demo-"));
  try {
    mkdirSync(dir, { recursive: true });
  } catch (err) {
    throw new DemoError(`--work-dir ${workDir}: cannot create the folder ${dir}: ${folderProblem(err)}`);
  }
  // The last resort for a temp folder: an exit that skips the demo's own cleanup (process.exit elsewhere).
  const removeOnExit = () => rmSync(dir, { recursive: true, force: true });
  if (!kept) process.once("exit", removeOnExit);
  return {
    dir,
    kept,
    remove() {
      rmSync(dir, { recursive: true, force: true });
      process.removeListener("exit", removeOnExit);
    },
  };
}

/** Sets up the example app `appName` (examples/<appName>) in `appDir`: bundled, with its cdktf.json. */
export async function prepareApp(root: string, appName: string, appDir: string): Promise<void> {
  mkdirSync(appDir, { recursive: true });
  // In a clone the example is bundled from its sources; an installed package carries it built
  // (dist/demo/<app>.js, written by `npm run build`) and has no esbuild.
  const exampleSource = join(root, "examples", appName, "main.ts");
  const prebuilt = join(root, "dist", "demo", `${appName}.js`);
  try {
    if (existsSync(exampleSource)) {
      const esbuild = await import("esbuild");
      await esbuild.build({
        entryPoints: [exampleSource],
        outfile: join(appDir, "app.js"),
        bundle: true,
        platform: "node",
        target: "node20",
        packages: "external",
        logLevel: "silent",
      });
    } else {
      copyFileSync(prebuilt, join(appDir, "app.js"));
    }
  } catch (err) {
    throw new DemoError(
      `cannot bundle examples/${appName}: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  writeFileSync(
    join(appDir, "cdktf.json"),
    `${JSON.stringify(
      {
        language: "typescript",
        app: "node app.js",
        output: "cdktf.out",
        projectId: "gpurental-demo",
        sendCrashReports: false,
        terraformProviders: [],
        terraformModules: [],
        context: {},
      },
      null,
      2,
    )}\n`,
  );
}

/** Why a folder could not be made: a file in its place said so, any other reason as the system gives it. */
export function folderProblem(err: unknown): string {
  return (err as NodeJS.ErrnoException).code === "EEXIST"
    ? "a file that is not a folder is in its place (EEXIST)"
    : fsReason(err);
}
