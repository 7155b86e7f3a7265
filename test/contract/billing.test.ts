import { call, deploy, getInstance, runningInstance, useFake } from "./helpers";

const HOUR = 3_600_000;

describe("billing (1, 3.2, 8)", () => {
  const { fb, creds } = useFake();
  const admin = () => creds().admin_session_token;
  const post = (id: string, action: string) =>
    call(fb(), "POST", `/v1/instances/${id}/${action}`, { token: admin() });
  const transactions = async (id: string) =>
    (await call(fb(), "GET", `/v1/billing/transactions?instance_id=${id}&limit=1000`, { token: admin() }))
      .body.items as {
      kind: string;
      amount_micro: number;
    }[];

  beforeEach(() => fb().clock.freeze());

  test("1 billing starts when the workload reaches running, not at the deploy call", async () => {
    fb().setTransitions("manual");
    const a = await deploy(fb(), creds(), admin());
    fb().clock.advance(10 * 60_000);
    expect((await getInstance(fb(), admin(), a.body.id)).body.spend_micro).toBe(0);
    fb().completeTransition(a.body.id);
    fb().clock.advance(HOUR);
    const got = await getInstance(fb(), admin(), a.body.id);
    expect(got.body.spend_micro).toBe(2_500_000);
    expect(got.body.started_at).not.toBeNull();
  });

  test("1 GPU time is billed per second while running", async () => {
    const id = await runningInstance(fb(), creds());
    fb().clock.advance(999);
    expect(fb().instance(id)?.spend_micro).toBe(0);
    fb().clock.advance(1);
    expect(fb().instance(id)?.spend_micro).toBe(Math.floor(2_500_000 / 3600));
    fb().clock.advance(59_000);
    expect(fb().instance(id)?.spend_micro).toBe(Math.floor((2_500_000 * 60) / 3600));
  });

  test("1 disk is billed per GB-hour while stopped, and not GPU", async () => {
    const id = await runningInstance(fb(), creds());
    fb().clock.advance(HOUR);
    await post(id, "stop");
    expect((await getInstance(fb(), admin(), id)).body.status).toBe("stopped");
    const before = fb().instance(id)?.spend_micro ?? 0;
    fb().clock.advance(2 * HOUR);
    expect((fb().instance(id)?.spend_micro ?? 0) - before).toBe(2 * 50 * 200);
    const rows = await transactions(id);
    expect([...new Set(rows.map((r) => r.kind))].sort()).toEqual(["gpu", "storage"]);
  });

  test("2.2 spend_micro always equals the sum of the instance's ledger rows", async () => {
    const id = await runningInstance(fb(), creds());
    for (let i = 0; i < 5; i++) {
      fb().clock.advance(1234 + i * 777_777);
      const rows = await transactions(id);
      const got = await getInstance(fb(), admin(), id);
      expect(got.body.spend_micro).toBe(rows.reduce((s, r) => s + r.amount_micro, 0));
      if (i === 2) await post(id, "stop");
    }
    const balance = fb().balance(creds().org_id);
    expect(balance).toBe(5_000_000_000 - (fb().instance(id)?.spend_micro ?? 0));
  });

  test("3.2 row 7 running -> balance reaches ¥0 -> stopped (auto-stop), GPU release pending -> released", async () => {
    const id = await runningInstance(fb(), creds());
    fb().setTransitions("manual");
    fb().setBalance(creds().org_id, 1_250_000);
    fb().clock.advance(HOUR);
    const got = await getInstance(fb(), admin(), id);
    expect(got.body).toMatchObject({ status: "stopped", gpu_release: "pending", gpus_released: false });
    expect(got.body.gpu_release_requested_at).not.toBeNull();
    // Auto-stop happened when the balance reached zero, half an hour in: then only disk is billed.
    expect(got.body.spend_micro).toBeGreaterThanOrEqual(1_250_000);
    expect(got.body.spend_micro).toBeLessThan(1_250_000 + 10_000);
    fb().completeTransition(id);
    const released = await getInstance(fb(), admin(), id);
    expect(released.body).toMatchObject({ gpu_release: "released", gpus_released: true });
    // Positive again: gpu_release and its timestamp return to null.
    await call(fb(), "POST", "/v1/billing/orders", { token: admin(), body: { amount_micro: 100_000_000 } });
    const after = await getInstance(fb(), admin(), id);
    expect(after.body).toMatchObject({ gpu_release: null, gpu_release_requested_at: null });
    expect((await post(id, "start")).status).toBe(200);
    fb().completeTransition(id);
    expect((await getInstance(fb(), admin(), id)).body).toMatchObject({
      status: "running",
      gpus_released: false,
    });
  });

  test("2.2 gpu_release is unsupported on a machine that cannot release GPUs", async () => {
    const id = await runningInstance(fb(), creds(), admin(), {
      offer_id: creds().vm_offer_id,
      template_id: creds().vm_template_id,
    });
    fb().setBalance(creds().org_id, 1000);
    fb().clock.advance(60_000);
    expect((await getInstance(fb(), admin(), id)).body).toMatchObject({
      status: "stopped",
      gpu_release: "unsupported",
      gpus_released: false,
    });
  });

  test("3.2 row 8 stopped -> balance at or below ¥0 for 24 hours and at or below -¥35 -> destroyed", async () => {
    const id = await runningInstance(fb(), creds());
    await post(id, "stop");
    fb().setBalance(creds().org_id, -35_000_000);
    fb().clock.advance(24 * HOUR - 1000);
    expect((await getInstance(fb(), admin(), id)).body.status).toBe("stopped");
    fb().clock.advance(1000);
    const got = await getInstance(fb(), admin(), id);
    expect(got.body).toMatchObject({ status: "destroyed", access_token: null });
  });

  test("8 auto-destroy needs both: 24 hours at or below ¥0 is not enough above -¥35", async () => {
    const id = await runningInstance(fb(), creds());
    await post(id, "stop");
    fb().setBalance(creds().org_id, -1_000_000);
    fb().clock.advance(48 * HOUR);
    expect((await getInstance(fb(), admin(), id)).body.status).toBe("stopped");
    // Reaching -¥35 later (disk keeps billing) destroys it then.
    fb().setBalance(creds().org_id, -34_990_000);
    fb().clock.advance(HOUR);
    expect((await getInstance(fb(), admin(), id)).body.status).toBe("destroyed");
  });

  test("3.2 row 8 an instance in error is auto-destroyed on the same terms", async () => {
    fb().setHostBehaviour(creds().offer_id === "" ? "" : "00000000-0000-4000-8000-000000000031", {
      provisionFails: true,
    });
    const a = await deploy(fb(), creds(), admin());
    expect((await getInstance(fb(), admin(), a.body.id)).body.status).toBe("error");
    fb().setBalance(creds().org_id, -40_000_000);
    fb().clock.advance(24 * HOUR);
    expect((await getInstance(fb(), admin(), a.body.id)).body.status).toBe("destroyed");
  });

  test("billing transactions newest first with balance_after_micro; spend-daily oldest first", async () => {
    const id = await runningInstance(fb(), creds());
    fb().clock.advance(2 * HOUR);
    const tx = await call(fb(), "GET", "/v1/billing/transactions", { token: admin() });
    expect(tx.body.items.length).toBeGreaterThanOrEqual(2);
    expect(tx.body.items[0]).toMatchObject({ kind: "gpu", instance_id: id });
    expect(tx.body.items[0].balance_after_micro).toBe(fb().balance(creds().org_id));
    const daily = await call(fb(), "GET", "/v1/billing/spend-daily?days=3", { token: admin() });
    expect(daily.body.items).toHaveLength(3);
    const total = daily.body.items.reduce((s: number, d: { spend_micro: number }) => s + d.spend_micro, 0);
    expect(total).toBe(5_000_000);
    expect(daily.body.items[0].date < daily.body.items[2].date).toBe(true);
  });

  test("POST /v1/billing/orders tops up at once with a top_up row", async () => {
    const a = await call(fb(), "POST", "/v1/billing/orders", {
      token: admin(),
      body: { amount_micro: 7_000_000 },
    });
    expect(a.status).toBe(201);
    expect(a.body).toMatchObject({ amount_micro: 7_000_000, status: "paid", balance_micro: 5_007_000_000 });
    const tx = await call(fb(), "GET", "/v1/billing/transactions", { token: admin() });
    expect(tx.body.items[0]).toMatchObject({ kind: "top_up", amount_micro: 7_000_000, instance_id: null });
  });

  test("a 30-day clock jump bills exactly and auto-stops at the zero crossing", async () => {
    const id = await runningInstance(fb(), creds());
    fb().setBalance(creds().org_id, 10_000_000);
    fb().clock.advance(30 * 24 * HOUR);
    const inst = fb().instance(id);
    // Auto-stopped after exactly four hours of GPU; disk billed since (far from -¥35).
    expect(inst?.status).toBe("stopped");
    const rows = fb().ledger({ instanceId: id });
    expect(inst?.spend_micro).toBe(rows.reduce((s, r) => s + r.amount_micro, 0));
    expect(rows.filter((r) => r.kind === "gpu").reduce((s, r) => s + r.amount_micro, 0)).toBe(10_000_000);
    expect(fb().balance(creds().org_id)).toBe(10_000_000 - (inst?.spend_micro ?? 0));
    // Rows are hourly: a 30-day jump yields about one row per hour.
    expect(rows.length).toBeGreaterThan(700);
  });

  // The balance rule counts the organization's whole burn by status (4.2): running, starting,
  // creating and stopping instances at GPU and disk, stopped ones at disk only, the others not.
  // Offer 2.5 ¥/h, disk 50 GB at 200 micro/GB-h: one instance burns 2_510_000 with GPU, 10_000 without.
  test("4.2 deploy and start require one hour of the whole burn, counted by status", async () => {
    fb().setTransitions("manual");
    const base = fb().state().offers[creds().offer_id];
    const offer = fb().createOffer({
      machine_id: base?.machine_id ?? "",
      price_per_hour_micro: 2_500_000,
      storage_price_per_gb_hour_micro: 200,
      free_units: 10,
    });
    const one = async () => (await deploy(fb(), creds(), admin(), { offer_id: offer.id })).body.id as string;
    const creating = await one();
    const running = await one();
    fb().completeTransition(running);
    const stopping = await one();
    fb().completeTransition(stopping);
    await post(stopping, "stop");
    const stopped = await one();
    fb().completeTransition(stopped);
    await post(stopped, "stop");
    fb().completeTransition(stopped);
    const starting = await one();
    fb().completeTransition(starting);
    await post(starting, "stop");
    fb().completeTransition(starting);
    await post(starting, "start");
    const destroyed = await one();
    await call(fb(), "DELETE", `/v1/instances/${destroyed}`, { token: admin() });
    fb().completeTransition(destroyed);
    const statuses = await Promise.all(
      [creating, running, stopping, stopped, starting, destroyed].map(
        async (id) => (await getInstance(fb(), admin(), id)).body.status,
      ),
    );
    expect(statuses).toEqual(["creating", "running", "stopping", "stopped", "starting", "destroyed"]);

    const others = 4 * 2_510_000 + 10_000;
    fb().setBalance(creds().org_id, 1);
    const refused = await deploy(fb(), creds(), admin(), { offer_id: offer.id });
    expect(refused.status).toBe(402);
    expect(refused.body.error).toMatchObject({
      code: "INSUFFICIENT_BALANCE",
      balance_micro: 1,
      required_micro: 2_510_000 + others,
    });
    expect(refused.body.error.message).toContain(`${2_510_000 + others} micro needed`);

    // Starting the stopped one: its own GPU and disk plus every other one, itself not twice.
    const startOthers = 4 * 2_510_000;
    fb().setBalance(creds().org_id, 2_510_000 + startOthers - 1);
    const start = await post(stopped, "start");
    expect(start.status).toBe(402);
    expect(start.body.error).toMatchObject({ required_micro: 2_510_000 + startOthers });
    fb().setBalance(creds().org_id, 2_510_000 + startOthers);
    expect((await post(stopped, "start")).status).toBe(200);
  });

  test("ledger rows say what they bill, and an hour's row starts at the hour or the segment", async () => {
    const id = await runningInstance(fb(), creds());
    const startedAt = fb().clock.now().getTime();
    fb().clock.advance(HOUR + 1000);
    await post(id, "stop");
    fb().clock.advance(2 * HOUR);
    await call(fb(), "POST", "/v1/billing/orders", { token: admin(), body: { amount_micro: 1_000_000 } });
    const rows = fb().ledger({ orgId: creds().org_id });
    const gpu = rows.filter((r) => r.kind === "gpu");
    const storage = rows.filter((r) => r.kind === "storage");
    expect(gpu.length).toBeGreaterThanOrEqual(2);
    for (const r of gpu) expect(r.description).toBe("GPU time while running");
    for (const r of storage) expect(r.description).toBe("Disk 50 GB while stopped");
    expect(rows.find((r) => r.kind === "top_up")?.description).toBe("Top-up");
    // The first row begins when billing began; each later one on its hour.
    expect(gpu[0]?.created_at).toBe(startedAt);
    for (const r of [...gpu.slice(1), ...storage.slice(1)]) expect(r.created_at % HOUR).toBe(0);
    for (const r of rows) if (r.kind !== "top_up") expect(r.amount_micro).toBeGreaterThan(0);
  });

  test("8 auto-destroy lands 24 hours after the balance reached ¥0 to the millisecond, in one long jump", async () => {
    fb().clock.advance(17 * 60_000 + 23_456); // off the hour, so no hourly step lands on the event
    const id = await runningInstance(fb(), creds());
    await post(id, "stop");
    const zeroAt = fb().clock.now().getTime();
    fb().setBalance(creds().org_id, -40_000_000);
    fb().clock.advance(30 * HOUR);
    const inst = fb().instance(id);
    expect(inst?.status).toBe("destroyed");
    expect(inst?.destroyed_at).toBe(zeroAt + 24 * HOUR);
    expect(inst?.error_message).toBe("Destroyed after 24 hours at or below ¥0 and at or below -¥35");
  });

  test("8 a positive balance again clears the 24-hour count; another organization's instances never count", async () => {
    const id = await runningInstance(fb(), creds());
    await post(id, "stop");
    fb().setBalance(creds().org_id, -40_000_000);
    fb().clock.advance(20 * HOUR);
    fb().setBalance(creds().org_id, 1_000_000);
    fb().setBalance(creds().org_id, -40_000_000);
    fb().clock.advance(20 * HOUR);
    expect(fb().instance(id)?.status).toBe("stopped");
    fb().clock.advance(4 * HOUR);
    expect(fb().instance(id)?.status).toBe("destroyed");
  });
});
