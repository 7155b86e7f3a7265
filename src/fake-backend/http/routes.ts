import { randomUUID } from "node:crypto";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { requireAdminSession, requireSession } from "../auth";
import { rentable, templateVisible } from "../catalog";
import type { Engine } from "../engine";
import { ApiFailure, adminRequired, UnreadableBody } from "../errors";
import { iso } from "../state/store";
import type { Caller } from "../types";
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

// The /v1 routes of the contract: each authenticates, checks the route's permission, parses its
// body or query and asks the engine. The app around them (JSON parsing, the error shape, faults,
// the request log, 404 and 405) is http.ts.

type Handler = (caller: Caller, req: FastifyRequest, reply: FastifyReply) => unknown;
/** A route's permission check; throws 401/403 before the body is looked at. */
type Permit = (caller: Caller) => void;

/** Registers the /v1 routes of the contract on `app`, answering from `engine`. */
export function registerV1(app: FastifyInstance, engine: Engine): void {
  // Checks in the documented order: token, X-Org-Id, the route's permission, then the body.
  const sessionOnly: Permit = (caller) => requireSession(caller);
  const adminSession: Permit = (caller) => requireAdminSession(caller);
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
        const caller = engine.auth.authenticate(req.headers.authorization, Array.isArray(org) ? org[0] : org);
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
    const { key, secret } = engine.apiKeys.create(caller, body);
    reply.code(201);
    return { key: engine.apiKeys.render(key), secret };
  });
  route("GET", "/v1/api-keys", (caller) => ({
    items: engine.apiKeys.list(caller).map((k) => engine.apiKeys.render(k)),
  }));
  route("DELETE", "/v1/api-keys/:id", (caller, req, reply) => {
    engine.apiKeys.revoke(caller, param(req, "id"));
    reply.code(204).send();
  });

  // ---- instances
  route("POST", "/v1/instances", (caller, req, reply) => {
    const body = parseOr422(deployBody, req.body, "body");
    const inst = engine.instances.deploy(caller, body);
    reply.code(201);
    return engine.instances.render(inst, true);
  });
  route("GET", "/v1/instances", (caller, req) => {
    const q = parseOr422(listInstancesQuery, req.query, "query");
    return {
      items: engine.instances.list(caller.org.id, q.include_destroyed).map((i) => engine.instances.render(i)),
    };
  });
  route("GET", "/v1/instances/:id", (caller, req) =>
    engine.instances.render(engine.instances.get(caller, param(req, "id"))),
  );
  route("POST", "/v1/instances/:id/stop", (caller, req) =>
    engine.instances.render(engine.instances.stop(caller, param(req, "id"))),
  );
  route("POST", "/v1/instances/:id/start", (caller, req) =>
    engine.instances.render(engine.instances.start(caller, param(req, "id"))),
  );
  route("DELETE", "/v1/instances/:id", (caller, req) =>
    engine.instances.render(engine.instances.destroy(caller, param(req, "id"))),
  );
  route("GET", "/v1/instances/:id/logs", (caller, req) => {
    const id = param(req, "id");
    engine.instances.get(caller, id);
    const q = parseOr422(logsQuery, req.query, "query");
    return { lines: engine.instances.logs(caller, id, q.tail) };
  });

  // ---- offers and catalog
  route("GET", "/v1/offers", (_caller, req) => {
    const q = parseOr422(offersQuery, req.query, "query");
    let offers = Object.values(engine.state.offers).filter((o) => q.include_unavailable || rentable(o));
    if (q.gpu_model) offers = offers.filter((o) => o.gpu_model.toLowerCase() === q.gpu_model?.toLowerCase());
    if (q.num_gpus !== undefined) offers = offers.filter((o) => o.num_gpus === q.num_gpus);
    if (q.sort === "price_asc")
      offers.sort((a, b) => a.price_per_hour_micro - b.price_per_hour_micro || b.seq - a.seq);
    else if (q.sort === "price_desc")
      offers.sort((a, b) => b.price_per_hour_micro - a.price_per_hour_micro || b.seq - a.seq);
    else offers.sort((a, b) => b.seq - a.seq);
    return { items: offers.map((o) => engine.catalog.renderOffer(o)) };
  });
  route("GET", "/v1/offers/summary", () => {
    const groups = new Map<
      string,
      { gpu_model: string; available_offers: number; min_price_per_hour_micro: number }
    >();
    for (const o of Object.values(engine.state.offers)) {
      if (!rentable(o)) continue;
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
    return engine.catalog.renderOffer(offer);
  });
  route("GET", "/v1/catalog/status", () => ({
    status: "ok",
    available_offers: Object.values(engine.state.offers).filter((o) => rentable(o)).length,
    updated_at: iso(engine.now()),
  }));

  // ---- templates
  route("GET", "/v1/templates", (caller, req) => {
    const q = parseOr422(templatesQuery, req.query, "query");
    const items = Object.values(engine.state.templates)
      .filter((t) => templateVisible(t, caller.org.id))
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
    return { items: items.map((t) => engine.catalog.renderTemplate(t)) };
  });
  route("GET", "/v1/templates/by-hash/:hash_id", (caller, req) => {
    const t = Object.values(engine.state.templates).find(
      (x) => x.hash_id === param(req, "hash_id") && templateVisible(x, caller.org.id),
    );
    if (!t) throw new ApiFailure(404, "TEMPLATE_NOT_FOUND", `Template ${param(req, "hash_id")} not found`);
    return engine.catalog.renderTemplate(t);
  });
  route("GET", "/v1/templates/:id", (caller, req) => {
    const t = engine.state.templates[param(req, "id")];
    if (!t || !templateVisible(t, caller.org.id)) {
      throw new ApiFailure(404, "TEMPLATE_NOT_FOUND", `Template ${param(req, "id")} not found`);
    }
    return engine.catalog.renderTemplate(t);
  });
  route("POST", "/v1/templates/:id/duplicate", (caller, req, reply) => {
    const t = engine.catalog.duplicateTemplate(caller, param(req, "id"));
    reply.code(201);
    return engine.catalog.renderTemplate(t);
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
    requireAdminSession(caller);
    const body = parseOr422(orderBody, req.body, "body");
    const balance = engine.topUp(caller.org.id, body.amount_micro);
    reply.code(201);
    return { id: randomUUID(), amount_micro: body.amount_micro, status: "paid", balance_micro: balance };
  });

  // ---- account (session only)
  route("GET", "/v1/me", (caller) => {
    requireSession(caller);
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
    requireSession(caller);
    const items = Object.values(engine.state.ssh_keys)
      .filter((k) => k.user_id === caller.user.id)
      .sort((a, b) => b.created_at - a.created_at);
    return { items: items.map(renderSshKey) };
  });
  route("POST", "/v1/ssh-keys", (caller, req, reply) => {
    requireSession(caller);
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
    requireAdminSession(caller);
    const items = engine.state.memberships
      .filter((m) => m.org_id === caller.org.id)
      .map((m) => {
        const u = engine.state.users[m.user_id];
        return { user_id: m.user_id, email: u?.email ?? null, phone: u?.phone ?? null, role: m.role };
      });
    return { items };
  });
  route("DELETE", "/v1/orgs/current/members/:user_id", (caller, req, reply) => {
    requireAdminSession(caller);
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
    requireAdminSession(caller);
    return { items: [] };
  });
  route("POST", "/v1/orgs/current/invites", (caller, req, reply) => {
    requireAdminSession(caller);
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
