import { createHash } from "node:crypto";
import {
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import Module, { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { basename, dirname, isAbsolute, join } from "node:path";
import { Script } from "node:vm";
import { redactText } from "../api/redact";
import { terminalText } from "../display";
import { privateRunDir, trustedAncestors } from "../resident/resident";
import { bundleId } from "./bundle-id";

// Loads the provider bundle with a V8 code cache. Compiling the ~700 KB bundle is the largest
// part of the provider's start-up, and Terraform starts the provider 2-5 times per command; with
// the cache the compile step mostly turns into deserialization (about half the load time here).
//
// Node 20 has no module.enableCompileCache (22.1+), so this does what that does for one file: the
// bundle is compiled through vm.Script with cachedData, and when there was no usable cache a fresh
// one is written shortly after start, once the functions used at start-up have been compiled.
// The cache lives outside the provider package (whose files are hashed into the lock file), in a
// per-user cache directory that must be private to the user, as v8-compile-cache does, and follows
// XDG_CACHE_HOME and HOME as the standalone runtime does (src/executable/compact): cached code is
// run as code, so the directory is trusted by the resident directory's rule (a real directory, the
// user's alone, no link of another user's on the way). V8 rejects a cache of another V8 version,
// other flags or a source of another length, and nothing else: a cache is therefore named by its
// bundle's content (bundleId), so that it is only ever used for the code it was made from, even
// when an upgrade leaves a bundle of the same size and time in the same place (npm extracts every
// file with one fixed time). It is no defence against the user's own processes, which can write
// the directory, as they can write the provider's files.
// GPURENTAL_PROVIDER_CODE_CACHE=off disables it; GPURENTAL_PROVIDER_CODE_CACHE_DIR moves it.
// GPURENTAL_PROVIDER_CPU_PROF=<dir> writes a CPU profile of the process there (startCpuProfile).

/** Exports of the provider bundle. */
export interface ProviderBundle {
  /** Runs the provider executable with the given arguments. */
  main(argv: readonly string[], opts?: import("./main").MainOptions): Promise<void>;
}

/** How long after start the cache is written if the process has not exited by then. */
const WRITE_CACHE_AFTER_MS = 1500;

/**
 * Caches of other bundle locations are removed once this old or beyond the newest MAX_CACHES:
 * every install location has its own, and throwaway installs (test mirrors) would otherwise pile
 * up at about 1.5 MB each. A removed cache that was still in use is rewritten by its next launch.
 */
const STALE_CACHE_MS = 7 * 24 * 3600 * 1000;
const MAX_CACHES = 32;

/**
 * The code cache directories to try, in order, none when caching is off:
 * GPURENTAL_PROVIDER_CODE_CACHE_DIR alone when set; else `$XDG_CACHE_HOME/gpurental/code-cache`
 * (an absolute XDG_CACHE_HOME only), else `~/.cache/gpurental/code-cache`, then
 * `$TMPDIR/gpurental-provider-cache-<uid>`.
 */
export function codeCacheDirs(env: NodeJS.ProcessEnv = process.env): string[] {
  if ((env.GPURENTAL_PROVIDER_CODE_CACHE ?? "").toLowerCase() === "off") return [];
  if (env.GPURENTAL_PROVIDER_CODE_CACHE_DIR) return [env.GPURENTAL_PROVIDER_CODE_CACHE_DIR];
  const dirs: string[] = [];
  const xdg = env.XDG_CACHE_HOME;
  if (xdg && isAbsolute(xdg)) dirs.push(join(xdg, "gpurental", "code-cache"));
  else if (env.HOME && isAbsolute(env.HOME)) dirs.push(join(env.HOME, ".cache", "gpurental", "code-cache"));
  const uid = typeof process.getuid === "function" ? process.getuid() : "user";
  const tmp = env.TMPDIR && isAbsolute(env.TMPDIR) ? env.TMPDIR : tmpdir();
  dirs.push(join(tmp, `gpurental-provider-cache-${uid}`));
  return dirs;
}

/**
 * Whether `dir` can hold cached code: created if needed (mode 0700), but only below a part of its
 * path that already passes the rule, so nothing is made in another user's home (a HOME kept across
 * sudo) or through another user's link; then privateRunDir's rule.
 */
export function privateCacheDir(dir: string): boolean {
  try {
    const uid = typeof process.getuid === "function" ? process.getuid() : lstatSync(dir).uid;
    let existing = dir;
    for (;;) {
      try {
        lstatSync(existing);
        break;
      } catch {
        const up = dirname(existing);
        if (up === existing) return false;
        existing = up;
      }
    }
    // The deepest existing part and every directory above it (the check covers a path's parents).
    if (existing !== dir && !trustedAncestors(join(existing, "x"), uid)) return false;
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    return privateRunDir(dir);
  } catch {
    return false;
  }
}

/** Loads a CommonJS bundle, using and refreshing a V8 code cache where possible. */
export function loadBundle(file: string, env: NodeJS.ProcessEnv = process.env): ProviderBundle {
  // The build writes every bundle in ASCII (markBundle refuses anything else): latin1 reads it as
  // UTF-8 would, without decoding, about 0.7 ms less for the largest bundle.
  return loadBundleSource(readFileSync(file, "latin1"), file, env);
}

/**
 * Loads a CommonJS bundle from its text, as if it were `file`; its content id names its code
 * cache. The standalone executable passes the bundles it carries, named as files beside itself:
 * its code cache is made on the machine that runs it, since a cache made into the executable at
 * build time would differ between two builds of one commit.
 */
export function loadBundleSource(
  source: string,
  file: string,
  env: NodeJS.ProcessEnv = process.env,
): ProviderBundle {
  // One cache per bundle location; rebuilding or reinstalling replaces it (see prune below).
  const prefix = `${basename(file, ".js")}-${createHash("sha256").update(dirname(file)).digest("hex").slice(0, 12)}-`;
  const cacheName = `${prefix}${process.version}-${bundleId(source)}.v8cache`;
  const dir = codeCacheDirs(env).find(privateCacheDir);
  const cacheFile = dir ? join(dir, cacheName) : undefined;
  let cachedData: Buffer | undefined;
  if (cacheFile) {
    try {
      cachedData = readFileSync(cacheFile);
    } catch {
      cachedData = undefined;
    }
  }
  const script = new Script(Module.wrap(source), { filename: file, cachedData });
  const moduleObject = { exports: {} as ProviderBundle, filename: file, id: file, loaded: false };
  const fn = script.runInThisContext() as (...args: unknown[]) => void;
  fn.call(
    moduleObject.exports,
    moduleObject.exports,
    builtinRequire(file),
    moduleObject,
    file,
    dirname(file),
  );
  moduleObject.loaded = true;

  if (cacheFile && (cachedData === undefined || script.cachedDataRejected)) {
    // Most provider processes live well under a second (validate's first process only serves
    // GetProviderSchema), so the cache is written at exit, or after a while for long ones.
    let written = false;
    const write = () => {
      if (written) return;
      written = true;
      // A cache made after a V8 flag changed carries the new flags, and every process started
      // without them would reject it: the next process that loads the bundle writes it instead.
      if ((globalThis as Record<symbol, unknown>)[V8_FLAGS_CHANGED_KEY]) return;
      try {
        const tmp = `${cacheFile}.${process.pid}.tmp`;
        writeFileSync(tmp, script.createCachedData(), { mode: 0o600 });
        renameSync(tmp, cacheFile);
        pruneCaches(dirname(cacheFile), prefix, cacheName);
      } catch {
        // A cache is an optimisation; a read-only or full disk must not affect the provider.
      }
    };
    process.once("exit", write);
    setTimeout(write, WRITE_CACHE_AFTER_MS).unref();
    pendingWrites.add(write);
  }
  return moduleObject.exports;
}

/**
 * The require a bundle gets: Node's built-in modules only. A bundle carries every package it uses;
 * a require of anything else (pg's optional `pg-native`, which NODE_PG_FORCE_NATIVE asks for) would
 * run whatever file a search through the folders above the bundle finds, and for a runtime kept in
 * the temp directory that includes folders any user can create (`/tmp/node_modules`).
 */
function builtinRequire(file: string): NodeJS.Require {
  const real = createRequire(file);
  const only = (id: string): unknown => {
    if (!Module.isBuiltin(id)) {
      throw Object.assign(new Error(`Cannot find module '${id}': the provider loads only what it carries`), {
        code: "MODULE_NOT_FOUND",
      });
    }
    return real(id);
  };
  return Object.assign(only, {
    resolve: real.resolve,
    cache: real.cache,
    main: real.main,
    extensions: real.extensions,
  }) as NodeJS.Require;
}

/** Removes older caches of this bundle location, and stale ones of other locations. */
function pruneCaches(dir: string, prefix: string, keep: string): void {
  const others: { file: string; mtimeMs: number }[] = [];
  for (const name of readdirSync(dir)) {
    if (name === keep || !name.endsWith(".v8cache")) continue;
    const file = join(dir, name);
    if (name.startsWith(prefix)) rmSync(file, { force: true });
    else others.push({ file, mtimeMs: statSync(file).mtimeMs });
  }
  others.sort((a, b) => b.mtimeMs - a.mtimeMs);
  const now = Date.now();
  others.forEach(({ file, mtimeMs }, i) => {
    if (i >= MAX_CACHES - 1 || now - mtimeMs > STALE_CACHE_MS) rmSync(file, { force: true });
  });
}

/**
 * Set on the global object by code that changes V8's flags at run time (scripts/build/undici-request.js
 * in the production bundle); the launcher then writes no code cache.
 */
export const V8_FLAGS_CHANGED_KEY = Symbol.for("gpurental.provider.v8FlagsChanged");

/**
 * Set on the global object by the launcher: writes the code caches this process still owes, now.
 * Code about to change V8's flags calls it first, so that a process that loads every bundle and
 * then changes them (the command's provider process, src/resident/README.md) still leaves caches
 * for the next one, with everything compiled until then.
 */
export const WRITE_CODE_CACHES_KEY = Symbol.for("gpurental.provider.writeCodeCaches");

/** The code caches still to write in this process (see WRITE_CODE_CACHES_KEY). */
const pendingWrites = new Set<() => void>();
(globalThis as Record<symbol, unknown>)[WRITE_CODE_CACHES_KEY] = () => {
  for (const write of pendingWrites) write();
  pendingWrites.clear();
};

/**
 * The global under which the launcher offers loadBundle to the bundle itself, so that the
 * production bundle loads provider-transport.js and provider-impl.js (after the handshake) through
 * the code cache too.
 */
export const LOAD_BUNDLE_KEY = Symbol.for("gpurental.provider.loadBundle");

/**
 * Starts V8's CPU profiler when GPURENTAL_PROVIDER_CPU_PROF names a directory, and writes the
 * profile there at exit (`<pid>.cpuprofile`, for Chrome's DevTools or `bench/profile-summary.js`).
 * Terraform starts the provider itself and node refuses `--cpu-prof` in NODE_OPTIONS, so this is
 * how a provider process under a real Terraform command is profiled.
 */
export function startCpuProfile(env: NodeJS.ProcessEnv = process.env): void {
  const dir = env.GPURENTAL_PROVIDER_CPU_PROF;
  if (!dir) return;
  // Loaded only here: the inspector module is not part of a normal launch.
  const { Session } = require("node:inspector") as typeof import("node:inspector");
  const session = new Session();
  session.connect();
  // Sessions in the same thread answer synchronously, which is what lets the exit hook write.
  session.post("Profiler.enable");
  session.post("Profiler.setSamplingInterval", { interval: 200 });
  session.post("Profiler.start");
  process.once("exit", () => {
    session.post("Profiler.stop", (err, result) => {
      if (err) return;
      try {
        mkdirSync(dir, { recursive: true });
        writeFileSync(join(dir, `${process.pid}.cpuprofile`), JSON.stringify(result.profile));
      } catch {
        // A profile is a diagnostic aid; failing to write it must not change the exit.
      }
    });
  });
}

/**
 * What a provider that failed unexpectedly says on stderr: the stack, with no credential and
 * nothing a terminal obeys in what it quotes.
 */
export function failureText(err: unknown): string {
  return terminalText(redactText(err instanceof Error ? (err.stack ?? err.message) : String(err)), {
    multiline: true,
  });
}

/** Loads the bundle next to the executable and runs it; the body of the provider executable. */
export function launch(bundleFile: string, argv: readonly string[] = process.argv.slice(2)): void {
  startCpuProfile();
  (globalThis as Record<symbol, unknown>)[LOAD_BUNDLE_KEY] = (file: string) => loadBundle(file);
  loadBundle(bundleFile)
    .main(argv)
    .catch((err: unknown) => {
      process.stderr.write(`terraform-provider-gpurental: ${failureText(err)}\n`);
      process.exitCode = 1;
    });
}
