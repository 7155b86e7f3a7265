import { call, createKey, errorOf, runningInstance, useFake } from "./helpers";

describe("5 authentication and the API-key permission table", () => {
  const { fb, creds } = useFake();

  async function as(token: string, method: string, path: string, body?: unknown) {
    return call(fb(), method, path, { token, body });
  }

  test("5.4 row 1 offers and catalog status reads; templates reads and duplicate: allowed", async () => {
    const { secret } = await createKey(fb(), creds().admin_session_token);
    for (const path of [
      "/v1/offers?gpu_model=RTX%204090&num_gpus=1&sort=price_asc",
      "/v1/offers/summary",
      `/v1/offers/${creds().offer_id}`,
      "/v1/catalog/status",
      "/v1/templates?tab=recommended&mode=ssh",
      `/v1/templates/${creds().template_id}`,
    ]) {
      const a = await as(secret, "GET", path);
      expect([path, a.status]).toEqual([path, 200]);
    }
    const t = await as(secret, "GET", `/v1/templates/${creds().template_id}`);
    expect((await as(secret, "GET", `/v1/templates/by-hash/${t.body.hash_id}`)).status).toBe(200);
    const dup = await as(secret, "POST", `/v1/templates/${creds().template_id}/duplicate`);
    expect(dup.status).toBe(201);
    expect(dup.body).toMatchObject({ visibility: "private", owner_org_id: creds().org_id });
  });

  test("5.4 row 2 POST /v1/instances, stop, start, delete, logs, list, get: allowed", async () => {
    const { secret } = await createKey(fb(), creds().admin_session_token);
    const id = await runningInstance(fb(), creds(), secret);
    expect((await as(secret, "GET", "/v1/instances")).status).toBe(200);
    expect((await as(secret, "GET", `/v1/instances/${id}/logs`)).status).toBe(200);
    expect((await as(secret, "POST", `/v1/instances/${id}/stop`)).status).toBe(200);
    expect((await as(secret, "GET", `/v1/instances/${id}`)).body.status).toBe("stopped");
    expect((await as(secret, "POST", `/v1/instances/${id}/start`)).status).toBe(200);
    expect((await as(secret, "DELETE", `/v1/instances/${id}`)).status).toBe(200);
  });

  test("5.4 row 3 GET /v1/billing/transactions and spend-daily: allowed", async () => {
    const { secret } = await createKey(fb(), creds().admin_session_token);
    expect((await as(secret, "GET", "/v1/billing/transactions")).status).toBe(200);
    expect((await as(secret, "GET", "/v1/billing/spend-daily")).status).toBe(200);
  });

  test("5.4 row 4 GET /v1/api-keys: allowed", async () => {
    const { secret } = await createKey(fb(), creds().admin_session_token);
    expect((await as(secret, "GET", "/v1/api-keys")).status).toBe(200);
  });

  test("5.4 row 5 GET /v1/me, GET /v1/ssh-keys, POST /v1/ssh-keys: 401 TOKEN_INVALID", async () => {
    const { secret } = await createKey(fb(), creds().admin_session_token);
    for (const [method, path, body] of [
      ["GET", "/v1/me"],
      ["GET", "/v1/ssh-keys"],
      ["POST", "/v1/ssh-keys", { name: "k", public_key: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIB" }],
    ] as const) {
      const a = await as(secret, method, path, body);
      expect([path, a.status, errorOf(a).code]).toEqual([path, 401, "TOKEN_INVALID"]);
    }
    // The same endpoints work in a session.
    expect((await as(creds().admin_session_token, "GET", "/v1/me")).status).toBe(200);
    expect((await as(creds().member_session_token, "GET", "/v1/ssh-keys")).body.items).toHaveLength(1);
  });

  test("5.4 row 6 POST /v1/billing/orders: 403 ADMIN_REQUIRED", async () => {
    const { secret } = await createKey(fb(), creds().admin_session_token, "team");
    const a = await as(secret, "POST", "/v1/billing/orders", { amount_micro: 1_000_000 });
    expect(a.status).toBe(403);
    expect(errorOf(a).code).toBe("ADMIN_REQUIRED");
    const ok = await as(creds().admin_session_token, "POST", "/v1/billing/orders", {
      amount_micro: 1_000_000,
    });
    expect(ok.status).toBe(201);
  });

  test("5.4 row 7 invites and member management under /v1/orgs/current: 403 ADMIN_REQUIRED", async () => {
    const { secret } = await createKey(fb(), creds().admin_session_token, "team");
    for (const [method, path, body] of [
      ["GET", "/v1/orgs/current/members"],
      ["DELETE", `/v1/orgs/current/members/${creds().member_user_id}`],
      ["GET", "/v1/orgs/current/invites"],
      ["POST", "/v1/orgs/current/invites", { email: "new@demo.example" }],
    ] as const) {
      const a = await as(secret, method, path, body);
      expect([path, a.status, errorOf(a).code]).toEqual([path, 403, "ADMIN_REQUIRED"]);
    }
    expect((await as(creds().admin_session_token, "GET", "/v1/orgs/current/members")).status).toBe(200);
  });

  test("5.4 row 8 POST /v1/api-keys and DELETE /v1/api-keys/{id}: 403 ADMIN_REQUIRED", async () => {
    const k = await createKey(fb(), creds().admin_session_token, "team");
    const c = await as(k.secret, "POST", "/v1/api-keys", { name: "x" });
    expect([c.status, errorOf(c).code]).toEqual([403, "ADMIN_REQUIRED"]);
    const d = await as(k.secret, "DELETE", `/v1/api-keys/${k.id}`);
    expect([d.status, errorOf(d).code]).toEqual([403, "ADMIN_REQUIRED"]);
  });

  test("5.4 row 9 any request carrying X-Org-Id of another organization: 403 ORG_MISMATCH", async () => {
    const { secret } = await createKey(fb(), creds().admin_session_token);
    for (const token of [secret, creds().admin_session_token]) {
      const a = await call(fb(), "GET", "/v1/offers", {
        token,
        headers: { "x-org-id": creds().other_org_id },
      });
      expect([a.status, errorOf(a).code]).toEqual([403, "ORG_MISMATCH"]);
    }
    const same = await call(fb(), "GET", "/v1/offers", {
      token: secret,
      headers: { "x-org-id": creds().org_id },
    });
    expect(same.status).toBe(200);
  });

  test("5.4 an API key acts as a member regardless of its creator's role", async () => {
    const { secret } = await createKey(fb(), creds().admin_session_token);
    const a = await as(secret, "GET", "/v1/orgs/current/members");
    expect(errorOf(a).code).toBe("ADMIN_REQUIRED");
  });

  test("5.1 a missing, malformed or unknown bearer token is 401 TOKEN_INVALID", async () => {
    const variants: Record<string, string>[] = [
      {},
      { authorization: "Basic abc" },
      { authorization: "Bearer gps_nope" },
    ];
    for (const headers of variants) {
      const a = await call(fb(), "GET", "/v1/offers", { headers });
      expect([a.status, errorOf(a).code]).toEqual([401, "TOKEN_INVALID"]);
    }
    const a = await as(`gpr_${"0".repeat(48)}`, "GET", "/v1/offers");
    expect([a.status, errorOf(a).code]).toEqual([401, "TOKEN_INVALID"]);
  });

  test("5.5 a personal key re-checks on every request that its creator is still a member", async () => {
    const { secret } = await createKey(fb(), creds().member_session_token);
    expect((await as(secret, "GET", "/v1/offers")).status).toBe(200);
    fb().removeMember(creds().org_id, creds().member_user_id);
    // Even if the key were somehow not revoked, the membership re-check refuses it.
    const rec = Object.values(fb().state().api_keys).find((k) => k.creator_id === creds().member_user_id);
    if (rec) rec.revoked_at = null;
    const a = await as(secret, "GET", "/v1/offers");
    expect([a.status, errorOf(a).code]).toEqual([401, "TOKEN_INVALID"]);
  });

  test("7.1 row 1 TOKEN_INVALID: account endpoint with an API key", async () => {
    const { secret } = await createKey(fb(), creds().admin_session_token);
    const a = await as(secret, "GET", "/v1/me");
    expect([a.status, errorOf(a).code]).toEqual([401, "TOKEN_INVALID"]);
  });

  test("7.1 row 2 ADMIN_REQUIRED: admin-only action by a non-admin session", async () => {
    const a = await as(creds().member_session_token, "POST", "/v1/billing/orders", { amount_micro: 5 });
    expect([a.status, errorOf(a).code]).toEqual([403, "ADMIN_REQUIRED"]);
  });

  test("7.1 row 3 ORG_MISMATCH", async () => {
    const a = await call(fb(), "GET", "/v1/instances", {
      token: creds().member_session_token,
      headers: { "x-org-id": creds().other_org_id },
    });
    expect([a.status, errorOf(a).code]).toEqual([403, "ORG_MISMATCH"]);
  });

  test("7.1 row 4 API_KEY_NOT_FOUND", async () => {
    const a = await as(
      creds().admin_session_token,
      "DELETE",
      "/v1/api-keys/00000000-0000-4000-8000-0000000000aa",
    );
    expect([a.status, errorOf(a).code]).toEqual([404, "API_KEY_NOT_FOUND"]);
  });

  test("7.1 row 5 INSTANCE_NOT_FOUND: unknown id or another organization's instance", async () => {
    const id = await runningInstance(fb(), creds(), creds().other_admin_session_token);
    for (const path of [`/v1/instances/${id}`, "/v1/instances/00000000-0000-4000-8000-0000000000bb"]) {
      const a = await as(creds().admin_session_token, "GET", path);
      expect([a.status, errorOf(a).code]).toEqual([404, "INSTANCE_NOT_FOUND"]);
    }
    for (const action of ["stop", "start", "logs"]) {
      const a = await as(
        creds().admin_session_token,
        action === "logs" ? "GET" : "POST",
        `/v1/instances/${id}/${action}`,
      );
      expect(errorOf(a).code).toBe("INSTANCE_NOT_FOUND");
    }
    expect(errorOf(await as(creds().admin_session_token, "DELETE", `/v1/instances/${id}`)).code).toBe(
      "INSTANCE_NOT_FOUND",
    );
  });

  test("7.1 row 6 INVALID_STATE names the current status", async () => {
    const id = await runningInstance(fb(), creds());
    const a = await as(creds().admin_session_token, "POST", `/v1/instances/${id}/start`);
    expect([a.status, errorOf(a).code]).toEqual([409, "INVALID_STATE"]);
    expect(errorOf(a).message).toContain("running");
  });

  test("7.1 row 7 INSUFFICIENT_BALANCE at start", async () => {
    const id = await runningInstance(fb(), creds());
    await as(creds().admin_session_token, "POST", `/v1/instances/${id}/stop`);
    expect((await as(creds().admin_session_token, "GET", `/v1/instances/${id}`)).body.status).toBe("stopped");
    fb().setBalance(creds().org_id, 1000);
    const a = await as(creds().admin_session_token, "POST", `/v1/instances/${id}/start`);
    expect([a.status, errorOf(a).code]).toEqual([402, "INSUFFICIENT_BALANCE"]);
    expect(errorOf(a)).toMatchObject({ balance_micro: 1000, required_micro: 2_510_000 });
  });
});
