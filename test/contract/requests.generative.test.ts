// Hostile requests never break the fake backend, and it refuses them in its one error shape.
//
// Property-based: fast-check generates requests to every route of the /v1 API that takes a body
// or a query (deploy, API keys, the instance actions, the instance list and logs, offers,
// templates, billing, SSH keys, invites) and to the /_control routes the tests seed and steer the
// fake with, and damages them: random JSON, a valid body with one field of another type or
// removed, unknown fields, huge strings, deep nesting, arrays for objects, text that is not JSON,
// invalid UTF-8, no body, wrong or missing content types; random path ids (percent-encoded bytes,
// dots, ids around the 1024-character limit); random, repeated and huge query parameters; callers
// of every kind; and now and then a secret in the body (an env override marked secret, or a
// token put into a field). Every answer must hold to what the contract and docs/api-shapes.md
// promise:
//   - never a 5xx (the only one a route documents here is start's 503 START_UNAVAILABLE);
//   - every non-2xx is the one error shape, `{ error: { code, message, ..., request_id } }` as JSON,
//     `request_id` repeating the X-Request-Id header, and a 422 VALIDATION_ERROR names its `field`;
//   - no answer repeats a secret env value it was sent, nor the token it was sent with, and no
//     refusal repeats a token put into a field of the body;
//   - a refused request changes nothing: the fake's whole state is the same after it as before
//     (API keys' last_used_at aside, which every request made with a key stamps, refused or not);
//   - after an accepted request that changed something, every list of /v1 still answers 200, and
//     without the secret;
// and after all of it the server still deploys, reads, stops and destroys as the contract says.
// Why: the provider's error handling and every contract suite trust the fake to fail the way the
// service does; a 500 or a stack trace for bad input, a refusal that half-applies, or a secret
// echoed into a log would make those suites pass for the wrong reason.
//
// Each case is one request against the same world (the demo seed at a frozen moment, a running
// and a stopped instance, a personal and a team key), rebuilt whenever an accepted request changed
// it, so a counterexample replays on its own. No fault is injected: POST /_control/faults, /reset
// and /seed/demo are left out (they rig or wipe the fake, they are not input to judge).
//
// Fixed seed; RUNS = 250 cases per property, 4 properties: 1,000 hostile requests, plus the world
// rebuilt and the lists read after each of the ~250 accepted ones that changed something. About
// 7 s on a 2-core machine idle, 12 s with both cores kept busy, 20 s with another Jest run on top:
// under 30 s on a busy machine.
// GPURENTAL_GENERATIVE_SEED and GPURENTAL_GENERATIVE_RUNS (cases per property) explore further.
// What becomes of a body, and its generators, are ./hostile-bodies.ts; the routes, the world, the
// callers, ids and queries and the rules an answer is judged by are here.
import { Agent, request } from "node:http";
import fc, { type JsonValue } from "fast-check";
import { DEMO_IDS, type DemoCredentials } from "../../src/fake-backend";
import { generativeRuns, generativeSeed, LONG_RUN_CASES } from "../../src/testing/generative";
import { type Answer, call, createKey, deploy, errorOf, runningInstance, useFake } from "./helpers";
import {
  type BodyPlan,
  bodyPlan,
  contentType,
  encodeBody,
  json,
  pct,
  pick,
  UUID,
  withAt,
} from "./hostile-bodies";

const SEED = generativeSeed(20261128);
const RUNS = generativeRuns(250);
/** The moment every world is frozen at, so that no case bills or lands a transition by chance. */
const EPOCH = new Date("2026-11-28T08:00:00.000Z");

jest.setTimeout(LONG_RUN_CASES ? 24 * 3600_000 : 120_000);

type Json = JsonValue;
type JsonObject = { [key: string]: Json };

