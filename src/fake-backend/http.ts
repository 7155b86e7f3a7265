import { randomUUID } from "node:crypto";
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from "fastify";
import {
  answerOnSocket,
  answerUnknownExpectations,
  clientErrorHandler,
  type RequestTimeouts,
  serverOptions,
} from "./client-errors";
import type { Caller, Engine } from "./engine";
import { iso } from "./engine";
import { ApiFailure, adminRequired, UnreadableBody } from "./errors";
import type { FaultStore } from "./faults";
import {
  createApiKeyBody,
  deployBody,
  inviteBody,
  listInstancesQuery,
  logsQuery,
  offersQuery,
  orderBody,
  parseOr422,
  spendDailyQuery,
  sshKeyBody,
  templatesQuery,
  transactionsQuery,
} from "./validation";

/** Body size limit of every route. */
export const BODY_LIMIT = 1024 * 1024;

/** What the HTTP layer needs from the fake around it. */
export interface HttpContext {
  engine: Engine;
  faults: FaultStore;
  /** Writes the state file when one is configured. */
  persist(): void;
  /** Per-request log line sink; never receives headers or bodies. */
  logger?: (line: string) => void;
  /** Registers the control routes (kept in their own module). */
  registerControl(app: FastifyInstance): void;
  /** Limits on receiving a request; a stalled one is answered 408 REQUEST_TIMEOUT. */
  timeouts: RequestTimeouts;
  /** Serve HTTPS with this certificate and key (PEM) instead of plain HTTP. */
  tls?: { certPem: string; keyPem: string } | undefined;
}

const LOST_RESPONSE = Symbol("lostResponse");
const STARTED = Symbol("started");
const LATE_COMMIT_MS = Symbol("lateCommitMs");
const LANDED = Symbol("landed");
type Marked = FastifyRequest & {
  [LOST_RESPONSE]?: boolean;
  [STARTED]?: bigint;
  /** Set by a late-commit fault: hold the read request this long, then process it regardless. */
  [LATE_COMMIT_MS]?: number;
  /** Tells the held-request register that this request has been processed. */
  [LANDED]?: () => void;
};

function unsupportedMediaType(): ApiFailure {
  return new ApiFailure(
    415,
    "UNSUPPORTED_MEDIA_TYPE",
    "Send the body as JSON with Content-Type: application/json",
  );
}

/** The documented error body; `request_id` repeats the X-Request-Id header. */
export function errorBody(
  req: FastifyRequest,
  code: string,
  message: string,
  extras: Record<string, unknown> = {},
) {
  return { error: { code, message, ...extras, request_id: req.id } };
}

function sendFailure(req: FastifyRequest, reply: FastifyReply, f: ApiFailure): FastifyReply {
  for (const [k, v] of Object.entries(f.headers)) reply.header(k, v);
  return reply.code(f.status).send(errorBody(req, f.code, f.message, f.extras));
}

const STATUS_CODES: Record<number, string> = {
  429: "RATE_LIMITED",
  500: "INTERNAL",
  502: "BAD_GATEWAY",
  503: "SERVICE_UNAVAILABLE",
};

