import { z } from "zod";
import { ApiFailure, type ErrorExtras, UnreadableBody } from "../errors";

/**
 * A number as the range checks read it: Infinity (a body's `1e999`, which JSON.parse reads so, or a
 * query's) as the largest double, so that it fails the range with the limit, not zod's type check
 * ("received Infinity") without one. parseOr422 repeats the value as it was sent, not this one.
 */
function beyondEveryDouble(value: unknown): unknown {
  if (value === Number.POSITIVE_INFINITY) return Number.MAX_VALUE;
  if (value === Number.NEGATIVE_INFINITY) return -Number.MAX_VALUE;
  return value;
}

/**
 * An integer from `min` to `max` (no upper bound without one), of a JSON body or, coerced from its
 * text, of a query. The range comes before int(): zod reports its safe-integer bound otherwise, not
 * ours (`1e300` would be refused with a limit of 9007199254740991).
 */
function intIn(from: "body" | "query", min: number, max?: number) {
  const inRange = max === undefined ? z.number().min(min) : z.number().min(min).max(max);
  return z.preprocess((v) => beyondEveryDouble(from === "query" ? Number(v) : v), inRange.int());
}

const uuid = z
  .string()
  .regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i, "must be a UUID");

/** POST /v1/api-keys body. */
export const createApiKeyBody = z.object({
  name: z.string().min(1).max(64),
  kind: z.enum(["personal", "team"]).default("personal"),
});

/** POST /v1/instances body (contract 4.2). */
export const deployBody = z.object({
  offer_id: uuid,
  template_id: uuid,
  disk_gb: intIn("body", 10, 20000),
  label: z.string().max(64).nullable().optional(),
  ssh_key_id: uuid.nullable().optional(),
  env_overrides: z
    .array(
      z.object({
        key: z.string().min(1).max(256),
        value: z.string().max(4096).nullable(),
        secret: z.boolean().default(false),
      }),
    )
    .max(100)
    .optional(),
});

const boolQuery = z
  .enum(["true", "false", "1", "0"])
  .optional()
  .transform((v) => v === "true" || v === "1");

/** GET /v1/instances query. */
export const listInstancesQuery = z.object({ include_destroyed: boolQuery });

/** GET /v1/instances/{id}/logs query. */
export const logsQuery = z.object({ tail: intIn("query", 1, 1000).default(200) });

/** GET /v1/offers query. */
export const offersQuery = z.object({
  gpu_model: z.string().optional(),
  num_gpus: intIn("query", 1).optional(),
  sort: z.enum(["price_asc", "price_desc"]).optional(),
  include_unavailable: boolQuery,
});

/** GET /v1/templates query. */
export const templatesQuery = z.object({
  tab: z.enum(["recommended", "system", "public", "mine", "all"]).default("all"),
  mode: z.enum(["ssh", "jupyter", "vm"]).optional(),
});

/** GET /v1/billing/transactions query. */
export const transactionsQuery = z.object({
  instance_id: z.string().optional(),
  limit: intIn("query", 1, 1000).default(100),
});

/** GET /v1/billing/spend-daily query. */
export const spendDailyQuery = z.object({ days: intIn("query", 1, 90).default(30) });

/** POST /v1/billing/orders body. */
export const orderBody = z.object({ amount_micro: intIn("body", 1, 1_000_000_000_000) });

/** POST /v1/ssh-keys body. */
export const sshKeyBody = z.object({
  name: z.string().min(1).max(64),
  public_key: z
    .string()
    .max(16384)
    .regex(
      /^(ssh-ed25519|ssh-rsa|ecdsa-sha2-nistp(256|384|521)|sk-ssh-ed25519@openssh\.com) [A-Za-z0-9+/=]+( .*)?$/,
      {
        message: "must be an OpenSSH public key",
      },
    ),
});

/** POST /v1/orgs/current/invites body. */
export const inviteBody = z
  .object({
    email: z.string().email().optional(),
    phone: z.string().min(5).max(32).optional(),
    role: z.enum(["admin", "member"]).default("member"),
  })
  .refine((v) => v.email !== undefined || v.phone !== undefined, { message: "email or phone is required" });

/**
 * The issue of a union (`mode`: a name or `{ afterMs }`) that says what is wrong: zod's own is
 * "Invalid input", which names no form. The branch that got furthest into the value (an object
 * whose field is wrong) gives its issue; when none got past the value itself, the message lists
 * what each branch expected.
 */
