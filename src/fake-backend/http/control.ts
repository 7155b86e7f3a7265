import { createHash, timingSafeEqual } from "node:crypto";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { z } from "zod";
import type { Engine } from "../engine";
import { ApiFailure, UnreadableBody } from "../errors";
import type { FaultStore } from "../faults";
import type { DemoCredentials, TransitionMode } from "../types";
import { errorBody } from "./http";
import { parseOr422 } from "./validation";

/** What the control routes act on. */
export interface ControlContext {
  engine: Engine;
  faults: FaultStore;
  controlToken: string;
  seedDemo(): DemoCredentials;
  advance(ms: number): void;
}

/** Longest single clock advance through the control API (100 years). */
const MAX_ADVANCE_MS = 100 * 365 * 24 * 3_600_000;

const transitionMode = z.union([
  z.enum(["immediate", "manual", "realistic"]),
  z.object({ afterMs: z.number().min(0).max(2_147_483_647).int() }),
]);

const hostBehaviour = z
  .object({
    unreachable: z.boolean(),
    refuseStart: z.union([z.literal(false), z.enum(["refused", "workload_missing"])]),
    startUnavailable: z.boolean(),
    capacityUnavailable: z.boolean(),
    neverConfirmStop: z.boolean(),
    neverConfirmStart: z.boolean(),
    provisionFails: z.boolean(),
    workloadCompletes: z.boolean(),
    workloadVanishes: z.boolean(),
  })
  .partial()
  .strict();

const faultSpec = z.object({
  method: z.string().optional(),
  route: z.string().min(1),
  kind: z.enum(["status", "latency", "drop", "lost-response", "late-commit"]),
  status: z.number().min(400).max(599).int().optional(),
  retryAfterSeconds: z.number().min(0).int().optional(),
  // setTimeout fires at once above 2^31-1 ms, which would turn a long delay into none.
  latencyMs: z.number().min(0).max(2_147_483_647).int().optional(),
  delayMs: z.number().min(0).max(2_147_483_647).int().optional(),
  probability: z.number().min(0).max(1).optional(),
  times: z.number().min(1).int().optional(),
});

const offerPatch = z
  .object({
    availability: z.enum(["available", "sold_out", "withdrawn"]),
    free_units: z.number().min(0).int(),
    price_per_hour_micro: z.number().min(0).int(),
    storage_price_per_gb_hour_micro: z.number().min(0).int(),
    hold_price_per_hour_micro: z.number().min(0).int().nullable(),
    next_maintenance: z.iso.datetime({ offset: true }).nullable(),
  })
  .partial()
  .strict();

const env = z.array(z.object({ key: z.string(), value: z.string(), secret: z.boolean().default(false) }));

function digest(s: string): Buffer {
  return createHash("sha256").update(s).digest();
}

