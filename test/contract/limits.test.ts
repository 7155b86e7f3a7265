import { DEMO_IDS } from "../../src/fake-backend";
import { call, createKey, deploy, errorOf, runningInstance, useFake } from "./helpers";

describe("8 limits", () => {
  const { fb, creds } = useFake();
  const admin = () => creds().admin_session_token;

  test("8 row 1 API key name length 1 to 64 characters", async () => {
    for (const [name, limit] of [
      ["", 1],
      ["x".repeat(65), 64],
    ] as const) {
      const a = await call(fb(), "POST", "/v1/api-keys", { token: admin(), body: { name } });
      expect(a.status).toBe(422);
      expect(errorOf(a)).toMatchObject({ code: "VALIDATION_ERROR", field: "name", limit });
    }
    expect(
      (await call(fb(), "POST", "/v1/api-keys", { token: admin(), body: { name: "x".repeat(64) } })).status,
    ).toBe(201);
    const kind = await call(fb(), "POST", "/v1/api-keys", {
      token: admin(),
      body: { name: "k", kind: "robot" },
    });
    expect(errorOf(kind)).toMatchObject({ code: "VALIDATION_ERROR", field: "kind", value: "robot" });
  });

  test("8 row 2 stored key prefix is the first 12 characters of the secret", async () => {
    const k = await createKey(fb(), admin());
    expect(k.prefix).toBe(k.secret.slice(0, 12));
    expect(fb().state().api_keys[k.id]?.prefix).toBe(k.secret.slice(0, 12));
  });

  test("8 row 3 secret length: 4-character prefix plus 48 hex characters", async () => {
    const k = await createKey(fb(), admin());
    expect(k.secret).toHaveLength(52);
    expect(k.secret).toMatch(/^[a-z]{3}_[0-9a-f]{48}$/);
  });

  test("8 row 4 25 instances per organization not destroyed; stopped and error ones count", async () => {
    const m = fb().createMachine({ disk_gb: 20000 });
    const o = fb().createOffer({ machine_id: m.id, free_units: 100, price_per_hour_micro: 1000 });
    const ids: string[] = [];
    for (let i = 0; i < 25; i++)
      ids.push(await runningInstance(fb(), creds(), admin(), { offer_id: o.id, disk_gb: 10 }));
    const [stopped, errored, destroyed] = ids;
    await call(fb(), "POST", `/v1/instances/${stopped}/stop`, { token: admin() });
    fb().setHostBehaviour(m.id, { workloadVanishes: true });
    expect(fb().instance(errored ?? "")?.status).toBe("error");
    fb().setHostBehaviour(m.id, { workloadVanishes: false });
    expect(fb().instance(stopped ?? "")?.status).toBe("stopped");
    const refused = await deploy(fb(), creds(), admin(), { offer_id: o.id, disk_gb: 10 });
    expect(errorOf(refused)).toMatchObject({ code: "INSTANCE_LIMIT_REACHED", limit: 25 });
    await call(fb(), "DELETE", `/v1/instances/${destroyed}`, { token: admin() });
    // Once destroyed (the next settle, with immediate transitions) it no longer counts.
    expect(fb().instance(destroyed ?? "")?.status).toBe("destroyed");
    expect((await deploy(fb(), creds(), admin(), { offer_id: o.id, disk_gb: 10 })).status).toBe(201);
  });

  test("8 row 5 disk_gb 10 to 20000, and at most the machine's disk", async () => {
    for (const [disk, limit] of [
      [9, 10],
      [20001, 20000],
    ] as const) {
      const a = await deploy(fb(), creds(), admin(), { disk_gb: disk });
      expect(errorOf(a)).toMatchObject({ code: "VALIDATION_ERROR", field: "disk_gb", limit, value: disk });
    }
    for (const bad of ["50", 50.5, null]) {
      const a = await deploy(fb(), creds(), admin(), { disk_gb: bad });
      expect(errorOf(a)).toMatchObject({ code: "VALIDATION_ERROR", field: "disk_gb" });
    }
    expect((await deploy(fb(), creds(), admin(), { disk_gb: 10 })).status).toBe(201);
    fb().createMachine({ id: "00000000-0000-4000-8000-0000000000f1", disk_gb: 20000 });
    const big = fb().createOffer({ machine_id: "00000000-0000-4000-8000-0000000000f1" });
    expect((await deploy(fb(), creds(), admin(), { disk_gb: 20000, offer_id: big.id })).status).toBe(201);
    expect(errorOf(await deploy(fb(), creds(), admin(), { disk_gb: 2001 }))).toMatchObject({
      code: "DISK_TOO_LARGE",
      max_disk_gb: 2000,
    });
  });

  test("8 row 6 label at most 64 characters", async () => {
    const a = await deploy(fb(), creds(), admin(), { label: "l".repeat(65) });
    expect(errorOf(a)).toMatchObject({ code: "VALIDATION_ERROR", field: "label", limit: 64 });
    expect((await deploy(fb(), creds(), admin(), { label: "l".repeat(64) })).status).toBe(201);
  });

  test("8 row 7 env_overrides at most 100 entries; key at most 256; value at most 4096", async () => {
    const entry = (key: string, value: string | null = "v") => ({ key, value, secret: false });
    const many = Array.from({ length: 101 }, (_, i) => entry(`K${i}`));
    expect(errorOf(await deploy(fb(), creds(), admin(), { env_overrides: many }))).toMatchObject({
      code: "VALIDATION_ERROR",
      field: "env_overrides",
      limit: 100,
    });
    expect(
      errorOf(await deploy(fb(), creds(), admin(), { env_overrides: [entry("k".repeat(257))] })),
    ).toMatchObject({ code: "VALIDATION_ERROR", field: "env_overrides.0.key", limit: 256 });
    expect(
      errorOf(await deploy(fb(), creds(), admin(), { env_overrides: [entry("K", "v".repeat(4097))] })),
    ).toMatchObject({ code: "VALIDATION_ERROR", field: "env_overrides.0.value", limit: 4096 });
    const ok = await deploy(fb(), creds(), admin(), {
      env_overrides: [...many.slice(0, 99), entry("k".repeat(256), "v".repeat(4096))],
    });
    expect(ok.status).toBe(201);
  });

  test("8 row 8 logs tail 1 to 1000; default 200", async () => {
    const id = await runningInstance(fb(), creds());
    fb().appendLogs(
      id,
      Array.from({ length: 1200 }, (_, i) => `l${i}`),
    );
    expect((await call(fb(), "GET", `/v1/instances/${id}/logs`, { token: admin() })).body.lines).toHaveLength(
      200,
    );
    const over = await call(fb(), "GET", `/v1/instances/${id}/logs?tail=1001`, { token: admin() });
    expect(errorOf(over)).toMatchObject({ code: "VALIDATION_ERROR", field: "tail", limit: 1000 });
    const under = await call(fb(), "GET", `/v1/instances/${id}/logs?tail=0`, { token: admin() });
    expect(errorOf(under)).toMatchObject({ code: "VALIDATION_ERROR", field: "tail", limit: 1 });
  });

  test("8 row 9 unconfirmed stop: 30 minutes, then the instance returns to running", async () => {
    fb().clock.freeze();
    const id = await runningInstance(fb(), creds());
    fb().setHostBehaviour(DEMO_IDS.machineLarge, { neverConfirmStop: true });
    await call(fb(), "POST", `/v1/instances/${id}/stop`, { token: admin() });
    fb().clock.advance(30 * 60_000 - 1);
    expect(fb().instance(id)?.status).toBe("stopping");
    fb().clock.advance(1);
    expect(fb().instance(id)).toMatchObject({ status: "running", error_code: "stop_timed_out" });
  });

  test("8 row 10 auto-destroy: at or below ¥0 for 24 hours and at or below -¥35", async () => {
    const id = await runningInstance(fb(), creds());
    await call(fb(), "POST", `/v1/instances/${id}/stop`, { token: admin() });
    fb().setBalance(creds().org_id, -35_000_001);
    fb().clock.advance(24 * 3_600_000);
    expect(fb().instance(id)?.status).toBe("destroyed");
  });

  test("8 row 11 auto-stop: balance reaches ¥0", async () => {
    const id = await runningInstance(fb(), creds());
    fb().setBalance(creds().org_id, 0);
    expect(fb().instance(id)?.status).toBe("stopped");
  });

  test("8 row 12 balance requirement: one hour of whole burn, checked at deploy and start, nothing reserved", async () => {
    const id = await runningInstance(fb(), creds());
    await call(fb(), "POST", `/v1/instances/${id}/stop`, { token: admin() });
    // Stopped instance: disk 10,000/h. Start needs 2.51 ¥ for itself; deploy needs 2.51 ¥ + 0.01 ¥.
    fb().setBalance(creds().org_id, 2_510_000);
    const d = await deploy(fb(), creds(), admin());
    expect(errorOf(d)).toMatchObject({ code: "INSUFFICIENT_BALANCE", required_micro: 2_520_000 });
    const s = await call(fb(), "POST", `/v1/instances/${id}/start`, { token: admin() });
    expect(s.status).toBe(200);
    // Nothing was reserved: the balance is unchanged by the start call itself.
    expect(fb().balance(creds().org_id)).toBeLessThanOrEqual(2_510_000);
  });
});