function unionIssue(issue: z.core.$ZodIssue): z.core.$ZodIssue {
  if (issue.code !== "invalid_union") return issue;
  const firsts = issue.errors.map((branch) => branch[0]).filter((i): i is z.core.$ZodIssue => !!i);
  const deepest = firsts.reduce<z.core.$ZodIssue | undefined>(
    (best, i) => (best === undefined || i.path.length > best.path.length ? i : best),
    undefined,
  );
  if (!deepest) return issue;
  if (deepest.path.length > 0) {
    const inner = unionIssue(deepest);
    return { ...inner, path: [...issue.path, ...inner.path] };
  }
  const expected = firsts.map((i) => i.message.replace(/^Invalid (input|option): /, ""));
  return { ...issue, message: `Invalid input: ${[...new Set(expected)].join(", or ")}` };
}

function valueAt(data: unknown, path: PropertyKey[]): unknown {
  let cur: unknown = data;
  for (const p of path) {
    // Stryker disable next-line ConditionalExpression,LogicalOperator: zod never reports a path below a value that is not an object, so the walk never meets one; the guard keeps a future schema from crashing it
    if (cur === null || typeof cur !== "object") return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[p];
  }
  return cur;
}

/**
 * Whether a refused value may be repeated in the answer: short scalars only, so a request never
 * gets a large or secret-looking value back (nothing holding a credential prefix, wherever in the
 * value), and never an env entry's value, which may be a secret whatever its type. A field named
 * `value` is always an env entry's (a deploy's `env_overrides`, a template's `env` given to the
 * control API), so none is ever repeated.
 */
function echoable(
  path: readonly PropertyKey[],
  value: unknown,
): { ok: true; value: string | number | boolean | null } | { ok: false } {
  if (path[path.length - 1] === "value") return { ok: false };
  // A number beyond every double (`1e999` in the body text) as what was sent: JSON has no Infinity,
  // and would say null.
  if (typeof value === "number" && !Number.isFinite(value)) return { ok: true, value: String(value) };
  if (typeof value === "number" || typeof value === "boolean" || value === null) return { ok: true, value };
  if (typeof value === "string" && value.length <= 64 && !/gp[rs]_/.test(value)) return { ok: true, value };
  return { ok: false };
}

/** Parses with a schema or throws 422 VALIDATION_ERROR naming the field, limit and value. */
export function parseOr422<S extends z.ZodType>(
  schema: S,
  data: unknown,
  where: "body" | "query",
): z.output<S> {
  if (data instanceof UnreadableBody) throw data.failure;
  if (where === "query" && data !== null && typeof data === "object") {
    // A parameter given twice arrives as an array; say so instead of a confusing type error.
    for (const [k, v] of Object.entries(data)) {
      if (Array.isArray(v)) {
        // A parameter without a name (`?=1&=2`) is named as the query: a field is never "".
        const field = k === "" ? where : k;
        const what = k === "" ? "a parameter without a name is given" : "given";
        throw new ApiFailure(422, "VALIDATION_ERROR", `${field}: ${what} ${v.length} times; give it once`, {
          field,
        });
      }
    }
  }
  // A JSON null body reads as a missing one; a query is always an object (the router's).
  const result = schema.safeParse(data ?? undefined);
  if (result.success) return result.data;
  const first = result.error.issues[0];
  // Stryker disable next-line all: a failed parse always carries at least one issue
  if (!first) throw new ApiFailure(422, "VALIDATION_ERROR", `Invalid ${where}`, { field: where });
  const issue = unionIssue(first);
  const field = issue.path.map(String).join(".") || where;
  const extras: ErrorExtras = { field };
  if (issue.code === "too_big") extras.limit = Number(issue.maximum);
  if (issue.code === "too_small") extras.limit = Number(issue.minimum);
  const echo = echoable(issue.path, valueAt(data, issue.path));
  if (echo.ok) extras.value = echo.value;
  // The message names the value too when it is safe to echo, so a log line alone explains it.
  const got = "value" in extras ? `; got ${JSON.stringify(extras.value)}` : "";
  throw new ApiFailure(422, "VALIDATION_ERROR", `${field}: ${issue.message}${got}`, extras);
}