function patternToRegExp(pattern: string): RegExp {
  const escaped = pattern
    .split("/")
    .map((seg) => (seg.startsWith(":") ? "[^/]+" : seg.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")))
    .join("/");
  return new RegExp(`^${escaped}$`);
}

/** Builds the Fastify app serving /v1 and /_control. */
export function buildApp(ctx: HttpContext): FastifyInstance {
  const server = serverOptions(ctx.timeouts);
  // Fastify types an HTTPS instance apart; routes and hooks are the same, so one type serves both.
  const app = Fastify({
    ...(ctx.tls ? { https: { ...server, cert: ctx.tls.certPem, key: ctx.tls.keyPem } } : {}),
    logger: false,
    bodyLimit: BODY_LIMIT,
    genReqId: () => randomUUID(),
    // Let a client's own X-Request-Id show up nowhere: ours is always fresh.
    requestIdHeader: false,
    // Fastify's own 503 while closing is not in the documented shape: onRequest answers it.
    return503OnClosing: false,
    http: server,
    requestTimeout: ctx.timeouts.requestMs,
    clientErrorHandler: clientErrorHandler(ctx.timeouts),
    // Long ids reach the routes and get their own 404; only absurd ones are cut off below.
    routerOptions: { maxParamLength: 1024 },
    frameworkErrors: (err, req, rawReply) => {
      // Fastify types this reply for its own route generics; only code, header and send are used.
      const reply = rawReply as unknown as FastifyReply;
      const path = (req.raw.url ?? "").split("?")[0] ?? "";
      reply.header("x-request-id", req.id);
      if (err.code === "FST_ERR_MAX_PARAM_LENGTH") {
        return reply
          .code(404)
          .send(errorBody(req, "NOT_FOUND", "A path segment is longer than 1024 characters"));
      }
      const message =
        err.code === "FST_ERR_BAD_URL"
          ? `The path ${JSON.stringify(path.slice(0, 200))} is not valid URL encoding`
          : "The request could not be read";
      return reply.code(400).send(errorBody(req, "BAD_REQUEST", message));
    },
  });
  answerUnknownExpectations(app.server);
  let closing = false;
  app.addHook("preClose", async () => {
    closing = true;
  });
  const routes: { method: string; re: RegExp }[] = [];
  app.addHook("onRoute", (r) => {
    const methods = Array.isArray(r.method) ? r.method : [r.method];
    for (const m of methods) routes.push({ method: m, re: patternToRegExp(r.url) });
  });

  // Only JSON bodies; an empty body counts as no body so that POST /stop with a JSON header works.
  // An unreadable body is not refused here: the documented order checks the token, X-Org-Id and
  // the route's permission first, so the refusal travels as the body and the route throws it.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("application/json", { parseAs: "string" }, (_req, body, done) => {
    const text = typeof body === "string" ? body : body.toString("utf8");
    if (text.trim() === "") return done(null, undefined);
    try {
      done(null, JSON.parse(text));
    } catch {
      done(
        null,
        new UnreadableBody(new ApiFailure(400, "INVALID_JSON", "The request body is not valid JSON")),
      );
    }
  });
  app.addContentTypeParser("*", { parseAs: "string" }, (_req, body, done) => {
    const text = typeof body === "string" ? body : body.toString("utf8");
    if (text === "") return done(null, undefined);
    done(null, new UnreadableBody(unsupportedMediaType()));
  });

  app.addHook("onRequest", async (req, reply) => {
    (req as Marked)[STARTED] = process.hrtime.bigint();
    reply.header("x-request-id", req.id);
    if (closing) {
      reply.header("connection", "close");
      return reply.code(503).send(errorBody(req, "SERVICE_UNAVAILABLE", "The fake backend is shutting down"));
    }
    // HTTP/1.1 requires Host (RFC 9112 3.2); Node's own refusal of it has no body at all.
    if (req.raw.httpVersion === "1.1" && req.headers.host === undefined) {
      reply.header("connection", "close");
      return reply.code(400).send(errorBody(req, "BAD_REQUEST", "An HTTP/1.1 request needs a Host header"));
    }
    const path = req.url.split("?")[0] ?? req.url;
    if (path.startsWith("/_control")) return;
    for (const fault of ctx.faults.match(req.method, req.routeOptions.url, path)) {
      switch (fault.kind) {
        case "latency":
          await new Promise((r) => setTimeout(r, fault.latencyMs ?? 0));
          break;
        case "drop":
          reply.hijack();
          req.raw.socket.destroy();
          return reply;
        case "lost-response":
          (req as Marked)[LOST_RESPONSE] = true;
          break;
        case "late-commit":
          (req as Marked)[LATE_COMMIT_MS] = fault.delayMs ?? 0;
          break;
        case "status": {
          const status = fault.status ?? 500;
          if (fault.retryAfterSeconds !== undefined)
            reply.header("retry-after", String(fault.retryAfterSeconds));
          const code = STATUS_CODES[status] ?? "INJECTED_FAULT";
          return reply.code(status).send(errorBody(req, code, `Injected fault: HTTP ${status}`));
        }
      }
    }
  });

  // Held after the body is read, so a client that goes away cannot stop the commit: Node has the
  // whole request, and Fastify goes on to the handler whether or not the socket is still open.
  app.addHook("preHandler", async (req, reply) => {
    const delayMs = (req as Marked)[LATE_COMMIT_MS];
    if (delayMs === undefined) return;
    const held = ctx.faults.held.hold(delayMs);
    if ((await held.outcome) === "abandon") {
      reply.hijack();
      req.raw.socket.destroy();
      return reply;
    }
    (req as Marked)[LANDED] = held.landed;
  });

  app.addHook("onSend", async (req, reply, original) => {
    let payload = original;
    // Commit before anything reaches the client, so "processed but response lost" is durable.
    try {
      ctx.persist();
    } catch (err) {
      // The change is in memory but not on disk: say so in the one error shape, not Fastify's.
      const e = err as NodeJS.ErrnoException;
      reply.code(500).header("content-type", "application/json; charset=utf-8");
      payload = JSON.stringify(
        errorBody(req, "INTERNAL", `The fake backend could not save its state file (${e.code ?? e.message})`),
      );
    }
    if ((req as Marked)[LOST_RESPONSE]) {
      req.raw.socket.destroy();
    }
    (req as Marked)[LANDED]?.();
    return payload;
  });

  app.addHook("onResponse", async (req, reply) => {
    if (!ctx.logger) return;
    const started = (req as Marked)[STARTED];
    const ms = started ? Number(process.hrtime.bigint() - started) / 1e6 : 0;
    const path = req.url.split("?")[0] ?? "";
    // Method, path, status and duration only: never headers, queries or bodies.
    ctx.logger(`${req.method} ${path} ${reply.statusCode} ${ms.toFixed(1)}ms`);
  });

  app.setErrorHandler((err, req, reply) => {
    if (err instanceof ApiFailure) return sendFailure(req, reply, err);
    const e = err as { code?: string; statusCode?: number; message?: string };
    if (e.code === "FST_ERR_CTP_BODY_TOO_LARGE") {
      // Refused before the body is read, while the client may still be sending it: the answer is
      // written with a lingering close, and the rest of the body is read and dropped.
      reply.hijack();
      req.raw.resume();
      answerOnSocket(
        req.raw.socket,
        { status: 413, code: "PAYLOAD_TOO_LARGE", message: "The request body exceeds 1 MiB" },
        req.id,
      );
      return reply;
    }
    if (e.code === "FST_ERR_CTP_INVALID_MEDIA_TYPE") return sendFailure(req, reply, unsupportedMediaType());
    if (e.statusCode !== undefined && e.statusCode >= 400 && e.statusCode < 500) {
      return reply.code(e.statusCode).send(errorBody(req, "BAD_REQUEST", "The request could not be read"));
    }
    return reply.code(500).send(errorBody(req, "INTERNAL", "Internal error in the fake backend"));
  });

  app.setNotFoundHandler((req, reply) => {
    const path = req.url.split("?")[0] ?? req.url;
    const known = routes.filter((r) => r.re.test(path));
    if (known.length > 0) {
      const allow = [...new Set(known.map((r) => r.method))].join(", ");
      reply.header("allow", allow);
      return reply
        .code(405)
        .send(
          errorBody(req, "METHOD_NOT_ALLOWED", `${req.method} is not allowed on ${path}; allowed: ${allow}`),
        );
    }
    return reply.code(404).send(errorBody(req, "NOT_FOUND", `No route ${req.method} ${path}`));
  });

  registerV1(app, ctx);
  ctx.registerControl(app);
  return app;
}

