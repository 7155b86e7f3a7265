import { firstUnsafeCharacter } from "../../src/display";
import { call, createKey, deploy, errorOf, runningInstance, useFake } from "./helpers";

describe("robustness: one error shape for every bad request", () => {
  const { fb, creds } = useFake();
  const admin = () => creds().admin_session_token;

  test("malformed JSON is 400 INVALID_JSON with request_id repeating X-Request-Id", async () => {
    const a = await call(fb(), "POST", "/v1/instances", { token: admin(), rawBody: '{"offer_id": ' });
    expect(a.status).toBe(400);
    expect(errorOf(a)).toMatchObject({ code: "INVALID_JSON", message: expect.any(String) });
    expect(errorOf(a).request_id).toBe(a.headers.get("x-request-id"));
  });

  test("wrong types are 422 VALIDATION_ERROR naming the field", async () => {
    const a = await deploy(fb(), creds(), admin(), { offer_id: 42 });
    expect(errorOf(a)).toMatchObject({ code: "VALIDATION_ERROR", field: "offer_id", value: 42 });
    const arr = await call(fb(), "POST", "/v1/instances", { token: admin(), body: [1, 2] });
    expect(errorOf(arr)).toMatchObject({ code: "VALIDATION_ERROR", field: "body" });
    const missing = await call(fb(), "POST", "/v1/instances", { token: admin() });
    expect(errorOf(missing)).toMatchObject({ code: "VALIDATION_ERROR", field: "body" });
    const env = await deploy(fb(), creds(), admin(), {
      env_overrides: [{ key: "A", value: 1, secret: false }],
    });
    expect(errorOf(env)).toMatchObject({ code: "VALIDATION_ERROR", field: "env_overrides.0.value" });
    // An env value may be a secret whatever its type: it is never repeated back.
    const secretEnv = await deploy(fb(), creds(), admin(), {
      env_overrides: [{ key: "PIN", value: 48151623, secret: true }],
    });
    expect(errorOf(secretEnv)).not.toHaveProperty("value");
    expect(JSON.stringify(secretEnv.body)).not.toContain("48151623");
  });

  test("what an answer quotes from the request reaches a raw reader with nothing a terminal obeys", async () => {
    const hostile = "x\u009b2J\u202e\u2028\u007f\u001b]0;t\u0007";
    const raw = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${fb().url}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${admin()}`,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return res.text();
    };
    const answers = [
      await raw("GET", `/v1/offers/${encodeURIComponent(hostile)}`),
      await raw("POST", "/v1/api-keys", { name: 7, kind: hostile }),
      await raw("POST", "/v1/instances", { offer_id: hostile, template_id: hostile, disk_gb: hostile }),
    ];
    for (const text of answers) {
      expect(firstUnsafeCharacter(text)).toBeUndefined();
    }
    // The same value to any JSON reader.
    expect(JSON.parse(answers[0]!).error.message).toContain(hostile);
  });

  test("a body over 1 MiB is 413 PAYLOAD_TOO_LARGE", async () => {
    const a = await call(fb(), "POST", "/v1/api-keys", {
      token: admin(),
      rawBody: JSON.stringify({ name: "x".repeat(1024 * 1024 + 10) }),
    });
    expect(a.status).toBe(413);
    expect(errorOf(a).code).toBe("PAYLOAD_TOO_LARGE");
  });

  test("a body without a JSON content type is 415 UNSUPPORTED_MEDIA_TYPE", async () => {
    const a = await call(fb(), "POST", "/v1/api-keys", {
      token: admin(),
      rawBody: "name=x",
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect([a.status, errorOf(a).code]).toEqual([415, "UNSUPPORTED_MEDIA_TYPE"]);
  });

  test("unknown routes are 404 NOT_FOUND; known paths with another method are 405 METHOD_NOT_ALLOWED", async () => {
    const a = await call(fb(), "GET", "/v1/nothing-here", { token: admin() });
    expect([a.status, errorOf(a).code]).toEqual([404, "NOT_FOUND"]);
    const b = await call(fb(), "PATCH", "/v1/instances/00000000-0000-4000-8000-000000000001", {
      token: admin(),
    });
    expect([b.status, errorOf(b).code]).toEqual([405, "METHOD_NOT_ALLOWED"]);
    expect(b.headers.get("allow")).toContain("GET");
    // Trailing slashes are not normalised, and an empty id is no id.
    for (const [method, path] of [
      ["GET", "/v1/instances/"],
      ["DELETE", "/v1/instances/"],
      ["GET", "/v1/api-keys/"],
    ]) {
      const c = await call(fb(), method!, path!, { token: admin() });
      expect([path, c.status, errorOf(c).code]).toEqual([path, 404, "NOT_FOUND"]);
    }
  });

  test("POST stop with a JSON content type and an empty body is accepted", async () => {
    const id = await runningInstance(fb(), creds());
    const a = await call(fb(), "POST", `/v1/instances/${id}/stop`, {
      token: admin(),
      headers: { "content-type": "application/json" },
      rawBody: "",
    });
    expect(a.status).toBe(200);
  });

  test("documented order: the token, X-Org-Id and the route's permission come before an unreadable body", async () => {
    const bad = { rawBody: '{"name": ' };
    const noToken = await call(fb(), "POST", "/v1/api-keys", bad);
    expect([noToken.status, errorOf(noToken).code]).toEqual([401, "TOKEN_INVALID"]);
    const otherOrg = await call(fb(), "POST", "/v1/api-keys", {
      ...bad,
      token: admin(),
      headers: { "x-org-id": "00000000-0000-4000-8000-00000000ffff" },
    });
    expect([otherOrg.status, errorOf(otherOrg).code]).toEqual([403, "ORG_MISMATCH"]);
    const { secret } = await createKey(fb(), admin());
    const viaKey = await call(fb(), "POST", "/v1/api-keys", { ...bad, token: secret });
    expect([viaKey.status, errorOf(viaKey).code]).toEqual([403, "ADMIN_REQUIRED"]);
    const member = await call(fb(), "POST", "/v1/billing/orders", {
      rawBody: "amount=1",
      headers: { "content-type": "text/plain" },
      token: creds().member_session_token,
    });
    expect([member.status, errorOf(member).code]).toEqual([403, "ADMIN_REQUIRED"]);
    // Once those pass, the body itself is refused.
    const admins = await call(fb(), "POST", "/v1/api-keys", { ...bad, token: admin() });
    expect([admins.status, errorOf(admins).code]).toEqual([400, "INVALID_JSON"]);
    const form = await call(fb(), "POST", "/v1/api-keys", {
      rawBody: "name=x",
      headers: { "content-type": "text/plain" },
      token: admin(),
    });
    expect([form.status, errorOf(form).code]).toEqual([415, "UNSUPPORTED_MEDIA_TYPE"]);
  });

  test("a validation message names the field, the limit and the value", async () => {
    const a = await deploy(fb(), creds(), admin(), { disk_gb: 5 });
    expect(errorOf(a)).toMatchObject({ field: "disk_gb", limit: 10, value: 5 });
    expect(errorOf(a).message).toMatch(/^disk_gb: .*>=10; got 5$/);
    const order = await call(fb(), "POST", "/v1/billing/orders", {
      token: admin(),
      body: { amount_micro: 1e300 },
    });
    expect(errorOf(order)).toMatchObject({ field: "amount_micro", limit: 1_000_000_000_000 });
  });

  test("a refused value is repeated back only when it is a short scalar that holds no credential", async () => {
    const refused = async (over: Record<string, unknown>) =>
      errorOf(await deploy(fb(), creds(), admin(), over));
    expect(await refused({ disk_gb: true })).toMatchObject({ field: "disk_gb", value: true });
    expect((await refused({ disk_gb: true })).message).toMatch(/^disk_gb: .*; got true$/);
    expect(await refused({ offer_id: null })).toMatchObject({ field: "offer_id", value: null });
    const longest = "x".repeat(64);
    expect(await refused({ offer_id: longest })).toMatchObject({ field: "offer_id", value: longest });
    // Longer values, and values holding a credential prefix anywhere, are named but not repeated.
    for (const offer_id of ["x".repeat(65), `gpr_${"a".repeat(48)}`, "my gps_token"]) {
      const e = await refused({ offer_id });
      expect(e).toMatchObject({ code: "VALIDATION_ERROR", field: "offer_id" });
      expect(e).not.toHaveProperty("value");
      expect(e.message).toBe("offer_id: must be a UUID");
    }
    // An env entry's key is repeated; its value never is, whatever it is.
    expect(await refused({ env_overrides: [{ key: "", value: "v", secret: false }] })).toMatchObject({
      field: "env_overrides.0.key",
      value: "",
    });
    const env = await refused({ env_overrides: [{ key: "K", value: 7, secret: false }] });
    expect(env).not.toHaveProperty("value");
    expect(env.message).toMatch(/^env_overrides\.0\.value: [^;]+$/);
  });

  test("include_destroyed takes true, 1, false or 0, and nothing else", async () => {
    const id = await runningInstance(fb(), creds());
    await call(fb(), "DELETE", `/v1/instances/${id}`, { token: admin() });
    expect(fb().instance(id)?.status).toBe("destroyed");
    const listed = async (q: string) =>
      (await call(fb(), "GET", `/v1/instances${q}`, { token: admin() })).body.items.map(
        (i: { id: string }) => i.id,
      );
    expect(await listed("?include_destroyed=true")).toEqual([id]);
    expect(await listed("?include_destroyed=1")).toEqual([id]);
    expect(await listed("?include_destroyed=false")).toEqual([]);
    expect(await listed("?include_destroyed=0")).toEqual([]);
    expect(await listed("")).toEqual([]);
    const bad = await call(fb(), "GET", "/v1/instances?include_destroyed=yes", { token: admin() });
    expect(errorOf(bad)).toMatchObject({
      code: "VALIDATION_ERROR",
      field: "include_destroyed",
      value: "yes",
    });
  });

  test("an invite names an email or a phone", async () => {
    const none = await call(fb(), "POST", "/v1/orgs/current/invites", {
      token: admin(),
      body: { role: "member" },
    });
    expect([none.status, errorOf(none).code, errorOf(none).message]).toEqual([
      422,
      "VALIDATION_ERROR",
      "body: email or phone is required",
    ]);
    for (const body of [{ email: "new@demo.example" }, { phone: "+4912345678" }]) {
      const ok = await call(fb(), "POST", "/v1/orgs/current/invites", { token: admin(), body });
      expect(ok.status).toBe(201);
    }
  });

  test("a query parameter given twice is a VALIDATION_ERROR saying so", async () => {
    const a = await call(fb(), "GET", "/v1/offers?num_gpus=1&num_gpus=2", { token: admin() });
    expect([a.status, errorOf(a).code, errorOf(a).field]).toEqual([422, "VALIDATION_ERROR", "num_gpus"]);
    expect(errorOf(a).message).toBe("num_gpus: given 2 times; give it once");
  });

  test("a path that is not valid URL encoding, or an absurdly long id, answers in the one error shape", async () => {
    const a = await call(fb(), "GET", "/v1/instances/%E0%A4%A", { token: admin() });
    expect([a.status, errorOf(a).code]).toEqual([400, "BAD_REQUEST"]);
    expect(errorOf(a).request_id).toBe(a.headers.get("x-request-id"));
    const long = await call(fb(), "GET", `/v1/instances/${"a".repeat(500)}`, { token: admin() });
    expect([long.status, errorOf(long).code]).toEqual([404, "INSTANCE_NOT_FOUND"]);
    const absurd = await call(fb(), "GET", `/v1/instances/${"a".repeat(5000)}`, { token: admin() });
    expect([absurd.status, errorOf(absurd).code]).toEqual([404, "NOT_FOUND"]);
  });

  test.each(["__proto__", "constructor", "toString"])(
    "an id named like an object member (%s) is unknown on every by-id route",
    async (id) => {
      const cases: [string, string, string][] = [
        ["GET", `/v1/offers/${id}`, "OFFER_NOT_FOUND"],
        ["GET", `/v1/templates/${id}`, "TEMPLATE_NOT_FOUND"],
        ["POST", `/v1/templates/${id}/duplicate`, "TEMPLATE_NOT_FOUND"],
        ["GET", `/v1/instances/${id}`, "INSTANCE_NOT_FOUND"],
        ["POST", `/v1/instances/${id}/stop`, "INSTANCE_NOT_FOUND"],
        ["DELETE", `/v1/instances/${id}`, "INSTANCE_NOT_FOUND"],
        ["GET", `/v1/instances/${id}/logs`, "INSTANCE_NOT_FOUND"],
        ["DELETE", `/v1/api-keys/${id}`, "API_KEY_NOT_FOUND"],
      ];
      for (const [method, path, code] of cases) {
        const a = await call(fb(), method, path, { token: admin() });
        expect([method, path, a.status, errorOf(a).code]).toEqual([method, path, 404, code]);
      }
    },
  );

  test("nothing crashes the server: a burst of garbage, then a normal request", async () => {
    const garbage = ["{", "[", "null", '"str"', "1e999", '{"disk_gb":{}}', "\u0000"];
    for (const raw of garbage) {
      const a = await call(fb(), "POST", "/v1/instances", { token: admin(), rawBody: raw });
      expect(a.status).toBeGreaterThanOrEqual(400);
      expect(a.status).toBeLessThan(500);
      expect(typeof errorOf(a).code).toBe("string");
    }
    expect((await call(fb(), "GET", "/v1/offers", { token: admin() })).status).toBe(200);
  });
});
