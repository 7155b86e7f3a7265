import { DEMO_IDS } from "../../src/fake-backend";
import { call, createKey, deploy, errorOf, getInstance, runningInstance, useFake } from "./helpers";

const INSTANCE_FIELDS = [
  "id",
  "label",
  "status",
  "disk_gb",
  "price_per_hour_micro",
  "storage_price_per_gb_hour_micro",
  "ssh_host",
  "ssh_port",
  "ssh_user",
  "jupyter_url",
  "open_url",
  "access_token",
  "error_code",
  "error_message",
  "allowed_actions",
  "gpus_released",
  "gpu_release",
  "gpu_release_requested_at",
  "hold_price_per_hour_micro",
  "stop_hold_price_per_hour_micro",
  "suspended_hold_price_per_hour_micro",
  "stop_releases_gpus",
  "created_at",
  "started_at",
  "status_changed_at",
  "destroyed_at",
  "spend_micro",
  "deployed_by",
  "deployed_via_api_key",
  "offer",
  "template",
].sort();

describe("instances (2.2, 3.2, 4.2, 7.3, 7.4)", () => {
  const { fb, creds } = useFake();
  const admin = () => creds().admin_session_token;
  const post = (id: string, action: string) =>
    call(fb(), "POST", `/v1/instances/${id}/${action}`, { token: admin() });
  const del = (id: string) => call(fb(), "DELETE", `/v1/instances/${id}`, { token: admin() });
  const status = async (id: string) => (await getInstance(fb(), admin(), id)).body.status;

  test("2.2 every field is present; a fresh instance is creating and lists only destroy", async () => {
    const a = await deploy(fb(), creds(), admin(), { label: "train", ssh_key_id: creds().ssh_key_id });
    expect(a.status).toBe(201);
    expect(Object.keys(a.body).sort()).toEqual(INSTANCE_FIELDS);
    expect(a.body).toMatchObject({
      status: "creating",
      label: "train",
      allowed_actions: ["destroy"],
      disk_gb: 50,
      price_per_hour_micro: 2_500_000,
      storage_price_per_gb_hour_micro: 200,
      ssh_host: "203.0.113.10",
      ssh_user: "root",
      hold_price_per_hour_micro: null,
      stop_releases_gpus: false,
      started_at: null,
      spend_micro: 0,
      deployed_by: "admin@demo.example",
      deployed_via_api_key: null,
      offer: { id: creds().offer_id, gpu_model: "RTX 4090", num_gpus: 1 },
    });
    expect(a.body.ssh_port).not.toBe(22);
    expect(a.body.template).toMatchObject({ id: creds().template_id, readme: null, onstart: null });
    const got = await getInstance(fb(), admin(), a.body.id);
    expect(Object.keys(got.body).sort()).toEqual(INSTANCE_FIELDS);
    expect(got.body.offer.machine.disk_gb).toBe(2000);
    const label = await deploy(fb(), creds(), admin());
    expect(label.body.label).toBeNull();
  });

  test("3.2 row 1 running -> POST /stop -> stopping, then stopped (asynchronous)", async () => {
    const id = await runningInstance(fb(), creds());
    fb().setTransitions("manual");
    const a = await post(id, "stop");
    expect(a.status).toBe(200);
    expect(a.body).toMatchObject({ status: "stopping", allowed_actions: ["destroy"] });
    expect(await status(id)).toBe("stopping");
    fb().completeTransition(id);
    expect(await status(id)).toBe("stopped");
    expect((await getInstance(fb(), admin(), id)).body.allowed_actions).toEqual(["start", "destroy"]);
  });

  test("3.2 row 2 stopped -> POST /start -> starting, then running, same disk", async () => {
    const id = await runningInstance(fb(), creds());
    await post(id, "stop");
    expect(await status(id)).toBe("stopped");
    fb().setTransitions({ afterMs: 2000 });
    const a = await post(id, "start");
    expect(a.body).toMatchObject({ status: "starting", disk_gb: 50 });
    expect(await status(id)).toBe("starting");
    fb().clock.advance(2000);
    expect(await status(id)).toBe("running");
  });

  test("3.2 row 3 any status except destroyed -> DELETE -> destroying, then destroyed", async () => {
    for (const start of ["creating", "running", "stopped", "error"] as const) {
      fb().setTransitions("immediate");
      const a = await deploy(fb(), creds(), admin());
      const id = a.body.id as string;
      if (start === "running" || start === "stopped") expect(await status(id)).toBe("running");
      if (start === "stopped") {
        await post(id, "stop");
        expect(await status(id)).toBe("stopped");
      }
      if (start === "error") {
        fb().setHostBehaviour(DEMO_IDS.machineLarge, { workloadCompletes: true });
        expect(await status(id)).toBe("error");
        fb().setHostBehaviour(DEMO_IDS.machineLarge, { workloadCompletes: false });
      }
      fb().setTransitions("manual");
      const d = await del(id);
      expect([start, d.status, d.body.status]).toEqual([start, 200, "destroying"]);
      fb().completeTransition(id);
      const got = await getInstance(fb(), admin(), id);
      expect(got.body).toMatchObject({ status: "destroyed", allowed_actions: [], access_token: null });
      expect(got.body.destroyed_at).not.toBeNull();
      const again = await del(id);
      expect([again.status, errorOf(again).code]).toEqual([409, "INVALID_STATE"]);
      expect(errorOf(again).message).toContain("destroyed");
    }
  });

  test("3.2 row 3 destroy releases the slice: the offer's unit and the machine's disk come back", async () => {
    const before = fb().state().machines[DEMO_IDS.machineLarge]?.available_disk_gb;
    const units = fb().state().offers[creds().offer_id]?.free_units;
    const id = await runningInstance(fb(), creds(), admin(), { disk_gb: 300 });
    expect(fb().state().machines[DEMO_IDS.machineLarge]?.available_disk_gb).toBe((before ?? 0) - 300);
    await del(id);
    expect(await status(id)).toBe("destroyed");
    expect(fb().state().machines[DEMO_IDS.machineLarge]?.available_disk_gb).toBe(before);
    expect(fb().state().offers[creds().offer_id]?.free_units).toBe(units);
  });

  test("3.2 row 4 DELETE on destroying re-sends the teardown and returns 200", async () => {
    const id = await runningInstance(fb(), creds());
    fb().setTransitions("manual");
    const first = await del(id);
    const opBefore = fb().instance(id)?.pending?.op_id;
    const second = await del(id);
    expect([second.status, second.body.status]).toEqual([200, "destroying"]);
    expect(first.body.status).toBe("destroying");
    // A repeated DELETE is a new request: it gets a new identity.
    expect(fb().instance(id)?.pending?.op_id).not.toBe(opBefore);
  });

  test("3.2 row 5 a stop unconfirmed after 30 minutes returns to running with stop_timed_out and is retried", async () => {
    const id = await runningInstance(fb(), creds());
    fb().setHostBehaviour(DEMO_IDS.machineLarge, { neverConfirmStop: true });
    await post(id, "stop");
    fb().clock.advance(29 * 60_000);
    expect(await status(id)).toBe("stopping");
    const ledgerBefore = fb().instance(id)?.spend_micro ?? 0;
    fb().clock.advance(60_000);
    const got = await getInstance(fb(), admin(), id);
    expect(got.body).toMatchObject({ status: "running", error_code: "stop_timed_out" });
    // GPU is billed again.
    fb().clock.advance(3_600_000);
    expect(fb().instance(id)?.spend_micro).toBeGreaterThan(ledgerBefore);
    // The host confirms the re-sent stop later: it lands.
    fb().setHostBehaviour(DEMO_IDS.machineLarge, { neverConfirmStop: false });
    fb().clock.advance(60_000);
    expect((await getInstance(fb(), admin(), id)).body).toMatchObject({
      status: "stopped",
      error_code: null,
    });
  });

  test("3.2 re-send identity: a stale stop re-sent after a later start does not stop the instance again", async () => {
    const id = await runningInstance(fb(), creds());
    fb().setHostBehaviour(DEMO_IDS.machineLarge, { neverConfirmStop: true });
    await post(id, "stop");
    fb().clock.advance(30 * 60_000);
    expect(await status(id)).toBe("running");
    // A new client request (stop, then a start) supersedes the retried stop.
    fb().setHostBehaviour(DEMO_IDS.machineLarge, { neverConfirmStop: false });
    await post(id, "stop");
    expect(await status(id)).toBe("stopped");
    await post(id, "start");
    expect(await status(id)).toBe("running");
    fb().clock.advance(5 * 60_000);
    expect(await status(id)).toBe("running");
  });

  test.each([
    ["HOST_UNREACHABLE", 409, { unreachable: true }, "not connected"],
    ["START_REFUSED", 409, { refuseStart: "refused" }, "refused"],
    ["START_REFUSED", 409, { refuseStart: "workload_missing" }, "no longer holds the workload"],
    ["START_UNAVAILABLE", 503, { startUnavailable: true }, "retry"],
    ["CAPACITY_UNAVAILABLE", 409, { capacityUnavailable: true }, "in use"],
  ] as const)(
    "7.3 row %s (%d): the instance returns to stopped with its disk",
    async (code, st, behaviour, text) => {
      const id = await runningInstance(fb(), creds());
      await post(id, "stop");
      expect(await status(id)).toBe("stopped");
      fb().setHostBehaviour(DEMO_IDS.machineLarge, behaviour);
      const a = await post(id, "start");
      expect([a.status, errorOf(a).code]).toEqual([st, code]);
      expect(errorOf(a).message).toContain(text);
      const got = await getInstance(fb(), admin(), id);
      expect(got.body).toMatchObject({
        status: "stopped",
        disk_gb: 50,
        allowed_actions: ["start", "destroy"],
      });
      // 3.2 row 6: once the host behaves, the start lands.
      fb().setHostBehaviour(DEMO_IDS.machineLarge, {
        unreachable: false,
        refuseStart: false,
        startUnavailable: false,
        capacityUnavailable: false,
      });
      expect((await post(id, "start")).status).toBe(200);
      expect(await status(id)).toBe("running");
    },
  );

  test("3.2 row 6 start fails on the host while starting: the instance is stopped with its disk", async () => {
    const id = await runningInstance(fb(), creds());
    await post(id, "stop");
    expect(await status(id)).toBe("stopped");
    fb().setHostBehaviour(DEMO_IDS.machineLarge, { unreachable: true });
    expect(errorOf(await post(id, "start")).code).toBe("HOST_UNREACHABLE");
    expect(fb().instance(id)?.status).toBe("stopped");
    expect(fb().state().machines[DEMO_IDS.machineLarge]?.available_disk_gb).toBe(1950);
  });

  test("3.2 INVALID_STATE: stop only from running, start only from stopped", async () => {
    fb().setTransitions("manual");
    const a = await deploy(fb(), creds(), admin());
    const id = a.body.id as string;
    for (const action of ["stop", "start"]) {
      const r = await post(id, action);
      expect([r.status, errorOf(r).code]).toEqual([409, "INVALID_STATE"]);
      expect(errorOf(r).message).toContain("creating");
    }
    fb().completeTransition(id);
    const r = await post(id, "start");
    expect(errorOf(r).message).toContain("running");
  });

  test("7.4 provision_failed: the instance is in error", async () => {
    fb().setHostBehaviour(DEMO_IDS.machineLarge, { provisionFails: true });
    const a = await deploy(fb(), creds(), admin());
    const got = await getInstance(fb(), admin(), a.body.id);
    expect(got.body).toMatchObject({
      status: "error",
      error_code: "provision_failed",
      allowed_actions: ["destroy"],
    });
    expect(typeof got.body.error_message).toBe("string");
  });

  test.each([
    ["workload_completed", { workloadCompletes: true }],
    ["workload_gone", { workloadVanishes: true }],
  ] as const)("7.4 %s: a running instance ends in error", async (code, behaviour) => {
    const id = await runningInstance(fb(), creds());
    fb().setHostBehaviour(DEMO_IDS.machineLarge, behaviour);
    expect((await getInstance(fb(), admin(), id)).body).toMatchObject({ status: "error", error_code: code });
  });

  test("7.4 start_timed_out: a start the host never confirms leaves the instance stopped after 30 minutes", async () => {
    const id = await runningInstance(fb(), creds());
    await post(id, "stop");
    expect(await status(id)).toBe("stopped");
    fb().setHostBehaviour(DEMO_IDS.machineLarge, { neverConfirmStart: true });
    expect((await post(id, "start")).body.status).toBe("starting");
    fb().clock.advance(29 * 60_000);
    expect(await status(id)).toBe("starting");
    fb().clock.advance(60_000);
    expect((await getInstance(fb(), admin(), id)).body).toMatchObject({
      status: "stopped",
      error_code: "start_timed_out",
    });
  });

  test("7.4 stop_timed_out: a stop that did not land leaves the instance running with the code", async () => {
    fb().clock.freeze();
    const id = await runningInstance(fb(), creds());
    fb().setHostBehaviour(DEMO_IDS.machineLarge, { neverConfirmStop: true });
    await post(id, "stop");
    fb().clock.advance(30 * 60_000);
    const got = await getInstance(fb(), admin(), id);
    expect(got.body).toMatchObject({ status: "running", error_code: "stop_timed_out" });
    expect(got.body.allowed_actions).toEqual(["stop", "destroy"]);
  });

  test("7.4 gpus_unavailable: a start that did not land for lack of GPUs leaves the instance stopped", async () => {
    const id = await runningInstance(fb(), creds());
    await post(id, "stop");
    fb().setHostBehaviour(DEMO_IDS.machineLarge, { capacityUnavailable: true });
    await post(id, "start");
    expect((await getInstance(fb(), admin(), id)).body).toMatchObject({
      status: "stopped",
      error_code: "gpus_unavailable",
    });
  });

  test("4.2 list: destroyed excluded unless include_destroyed=true; newest first", async () => {
    const a = await runningInstance(fb(), creds());
    const b = await runningInstance(fb(), creds());
    const c = await runningInstance(fb(), creds());
    await del(b);
    await status(b);
    const list = await call(fb(), "GET", "/v1/instances", { token: admin() });
    expect(list.body.items.map((i: { id: string }) => i.id)).toEqual([c, a]);
    const all = await call(fb(), "GET", "/v1/instances?include_destroyed=true", { token: admin() });
    expect(all.body.items.map((i: { id: string }) => i.id)).toEqual([c, b, a]);
    const bad = await call(fb(), "GET", "/v1/instances?include_destroyed=maybe", { token: admin() });
    expect(errorOf(bad)).toMatchObject({ code: "VALIDATION_ERROR", field: "include_destroyed" });
  });

  test("4.2 logs: empty until the workload first ran; tail default 200, range 1..1000 else 422", async () => {
    fb().setTransitions("manual");
    const a = await deploy(fb(), creds(), admin());
    const id = a.body.id as string;
    const empty = await call(fb(), "GET", `/v1/instances/${id}/logs`, { token: admin() });
    expect(empty.body).toEqual({ lines: [] });
    fb().completeTransition(id);
    fb().appendLogs(
      id,
      Array.from({ length: 1500 }, (_, i) => `line ${i}`),
    );
    const def = await call(fb(), "GET", `/v1/instances/${id}/logs`, { token: admin() });
    expect(def.body.lines).toHaveLength(200);
    expect(def.body.lines.at(-1)).toBe("line 1499");
    const max = await call(fb(), "GET", `/v1/instances/${id}/logs?tail=1000`, { token: admin() });
    expect(max.body.lines).toHaveLength(1000);
    const one = await call(fb(), "GET", `/v1/instances/${id}/logs?tail=1`, { token: admin() });
    expect(one.body.lines).toEqual(["line 1499"]);
    for (const tail of ["0", "1001", "abc", "1.5"]) {
      const bad = await call(fb(), "GET", `/v1/instances/${id}/logs?tail=${tail}`, { token: admin() });
      expect([tail, bad.status, errorOf(bad).code, errorOf(bad).field]).toEqual([
        tail,
        422,
        "VALIDATION_ERROR",
        "tail",
      ]);
    }
  });

  test("2.2 access_token, jupyter_url and open_url once reported; access_token null after destroy", async () => {
    fb().setTransitions("manual");
    const a = await deploy(fb(), creds(), admin(), { template_id: creds().jupyter_template_id });
    const id = a.body.id as string;
    expect(a.body.access_token).toMatch(/^[0-9a-f]{32}$/);
    expect(a.body.jupyter_url).toBeNull();
    expect(a.body.open_url).toBeNull();
    fb().completeTransition(id);
    const got = await getInstance(fb(), admin(), id);
    expect(got.body.jupyter_url).toContain(`token=${a.body.access_token}`);
    expect(got.body.open_url).toContain(`?token=${a.body.access_token}`);
    await del(id);
    fb().completeTransition(id);
    const gone = await getInstance(fb(), admin(), id);
    expect(gone.body).toMatchObject({ access_token: null, jupyter_url: null, open_url: null });
    // Behind a relay (not directly reachable) no URL is reported yet.
    const m = fb().createMachine({ disk_gb: 1000, directly_reachable: false });
    const o = fb().createOffer({ machine_id: m.id });
    const relayed = await deploy(fb(), creds(), admin(), {
      offer_id: o.id,
      template_id: creds().jupyter_template_id,
    });
    fb().completeTransition(relayed.body.id);
    expect((await getInstance(fb(), admin(), relayed.body.id)).body).toMatchObject({
      status: "running",
      jupyter_url: null,
      open_url: null,
    });
    // A template that uses no access token has none.
    const ssh = await deploy(fb(), creds(), admin());
    expect(ssh.body.access_token).toBeNull();
  });

  test("4.2 env_overrides merge over template env; the platform overlay cannot be shadowed", async () => {
    const a = await deploy(fb(), creds(), admin(), {
      template_id: creds().jupyter_template_id,
      env_overrides: [
        { key: "TZ", value: "Asia/Shanghai", secret: false },
        { key: "EXTRA", value: "1", secret: true },
        { key: "JUPYTER_TOKEN", value: "mine", secret: false },
        { key: "GPU_COUNT", value: "8", secret: false },
        { key: "SERVICE_ACCESS_TOKEN", value: "mine", secret: false },
        { key: "APP_PASSWORD", value: "mine", secret: false },
      ],
    });
    const env = Object.fromEntries((fb().instance(a.body.id)?.env ?? []).map((e) => [e.key, e.value]));
    expect(env).toEqual({
      TZ: "Asia/Shanghai",
      EXTRA: "1",
      GPU_COUNT: "1",
      JUPYTER_TOKEN: a.body.access_token,
      SERVICE_ACCESS_TOKEN: a.body.access_token,
      APP_PASSWORD: a.body.access_token,
    });
    const dropped = await deploy(fb(), creds(), admin(), {
      env_overrides: [
        { key: "TZ", value: null, secret: false },
        { key: "GPU_COUNT", value: null, secret: false },
      ],
    });
    const env2 = Object.fromEntries((fb().instance(dropped.body.id)?.env ?? []).map((e) => [e.key, e.value]));
    expect(env2).toEqual({ GPU_COUNT: "1" });
  });

  test("4.2 ssh_key_id: session and personal key attach the caller's own keys only", async () => {
    expect((await deploy(fb(), creds(), admin(), { ssh_key_id: creds().ssh_key_id })).status).toBe(201);
    const personal = await createKey(fb(), creds().member_session_token);
    expect(
      errorOf(await deploy(fb(), creds(), personal.secret, { ssh_key_id: creds().ssh_key_id })).code,
    ).toBe("SSH_KEY_NOT_FOUND");
    expect(
      (await deploy(fb(), creds(), personal.secret, { ssh_key_id: creds().member_ssh_key_id })).status,
    ).toBe(201);
  });

  test("4.2 ssh_key_id: a team key attaches any current member's key, never a former member's", async () => {
    fb().addMember(creds().org_id, creds().member_user_id, "admin");
    const memberAdmin = fb().createSession(creds().member_user_id, creds().org_id);
    const team = await createKey(fb(), memberAdmin, "team", "bot");
    expect((await deploy(fb(), creds(), team.secret, { ssh_key_id: creds().ssh_key_id })).status).toBe(201);
    expect((await deploy(fb(), creds(), team.secret, { ssh_key_id: creds().member_ssh_key_id })).status).toBe(
      201,
    );
    fb().removeMember(creds().org_id, creds().member_user_id);
    // Including the key's own creator once they have left.
    const a = await deploy(fb(), creds(), team.secret, { ssh_key_id: creds().member_ssh_key_id });
    expect(errorOf(a).code).toBe("SSH_KEY_NOT_FOUND");
    const other = fb().createSshKey({ user_id: DEMO_IDS.otherAdmin, name: "outsider" });
    expect(errorOf(await deploy(fb(), creds(), team.secret, { ssh_key_id: other.id })).code).toBe(
      "SSH_KEY_NOT_FOUND",
    );
  });

  test("2.2 deployed_by and deployed_via_api_key for session, personal and team credentials", async () => {
    const personal = await createKey(fb(), creds().member_session_token, "personal", "laptop");
    const team = await createKey(fb(), admin(), "team", "ci bot");
    const bySession = await deploy(fb(), creds(), creds().member_session_token);
    expect(bySession.body).toMatchObject({ deployed_by: "+8613800138000", deployed_via_api_key: null });
    const byPersonal = await deploy(fb(), creds(), personal.secret);
    expect(byPersonal.body).toMatchObject({
      deployed_by: "+8613800138000",
      deployed_via_api_key: {
        id: personal.id,
        name: "laptop",
        kind: "personal",
        prefix: personal.prefix,
        revoked: false,
      },
    });
    const byTeam = await deploy(fb(), creds(), team.secret);
    expect(byTeam.body).toMatchObject({
      deployed_by: `ci bot (${team.prefix})`,
      deployed_via_api_key: { id: team.id, kind: "team", revoked: false },
    });
  });

  test("4.2 balance rule: one hour of the whole organization burn, nothing reserved", async () => {
    const a = await runningInstance(fb(), creds());
    const b = await runningInstance(fb(), creds());
    await post(b, "stop");
    expect(await status(b)).toBe("stopped");
    // Running a: 2.5 ¥ + 50*200; stopped b: 50*200; new: 2.5 ¥ + 50*200.
    const required = 2_510_000 + 10_000 + 2_510_000;
    fb().setBalance(creds().org_id, required - 1);
    const refused = await deploy(fb(), creds(), admin());
    expect(errorOf(refused)).toMatchObject({ code: "INSUFFICIENT_BALANCE", required_micro: required });
    fb().setBalance(creds().org_id, required);
    expect((await deploy(fb(), creds(), admin())).status).toBe(201);
    expect(a).toBeDefined();
  });
});
