import { DEMO_IDS } from "../../src/fake-backend";
import { call, createKey, deploy, errorOf, useFake } from "./helpers";

describe("7.2 deploy refusals, in check order", () => {
  const { fb, creds } = useFake();

  /** Snapshot of everything a refusal must leave untouched. */
  function footprint() {
    const state = fb().state();
    return JSON.stringify({
      instances: Object.keys(state.instances).length,
      balance: state.orgs[creds().org_id]?.balance_micro,
      ledger: state.ledger.length,
      offers: Object.values(state.offers).map((o) => o.free_units),
      disks: Object.values(state.machines).map((m) => m.available_disk_gb),
    });
  }

  async function expectRefusal(body: Record<string, unknown>, status: number, code: string, token?: string) {
    const before = footprint();
    const a = await deploy(fb(), creds(), token ?? creds().admin_session_token, body);
    expect(a.status).toBe(status);
    expect(errorOf(a).code).toBe(code);
    expect(typeof errorOf(a).message).toBe("string");
    // A refused deploy leaves nothing behind and costs nothing.
    expect(footprint()).toBe(before);
    return errorOf(a);
  }

  test("7.2 row 1 OFFER_UNAVAILABLE: sold-out offer", async () => {
    const e = await expectRefusal({ offer_id: creds().sold_out_offer_id }, 409, "OFFER_UNAVAILABLE");
    expect(e.message).toBe(`Offer ${creds().sold_out_offer_id} is missing, withdrawn or sold out`);
  });

  test("7.2 row 1 OFFER_UNAVAILABLE: missing offer and withdrawn offer", async () => {
    await expectRefusal({ offer_id: "00000000-0000-4000-8000-00000000ffff" }, 409, "OFFER_UNAVAILABLE");
    const offer = fb().createOffer({ machine_id: DEMO_IDS.machineLarge, availability: "withdrawn" });
    await expectRefusal({ offer_id: offer.id }, 409, "OFFER_UNAVAILABLE");
  });

  test("7.2 row 2 MACHINE_IN_MAINTENANCE carries next_maintenance", async () => {
    const e = await expectRefusal({ offer_id: creds().maintenance_offer_id }, 409, "MACHINE_IN_MAINTENANCE");
    expect(e.message).toBe("The machine is booked offline too soon to start on");
    expect(typeof e.next_maintenance).toBe("string");
    expect(Date.parse(e.next_maintenance as string)).toBeGreaterThan(Date.now());
  });

  test("7.2 row 2 maintenance exactly 24 hours away still allows the deploy; a millisecond less refuses it", async () => {
    fb().clock.freeze();
    const now = fb().clock.now().getTime();
    const day = 24 * 60 * 60 * 1000;
    const close = fb().createOffer({ machine_id: DEMO_IDS.machineLarge, next_maintenance: now + day - 1 });
    await expectRefusal({ offer_id: close.id }, 409, "MACHINE_IN_MAINTENANCE");
    const far = fb().createOffer({ machine_id: DEMO_IDS.machineLarge, next_maintenance: now + day });
    expect((await deploy(fb(), creds(), creds().admin_session_token, { offer_id: far.id })).status).toBe(201);
  });

  test("7.2 row 3 DISK_TOO_LARGE carries max_disk_gb", async () => {
    const e = await expectRefusal(
      { offer_id: creds().small_disk_offer_id, disk_gb: 600 },
      422,
      "DISK_TOO_LARGE",
    );
    expect(e.max_disk_gb).toBe(500);
    expect(e.message).toBe("disk_gb 600 exceeds the machine's 500 GB");
  });

  test("7.2 row 4 MACHINE_DISK_EXHAUSTED carries available_disk_gb and requested_disk_gb", async () => {
    const first = await deploy(fb(), creds(), creds().admin_session_token, {
      offer_id: creds().small_disk_offer_id,
      disk_gb: 400,
    });
    expect(first.status).toBe(201);
    const e = await expectRefusal(
      { offer_id: creds().small_disk_offer_id, disk_gb: 200 },
      409,
      "MACHINE_DISK_EXHAUSTED",
    );
    expect(e.available_disk_gb).toBe(100);
    expect(e.message).toBe("Only 100 GB of disk are left on the machine");
    expect(e.requested_disk_gb).toBe(200);
  });

  test("7.2 row 5 TEMPLATE_NOT_FOUND: missing, inactive, or another organization's private template", async () => {
    const e = await expectRefusal(
      { template_id: "00000000-0000-4000-8000-00000000eeee" },
      404,
      "TEMPLATE_NOT_FOUND",
    );
    expect(e.message).toBe("Template 00000000-0000-4000-8000-00000000eeee not found");
    await expectRefusal({ template_id: creds().inactive_template_id }, 404, "TEMPLATE_NOT_FOUND");
    const priv = fb().createTemplate({
      name: "theirs",
      visibility: "private",
      owner_org_id: creds().other_org_id,
    });
    await expectRefusal({ template_id: priv.id }, 404, "TEMPLATE_NOT_FOUND");
    // A private template is visible to its own organization.
    const own = fb().createTemplate({ name: "ours", visibility: "private", owner_org_id: creds().org_id });
    expect((await deploy(fb(), creds(), creds().admin_session_token, { template_id: own.id })).status).toBe(
      201,
    );
  });

  test("7.2 row 6 TEMPLATE_COMING_SOON", async () => {
    const e = await expectRefusal(
      { template_id: creds().coming_soon_template_id },
      422,
      "TEMPLATE_COMING_SOON",
    );
    const name = fb().state().templates[creds().coming_soon_template_id]?.name;
    expect(e.message).toBe(`Template ${name} is marked coming soon`);
  });

  test("7.2 row 7 OFFER_NOT_VM_CAPABLE", async () => {
    const e = await expectRefusal({ template_id: creds().vm_template_id }, 422, "OFFER_NOT_VM_CAPABLE");
    expect(e.message).toBe("A vm template needs a machine that can run VMs");
    const ok = await deploy(fb(), creds(), creds().admin_session_token, {
      offer_id: creds().vm_offer_id,
      template_id: creds().vm_template_id,
    });
    expect(ok.status).toBe(201);
  });

  test("7.2 row 8 TEMPLATE_CUDA_TOO_NEW", async () => {
    const e = await expectRefusal({ offer_id: creds().new_cuda_offer_id }, 422, "TEMPLATE_CUDA_TOO_NEW");
    expect(e.message).toMatch(/^The template supports CUDA up to \d+(\.\d+)*; the machine has \d+(\.\d+)*$/);
  });

  test("7.2 row 9 TEMPLATE_ARCH_UNSUPPORTED", async () => {
    const t = fb().createTemplate({ name: "arm", architecture: "arm64" });
    const e = await expectRefusal({ template_id: t.id }, 422, "TEMPLATE_ARCH_UNSUPPORTED");
    expect(e.message).toBe("The template declares architecture arm64; only x86_64 is supported");
  });

  test("7.2 row 10 TEMPLATE_REQUIRES_OWNER", async () => {
    const t = fb().createTemplate({
      name: "private registry",
      visibility: "public",
      owner_org_id: creds().other_org_id,
      uses_private_registry: true,
    });
    const e = await expectRefusal({ template_id: t.id }, 422, "TEMPLATE_REQUIRES_OWNER");
    expect(e.message).toBe("The template pulls from a private registry with its owner's credentials");
    // The owner itself may deploy it.
    const own = await deploy(fb(), creds(), creds().other_admin_session_token, { template_id: t.id });
    expect(own.status).toBe(201);
    // A system template (no owner) pulls with the platform's credentials: anyone may deploy it.
    const system = fb().createTemplate({
      name: "system registry",
      owner_org_id: null,
      uses_private_registry: true,
    });
    expect(
      (await deploy(fb(), creds(), creds().admin_session_token, { template_id: system.id })).status,
    ).toBe(201);
  });

  test("7.2 row 11 OFFER_NOT_PINNABLE", async () => {
    const m = fb().createMachine({ disk_gb: 1000, registered: false });
    const o = fb().createOffer({ machine_id: m.id });
    const e = await expectRefusal({ offer_id: o.id }, 409, "OFFER_NOT_PINNABLE");
    expect(e.message).toBe("The offer's machine is not registered with the fleet");
  });

  test("7.2 row 12 SSH_KEY_NOT_FOUND: unknown or not attachable", async () => {
    const e = await expectRefusal(
      { ssh_key_id: "00000000-0000-4000-8000-00000000dddd" },
      404,
      "SSH_KEY_NOT_FOUND",
    );
    expect(e.message).toBe("SSH key 00000000-0000-4000-8000-00000000dddd is not attachable");
    await expectRefusal({ ssh_key_id: creds().member_ssh_key_id }, 404, "SSH_KEY_NOT_FOUND");
  });

  test("7.2 row 12 which keys a credential may attach: its own user's; a team key, any current member's", async () => {
    const admin = creds().admin_session_token;
    const personal = await createKey(fb(), admin, "personal");
    const team = await createKey(fb(), admin, "team");
    // A personal API key, like a session, attaches only its own user's keys.
    await expectRefusal({ ssh_key_id: creds().member_ssh_key_id }, 404, "SSH_KEY_NOT_FOUND", personal.secret);
    expect((await deploy(fb(), creds(), personal.secret, { ssh_key_id: creds().ssh_key_id })).status).toBe(
      201,
    );
    // A team key attaches the keys of current members, not of someone who left.
    expect((await deploy(fb(), creds(), team.secret, { ssh_key_id: creds().member_ssh_key_id })).status).toBe(
      201,
    );
    fb().removeMember(creds().org_id, creds().member_user_id);
    await expectRefusal({ ssh_key_id: creds().member_ssh_key_id }, 404, "SSH_KEY_NOT_FOUND", team.secret);
  });

  test("7.2 row 13 INSUFFICIENT_BALANCE carries balance_micro and required_micro", async () => {
    // One hour of this deploy: GPU 2.5 ¥ + 50 GB * 200 micro.
    fb().setBalance(creds().org_id, 2_509_999);
    const e = await expectRefusal({}, 402, "INSUFFICIENT_BALANCE");
    expect(e.balance_micro).toBe(2_509_999);
    expect(e.required_micro).toBe(2_510_000);
    fb().setBalance(creds().org_id, 2_510_000);
    expect((await deploy(fb(), creds(), creds().admin_session_token)).status).toBe(201);
  });

  test("7.2 row 14 INSTANCE_LIMIT_REACHED carries limit", async () => {
    const m = fb().createMachine({ disk_gb: 20000 });
    const o = fb().createOffer({ machine_id: m.id, free_units: 100, price_per_hour_micro: 1000 });
    // Another organization's instances do not count.
    const theirs = await deploy(fb(), creds(), creds().other_admin_session_token, {
      offer_id: o.id,
      disk_gb: 10,
    });
    expect(theirs.status).toBe(201);
    for (let i = 0; i < 25; i++) {
      const a = await deploy(fb(), creds(), creds().admin_session_token, { offer_id: o.id, disk_gb: 10 });
      expect(a.status).toBe(201);
    }
    const e = await expectRefusal({ offer_id: o.id, disk_gb: 10 }, 409, "INSTANCE_LIMIT_REACHED");
    expect(e.limit).toBe(25);
    expect(e.message).toBe("The organization already has 25 instances");
  });

  test("7.2 row 15 OFFER_UNAVAILABLE: another deploy took the last free unit while reserving", async () => {
    fb().loseNextRace(creds().offer_id);
    await expectRefusal({}, 409, "OFFER_UNAVAILABLE");
    // The race is lost once; the next deploy succeeds.
    expect((await deploy(fb(), creds(), creds().admin_session_token)).status).toBe(201);
    // Lost twice: two refusals, then a deploy that gets its unit.
    fb().loseNextRace(creds().offer_id, 2);
    await expectRefusal({}, 409, "OFFER_UNAVAILABLE");
    await expectRefusal({}, 409, "OFFER_UNAVAILABLE");
    expect((await deploy(fb(), creds(), creds().admin_session_token)).status).toBe(201);
  });

  test("3.2 row 9 a refused deploy creates no instance, keeps nothing and charges nothing", async () => {
    fb().setBalance(creds().org_id, 1);
    const balanceRows = fb().ledger().length;
    await expectRefusal({}, 402, "INSUFFICIENT_BALANCE");
    const list = await call(fb(), "GET", "/v1/instances?include_destroyed=true", {
      token: creds().admin_session_token,
    });
    expect(list.body.items).toEqual([]);
    expect(fb().ledger().length).toBe(balanceRows);
    expect(fb().balance(creds().org_id)).toBe(1);
  });

  test("7.2 concurrent deploys never oversell an offer's free units", async () => {
    const o = fb().createOffer({ machine_id: DEMO_IDS.machineLarge, free_units: 2 });
    const answers = await Promise.all(
      Array.from({ length: 6 }, () => deploy(fb(), creds(), creds().admin_session_token, { offer_id: o.id })),
    );
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses).toEqual([201, 201, 409, 409, 409, 409]);
    for (const a of answers.filter((x) => x.status === 409))
      expect(errorOf(a).code).toBe("OFFER_UNAVAILABLE");
    expect(fb().state().offers[o.id]?.free_units).toBe(0);
  });

  test("7.2 a deploy failing two checks returns the earlier one", async () => {
    await expectRefusal(
      { offer_id: creds().small_disk_offer_id, disk_gb: 600, template_id: creds().coming_soon_template_id },
      422,
      "DISK_TOO_LARGE",
    );
    fb().setBalance(creds().org_id, 0);
    await expectRefusal({ ssh_key_id: creds().member_ssh_key_id }, 404, "SSH_KEY_NOT_FOUND");
    await expectRefusal(
      { offer_id: creds().sold_out_offer_id, template_id: creds().vm_template_id },
      409,
      "OFFER_UNAVAILABLE",
    );
  });

  test("7.2 every check in table order: rows 1..15 each fail only when all earlier rows pass", async () => {
    // Build one request that fails every row at once, then fix rows one by one in order.
    const m = fb().createMachine({
      disk_gb: 100,
      available_disk_gb: 20,
      registered: false,
      cuda_version: "12.8",
    });
    const offer = fb().createOffer({ machine_id: m.id, availability: "sold_out", free_units: 0 });
    const t = fb().createTemplate({
      name: "all wrong",
      mode: "vm",
      coming_soon: true,
      active: false,
      cuda_max: "12.0",
      architecture: "arm64",
      visibility: "public",
      owner_org_id: creds().other_org_id,
      uses_private_registry: true,
    });
    fb().setBalance(creds().org_id, 1);
    const body = {
      offer_id: offer.id,
      template_id: t.id,
      disk_gb: 200,
      ssh_key_id: creds().member_ssh_key_id,
    };
    const order: string[] = [];
    const fixes: (() => void)[] = [
      () =>
        Object.assign(fb().state().offers[offer.id] ?? {}, {
          availability: "available",
          free_units: 1,
          next_maintenance: fb().clock.now().getTime(),
        }),
      () => Object.assign(fb().state().offers[offer.id] ?? {}, { next_maintenance: null }),
      () => Object.assign(fb().state().machines[m.id] ?? {}, { disk_gb: 1000 }),
      () => Object.assign(fb().state().machines[m.id] ?? {}, { available_disk_gb: 1000 }),
      () => Object.assign(fb().state().templates[t.id] ?? {}, { active: true }),
      () => Object.assign(fb().state().templates[t.id] ?? {}, { coming_soon: false }),
      () => Object.assign(fb().state().machines[m.id] ?? {}, { vm_capable: true }),
      () => Object.assign(fb().state().templates[t.id] ?? {}, { cuda_max: null }),
      () => Object.assign(fb().state().templates[t.id] ?? {}, { architecture: "x86_64" }),
      () => Object.assign(fb().state().templates[t.id] ?? {}, { uses_private_registry: false }),
      () => Object.assign(fb().state().machines[m.id] ?? {}, { registered: true }),
      () => Object.assign(body, { ssh_key_id: creds().ssh_key_id }),
      () => fb().setBalance(creds().org_id, 1_000_000_000),
    ];
    for (const fix of fixes) {
      const a = await deploy(fb(), creds(), creds().admin_session_token, body);
      order.push(errorOf(a)?.code ?? String(a.status));
      fix();
    }
    expect(order).toEqual([
      "OFFER_UNAVAILABLE",
      "MACHINE_IN_MAINTENANCE",
      "DISK_TOO_LARGE",
      "MACHINE_DISK_EXHAUSTED",
      "TEMPLATE_NOT_FOUND",
      "TEMPLATE_COMING_SOON",
      "OFFER_NOT_VM_CAPABLE",
      "TEMPLATE_CUDA_TOO_NEW",
      "TEMPLATE_ARCH_UNSUPPORTED",
      "TEMPLATE_REQUIRES_OWNER",
      "OFFER_NOT_PINNABLE",
      "SSH_KEY_NOT_FOUND",
      "INSUFFICIENT_BALANCE",
    ]);
    fb().loseNextRace(offer.id);
    expect(errorOf(await deploy(fb(), creds(), creds().admin_session_token, body)).code).toBe(
      "OFFER_UNAVAILABLE",
    );
    expect((await deploy(fb(), creds(), creds().admin_session_token, body)).status).toBe(201);
  });

  test("7.2 validation precedes the checks: disk_gb outside 10..20000 is a VALIDATION_ERROR", async () => {
    const a = await deploy(fb(), creds(), creds().admin_session_token, { disk_gb: 9 });
    expect(a.status).toBe(422);
    expect(errorOf(a)).toMatchObject({ code: "VALIDATION_ERROR", field: "disk_gb", limit: 10, value: 9 });
  });

  test("7.2 an API key deploy runs the same checks", async () => {
    const key = await createKey(fb(), creds().admin_session_token);
    const a = await call(fb(), "POST", "/v1/instances", {
      token: key.secret,
      body: { offer_id: creds().sold_out_offer_id, template_id: creds().template_id, disk_gb: 50 },
    });
    expect(errorOf(a).code).toBe("OFFER_UNAVAILABLE");
  });
});
