import { call, createKey, errorOf, useFake } from "./helpers";

describe("control API over HTTP", () => {
  const { fb } = useFake();
  const ctl = (method: string, path: string, body?: unknown, token?: string) =>
    call(fb(), method, `/_control${path}`, {
      body,
      headers: { "x-control-token": token ?? fb().controlToken },
    });

  test("a template env value of the wrong type is refused without being repeated back", async () => {
    const a = await ctl("POST", "/templates", {
      name: "t",
      env: [{ key: "PIN", value: 48151623, secret: true }],
    });
    expect(errorOf(a)).toMatchObject({ code: "VALIDATION_ERROR", field: "env.0.value" });
    expect(errorOf(a)).not.toHaveProperty("value");
    expect(JSON.stringify(a.body)).not.toContain("48151623");
    // Its key, which is no secret, is.
    const b = await ctl("POST", "/templates", { name: "t", env: [{ key: 7, value: "v" }] });
    expect(errorOf(b)).toMatchObject({ field: "env.0.key", value: 7 });
  });

  test("the control token put into a field is never repeated back, whatever the route", async () => {
    const token = fb().controlToken;
    const answers = [
      await ctl("POST", "/orgs", { name: 7, balance_micro: token }),
      await ctl("PUT", "/transitions", { mode: token }),
      await ctl("POST", `/orgs/${token}/balance`, { balance_micro: 1 }),
      await call(fb(), "GET", `/v1/instances/${token}`, { token }),
      // Inside a run that an answer cuts short (over 128 characters): masked before it is cut.
      await ctl("POST", `/orgs/${"q".repeat(100)}${token}${"w".repeat(100)}/balance`, { balance_micro: 1 }),
      await ctl("PUT", "/transitions", { mode: `${"q".repeat(30)}${token}` }),
    ];
    for (const a of answers) {
      expect(a.status).toBeGreaterThanOrEqual(400);
      expect(JSON.stringify(a.body)).not.toContain(token);
      for (let i = 0; i + 12 <= token.length; i += 12)
        expect(JSON.stringify(a.body)).not.toContain(token.slice(i, i + 12));
    }
    // It is masked, not dropped: the answer still says where it was.
    expect(JSON.stringify(answers[1]!.body)).toContain("[control-token]");
  });

  test("needs X-Control-Token", async () => {
    const a = await ctl("POST", "/reset", undefined, "wrong");
    expect([a.status, errorOf(a).code]).toEqual([401, "CONTROL_TOKEN_INVALID"]);
    const b = await call(fb(), "POST", "/_control/reset");
    expect(b.status).toBe(401);
  });

  test("seed, behaviour, transitions, clock, faults, balance and member removal", async () => {
    const seeded = await ctl("POST", "/seed/demo");
    expect(seeded.status).toBe(200);
    const c = seeded.body;
    expect(c.base_url).toBe(fb().url);
    expect((await ctl("PUT", "/transitions", { mode: "manual" })).status).toBe(200);
    const d = await call(fb(), "POST", "/v1/instances", {
      token: c.admin_session_token,
      body: { offer_id: c.offer_id, template_id: c.template_id, disk_gb: 20 },
    });
    expect(d.status).toBe(201);
    expect(
      (await call(fb(), "GET", `/v1/instances/${d.body.id}`, { token: c.admin_session_token })).body.status,
    ).toBe("creating");
    expect((await ctl("POST", `/instances/${d.body.id}/complete`)).body).toEqual({ completed: true });
    expect(
      (await call(fb(), "GET", `/v1/instances/${d.body.id}`, { token: c.admin_session_token })).body.status,
    ).toBe("running");
    const env = await ctl("GET", `/instances/${d.body.id}/env`);
    expect(env.body.env).toEqual(expect.arrayContaining([{ key: "GPU_COUNT", value: "1", secret: false }]));
    const beh = await ctl("PUT", `/machines/${"00000000-0000-4000-8000-000000000031"}/behaviour`, {
      unreachable: true,
    });
    expect(beh.body.unreachable).toBe(true);
    const bad = await ctl("PUT", `/machines/${"00000000-0000-4000-8000-000000000031"}/behaviour`, {
      nonsense: 1,
    });
    expect(bad.status).toBe(422);
    const before = Date.parse((await ctl("GET", "/clock")).body.now);
    const adv = await ctl("POST", "/clock/advance", { ms: 3_600_000 });
    expect(Date.parse(adv.body.now) - before).toBeGreaterThanOrEqual(3_600_000);
    const f = await ctl("POST", "/faults", { route: "GET /v1/offers", kind: "status", status: 502 });
    expect(f.status).toBe(201);
    expect((await call(fb(), "GET", "/v1/offers", { token: c.admin_session_token })).status).toBe(502);
    expect((await ctl("DELETE", `/faults/${f.body.id}`)).body).toEqual({ removed: true });
    expect((await ctl("PUT", `/orgs/${c.org_id}/balance`, { balance_micro: 123 })).body).toEqual({
      balance_micro: 123,
    });
    const top = await ctl("POST", `/orgs/${c.org_id}/top-up`, { amount_micro: 100_000_000 });
    expect(top.body.balance_micro).toBeGreaterThan(0);
    const key = await createKey(fb(), c.member_session_token);
    expect((await ctl("DELETE", `/orgs/${c.org_id}/members/${c.member_user_id}`)).body).toEqual({
      removed: true,
    });
    expect((await call(fb(), "GET", "/v1/offers", { token: key.secret })).status).toBe(401);
    expect((await ctl("POST", `/offers/${c.offer_id}/lose-next-race`)).status).toBe(200);
    const race = await call(fb(), "POST", "/v1/instances", {
      token: c.admin_session_token,
      body: { offer_id: c.offer_id, template_id: c.template_id, disk_gb: 20 },
    });
    expect(errorOf(race).code).toBe("OFFER_UNAVAILABLE");
    expect((await ctl("POST", "/reset")).status).toBe(200);
    expect((await call(fb(), "GET", "/v1/offers", { token: c.admin_session_token })).status).toBe(401);
  });

  test("PATCH /offers/:id moves the market: sell out, reprice, maintenance, withdraw", async () => {
    const c = fb().credentials!;
    const token = c.admin_session_token;
    const listed = async () =>
      (await call(fb(), "GET", "/v1/offers", { token })).body.items.map((o: { id: string }) => o.id);
    const sold = await ctl("PATCH", `/offers/${c.offer_id}`, { free_units: 0 });
    expect(sold.body).toMatchObject({ id: c.offer_id, free_units: 0, availability: "available" });
    expect(await listed()).not.toContain(c.offer_id);
    const deploy = await call(fb(), "POST", "/v1/instances", {
      token,
      body: { offer_id: c.offer_id, template_id: c.template_id, disk_gb: 20 },
    });
    expect(errorOf(deploy).code).toBe("OFFER_UNAVAILABLE");
    const back = await ctl("PATCH", `/offers/${c.offer_id}`, {
      free_units: 3,
      price_per_hour_micro: 1_900_000,
      next_maintenance: "2099-01-01T00:00:00.000Z",
    });
    expect(back.body).toMatchObject({
      free_units: 3,
      price_per_hour_micro: 1_900_000,
      next_maintenance: "2099-01-01T00:00:00.000Z",
    });
    expect(await listed()).toContain(c.offer_id);
    // An instance already rented keeps its price snapshot when the offer is repriced.
    const rented = await call(fb(), "POST", "/v1/instances", {
      token,
      body: { offer_id: c.offer_id, template_id: c.template_id, disk_gb: 20 },
    });
    await ctl("PATCH", `/offers/${c.offer_id}`, { price_per_hour_micro: 900_000 });
    const got = await call(fb(), "GET", `/v1/instances/${rented.body.id}`, { token });
    expect(got.body.price_per_hour_micro).toBe(1_900_000);
    const soon = new Date(Date.parse((await ctl("GET", "/clock")).body.now) + 3_600_000).toISOString();
    await ctl("PATCH", `/offers/${c.offer_id}`, { next_maintenance: soon });
    const refused = await call(fb(), "POST", "/v1/instances", {
      token,
      body: { offer_id: c.offer_id, template_id: c.template_id, disk_gb: 20 },
    });
    expect(errorOf(refused)).toMatchObject({ code: "MACHINE_IN_MAINTENANCE", next_maintenance: soon });
    await ctl("PATCH", `/offers/${c.offer_id}`, { availability: "withdrawn", next_maintenance: null });
    expect(await listed()).not.toContain(c.offer_id);
  });

  test("PATCH /offers/:id refuses unknown offers, unknown fields and values out of range", async () => {
    const c = fb().credentials!;
    const missing = await ctl("PATCH", "/offers/00000000-0000-4000-8000-00000000dddd", { free_units: 1 });
    expect([missing.status, errorOf(missing).code]).toEqual([404, "OFFER_NOT_FOUND"]);
    const unknownField = await ctl("PATCH", `/offers/${c.offer_id}`, { gpu_model: "H100" });
    expect([unknownField.status, errorOf(unknownField).code]).toEqual([422, "VALIDATION_ERROR"]);
    const negative = await ctl("PATCH", `/offers/${c.offer_id}`, { free_units: -1 });
    expect([negative.status, errorOf(negative).field, errorOf(negative).limit]).toEqual([
      422,
      "free_units",
      0,
    ]);
    const badState = await ctl("PATCH", `/offers/${c.offer_id}`, { availability: "gone" });
    expect(errorOf(badState).field).toBe("availability");
    const badTime = await ctl("PATCH", `/offers/${c.offer_id}`, { next_maintenance: "tomorrow" });
    expect(errorOf(badTime).field).toBe("next_maintenance");
    const noToken = await call(fb(), "PATCH", `/_control/offers/${c.offer_id}`, { body: { free_units: 1 } });
    expect(noToken.status).toBe(401);
  });

  test("out-of-range clock advances and latencies are refused naming the limit", async () => {
    const a = await ctl("POST", "/clock/advance", { ms: 1e300 });
    expect([a.status, errorOf(a).code, errorOf(a).field, errorOf(a).limit]).toEqual([
      422,
      "VALIDATION_ERROR",
      "ms",
      100 * 365 * 24 * 3_600_000,
    ]);
    const f = await ctl("POST", "/faults", { route: "/v1/offers", kind: "latency", latencyMs: 1e12 });
    expect([f.status, errorOf(f).field, errorOf(f).limit]).toEqual([422, "latencyMs", 2_147_483_647]);
    expect(() => fb().addFault({ route: "/v1/offers", kind: "latency", latencyMs: 1e12 })).toThrow(
      "a latency fault needs latencyMs from 0 to 2147483647, got 1000000000000",
    );
    const offers = await call(fb(), "GET", "/v1/catalog/status", {
      token: fb().credentials?.admin_session_token,
    });
    expect(offers.status).toBe(200);
  });

  test("a value of neither form of a union is refused naming every form; a wrong field of one, naming the field", async () => {
    const name = await ctl("PUT", "/transitions", { mode: "fast" });
    expect([name.status, errorOf(name).field, errorOf(name).message]).toEqual([
      422,
      "mode",
      'mode: Invalid input: expected one of "immediate"|"manual"|"realistic", or expected object, received string; got "fast"',
    ]);
    const empty = await ctl("PUT", "/transitions", { mode: {} });
    expect([empty.status, errorOf(empty).field]).toEqual([422, "mode.afterMs"]);
    const far = await ctl("PUT", "/transitions", { mode: { afterMs: 1e12 } });
    expect([far.status, errorOf(far).field, errorOf(far).limit]).toEqual([
      422,
      "mode.afterMs",
      2_147_483_647,
    ]);
    const machine = Object.values(fb().state().machines)[0]!;
    const refuse = await ctl("PUT", `/machines/${machine.id}/behaviour`, { refuseStart: "sometimes" });
    expect([refuse.status, errorOf(refuse).field]).toEqual([422, "refuseStart"]);
    expect(errorOf(refuse).message).toContain('expected one of "refused"|"workload_missing"');
  });

  test("seeding records one by one through the control API", async () => {
    await ctl("POST", "/reset");
    const org = (await ctl("POST", "/orgs", { name: "Acme", balance_micro: 50_000_000 })).body;
    const user = (await ctl("POST", "/users", { email: "a@acme.example" })).body;
    expect(
      (await ctl("POST", "/memberships", { org_id: org.id, user_id: user.id, role: "admin" })).status,
    ).toBe(200);
    const { token } = (await ctl("POST", "/sessions", { user_id: user.id, org_id: org.id })).body;
    const machine = (await ctl("POST", "/machines", { disk_gb: 1000 })).body;
    const offer = (await ctl("POST", "/offers", { machine_id: machine.id, price_per_hour_micro: 1_000_000 }))
      .body;
    const template = (await ctl("POST", "/templates", { name: "T", mode: "ssh" })).body;
    const key = (await ctl("POST", "/ssh-keys", { user_id: user.id, name: "k" })).body;
    const d = await call(fb(), "POST", "/v1/instances", {
      token,
      body: { offer_id: offer.id, template_id: template.id, disk_gb: 20, ssh_key_id: key.id },
    });
    expect(d.status).toBe(201);
    const unknown = await ctl("POST", "/sessions", { user_id: user.id, org_id: "nope" });
    expect([unknown.status, errorOf(unknown).code]).toEqual([422, "CONTROL_ERROR"]);
  });
});