describe("generative: hostile requests to the fake backend", () => {
  const { fb, creds } = useFake();
  const agent = new Agent({ keepAlive: true });
  afterAll(() => agent.destroy());

  // ---- the world every case starts from ---------------------------------------------------------

  interface World {
    creds: DemoCredentials;
    running: string;
    stopped: string;
    personal: { id: string; secret: string };
    team: { id: string; secret: string };
    templateHash: string;
  }

  let world: World | undefined;

  async function buildWorld(): Promise<World> {
    const f = fb();
    f.clock.freeze(EPOCH);
    f.setTransitions("immediate");
    const creds = f.seedDemo();
    const admin = creds.admin_session_token;
    const deployed = async (label: string): Promise<string> =>
      (await deploy(f, creds, admin, { label })).body.id;
    const running = await deployed("running");
    const stopped = await deployed("stopped");
    // Read in process, which settles: immediate transitions land, so both run now.
    if (f.instance(stopped)?.status !== "running") throw new Error("the world's instances did not start");
    await call(f, "POST", `/v1/instances/${stopped}/stop`, { token: admin });
    if (f.instance(stopped)?.status !== "stopped")
      throw new Error("the world's stopped instance did not stop");
    f.appendLogs(running, ["booting", "ready"]);
    const personal = await createKey(f, admin, "personal");
    const team = await createKey(f, admin, "team");
    const templateHash = f.state().templates[creds.template_id]?.hash_id ?? "";
    return { creds, running, stopped, personal, team, templateHash };
  }

  /** The fake's state as far as a refusal must leave it alone. */
  const snapshot = () => JSON.stringify(fb().state(), (k, v) => (k === "last_used_at" ? undefined : v));

  // ---- the routes -------------------------------------------------------------------------------

  type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  interface Route {
    method: Method;
    /** The pattern as routes.ts and control.ts register it. */
    pattern: string;
    /** The values of its `:params`, in order, in a world. */
    params?: (w: World) => string[];
    /** A body it accepts; absent when it takes none. */
    body?: (w: World) => JsonObject;
    /** The query parameters it reads, with values worth trying. */
    query?: Record<string, string[]>;
  }

  const deployBody = (w: World): JsonObject => ({
    offer_id: w.creds.offer_id,
    template_id: w.creds.template_id,
    disk_gb: 50,
    label: "generative",
    ssh_key_id: w.creds.ssh_key_id,
    env_overrides: [{ key: "TZ", value: "UTC", secret: false }],
  });
  const none = (): JsonObject => ({});
  const bool = ["true", "false", "1", "0", "yes", "TRUE", ""];
  const count = [
    "1",
    "2",
    "30",
    "90",
    "91",
    "200",
    "1000",
    "1001",
    "0",
    "-1",
    "1.5",
    "1e3",
    "0x10",
    " 5",
    "NaN",
  ];

  const V1: Route[] = [
    { method: "POST", pattern: "/v1/instances", body: deployBody },
    { method: "GET", pattern: "/v1/instances", query: { include_destroyed: bool } },
    { method: "GET", pattern: "/v1/instances/:id", params: (w) => [w.running] },
    { method: "DELETE", pattern: "/v1/instances/:id", params: (w) => [w.running], body: none },
    { method: "POST", pattern: "/v1/instances/:id/stop", params: (w) => [w.running], body: none },
    { method: "POST", pattern: "/v1/instances/:id/start", params: (w) => [w.stopped], body: none },
    { method: "GET", pattern: "/v1/instances/:id/logs", params: (w) => [w.running], query: { tail: count } },
    { method: "POST", pattern: "/v1/api-keys", body: () => ({ name: "generative", kind: "team" }) },
    { method: "GET", pattern: "/v1/api-keys" },
    { method: "DELETE", pattern: "/v1/api-keys/:id", params: (w) => [w.personal.id], body: none },
    {
      method: "GET",
      pattern: "/v1/offers",
      query: {
        gpu_model: ["RTX 4090", "rtx 4090", "A100", ""],
        num_gpus: count,
        sort: ["price_asc", "price_desc", "price"],
        include_unavailable: bool,
      },
    },
    { method: "GET", pattern: "/v1/offers/summary" },
    { method: "GET", pattern: "/v1/offers/:id", params: (w) => [w.creds.offer_id] },
    { method: "GET", pattern: "/v1/catalog/status" },
    {
      method: "GET",
      pattern: "/v1/templates",
      query: {
        tab: ["recommended", "system", "public", "mine", "all", "x"],
        mode: ["ssh", "jupyter", "vm", "x"],
      },
    },
    { method: "GET", pattern: "/v1/templates/:id", params: (w) => [w.creds.template_id] },
    { method: "GET", pattern: "/v1/templates/by-hash/:hash_id", params: (w) => [w.templateHash] },
    {
      method: "POST",
      pattern: "/v1/templates/:id/duplicate",
      params: (w) => [w.creds.template_id],
      body: none,
    },
    {
      method: "GET",
      pattern: "/v1/billing/transactions",
      query: { instance_id: ["00000000-0000-4000-8000-000000000041", "x"], limit: count },
    },
    { method: "GET", pattern: "/v1/billing/spend-daily", query: { days: count } },
    { method: "POST", pattern: "/v1/billing/orders", body: () => ({ amount_micro: 1_000_000 }) },
    { method: "GET", pattern: "/v1/me" },
    { method: "GET", pattern: "/v1/ssh-keys" },
    {
      method: "POST",
      pattern: "/v1/ssh-keys",
      body: () => ({
        name: "generative",
        public_key: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGdlbg== gen@host",
      }),
    },
    {
      method: "POST",
      pattern: "/v1/orgs/current/invites",
      body: () => ({ email: "new@demo.example", phone: "+8613800000000", role: "member" }),
    },
    {
      method: "DELETE",
      pattern: "/v1/orgs/current/members/:user_id",
      params: (w) => [w.creds.member_user_id],
      body: none,
    },
  ];

  const CONTROL: Route[] = [
    { method: "GET", pattern: "/_control/clock" },
    { method: "GET", pattern: "/_control/faults" },
    { method: "POST", pattern: "/_control/clock/advance", body: () => ({ ms: 60_000 }) },
    { method: "POST", pattern: "/_control/clock/freeze", body: () => ({ at: "2026-11-28T09:00:00.000Z" }) },
    { method: "POST", pattern: "/_control/clock/unfreeze", body: none },
    { method: "PUT", pattern: "/_control/transitions", body: () => ({ mode: { afterMs: 1000 } }) },
    {
      method: "POST",
      pattern: "/_control/orgs",
      body: () => ({ name: "Generative Lab", balance_micro: 1_000_000 }),
    },
    {
      method: "POST",
      pattern: "/_control/users",
      body: () => ({ email: "gen@demo.example", phone: "+8613800000001" }),
    },
    {
      method: "POST",
      pattern: "/_control/memberships",
      body: (w) => ({ org_id: w.creds.other_org_id, user_id: w.creds.member_user_id, role: "member" }),
    },
    {
      method: "POST",
      pattern: "/_control/sessions",
      body: (w) => ({ user_id: w.creds.admin_user_id, org_id: w.creds.org_id }),
    },
    {
      method: "POST",
      pattern: "/_control/ssh-keys",
      body: (w) => ({ user_id: w.creds.admin_user_id, name: "generative" }),
    },
    {
      method: "POST",
      pattern: "/_control/machines",
      body: () => ({
        disk_gb: 1000,
        available_disk_gb: 900,
        public_ip: "203.0.113.9",
        cuda_version: "12.4",
        vm_capable: false,
        architecture: "x86_64",
        gpu_release_supported: true,
        registered: true,
        directly_reachable: true,
      }),
    },
    {
      method: "POST",
      pattern: "/_control/offers",
      body: () => ({
        machine_id: DEMO_IDS.machineLarge,
        gpu_model: "RTX 4090",
        num_gpus: 1,
        price_per_hour_micro: 1_000_000,
        storage_price_per_gb_hour_micro: 100,
        availability: "available",
        free_units: 1,
        next_maintenance: "2026-12-01T00:00:00.000Z",
        region: "cn-east-1",
      }),
    },
    {
      method: "PATCH",
      pattern: "/_control/offers/:offer_id",
      params: (w) => [w.creds.offer_id],
      body: () => ({ availability: "available", free_units: 2, next_maintenance: null }),
    },
    {
      method: "POST",
      pattern: "/_control/templates",
      body: (w) => ({
        name: "generative",
        mode: "ssh",
        cuda_max: "12.4",
        visibility: "private",
        owner_org_id: w.creds.org_id,
        env: [{ key: "A", value: "b", secret: false }],
        open_port: 8080,
      }),
    },
    {
      method: "PUT",
      pattern: "/_control/orgs/:org_id/balance",
      params: (w) => [w.creds.org_id],
      body: () => ({ balance_micro: 5_000_000_000 }),
    },
    {
      method: "POST",
      pattern: "/_control/orgs/:org_id/top-up",
      params: (w) => [w.creds.org_id],
      body: () => ({ amount_micro: 1_000_000 }),
    },
    {
      method: "PUT",
      pattern: "/_control/machines/:machine_id/behaviour",
      params: () => [DEMO_IDS.machineLarge],
      body: () => ({ unreachable: false, refuseStart: false }),
    },
    {
      method: "POST",
      pattern: "/_control/offers/:offer_id/lose-next-race",
      params: (w) => [w.creds.offer_id],
      body: () => ({ times: 1 }),
    },
    {
      method: "POST",
      pattern: "/_control/instances/:id/logs",
      params: (w) => [w.running],
      body: () => ({ lines: ["hello"] }),
    },
    { method: "POST", pattern: "/_control/instances/:id/complete", params: (w) => [w.running], body: none },
    { method: "GET", pattern: "/_control/instances/:id/env", params: (w) => [w.running] },
    { method: "DELETE", pattern: "/_control/faults/:id", params: () => ["f1"] },
    {
      method: "DELETE",
      pattern: "/_control/orgs/:org_id/members/:user_id",
      params: (w) => [w.creds.other_org_id, w.creds.member_user_id],
    },
  ];

  const ROUTES = [...V1, ...CONTROL];
  const routeName = (r: Route) => `${r.method} ${r.pattern}`;
  const routeBy = (name: string): Route => {
    const r = ROUTES.find((x) => routeName(x) === name);
    if (!r) throw new Error(`no route ${name}`);
    return r;
  };
  const names = (rs: Route[]) => rs.map(routeName);

  // ---- what a case is ---------------------------------------------------------------------------

  /** Who sends it: for /_control the right control token, none, or a wrong one. */
  type CallerPlan =
    | "admin"
    | "member"
    | "personal key"
    | "team key"
    | "other org's admin"
    | "no token"
    | { header: string };

  /** A path id: one the world knows (maybe twisted), or any bytes as they go on the wire. */
  type IdPlan =
    | { known: KnownId; twist: "as is" | "upper case" | "one more segment" | "cut short" }
    | { wire: string };
  type KnownId = "running" | "stopped" | "offer" | "template" | "template hash" | "personal key" | "member";

  /** A secret put into the body: an env override marked secret, or a token in a field. */
  interface SecretPlan {
    carrier: "secret env value" | "token in a field";
    /** A value unique to this case, so that an echo of it is one for sure. */
    marker: string;
    shape: "plain" | "padded" | "long" | "credential-like" | "number" | "in an array" | "in an object";
    pad: [string, string];
    /** Where: which field the token replaces, or where the secret entry sits among the others. */
    at: number;
    otherEnv: Json[];
  }

  interface Plan {
    route: string;
    caller: CallerPlan;
    /** X-Org-Id: "own", "other" (organization), or these very characters. */
    orgHeader?: string;
    body?: BodyPlan;
    contentType?: string | null;
    id?: { plan: IdPlan; param: number };
    query?: { params: [string, string][]; repeat: boolean; tail: string };
    secret?: SecretPlan;
  }

  /** A request on the wire, with what no answer to it may repeat. */
  interface Hostile {
    route: Route;
    method: Method;
    path: string;
    headers: Record<string, string>;
    body?: Buffer;
    /** Markers of secrets: `always` ones no answer may hold, the others no refusal. */
    secrets: { marker: string; always: boolean }[];
  }

  // ---- building a request from a plan (its body: ./hostile-bodies.ts) -----------------------------

  function knownId(w: World, k: KnownId): string {
    switch (k) {
      case "running":
        return w.running;
      case "stopped":
        return w.stopped;
      case "offer":
        return w.creds.offer_id;
      case "template":
        return w.creds.template_id;
      case "template hash":
        return w.templateHash;
      case "personal key":
        return w.personal.id;
      case "member":
        return w.creds.member_user_id;
    }
  }

  function wireId(w: World, p: IdPlan): string {
    if ("wire" in p) return p.wire;
    const id = knownId(w, p.known);
    switch (p.twist) {
      case "as is":
        return id;
      case "upper case":
        return id.toUpperCase();
      case "one more segment":
        return `${id}/x`;
      case "cut short":
        return id.slice(0, -1);
    }
  }

  /** Every id of the world's records, in a fixed order. */
  const idsOf = (w: World): string[] => [
    ...Object.values(w.creds).filter((v) => UUID.test(v)),
    w.running,
    w.stopped,
    w.personal.id,
    w.team.id,
  ];

  function tokenOf(w: World, c: CallerPlan): string | undefined {
    switch (c) {
      case "admin":
        return w.creds.admin_session_token;
      case "member":
        return w.creds.member_session_token;
      case "personal key":
        return w.personal.secret;
      case "team key":
        return w.team.secret;
      case "other org's admin":
        return w.creds.other_admin_session_token;
      default:
        return undefined;
    }
  }

  /** The secret's value in the body: the marker, alone or in something else. */
  function secretValue(s: SecretPlan): Json {
    switch (s.shape) {
      case "plain":
        return s.marker;
      case "padded":
        return `${s.pad[0]}${s.marker}${s.pad[1]}`;
      case "long":
        return `${s.marker}${"s".repeat(5000)}`;
      case "credential-like":
        return `gpr_${s.marker}`;
      case "number":
        return Number(s.marker);
      case "in an array":
        return [s.marker];
      case "in an object":
        return { value: s.marker };
    }
  }

  function build(plan: Plan, w: World): Hostile {
    const route = routeBy(plan.route);
    const control = route.pattern.startsWith("/_control");
    const params = route.params?.(w) ?? [];
    if (plan.id) params[plan.id.param % Math.max(1, params.length)] = wireId(w, plan.id.plan);
    let i = 0;
    let path = route.pattern.replace(/:[a-z_]+/g, () => params[i++] ?? "");
    if (plan.query) {
      const q = [...plan.query.params];
      if (plan.query.repeat && q[0]) q.push([q[0][0], `${q[0][1]}2`]);
      path += `?${q.map(([k, v]) => `${k}=${v}`).join("&")}${plan.query.tail}`;
    }

    const headers: Record<string, string> = {};
    const token = tokenOf(w, plan.caller);
    const secrets: Hostile["secrets"] = [];
    if (control) {
      if (plan.caller === "no token") {
        // no X-Control-Token
      } else if (typeof plan.caller === "object") headers["x-control-token"] = plan.caller.header;
      else headers["x-control-token"] = fb().controlToken;
      secrets.push({ marker: fb().controlToken, always: true });
    } else if (typeof plan.caller === "object") headers.authorization = plan.caller.header;
    else if (token) headers.authorization = `Bearer ${token}`;
    // The part of a token no answer ever shows (an API key object shows its first 12 characters).
    if (token) secrets.push({ marker: token.slice(12), always: true });
    if (plan.orgHeader !== undefined) {
      headers["x-org-id"] =
        plan.orgHeader === "own"
          ? w.creds.org_id
          : plan.orgHeader === "other"
            ? w.creds.other_org_id
            : plan.orgHeader;
    }

    let valid = route.body?.(w);
    if (plan.secret && valid) {
      const s = plan.secret;
      if (s.carrier === "secret env value") {
        const entries = [...s.otherEnv];
        entries.splice(s.at % (entries.length + 1), 0, {
          key: "SECRET_PIN",
          value: secretValue(s),
          secret: true,
        });
        valid = { ...valid, env_overrides: entries };
        // A control route answers the template it made, env and all: only its refusals are judged.
        secrets.push({ marker: s.marker, always: !control });
      } else {
        const carried = token ?? w.creds.admin_session_token;
        const path = pick(valid, s.at) ?? ["token"];
        valid = withAt(valid, path, carried) as JsonObject;
        // Put into a field an accepted answer shows (a label, a name), it may come back then.
        const marker = carried.slice(12);
        for (const x of secrets) if (x.marker === marker) x.always = false;
        secrets.push({ marker, always: false });
      }
    }
    const body = valid && plan.body ? encodeBody(valid, plan.body, idsOf(w)) : undefined;
    if (body !== undefined && plan.contentType !== null) {
      headers["content-type"] = plan.contentType ?? "application/json";
    }
    return { route, method: route.method, path, headers, body, secrets };
  }

  // ---- sending and judging ----------------------------------------------------------------------

  type Heard = Answer & { text: string };

  /** Sends exactly these bytes (node:http leaves the path as it is, dots and all). */
  function send(r: Hostile): Promise<Heard> {
    const url = new URL(fb().url);
    return new Promise((resolve, reject) => {
      const req = request(
        { host: url.hostname, port: url.port, method: r.method, path: r.path, headers: r.headers, agent },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("error", reject);
          res.on("end", () => {
            const text = Buffer.concat(chunks).toString("utf8");
            let body: unknown;
            try {
              body = text === "" ? undefined : JSON.parse(text);
            } catch {
              body = text;
            }
            const headers = new Headers();
            for (const [k, v] of Object.entries(res.headers)) {
              if (v !== undefined) headers.set(k, Array.isArray(v) ? v.join(", ") : v);
            }
            resolve({ status: res.statusCode ?? 0, body, headers, text });
          });
        },
      );
      req.setTimeout(15_000, () => req.destroy(new Error("no answer within 15 s")));
      req.on("error", reject);
      req.end(r.body);
    });
  }

  function judge(r: Hostile, a: Heard): void {
    const said = `${r.method} ${r.path.slice(0, 300)} answered ${a.status} ${a.text.slice(0, 500)}`;
    const fail = (what: string) => {
      throw new Error(`${what}: ${said}`);
    };
    const e = errorOf(a);
    const documented5xx =
      a.status === 503 &&
      routeName(r.route) === "POST /v1/instances/:id/start" &&
      e?.code === "START_UNAVAILABLE";
    if (a.status >= 500 && !documented5xx) fail("a 5xx for a bad request");
    const requestId = a.headers.get("x-request-id");
    if (!requestId) fail("no X-Request-Id");
    const refused = a.status >= 300;
    if (refused) {
      if (!/^application\/json\b/.test(a.headers.get("content-type") ?? ""))
        fail("a refusal that is not JSON");
      if (e === null || typeof e !== "object" || Array.isArray(e)) fail("a refusal without an error object");
      if (Object.keys(a.body).join() !== "error") fail("a refusal with more than the error object");
      if (typeof e.code !== "string" || e.code === "") fail("an error without a code");
      if (typeof e.message !== "string" || e.message === "") fail("an error without a message");
      if (e.request_id !== requestId) fail("an error whose request_id is not the X-Request-Id");
      if (e.code === "VALIDATION_ERROR" && (typeof e.field !== "string" || e.field === "")) {
        fail("a VALIDATION_ERROR naming no field");
      }
      if (e.code === "VALIDATION_ERROR" && a.status !== 422) fail("a VALIDATION_ERROR that is not a 422");
    } else if (a.status !== 204 && (a.body === null || typeof a.body !== "object")) {
      fail("an accepted request answered with no JSON object");
    }
    const heard = `${a.text}\n${JSON.stringify([...a.headers])}`;
    for (const s of r.secrets) {
      if ((s.always || refused) && heard.includes(s.marker))
        fail(`an answer repeating a secret (${s.marker})`);
    }
  }

  /** After an accepted request: every list of /v1 still answers, and without the secrets. */
  async function stillServes(w: World, secrets: Hostile["secrets"]): Promise<void> {
    const f = fb();
    // A fresh admin: the request may have removed the world's (DELETE .../members/...).
    const user = f.createUser({ email: `probe-${Date.now()}@demo.example` });
    f.addMember(w.creds.org_id, user.id, "admin");
    const token = f.createSession(user.id, w.creds.org_id);
    for (const path of [
      "/v1/instances?include_destroyed=true",
      "/v1/offers?include_unavailable=true",
      "/v1/offers/summary",
      "/v1/templates",
      "/v1/api-keys",
      "/v1/billing/transactions",
      "/v1/billing/spend-daily",
      "/v1/ssh-keys",
      "/v1/orgs/current/members",
    ]) {
      const a = await call(f, "GET", path, { token });
      if (a.status !== 200)
        throw new Error(`after it, GET ${path} answered ${a.status} ${JSON.stringify(a.body)}`);
      const text = JSON.stringify(a.body);
      for (const s of secrets) {
        if (s.always && text.includes(s.marker)) throw new Error(`after it, GET ${path} shows a secret`);
      }
    }
  }

  /** One case: the world as it was, the request, the rules; the world rebuilt if it changed. */
  async function exercise(plan: Plan): Promise<void> {
    const w = world ?? (await buildWorld());
    // Rebuilt for the next case unless this one leaves it exactly as it was (a failure does not).
    world = undefined;
    const r = build(plan, w);
    const before = snapshot();
    const a = await send(r);
    judge(r, a);
    const changed = snapshot() !== before;
    if (a.status >= 300 && changed)
      throw new Error(`a refused request changed the state: ${r.method} ${r.path}`);
    // The control routes may change what the state does not hold (the clock, the transitions).
    if (a.status < 300 && (changed || r.route.pattern.startsWith("/_control"))) {
      await stillServes(w, r.secrets);
      return;
    }
    world = w;
  }

  beforeEach(() => {
    world = undefined;
  });

  // ---- generators -------------------------------------------------------------------------------

  const printable = (maxLength: number) =>
    fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength });

  const caller: fc.Arbitrary<CallerPlan> = fc.oneof(
    { weight: 12, arbitrary: fc.constant<CallerPlan>("admin") },
    {
      weight: 4,
      arbitrary: fc.constantFrom<CallerPlan>(
        "member",
        "personal key",
        "team key",
        "other org's admin",
        "no token",
      ),
    },
    {
      weight: 1,
      arbitrary: fc
        .oneof(
          printable(40),
          printable(40).map((s) => `Bearer ${s}`),
          fc.constantFrom(
            "Bearer",
            "Bearer ",
            "bearer gps_",
            "Basic dXNlcjpwYXNz",
            `Bearer gpr_${"0".repeat(48)}`,
          ),
          fc.integer({ min: 1000, max: 20_000 }).map((n) => `Bearer ${"a".repeat(n)}`),
        )
        .map((header) => ({ header })),
    },
  );

  const orgHeader = fc.oneof(
    { weight: 12, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: fc.oneof(fc.constantFrom("own", "other", ""), printable(40)) },
  );

  const idPlan: fc.Arbitrary<IdPlan> = fc.oneof(
    {
      weight: 2,
      arbitrary: fc.record({
        known: fc.constantFrom<KnownId>(
          "running",
          "stopped",
          "offer",
          "template",
          "template hash",
          "personal key",
          "member",
        ),
        twist: fc.constantFrom(
          "as is" as const,
          "upper case" as const,
          "one more segment" as const,
          "cut short" as const,
        ),
      }),
    },
    { weight: 3, arbitrary: fc.string({ maxLength: 40 }).map((s) => ({ wire: pct(s) })) },
    { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 20 }).map((s) => ({ wire: pct(s) })) },
    // Raw bytes, invalid UTF-8 among them.
    { weight: 2, arbitrary: fc.uint8Array({ minLength: 1, maxLength: 12 }).map((b) => ({ wire: pct(b) })) },
    {
      weight: 3,
      arbitrary: fc
        .constantFrom(
          ".",
          "..",
          "...",
          "%2e",
          "%2e%2e",
          "%2E.",
          "a.b",
          ".env",
          "..;",
          "%2e%2e%2f%2e%2e",
          "%2F",
          "a%2Fb",
          "%00",
          "%ff",
          "%",
          "%zz",
          "%E0%A4%A",
          "%C0%AE",
          "100%25",
          "__proto__",
          "constructor",
          "toString",
          "hasOwnProperty",
          "%5F_proto__",
          "null",
          "undefined",
          "-1",
          "0",
          "*",
          ";",
          "+",
          "@",
          "00000000-0000-4000-8000-000000000000",
          `gpr_${"0".repeat(48)}`,
        )
        .map((wire) => ({ wire })),
    },
    {
      weight: 2,
      arbitrary: fc
        .tuple(
          fc.constantFrom("a", "%41", "%E2%82%AC", "."),
          // Around the router's 1024-character limit, and past the 16 KiB header limit.
          fc.oneof(
            fc.integer({ min: 1000, max: 1100 }),
            fc.integer({ min: 100, max: 2000 }),
            fc.constant(6000),
          ),
        )
        .map(([unit, n]) => ({ wire: unit.repeat(n) })),
    },
  );

  const queryPart = (known: string[]) =>
    fc.oneof(
      {
        weight: 4,
        arbitrary: known.length > 0 ? fc.constantFrom(...known).map((s) => pct(s)) : fc.constant("x"),
      },
      { weight: 3, arbitrary: fc.string({ maxLength: 12 }).map((s) => pct(s)) },
      {
        weight: 1,
        arbitrary: fc.constantFrom(
          "__proto__",
          "constructor",
          "tail[]",
          "a[b]",
          "%",
          "%zz",
          "%E0%A4%A",
          "%00",
          "+",
          "",
        ),
      },
      { weight: 1, arbitrary: fc.uint8Array({ maxLength: 8 }).map((b) => pct(b)) },
      {
        weight: 1,
        arbitrary: fc
          .tuple(
            fc.constantFrom("1", "%E2%82%AC"),
            // Huge, and now and then past the 16 KiB limit of the request line and headers.
            fc.oneof(
              { weight: 6, arbitrary: fc.integer({ min: 100, max: 1500 }) },
              { weight: 1, arbitrary: fc.constant(2000) },
            ),
          )
          .map(([unit, n]) => unit.repeat(n)),
      },
    );

  const queryFor = (r: Route) => {
    const keys = Object.keys(r.query ?? {});
    const values = Object.values(r.query ?? {}).flat();
    return fc.record({
      params: fc.array(fc.tuple(queryPart(keys), queryPart(values)), { maxLength: 5 }),
      repeat: fc.nat(3).map((n) => n === 0),
      tail: fc.constantFrom("", "", "", "&", "&&", "=", "#frag", "?", "%", ";x"),
    });
  };

  const secretPlan = (carrier: SecretPlan["carrier"]): fc.Arbitrary<SecretPlan> =>
    fc.record({
      carrier: fc.constant(carrier),
      // 12 digits: a number the JSON of an answer holds only if it repeats it.
      marker: fc.integer({ min: 100_000_000_000, max: 999_999_999_999 }).map(String),
      // A number is the shape a refusal would repeat (a short scalar): more often.
      shape: fc.oneof(
        { weight: 2, arbitrary: fc.constant<SecretPlan["shape"]>("number") },
        {
          weight: 5,
          arbitrary: fc.constantFrom<SecretPlan["shape"]>(
            "plain",
            "padded",
            "long",
            "credential-like",
            "in an array",
            "in an object",
          ),
        },
      ),
      pad: fc.tuple(fc.string({ maxLength: 10 }), fc.string({ maxLength: 10 })),
      at: fc.nat(20),
      otherEnv: fc.array(
        fc.oneof(
          {
            weight: 4,
            arbitrary: fc.record({
              key: fc.string({ maxLength: 10 }),
              value: fc.string({ maxLength: 10 }),
              secret: fc.boolean(),
            }),
          },
          { weight: 1, arbitrary: json },
        ),
        { maxLength: 3 },
      ),
    });

  const plans = (
    routes: string[],
    extra: (route: Route) => fc.Arbitrary<Partial<Plan>>,
  ): fc.Arbitrary<Plan> =>
    fc
      .constantFrom(...routes)
      .chain((name) =>
        fc
          .record({ route: fc.constant(name), caller, orgHeader, more: extra(routeBy(name)) })
          .map(({ more, ...p }): Plan => ({ ...p, ...more })),
      );

  const withBody = (rs: Route[]) => names(rs.filter((r) => r.body));
  const run = (arb: fc.Arbitrary<Plan>) =>
    fc.assert(fc.asyncProperty(arb, exercise), { seed: SEED, numRuns: RUNS });

  // ---- the properties ---------------------------------------------------------------------------

  test("any body on any route that takes one: never a 5xx, refused in the one error shape, nothing changed", async () => {
    await run(
      // /v1 more often than /_control, and the deploy, which has the most checks, more often still.
      plans(
        [...withBody(V1), ...withBody(V1), ...Array(6).fill("POST /v1/instances"), ...withBody(CONTROL)],
        () => fc.record({ body: bodyPlan, contentType }),
      ),
    );
  });

  test("any path id, percent-encoded bytes, dots and very long ids included: refused in the one error shape", async () => {
    await run(
      plans(
        names(ROUTES.filter((r) => r.params)),
        (r) =>
          fc.record({
            id: fc.record({ plan: idPlan, param: fc.nat(1) }),
            body: r.body
              ? fc.oneof({ weight: 4, arbitrary: fc.constant<BodyPlan>({ kind: "valid" }) }, bodyPlan)
              : fc.constant(undefined),
          }) as fc.Arbitrary<Partial<Plan>>,
      ),
    );
  });

  test("any query, repeated and huge parameters included: refused in the one error shape", async () => {
    await run(
      plans(names(ROUTES.filter((r) => r.method === "GET")), (r) => fc.record({ query: queryFor(r) })),
    );
  });

  test("a secret env value or a token sent in a body is never repeated back", async () => {
    const damage = bodyPlan.filter((b) =>
      [
        "valid",
        "field of another type",
        "another record's id",
        "field removed",
        "unknown fields",
        "array for an object",
      ].includes(b.kind),
    );
    // Mostly the secret alone, so that the refusal, if any, is of the secret itself.
    const mostlyValid = fc.oneof({ weight: 2, arbitrary: fc.constant<BodyPlan>({ kind: "valid" }) }, damage);
    await run(
      fc.oneof(
        plans(["POST /v1/instances", "POST /_control/templates"], () =>
          fc.record({ secret: secretPlan("secret env value"), body: mostlyValid }),
        ),
        // The control API too: it names in its refusals the ids it was given ("unknown user <id>"),
        // and a token given as one is masked there as everywhere (errorBody, http.ts).
        plans(withBody(ROUTES), () => fc.record({ secret: secretPlan("token in a field"), body: damage })),
      ),
    );
  });

  test("after all of it the server still deploys, reads, stops and destroys as the contract says", async () => {
    const f = fb();
    const token = creds().admin_session_token;
    const id = await runningInstance(f, creds(), token, { label: "after" });
    const got = await call(f, "GET", `/v1/instances/${id}`, { token });
    expect(got.body).toMatchObject({ id, status: "running", label: "after" });
    const stop = await call(f, "POST", `/v1/instances/${id}/stop`, { token });
    expect([stop.status, stop.body.status]).toEqual([200, "stopping"]);
    const gone = await call(f, "DELETE", `/v1/instances/${id}`, { token });
    expect(gone.status).toBe(200);
    const list = await call(f, "GET", "/v1/instances?include_destroyed=true", { token });
    expect(list.body.items.map((i: { id: string }) => i.id)).toEqual([id]);
    const refused = await call(f, "GET", "/v1/instances/nope", { token });
    expect(errorOf(refused)).toMatchObject({
      code: "INSTANCE_NOT_FOUND",
      request_id: refused.headers.get("x-request-id"),
    });
  });
});
