import { randomUUID } from "node:crypto";
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from "fastify";
import { redactText } from "../../api/redact";
import { jsonEscaped } from "../../display";
import type { Engine } from "../engine";
import { ApiFailure, UnreadableBody } from "../errors";
import type { FaultStore } from "../faults";
import {
  answerOnSocket,
  answerUnknownExpectations,
  clientErrorHandler,
  type RequestTimeouts,
  serverOptions,
} from "./client-errors";
import { registerV1 } from "./routes";

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
  /**
   * The control API's token, which no refusal and no log line repeats (it has no credential
   * prefix for redaction to recognise, so it is masked by its value).
   */
  controlToken: string;
}

/** What stands for the control token where a refusal or the log would have repeated it. */
const CONTROL_TOKEN_MASK = "[control-token]";
/** Where the app keeps its control token for errorBody, which every refusal passes. */
const CONTROL_TOKEN = Symbol("controlToken");

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
  const token = (req.server as { [CONTROL_TOKEN]?: string } | undefined)?.[CONTROL_TOKEN];
  const shown: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(extras)) shown[k] = typeof v === "string" ? quoted(v, token) : v;
  return { error: { code, message: quoted(message, token), ...shown, request_id: req.id } };
}

/**
 * An error's text as the answer shows it. Messages quote the request (an id, a path, a parameter's
 * name), and a request never gets a large or secret-looking value back: credential-shaped parts
 * are masked (src/api/redact.ts) and a run of over 128 characters without a space is cut.
 */
function quoted(text: string, controlToken?: string): string {
  const masked = controlToken ? text.replaceAll(controlToken, CONTROL_TOKEN_MASK) : text;
  return redactText(masked).replace(/\S{129,}/g, (run) => `${run.slice(0, 48)}…(${run.length} characters)`);
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
  (app as unknown as { [CONTROL_TOKEN]: string })[CONTROL_TOKEN] = ctx.controlToken;
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
    // An answer quotes the request (an id, a parameter, a value it refuses), and whoever reads it
    // raw (curl in a terminal) must not be driven by it: the same JSON value, its C1 controls,
    // DEL, separators and bidirectional overrides written as escapes.
    if (typeof payload === "string" && String(reply.getHeader("content-type") ?? "").includes("json")) {
      payload = jsonEscaped(payload);
    }
    return payload;
  });

  app.addHook("onResponse", async (req, reply) => {
    if (!ctx.logger) return;
    const started = (req as Marked)[STARTED];
    const ms = started ? Number(process.hrtime.bigint() - started) / 1e6 : 0;
    const path = req.url.split("?")[0] ?? "";
    // Method, path, status and duration only: never headers, queries or bodies, and the path as
    // an answer would quote it (a token pasted into an id is masked).
    ctx.logger(`${req.method} ${quoted(path, ctx.controlToken)} ${reply.statusCode} ${ms.toFixed(1)}ms`);
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

  registerV1(app, ctx.engine);
  ctx.registerControl(app);
  return app;
}
