import { call, createKey, deploy, errorOf, getInstance, useFake } from "./helpers";

describe("API keys (2.1, 3.1, 4.1)", () => {
  const { fb, creds } = useFake();

  test("3.1 row 1 POST /v1/api-keys by a session creates an active key; the secret is returned once", async () => {
    const a = await call(fb(), "POST", "/v1/api-keys", {
      token: creds().member_session_token,
      body: { name: "ci" },
    });
    expect(a.status).toBe(201);
    expect(a.body.secret).toMatch(/^gpr_[0-9a-f]{48}$/);
    expect(a.body.key).toEqual({
      id: expect.any(String),
      name: "ci",
      kind: "personal",
      prefix: a.body.secret.slice(0, 12),
      creator_email: creds().member_phone,
      creator_id: creds().member_user_id,
      created_at: expect.any(String),
      last_used_at: null,
      creator_is_member: true,
    });
    const list = await call(fb(), "GET", "/v1/api-keys", { token: creds().member_session_token });
    expect(JSON.stringify(list.body)).not.toContain(a.body.secret);
    expect(list.body.items[0].id).toBe(a.body.key.id);
    // Only the prefix and a hash are stored.
    expect(JSON.stringify(fb().state())).not.toContain(a.body.secret);
  });

  test("3.1 row 1 team kind requires an admin session", async () => {
    const member = await call(fb(), "POST", "/v1/api-keys", {
      token: creds().member_session_token,
      body: { name: "t", kind: "team" },
    });
    expect(member.status).toBe(403);
    expect(errorOf(member).code).toBe("ADMIN_REQUIRED");
    const admin = await call(fb(), "POST", "/v1/api-keys", {
      token: creds().admin_session_token,
      body: { name: "t", kind: "team" },
    });
    expect(admin.status).toBe(201);
    expect(admin.body.key.kind).toBe("team");
  });

  test("3.1 row 2 DELETE revokes: the key stops working on the next request; its instances are untouched", async () => {
    const key = await createKey(fb(), creds().admin_session_token);
    const inst = await deploy(fb(), creds(), key.secret);
    expect(inst.status).toBe(201);
    const del = await call(fb(), "DELETE", `/v1/api-keys/${key.id}`, { token: creds().admin_session_token });
    expect(del.status).toBe(204);
    expect(del.body).toBeUndefined();
    const after = await call(fb(), "GET", "/v1/instances", { token: key.secret });
    expect(after.status).toBe(401);
    expect(errorOf(after).code).toBe("TOKEN_INVALID");
    const got = await getInstance(fb(), creds().admin_session_token, inst.body.id);
    expect(got.body.status).toBe("running");
    expect(got.body.deployed_via_api_key).toMatchObject({ id: key.id, revoked: true });
    const list = await call(fb(), "GET", "/v1/api-keys", { token: creds().admin_session_token });
    expect(list.body.items.map((k: { id: string }) => k.id)).not.toContain(key.id);
  });

  test("3.1 row 3 removing a member revokes all their personal keys in that organization at once", async () => {
    const k1 = await createKey(fb(), creds().member_session_token, "personal", "one");
    const k2 = await createKey(fb(), creds().member_session_token, "personal", "two");
    const del = await call(fb(), "DELETE", `/v1/orgs/current/members/${creds().member_user_id}`, {
      token: creds().admin_session_token,
    });
    expect(del.status).toBe(204);
    for (const k of [k1, k2]) {
      const a = await call(fb(), "GET", "/v1/offers", { token: k.secret });
      expect(a.status).toBe(401);
      expect(errorOf(a).code).toBe("TOKEN_INVALID");
    }
    const list = await call(fb(), "GET", "/v1/api-keys", { token: creds().admin_session_token });
    expect(list.body.items).toHaveLength(0);
  });

  test("3.1 row 4 a team key stays active after its creator is removed; creator_is_member becomes false", async () => {
    fb().addMember(creds().org_id, creds().member_user_id, "admin");
    const memberAdminSession = fb().createSession(creds().member_user_id, creds().org_id);
    const team = await createKey(fb(), memberAdminSession, "team", "deploy bot");
    fb().removeMember(creds().org_id, creds().member_user_id);
    const a = await call(fb(), "GET", "/v1/offers", { token: team.secret });
    expect(a.status).toBe(200);
    const list = await call(fb(), "GET", "/v1/api-keys", { token: creds().admin_session_token });
    expect(list.body.items[0]).toMatchObject({ id: team.id, creator_is_member: false });
  });

  test("4.1 GET /v1/api-keys lists active keys newest first, with an API key too, and no secret", async () => {
    const a = await createKey(fb(), creds().admin_session_token, "personal", "a");
    const b = await createKey(fb(), creds().admin_session_token, "team", "b");
    const c = await createKey(fb(), creds().member_session_token, "personal", "c");
    const list = await call(fb(), "GET", "/v1/api-keys", { token: a.secret });
    expect(list.status).toBe(200);
    expect(list.body.items.map((k: { id: string }) => k.id)).toEqual([c.id, b.id, a.id]);
    for (const item of list.body.items) expect(item).not.toHaveProperty("secret");
  });

  test("4.1 last_used_at is null until first use and updated on every request", async () => {
    const k = await createKey(fb(), creds().admin_session_token);
    const list0 = await call(fb(), "GET", "/v1/api-keys", { token: creds().admin_session_token });
    expect(list0.body.items[0].last_used_at).toBeNull();
    await call(fb(), "GET", "/v1/offers", { token: k.secret });
    const t1 = fb().state().api_keys[k.id]?.last_used_at;
    fb().clock.advance(5000);
    // Even a refused request is a use of the key.
    await call(fb(), "GET", "/v1/me", { token: k.secret });
    const t2 = fb().state().api_keys[k.id]?.last_used_at;
    expect(t1).not.toBeNull();
    expect(t2).toBeGreaterThanOrEqual((t1 ?? 0) + 5000);
    const list = await call(fb(), "GET", "/v1/api-keys", { token: creds().admin_session_token });
    expect(list.body.items[0].last_used_at).toBe(new Date(t2 ?? 0).toISOString());
  });

  test("4.1 DELETE rules: member revokes only their own personal keys; admin any key", async () => {
    const adminKey = await createKey(fb(), creds().admin_session_token);
    const memberKey = await createKey(fb(), creds().member_session_token);
    const denied = await call(fb(), "DELETE", `/v1/api-keys/${adminKey.id}`, {
      token: creds().member_session_token,
    });
    expect(denied.status).toBe(403);
    expect(errorOf(denied).code).toBe("ADMIN_REQUIRED");
    const own = await call(fb(), "DELETE", `/v1/api-keys/${memberKey.id}`, {
      token: creds().member_session_token,
    });
    expect(own.status).toBe(204);
    const team = await createKey(fb(), creds().admin_session_token, "team");
    const byAdmin = await call(fb(), "DELETE", `/v1/api-keys/${team.id}`, {
      token: creds().admin_session_token,
    });
    expect(byAdmin.status).toBe(204);
  });

  test("4.1 revoking an unknown, already revoked or other organization's key is 404 API_KEY_NOT_FOUND", async () => {
    const k = await createKey(fb(), creds().admin_session_token);
    const other = await createKey(fb(), creds().other_admin_session_token);
    await call(fb(), "DELETE", `/v1/api-keys/${k.id}`, { token: creds().admin_session_token });
    for (const id of [k.id, other.id, "00000000-0000-4000-8000-00000000abcd"]) {
      const a = await call(fb(), "DELETE", `/v1/api-keys/${id}`, { token: creds().admin_session_token });
      expect(a.status).toBe(404);
      expect(errorOf(a).code).toBe("API_KEY_NOT_FOUND");
    }
  });

  test("2.1 creator_email shows the phone number with country code for a phone-only creator", async () => {
    await createKey(fb(), creds().member_session_token);
    const list = await call(fb(), "GET", "/v1/api-keys", { token: creds().admin_session_token });
    expect(list.body.items[0].creator_email).toBe("+8613800138000");
  });
});