/** Registers the /_control routes, guarded by the X-Control-Token header. */
export function registerControl(app: FastifyInstance, ctx: ControlContext): void {
  const { engine } = ctx;
  const expected = digest(ctx.controlToken);
  const run = (fn: () => unknown) => {
    try {
      return fn();
    } catch (err) {
      if (err instanceof ApiFailure) throw err;
      throw new ApiFailure(422, "CONTROL_ERROR", err instanceof Error ? err.message : String(err));
    }
  };
  const route = (
    method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE",
    url: string,
    handler: (req: FastifyRequest, reply: FastifyReply) => unknown,
  ) => {
    app.route({
      method,
      url: `/_control${url}`,
      handler: async (req, reply) => {
        const given = req.headers["x-control-token"];
        if (typeof given !== "string" || !timingSafeEqual(digest(given), expected)) {
          return reply
            .code(401)
            .send(errorBody(req, "CONTROL_TOKEN_INVALID", "Missing or wrong X-Control-Token"));
        }
        if (req.body instanceof UnreadableBody) throw req.body.failure;
        const result = run(() => handler(req, reply));
        return result === undefined ? { ok: true } : result;
      },
    });
  };
  const p = (req: FastifyRequest, name: string) => (req.params as Record<string, string>)[name] ?? "";
  const body = <S extends z.ZodType>(schema: S, req: FastifyRequest): z.output<S> =>
    parseOr422(schema, req.body, "body");

  route("POST", "/reset", () => {
    engine.reset();
    ctx.faults.reset();
  });
  route("POST", "/seed/demo", () => ctx.seedDemo());
  route("GET", "/state", () => {
    engine.settle();
    return engine.state;
  });
  route("GET", "/clock", () => ({ now: engine.clock.now().toISOString(), frozen: engine.clock.frozen }));
  route("POST", "/clock/advance", (req) => {
    // A century at most: further out, fake-clock dates leave the range Date can print.
    ctx.advance(body(z.object({ ms: z.number().min(0).max(MAX_ADVANCE_MS) }), req).ms);
    return { now: engine.clock.now().toISOString() };
  });
  route("POST", "/clock/freeze", (req) => {
    const b = body(z.object({ at: z.string().datetime().optional() }).optional(), req);
    engine.settle();
    engine.clock.freeze(b?.at ? new Date(b.at) : undefined);
    return { now: engine.clock.now().toISOString() };
  });
  route("POST", "/clock/unfreeze", () => {
    engine.clock.unfreeze();
  });
  route("PUT", "/transitions", (req) => {
    engine.setTransitions(body(z.object({ mode: transitionMode }), req).mode as TransitionMode);
  });
  route("POST", "/orgs", (req) =>
    engine.createOrg(
      body(
        z.object({ id: z.string().optional(), name: z.string(), balance_micro: z.number().int().optional() }),
        req,
      ),
    ),
  );
  route("POST", "/users", (req) =>
    engine.createUser(
      body(
        z.object({ id: z.string().optional(), email: z.string().nullish(), phone: z.string().nullish() }),
        req,
      ),
    ),
  );
  route("POST", "/memberships", (req) => {
    const b = body(
      z.object({ org_id: z.string(), user_id: z.string(), role: z.enum(["admin", "member"]) }),
      req,
    );
    engine.addMember(b.org_id, b.user_id, b.role);
  });
  route("DELETE", "/orgs/:org_id/members/:user_id", (req) => ({
    removed: engine.removeMember(p(req, "org_id"), p(req, "user_id")),
  }));
  route("POST", "/sessions", (req) => {
    const b = body(z.object({ user_id: z.string(), org_id: z.string() }), req);
    return { token: engine.createSession(b.user_id, b.org_id) };
  });
  route("POST", "/ssh-keys", (req) =>
    engine.createSshKey(
      body(
        z.object({
          id: z.string().optional(),
          user_id: z.string(),
          name: z.string(),
          public_key: z.string().optional(),
        }),
        req,
      ),
    ),
  );
  route("POST", "/machines", (req) =>
    engine.createMachine(
      body(
        z.object({
          id: z.string().optional(),
          disk_gb: z.number().min(1).int(),
          available_disk_gb: z.number().min(0).int().optional(),
          public_ip: z.string().optional(),
          cuda_version: z.string().optional(),
          vm_capable: z.boolean().optional(),
          architecture: z.string().optional(),
          gpu_release_supported: z.boolean().optional(),
          registered: z.boolean().optional(),
          directly_reachable: z.boolean().optional(),
        }),
        req,
      ),
    ),
  );
  route("POST", "/offers", (req) =>
    engine.createOffer(
      body(
        z.object({
          id: z.string().optional(),
          machine_id: z.string(),
          gpu_model: z.string().optional(),
          num_gpus: z.number().min(1).int().optional(),
          price_per_hour_micro: z.number().min(0).int().optional(),
          storage_price_per_gb_hour_micro: z.number().min(0).int().optional(),
          availability: z.enum(["available", "sold_out", "withdrawn"]).optional(),
          free_units: z.number().min(0).int().optional(),
          // An ISO time, as PATCH takes it: anything else would be stored as NaN and break every read.
          next_maintenance: z.iso.datetime({ offset: true }).nullish(),
          region: z.string().optional(),
        }),
        req,
      ),
    ),
  );
  route("PATCH", "/offers/:offer_id", (req) => {
    const offer = engine.updateOffer(p(req, "offer_id"), body(offerPatch, req));
    return engine.catalog.renderOffer(offer);
  });
  route("POST", "/templates", (req) =>
    engine.createTemplate(
      body(
        z.object({
          id: z.string().optional(),
          name: z.string(),
          mode: z.enum(["ssh", "jupyter", "vm"]).optional(),
          image: z.string().optional(),
          cuda_max: z.string().nullish(),
          architecture: z.string().optional(),
          coming_soon: z.boolean().optional(),
          active: z.boolean().optional(),
          recommended: z.boolean().optional(),
          visibility: z.enum(["system", "public", "private"]).optional(),
          owner_org_id: z.string().nullish(),
          uses_private_registry: z.boolean().optional(),
          uses_access_token: z.boolean().optional(),
          env: env.optional(),
          open_port: z.number().int().nullish(),
        }),
        req,
      ),
    ),
  );
  route("PUT", "/orgs/:org_id/balance", (req) => {
    engine.setBalance(
      p(req, "org_id"),
      body(z.object({ balance_micro: z.number().int() }), req).balance_micro,
    );
    return { balance_micro: engine.state.orgs[p(req, "org_id")]?.balance_micro };
  });
  route("POST", "/orgs/:org_id/top-up", (req) => ({
    balance_micro: engine.topUp(
      p(req, "org_id"),
      body(z.object({ amount_micro: z.number().min(1).int() }), req).amount_micro,
    ),
  }));
  route("PUT", "/machines/:machine_id/behaviour", (req) => {
    engine.setHostBehaviour(p(req, "machine_id"), body(hostBehaviour, req));
    return engine.host(p(req, "machine_id"));
  });
  route("POST", "/offers/:offer_id/lose-next-race", (req) => {
    const b = body(z.object({ times: z.number().min(1).int().optional() }).optional(), req);
    engine.loseNextRace(p(req, "offer_id"), b?.times ?? 1);
  });
  route("POST", "/instances/:id/complete", (req) => ({ completed: engine.completeTransition(p(req, "id")) }));
  route("GET", "/instances/:id/env", (req) => {
    const inst = engine.state.instances[p(req, "id")];
    if (!inst) throw new ApiFailure(404, "INSTANCE_NOT_FOUND", "unknown instance");
    return { env: inst.env };
  });
  route("POST", "/instances/:id/logs", (req) => {
    engine.appendLogs(p(req, "id"), body(z.object({ lines: z.array(z.string()) }), req).lines);
  });
  route("GET", "/faults", () => ({
    items: ctx.faults.list(),
    late_commits_pending: ctx.faults.held.pending,
  }));
  route("POST", "/faults", (req, reply) => {
    reply.code(201);
    return { id: ctx.faults.add(body(faultSpec, req)) };
  });
  route("DELETE", "/faults", () => {
    ctx.faults.clear();
  });
  route("DELETE", "/faults/:id", (req) => ({ removed: ctx.faults.remove(p(req, "id")) }));
  route("POST", "/late-commits/flush", async () => ({ committed: await ctx.faults.held.flush() }));
}
