/**
 * Synchronous calls to the PostgreSQL client, which runs in a worker thread (worker.ts): the
 * journal is synchronous for its callers (a deploy is never sent before its record is committed,
 * and the resources read it in the middle of synchronous code), and PostgreSQL's clients are not.
 * The calling thread posts a request and sleeps on a shared counter (Atomics.wait) until the
 * worker answers or the deadline passes, as the file store's lock sleeps; no event of the calling
 * thread runs meanwhile. The worker starts on the first call, so a process that never uses the
 * PostgreSQL store never loads its client.
 *
 * synckit does the same for files on disk; the worker here must also start from a bundle carried
 * inside the standalone executable (no file to point at), hence this small bridge of our own.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { MessageChannel, type MessagePort, receiveMessageOnPort, Worker } from "node:worker_threads";
import type { Answer, PgTarget, ReadAnswer, Request, WorkerSetup } from "./protocol";

/** The worker's bundle beside the provider's (scripts/build/bundle-provider.js writes it). */
export const WORKER_BUNDLE = "provider-journal-pg.js";

/**
 * Set by the standalone executable (src/executable/sea.ts): the source of one of its bundles by
 * name, since none of them is a file there.
 */
export const BUNDLE_SOURCE_KEY = Symbol.for("gpurental.provider.bundleSource");

/** A call that failed: why, and whether the database was reached at all. */
export class PgCallError extends Error {
  constructor(
    message: string,
    readonly unreachable: boolean,
  ) {
    super(message);
    this.name = "PgCallError";
  }
}

/** How the worker is started: from a file, or from source text. */
function workerEntry(): { file: string } | { source: string } {
  const fromExecutable = (globalThis as Record<symbol, unknown>)[BUNDLE_SOURCE_KEY];
  if (typeof fromExecutable === "function") {
    return { source: (fromExecutable as (name: string) => string)(WORKER_BUNDLE) };
  }
  // The provider's bundle (the npm package, a mirror), then tsc's output (the gpurental command).
  for (const file of [join(__dirname, WORKER_BUNDLE), join(__dirname, "worker.js")]) {
    if (existsSync(file)) return { file };
  }
  // The TypeScript sources (tests): bundled in memory with esbuild, a development dependency.
  const source = join(__dirname, "worker.ts");
  if (existsSync(source)) {
    const name = "esbuild";
    const esbuild = require(name) as typeof import("esbuild");
    const out = esbuild.buildSync({
      entryPoints: [source],
      bundle: true,
      platform: "node",
      target: "node20",
      format: "cjs",
      write: false,
      logLevel: "silent",
    });
    return { source: out.outputFiles[0]!.text };
  }
  throw new PgCallError(
    `this build of the provider carries no PostgreSQL client (${WORKER_BUNDLE} is missing beside it)`,
    false,
  );
}

/** What the client's module offers the provider's own thread. */
export interface ClientModule {
  primeRead(target: PgTarget, key: string): Promise<ReadAnswer | null>;
}

/** The launcher's loader of the provider's bundles, with its V8 code cache (src/executable/code-cache-loader.ts). */
const LOAD_BUNDLE_KEY = Symbol.for("gpurental.provider.loadBundle");

/**
 * The client's module on the calling thread: the worker's bundle through the launcher (its code
 * cache; in the standalone executable, its asset), else tsc's output or the TypeScript source.
 */
export function loadClientModule(): ClientModule {
  const beside = join(__dirname, WORKER_BUNDLE);
  const load = (globalThis as Record<symbol, unknown>)[LOAD_BUNDLE_KEY];
  const fromExecutable = typeof (globalThis as Record<symbol, unknown>)[BUNDLE_SOURCE_KEY] === "function";
  if (typeof load === "function" && (fromExecutable || existsSync(beside))) {
    return (load as (file: string) => ClientModule)(beside);
  }
  // A computed path, so that no bundler takes the client into the provider's bundle.
  for (const file of [beside, join(__dirname, "worker.js"), join(__dirname, "worker.ts")]) {
    if (existsSync(file)) return require(file) as ClientModule;
  }
  throw new PgCallError(
    `this build of the provider carries no PostgreSQL client (${WORKER_BUNDLE} is missing beside it)`,
    false,
  );
}

/** The worker and the means to wait for its answers. */
class Bridge {
  private worker: Worker | null = null;
  private port: MessagePort | null = null;
  private flag: Int32Array | null = null;
  private failure: string | null = null;
  private next = 1;

  private start(): void {
    const { port1, port2 } = new MessageChannel();
    const signal = new SharedArrayBuffer(4);
    const entry = workerEntry();
    const setup: WorkerSetup = { port: port2, signal };
    const worker = new Worker("source" in entry ? entry.source : entry.file, {
      eval: "source" in entry,
      workerData: setup,
      transferList: [port2],
      // Its own empty environment: pg reads PG* variables of its process, and a resident provider
      // process serves launches with other environments. Each request carries its launch's.
      env: {},
      // Never forwarded to this process's stdout, the handshake channel (the worker prints nothing).
      stdout: true,
      stderr: true,
    });
    worker.unref();
    worker.on("error", (err) => {
      this.failure = `the PostgreSQL client stopped: ${err.message}`;
    });
    worker.on("exit", () => {
      if (this.worker === worker) {
        this.worker = null;
        this.failure ??= "the PostgreSQL client stopped";
      }
    });
    this.worker = worker;
    this.port = port1;
    this.flag = new Int32Array(signal);
    this.failure = null;
  }

  /**
   * Sends `req` and waits for its answer until `timeoutMs` has passed (and `backstopMs` more, for
   * the worker's own answer saying why); throws PgCallError.
   */
  call<T>(req: Request, timeoutMs: number, backstopMs = 2_000): T {
    if (!this.worker) this.start();
    const port = this.port!;
    const flag = this.flag!;
    const id = this.next++;
    const started = Date.now();
    // The worker gives up first (its deadline), so that its answer says why; this is the backstop.
    const backstop = started + timeoutMs + backstopMs;
    port.postMessage({ id, deadline: started + timeoutMs, req });
    for (;;) {
      const seen = Atomics.load(flag, 0);
      for (let m = receiveMessageOnPort(port); m; m = receiveMessageOnPort(port)) {
        const a = m.message as Answer;
        // An answer to a call that was given up earlier is dropped.
        if (a.id !== id) continue;
        if (a.ok) return a.value as T;
        throw new PgCallError(a.message, a.unreachable);
      }
      if (this.failure && !this.worker) {
        const why = this.failure;
        this.failure = null;
        throw new PgCallError(why, false);
      }
      const left = backstop - Date.now();
      if (left <= 0) {
        // Whatever it was doing is dropped: a write's transaction ends without a commit.
        port.postMessage({ abandon: true });
        throw new PgCallError(
          `no answer within ${Math.round((Date.now() - started) / 1000)} s`,
          req.kind !== "commit",
        );
      }
      Atomics.wait(flag, 0, seen, Math.min(left, 1_000));
    }
  }
}

let shared: Bridge | undefined;

/** The process's bridge to the PostgreSQL client (one worker, started on first use). */
export function pgBridge(): Bridge {
  shared ??= new Bridge();
  return shared;
}

export type { Bridge };
