import { call, errorOf, useFake } from "./helpers";

describe("4.3 other endpoints, with the shapes of docs/api-shapes.md", () => {
  const { fb, creds } = useFake();
  const get = (path: string) => call(fb(), "GET", path, { token: creds().admin_session_token });

  test("offers: rentable only by default, filters, sorting, and every offer by id", async () => {
    const all = await get("/v1/offers");
    const ids = all.body.items.map((o: { id: string }) => o.id);
    expect(ids).toContain(creds().offer_id);
    expect(ids).not.toContain(creds().sold_out_offer_id);
    expect(
      (await get("/v1/offers?include_unavailable=true")).body.items.map((o: { id: string }) => o.id),
    ).toContain(creds().sold_out_offer_id);
    const byModel = await get("/v1/offers?gpu_model=rtx%204090&num_gpus=1&sort=price_asc");
    const prices = byModel.body.items.map((o: { price_per_hour_micro: number }) => o.price_per_hour_micro);
    expect(prices).toEqual([...prices].sort((a, b) => a - b));
    for (const o of byModel.body.items) expect(o).toMatchObject({ gpu_model: "RTX 4090", num_gpus: 1 });
    const one = await get(`/v1/offers/${creds().sold_out_offer_id}`);
    expect(one.body).toMatchObject({ availability: "sold_out", free_units: 0, machine: { disk_gb: 2000 } });
    const missing = await get("/v1/offers/00000000-0000-4000-8000-00000000cccc");
    expect([missing.status, errorOf(missing).code]).toEqual([404, "OFFER_NOT_FOUND"]);
    const badSort = await get("/v1/offers?sort=cheapest");
    expect(errorOf(badSort)).toMatchObject({ code: "VALIDATION_ERROR", field: "sort" });
  });

  test("offers summary and catalog status", async () => {
    const summary = await get("/v1/offers/summary");
    expect(summary.body.items).toEqual(
      expect.arrayContaining([
        { gpu_model: "RTX 4090", available_offers: 2, min_price_per_hour_micro: 2_300_000 },
      ]),
    );
    const status = await get("/v1/catalog/status");
    expect(status.body).toMatchObject({ status: "ok", available_offers: 5 });
  });

  test("templates: tabs, mode filter, visibility, by id and by hash", async () => {
    const rec = await get("/v1/templates?tab=recommended");
    expect(rec.body.items.every((t: { recommended: boolean }) => t.recommended)).toBe(true);
    const ssh = await get("/v1/templates?mode=ssh");
    expect(ssh.body.items.every((t: { mode: string }) => t.mode === "ssh")).toBe(true);
    const theirs = fb().createTemplate({
      name: "theirs",
      visibility: "private",
      owner_org_id: creds().other_org_id,
    });
    expect((await get("/v1/templates")).body.items.map((t: { id: string }) => t.id)).not.toContain(theirs.id);
    expect(errorOf(await get(`/v1/templates/${theirs.id}`)).code).toBe("TEMPLATE_NOT_FOUND");
    expect(errorOf(await get(`/v1/templates/by-hash/${theirs.hash_id}`)).code).toBe("TEMPLATE_NOT_FOUND");
    const t = await get(`/v1/templates/${creds().jupyter_template_id}`);
    expect(t.body.readme).not.toBeNull();
    // Secret env values are never shown.
    expect(t.body.env).toEqual(expect.arrayContaining([{ key: "APP_PASSWORD", value: null, secret: true }]));
    const mine = await call(fb(), "POST", `/v1/templates/${creds().template_id}/duplicate`, {
      token: creds().member_session_token,
    });
    expect((await get("/v1/templates?tab=mine")).body.items.map((x: { id: string }) => x.id)).toEqual([
      mine.body.id,
    ]);
  });

  test("me and ssh keys in a session", async () => {
    const me = await call(fb(), "GET", "/v1/me", { token: creds().member_session_token });
    expect(me.body).toMatchObject({
      user: { id: creds().member_user_id, email: null, phone: "+8613800138000" },
      organization: { id: creds().org_id },
      role: "member",
    });
    const added = await call(fb(), "POST", "/v1/ssh-keys", {
      token: creds().member_session_token,
      body: {
        name: "new",
        public_key:
          "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIKc2xXkPbJ1E1Y0m7oYQ2b3v4R6s8T0u9W1x2Y3z4A5B me@host",
      },
    });
    expect(added.status).toBe(201);
    expect(added.body.fingerprint).toMatch(/^SHA256:/);
    const list = await call(fb(), "GET", "/v1/ssh-keys", { token: creds().member_session_token });
    expect(list.body.items.map((k: { id: string }) => k.id)).toContain(added.body.id);
    const bad = await call(fb(), "POST", "/v1/ssh-keys", {
      token: creds().member_session_token,
      body: { name: "bad", public_key: "not a key" },
    });
    expect(errorOf(bad)).toMatchObject({ code: "VALIDATION_ERROR", field: "public_key" });
  });
});
