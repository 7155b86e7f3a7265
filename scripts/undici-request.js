"use strict";
// undici's `request(url, options)` as the provider bundle loads it (scripts/bundle-provider.js,
// LAZY_PACKAGES): the same function undici's index exports, built from the same parts, without
// the rest of the index. The index also loads fetch, WebSocket, EventSource, the HTTP cache,
// the mock agents and every interceptor, which the API client never uses: that was about 60% of
// the instructions undici cost a provider process that makes requests (Terraform starts one per
// plan, apply and destroy). The client in src/api/client.ts imports `request` from "undici" as
// usual, and outside the production bundle (tsc, tests) it gets undici's index itself.
//
// What undici's index does for request(): api.request with the dispatcher as `this`, the origin
// and path taken from the URL, and the global Agent when the caller gives no dispatcher.

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

module.exports = { request };