type Handler = (caller: Caller, req: FastifyRequest, reply: FastifyReply) => unknown;
/** A route's permission check; throws 401/403 before the body is looked at. */
type Permit = (caller: Caller) => void;

function registerV1(app: FastifyInstance, ctx: HttpContext): void {
  const { engine } = ctx;
  // Checks in the documented order: token, X-Org-Id, the route's permission, then the body.
  const sessionOnly: Permit = (caller) => engine.requireSession(caller);
  const adminSession: Permit = (caller) => engine.requireAdminSession(caller);
  // An API key gets 403 ADMIN_REQUIRED on its own routes whatever the body (5.4).
  const noApiKey: Permit = (caller) => {
    if (caller.via !== "session") throw adminRequired("API keys cannot create or revoke API keys");
  };
  // The routes whose permission is not everyone's; the handlers' own checks stay as a second line.
  const permits: Record<string, Permit> = {
    "POST /v1/api-keys": noApiKey,
    "DELETE /v1/api-keys/:id": noApiKey,
    "POST /v1/billing/orders": adminSession,
    "GET /v1/me": sessionOnly,
    "GET /v1/ssh-keys": sessionOnly,
    "POST /v1/ssh-keys": sessionOnly,
    "GET /v1/orgs/current/members": adminSession,
    "DELETE /v1/orgs/current/members/:user_id": adminSession,
    "GET /v1/orgs/current/invites": adminSession,
    "POST /v1/orgs/current/invites": adminSession,
  };
  const route = (method: "GET" | "POST" | "DELETE", url: string, handler: Handler) => {
    const permit = permits[`${method} ${url}`];
    app.route({
      method,
      url,
      handler: async (req, reply) => {
        // "/v1/instances/" matches ":id" with an empty id; the documented answer is an unknown route.
        if (Object.values((req.params ?? {}) as Record<string, string>).some((v) => v === "")) {
          const path = req.url.split("?")[0] ?? req.url;
          throw new ApiFailure(404, "NOT_FOUND", `No route ${req.method} ${path}`);
        }
        engine.settle();
        const org = req.headers["x-org-id"];
        const caller = engine.authenticate(req.headers.authorization, Array.isArray(org) ? org[0] : org);
        permit?.(caller);
        if (req.body instanceof UnreadableBody) throw req.body.failure;
        const result = handler(caller, req, reply);
        if (result === undefined) return reply;
        return result;
      },
    });
  };
  const param = (req: FastifyRequest, name: string): string =>
    (req.params as Record<string, string>)[name] ?? "";

  // ---- API keys
  route("POST", "/v1/api-keys", (caller, req, reply) => {
    const body = parseOr422(createApiKeyBody, req.body, "body");
    const { key, secret } = engine.createApiKey(caller, body);
    reply.code(201);
    return { key: engine.renderApiKey(key), secret };
  });
  route("GET", "/v1/api-keys", (caller) => ({
    items: engine.listApiKeys(caller).map((k) => engine.renderApiKey(k)),
  }));
  route("DELETE", "/v1/api-keys/:id", (caller, req, reply) => {
    engine.revokeApiKey(caller, param(req, "id"));
    reply.code(204).send();
  });

  // ---- instances
  route("POST", "/v1/instances", (caller, req, reply) => {
    const body = parseOr422(deployBody, req.body, "body");
    const inst = engine.deploy(caller, body);
    reply.code(201);
    return engine.renderInstance(inst, true);
  });
  route("GET", "/v1/instances", (caller, req) => {
    const q = parseOr422(listInstancesQuery, req.query, "query");
    return {
      items: engine.listInstances(caller.org.id, q.include_destroyed).map((i) => engine.renderInstance(i)),
    };
  });
  route("GET", "/v1/instances/:id", (caller, req) =>
    engine.renderInstance(engine.getInstance(caller, param(req, "id"))),
  );
  route("POST", "/v1/instances/:id/stop", (caller, req) =>
    engine.renderInstance(engine.stop(caller, param(req, "id"))),
  );
  route("POST", "/v1/instances/:id/start", (caller, req) =>
    engine.renderInstance(engine.start(caller, param(req, "id"))),
  );
  route("DELETE", "/v1/instances/:id", (caller, req) =>
    engine.renderInstance(engine.destroy(caller, param(req, "id"))),
  );
  route("GET", "/v1/instances/:id/logs", (caller, req) => {
    const id = param(req, "id");
    engine.getInstance(caller, id);
    const q = parseOr422(logsQuery, req.query, "query");
    return { lines: engine.logs(caller, id, q.tail) };
  });

  // ---- offers and catalog
  route("GET", "/v1/offers", (_caller, req) => {
    const q = parseOr422(offersQuery, req.query, "query");
    let offers = Object.values(engine.state.offers).filter(
      (o) => q.include_unavailable || engine.rentable(o),
    );
    if (q.gpu_model) offers = offers.filter((o) => o.gpu_model.toLowerCase() === q.gpu_model?.toLowerCase());
    if (q.num_gpus !== undefined) offers = offers.filter((o) => o.num_gpus === q.num_gpus);
    if (q.sort === "price_asc")
      offers.sort((a, b) => a.price_per_hour_micro - b.price_per_hour_micro || b.seq - a.seq);
    else if (q.sort === "price_desc")
      offers.sort((a, b) => b.price_per_hour_micro - a.price_per_hour_micro || b.seq - a.seq);
    else offers.sort((a, b) => b.seq - a.seq);
    return { items: offers.map((o) => engine.renderOffer(o)) };
  });
  route("GET", "/v1/offers/summary", () => {
    const groups = new Map<
      string,
      { gpu_model: string; available_offers: number; min_price_per_hour_micro: number }
    >();
    for (const o of Object.values(engine.state.offers)) {
      if (!engine.rentable(o)) continue;
      const g = groups.get(o.gpu_model) ?? {
        gpu_model: o.gpu_model,
        available_offers: 0,
        min_price_per_hour_micro: o.price_per_hour_micro,
      };
      g.available_offers += 1;
      g.min_price_per_hour_micro = Math.min(g.min_price_per_hour_micro, o.price_per_hour_micro);
      groups.set(o.gpu_model, g);
    }
    return { items: [...groups.values()].sort((a, b) => a.gpu_model.localeCompare(b.gpu_model)) };
  });
  route("GET", "/v1/offers/:id", (_caller, req) => {
    const offer = engine.state.offers[param(req, "id")];
    if (!offer) throw new ApiFailure(404, "OFFER_NOT_FOUND", `Offer ${param(req, "id")} not found`);
    return engine.renderOffer(offer);
  });
  route("GET", "/v1/catalog/status", () => ({
    status: "ok",
    available_offers: Object.values(engine.state.offers).filter((o) => engine.rentable(o)).length,
    updated_at: iso(engine.now()),
  }));

  // ---- templates
  route("GET", "/v1/templates", (caller, req) => {
    const q = parseOr422(templatesQuery, req.query, "query");
    const items = Object.values(engine.state.templates)
      .filter((t) => engine.templateVisible(t, caller.org.id))
      .filter((t) => {
        switch (q.tab) {
          case "recommended":
            return t.recommended;
          case "system":
            return t.visibility === "system";
          case "public":
            return t.visibility === "public";
          case "mine":
            return t.owner_org_id === caller.org.id;
          default:
            return true;
        }
      })
      .filter((t) => q.mode === undefined || t.mode === q.mode)
      .sort((a, b) => b.seq - a.seq);
    return { items: items.map((t) => engine.renderTemplate(t)) };
  });
  route("GET", "/v1/templates/by-hash/:hash_id", (caller, req) => {
    const t = Object.values(engine.state.templates).find(
      (x) => x.hash_id === param(req, "hash_id") && engine.templateVisible(x, caller.org.id),
    );
    if (!t) throw new ApiFailure(404, "TEMPLATE_NOT_FOUND", `Template ${param(req, "hash_id")} not found`);
    return engine.renderTemplate(t);
  });
  route("GET", "/v1/templates/:id", (caller, req) => {
    const t = engine.state.templates[param(req, "id")];
    if (!t || !engine.templateVisible(t, caller.org.id)) {
      throw new ApiFailure(404, "TEMPLATE_NOT_FOUND", `Template ${param(req, "id")} not found`);
    }
    return engine.renderTemplate(t);
  });
  route("POST", "/v1/templates/:id/duplicate", (caller, req, reply) => {
    const t = engine.duplicateTemplate(caller, param(req, "id"));
    reply.code(201);
    return engine.renderTemplate(t);
  });

  // ---- billing
  route("GET", "/v1/billing/transactions", (caller, req) => {
    const q = parseOr422(transactionsQuery, req.query, "query");
    const rows = engine.state.ledger
      .filter(
        (r) => r.org_id === caller.org.id && (q.instance_id === undefined || r.instance_id === q.instance_id),
      )
      .sort((a, b) => b.seq - a.seq)
      .slice(0, q.limit);
    return {
      items: rows.map((r) => ({
        id: r.id,
        created_at: iso(r.created_at),
        kind: r.kind,
        amount_micro: r.amount_micro,
        instance_id: r.instance_id,
        description: r.description,
        balance_after_micro: r.balance_after_micro,
      })),
    };
  });
  route("GET", "/v1/billing/spend-daily", (caller, req) => {
    const q = parseOr422(spendDailyQuery, req.query, "query");
    const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
    const totals = new Map<string, number>();
    for (const r of engine.state.ledger) {
      if (r.org_id !== caller.org.id || r.kind === "top_up") continue;
      totals.set(day(r.created_at), (totals.get(day(r.created_at)) ?? 0) + r.amount_micro);
    }
    const items = [];
    for (let i = q.days - 1; i >= 0; i--) {
      const d = day(engine.now() - i * 86_400_000);
      items.push({ date: d, spend_micro: totals.get(d) ?? 0 });
    }
    return { items };
  });
  route("POST", "/v1/billing/orders", (caller, req, reply) => {
    engine.requireAdminSession(caller);
    const body = parseOr422(orderBody, req.body, "body");
    const balance = engine.topUp(caller.org.id, body.amount_micro);
    reply.code(201);
    return { id: randomUUID(), amount_micro: body.amount_micro, status: "paid", balance_micro: balance };
  });

  // ---- account (session only)
  route("GET", "/v1/me", (caller) => {
    engine.requireSession(caller);
    return {
      user: { id: caller.user.id, email: caller.user.email, phone: caller.user.phone },
      organization: { id: caller.org.id, name: caller.org.name, balance_micro: caller.org.balance_micro },
      role: caller.role,
    };
  });
  const renderSshKey = (k: {
    id: string;
    name: string;
    fingerprint: string;
    public_key: string;
    created_at: number;
  }) => ({
    id: k.id,
    name: k.name,
    fingerprint: k.fingerprint,
    public_key: k.public_key,
    created_at: iso(k.created_at),
  });
  route("GET", "/v1/ssh-keys", (caller) => {
    engine.requireSession(caller);
    const items = Object.values(engine.state.ssh_keys)
      .filter((k) => k.user_id === caller.user.id)
      .sort((a, b) => b.created_at - a.created_at);
    return { items: items.map(renderSshKey) };
  });
  route("POST", "/v1/ssh-keys", (caller, req, reply) => {
    engine.requireSession(caller);
    const body = parseOr422(sshKeyBody, req.body, "body");
    const key = engine.createSshKey({
      user_id: caller.user.id,
      name: body.name,
      public_key: body.public_key,
    });
    reply.code(201);
    return renderSshKey(key);
  });

  // ---- organization management (admin session only)
  route("GET", "/v1/orgs/current/members", (caller) => {
    engine.requireAdminSession(caller);
    const items = engine.state.memberships
      .filter((m) => m.org_id === caller.org.id)
      .map((m) => {
        const u = engine.state.users[m.user_id];
        return { user_id: m.user_id, email: u?.email ?? null, phone: u?.phone ?? null, role: m.role };
      });
    return { items };
  });
  route("DELETE", "/v1/orgs/current/members/:user_id", (caller, req, reply) => {
    engine.requireAdminSession(caller);
    if (!engine.removeMember(caller.org.id, param(req, "user_id"))) {
      throw new ApiFailure(
        404,
        "MEMBER_NOT_FOUND",
        `No member ${param(req, "user_id")} in this organization`,
      );
    }
    reply.code(204).send();
  });
  route("GET", "/v1/orgs/current/invites", (caller) => {
    engine.requireAdminSession(caller);
    return { items: [] };
  });
  route("POST", "/v1/orgs/current/invites", (caller, req, reply) => {
    engine.requireAdminSession(caller);
    const body = parseOr422(inviteBody, req.body, "body");
    reply.code(201);
    return {
      id: randomUUID(),
      email: body.email ?? null,
      phone: body.phone ?? null,
      role: body.role,
      created_at: iso(engine.now()),
    };
  });
}
