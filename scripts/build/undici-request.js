"use strict";
// undici's `request(url, options)` as the provider bundle loads it (scripts/build/bundle-provider.js,
// LAZY_PACKAGES): the same function undici's index exports, built from the same parts, without
// the rest of the index. The index also loads fetch, WebSocket, EventSource, the HTTP cache,
// the mock agents and every interceptor, which the API client never uses: that was about 60% of
// the instructions undici cost a provider process that makes requests (Terraform starts one per
// plan, apply and destroy). The client in src/api/client.ts imports `request` from "undici" as
// usual, and outside the production bundle (tsc, tests) it gets undici's index itself.
//
// What undici's index does for request(): api.request with the dispatcher as `this`, the origin
// and path taken from the URL, and the global Agent when the caller gives no dispatcher.
//
// undici's public API has no entry point lighter than its index, so this requires its internals
// (undici/lib/...), which any release may move or change: read in undici 7.30.2, the version
// package.json pins exactly. test/package/undici-pin.test.ts fails when the pin, the lock file or
// the installed undici say another, or a module required here is gone. To move undici: read its
// index.js's request() and the modules required here again, adjust this file, then change the pin
// and the version in this paragraph together.
//
// undici parses HTTP/1.1 with llhttp compiled to WebAssembly, compiled in every process on its
// first connection. V8 compiles it with Liftoff, then recompiles the parser's large state machine
// with TurboFan once it is called often enough, which a provider process making 25 requests
// reaches: about 370 million instructions, a third of a plan's third provider process, for a few
// milliseconds saved on parsing. `--liftoff-only` keeps the first compilation. It is set here,
// just before undici is loaded, and not at launch: V8 flags are part of the check of every code
// cache, and Node's own modules loaded after a change would no longer use theirs. For the same
// reason the launcher writes no code cache after this (V8_FLAGS_CHANGED_KEY in
// src/executable/code-cache-loader.ts): a cache made now would be rejected by every process that never
// changes the flag, so the next process writes it.
// The caches still owed are written first (WRITE_CODE_CACHES_KEY), while they are still good.
globalThis[Symbol.for("gpurental.provider.writeCodeCaches")]?.();
globalThis[Symbol.for("gpurental.provider.v8FlagsChanged")] = true;
require("node:v8").setFlagsFromString("--liftoff-only");

const api = require("undici/lib/api");
const Dispatcher = require("undici/lib/dispatcher/dispatcher");
const { getGlobalDispatcher } = require("undici/lib/global");
const { InvalidArgumentError } = require("undici/lib/core/errors");
const util = require("undici/lib/core/util");

// As the index does: the request API on every dispatcher (Agent, Pool, Client).
Object.assign(Dispatcher.prototype, api);

/** undici's `request(url, options)`; `options.path` and a callback are not supported here. */
function request(url, opts, ...rest) {
  if (opts != null && typeof opts !== "object") throw new InvalidArgumentError("invalid opts");
  if (opts?.path != null || rest.length > 0) {
    throw new InvalidArgumentError("the provider bundle's request() takes a URL and options only");
  }
  const options = opts ?? {};
  const parsed = util.parseURL(url);
  const { agent, dispatcher = getGlobalDispatcher() } = options;
  if (agent) throw new InvalidArgumentError("unsupported opts.agent. Did you mean opts.client?");
  return api.request.call(dispatcher, {
    ...options,
    origin: parsed.origin,
    path: parsed.search ? `${parsed.pathname}${parsed.search}` : parsed.pathname,
    method: options.method || (options.body ? "PUT" : "GET"),
  });
}

module.exports = {
  request,
  // Loaded only by the clients that need them (HTTPS, a proxy): plain HTTP pays nothing for them.
  get Agent() {
    return require("undici/lib/dispatcher/agent");
  },
  get ProxyAgent() {
    return require("undici/lib/dispatcher/proxy-agent");
  },
};
