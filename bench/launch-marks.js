// Preloaded into every provider process by bench/launches.js (`NODE_OPTIONS=--require <this>`),
// for both the npm provider and the standalone executable: notes when each step of a launch
// happens, with the wall clock and the process's CPU time (user + system, all threads) at that
// moment, and appends them at exit as one JSON line to $GPURENTAL_BENCH_MARKS. Nothing of the
// provider is changed: the steps are seen from the Node.js modules the provider calls.
//
//   compile <file> / run <file>   the launcher's vm.Script (code cache in or not) and the module's
//                                 top level (provider.js, provider-transport.js, provider-impl.js)
//   key pair, sign                 the launch certificate (node:crypto)
//   handshake                      the first write on stdout
//   accept, tls                    the host's connection accepted, and its TLS handshake done
//   rpc <name>                     each call into the provider service (provider-impl.js)
//   http <method> <path>           each API request (undici's diagnostics channels)
//   fs <op> <file>                 file operations on the journal, the state and the code cache
//   exit                           the process's 'exit' event
// With GPURENTAL_BENCH_MARKS_EXIT_ONLY set, only the CPU time at exit is noted.
// Node's own start-up milestones (performance.nodeTiming) are added at exit.
"use strict";

const out = process.env.GPURENTAL_BENCH_MARKS;
if (out && process.env.GPURENTAL_BENCH_MARKS_EXIT_ONLY) exitOnly(out);
else if (out) install(out);

/** Only the process's CPU time at exit: what a quiet run counts, at no cost to the launch. */
function exitOnly(out) {
  process.on("exit", () => {
    const u = process.cpuUsage();
    const line = {
      pid: process.pid,
      timeOrigin: Date.now(),
      marks: [{ what: "exit", cpu: (u.user + u.system) / 1000 }],
    };
    require("node:fs").appendFileSync(out, `${JSON.stringify(line)}\n`);
  });
}

function install(out) {
  const { performance } = require("node:perf_hooks");
  const marks = [];
  const cpu0 = process.cpuUsage();
  const now = () => performance.timeOrigin + performance.now();
  const mark = (what, extra) => {
    const u = process.cpuUsage();
    marks.push({ what, t: now(), cpu: (u.user + u.system) / 1000, ...extra });
  };
  // CPU time from exec to here (node's own start), then this file's own cost is the next mark's.
  marks.push({ what: "preload", t: now(), cpu: (cpu0.user + cpu0.system) / 1000 });
  const short = (file) => String(file ?? "").replace(/^.*\//, "");

  // The launcher compiles each bundle with vm.Script (a code cache or not) and runs its top level.
  const vm = require("node:vm");
  const Script = vm.Script;
  vm.Script = class extends Script {
    constructor(code, options) {
      const name = short(options?.filename);
      mark(`compile ${name}`, { phase: "start", cached: Boolean(options?.cachedData) });
      super(code, options);
      mark(`compile ${name}`, { phase: "end", rejected: this.cachedDataRejected === true });
      this.benchName = name;
    }
    runInThisContext(...args) {
      const fn = super.runInThisContext(...args);
      const name = this.benchName;
      if (typeof fn !== "function") return fn;
      return function (...a) {
        mark(`run ${name}`, { phase: "start" });
        try {
          return fn.apply(this, a);
        } finally {
          mark(`run ${name}`, { phase: "end" });
        }
      };
    }
  };

  const crypto = require("node:crypto");
  for (const [fn, label] of [
    ["generateKeyPairSync", "key pair"],
    ["sign", "sign"],
  ]) {
    const real = crypto[fn];
    crypto[fn] = function (...a) {
      mark(label, { phase: "start" });
      try {
        return real.apply(this, a);
      } finally {
        mark(label, { phase: "end" });
      }
    };
  }

  const write = process.stdout.write;
  let handshake = false;
  process.stdout.write = function (...a) {
    if (!handshake) {
      handshake = true;
      mark("handshake");
    }
    return write.apply(this, a);
  };

  const net = require("node:net");
  const emit = net.Server.prototype.emit;
  net.Server.prototype.emit = function (event, ...a) {
    if (event === "connection") mark("accept", { server: this.constructor.name });
    else if (event === "secureConnection") mark("tls");
    return emit.call(this, event, ...a);
  };

  // The provider's service: each method timed when provider-impl.js hands it to the transport.
  const LOAD_BUNDLE_KEY = Symbol.for("gpurental.provider.loadBundle");
  let loadBundle;
  Object.defineProperty(globalThis, LOAD_BUNDLE_KEY, {
    configurable: true,
    get: () => loadBundle,
    set: (fn) => {
      loadBundle = (file, ...rest) => {
        const exports = fn(file, ...rest);
        if (short(file) !== "provider-impl.js" || typeof exports.createService !== "function") return exports;
        // The bundle's exports are getters: the timed service is given through an object above them.
        const create = exports.createService;
        return Object.create(exports, {
          createService: { value: (...b) => timedService(create(...b)), enumerable: true },
        });
      };
    },
  });
  function timedService(service) {
    return new Proxy(service, {
      get(target, key, receiver) {
        const value = Reflect.get(target, key, receiver);
        if (typeof value !== "function" || typeof key !== "string" || !/^[A-Z]/.test(key)) return value;
        return async (...a) => {
          mark(`rpc ${key}`, { phase: "start" });
          try {
            return await value.apply(target, a);
          } finally {
            mark(`rpc ${key}`, { phase: "end" });
          }
        };
      },
    });
  }

  // API requests, from undici's diagnostics channels (the provider bundles undici).
  const dc = require("node:diagnostics_channel");
  const requests = new WeakMap();
  dc.subscribe("undici:request:create", ({ request }) => {
    const what = `http ${request.method} ${String(request.path).replace(/\?.*/, "")}`;
    requests.set(request, what);
    mark(what, { phase: "start" });
  });
  dc.subscribe("undici:client:connected", () => mark("http connected"));
  dc.subscribe("undici:request:trailers", ({ request }) =>
    mark(requests.get(request) ?? "http", { phase: "end" }),
  );

  // The journal, the state files it reads and the code cache.
  const fs = require("node:fs");
  const WATCHED =
    /gpurental-journal|\.tfstate|[\\/]\.terraform[\\/](environment|terraform\.tfstate)|\.v8cache/;
  for (const op of [
    "readFileSync",
    "openSync",
    "statSync",
    "lstatSync",
    "existsSync",
    "readdirSync",
    "writeFileSync",
    "appendFileSync",
    "mkdirSync",
    "renameSync",
    "rmSync",
  ]) {
    const real = fs[op];
    fs[op] = function (p, ...a) {
      if (typeof p !== "string" || !WATCHED.test(p)) return real.call(this, p, ...a);
      mark(`fs ${op} ${short(p)}`, { phase: "start" });
      try {
        return real.call(this, p, ...a);
      } finally {
        mark(`fs ${op} ${short(p)}`, { phase: "end" });
      }
    };
  }

  mark("preload end");
  process.on("exit", (code) => {
    mark("exit", { code });
    const t = performance.nodeTiming;
    const line = {
      pid: process.pid,
      ppid: process.ppid,
      node: process.version,
      timeOrigin: performance.timeOrigin,
      nodeTiming: {
        nodeStart: t.nodeStart,
        v8Start: t.v8Start,
        environment: t.environment,
        bootstrapComplete: t.bootstrapComplete,
        loopStart: t.loopStart,
      },
      marks,
    };
    fs.appendFileSync(out, `${JSON.stringify(line)}\n`);
  });
}
