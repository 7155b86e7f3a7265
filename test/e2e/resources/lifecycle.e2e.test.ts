import {
  apply,
  backendFetch,
  expectCode,
  liveInstances,
  output,
  plan,
  resetSuite,
  restoreState,
  type Suite,
  saveState,
  startSuite,
  stateOf,
  stopSuite,
  writeConfig,
} from "./helpers";

// gpurental_api_key and gpurental_instance through the real terraform CLI against the fake
// backend: the lifecycle (apply, no-change plan, import, stop and start in place, destroy), drift
// made outside Terraform, failed provisioning, injected faults and lost deploy answers, and what
// TF_LOG=trace prints.

jest.setTimeout(300_000);

let s: Suite;

beforeAll(async () => {
  s = await startSuite();
});
afterAll(() => stopSuite(s));
beforeEach(() => resetSuite(s));

const SECRET_ENV_VALUE = "env-secret-4f1d9a7c2b";

function instanceBlock(opts: { name?: string; extra?: string; desired?: string } = {}): string {
  return `resource "gpurental_instance" "${opts.name ?? "a"}" {
  offer_id    = "${s.creds.offer_id}"
  template_id = "${s.creds.template_id}"
  disk_gb     = 50
  label       = "e2e-${opts.name ?? "a"}"
  ssh_key_id  = "${s.creds.ssh_key_id}"
  env         = { A = "1" }
  secret_env  = { TOKEN = "${SECRET_ENV_VALUE}" }
  unset_env   = ["TZ"]
${opts.desired ? `  desired_status = "${opts.desired}"\n` : ""}${opts.extra ?? ""}}`;
}

const keyBlock = `resource "gpurental_api_key" "ci" {
  name = "ci"
  kind = "team"
}`;

const outputs = `output "ssh" {
  value = "ssh -p \${gpurental_instance.a.ssh_port} \${gpurental_instance.a.ssh_user}@\${gpurental_instance.a.ssh_host}"
}`;

test("lifecycle: apply, no-change plan, import, stop and start, destroy", async () => {
  writeConfig(s, [keyBlock, instanceBlock(), outputs].join("\n\n"));
  const applied = expectCode(await apply(s), 0);
  expect(applied.stdout).toMatch(/ssh = "ssh -p \d+ root@203\.0\.113\.10"/);
  const live = liveInstances(s);
  expect(live).toHaveLength(1);
  expect(live[0]?.status).toBe("running");
  expect(live[0]?.env.find((e) => e.key === "TOKEN")).toMatchObject({
    secret: true,
    value: SECRET_ENV_VALUE,
  });

  // A plan right after apply shows no changes.
  expectCode(await plan(s), 0);

  // Import both and compare with what apply recorded.
  const inst = await stateOf(s, "gpurental_instance.a");
  const key = await stateOf(s, "gpurental_api_key.ci");
  expect(key.secret).toMatch(/^gpr_/);
  saveState(s, "applied.tfstate");
  await s.tf.ok(["state", "rm", "gpurental_instance.a", "gpurental_api_key.ci"]);
  await s.tf.ok(["import", "-input=false", "gpurental_instance.a", inst.id as string]);
  await s.tf.ok(["import", "-input=false", "gpurental_api_key.ci", key.id as string]);
  const importedInst = await stateOf(s, "gpurental_instance.a");
  const importedKey = await stateOf(s, "gpurental_api_key.ci");
  const strip = (v: Record<string, unknown>, keys: string[]) =>
    Object.fromEntries(Object.entries(v).filter(([k]) => !keys.includes(k)));
  // The API never returns these; the docs say so.
  const unreadable = [
    "ssh_key_id",
    "env",
    "secret_env",
    "unset_env",
    "store_access_secrets",
    "timeouts",
    "spend_micro",
  ];
  expect(strip(importedInst, unreadable)).toEqual(strip(inst, unreadable));
  expect(importedKey).toEqual({ ...key, secret: null, last_used_at: importedKey.last_used_at });
  restoreState(s, "applied.tfstate");
  expectCode(await plan(s), 0);

  // Stop in place, then no changes, then start again.
  writeConfig(s, [keyBlock, instanceBlock({ desired: "stopped" }), outputs].join("\n\n"));
  const stopPlan = expectCode(await plan(s), 2);
  expect(stopPlan.stdout).toMatch(/gpurental_instance\.a will be updated in-place/);
  expect(stopPlan.stdout).toMatch(/desired_status\s+= "running" -> "stopped"/);
  expectCode(await apply(s), 0);
  expect(s.backend.instance(inst.id as string)?.status).toBe("stopped");
  expect((await stateOf(s, "gpurental_instance.a")).status).toBe("stopped");
  expectCode(await plan(s), 0);

  writeConfig(s, [keyBlock, instanceBlock(), outputs].join("\n\n"));
  expectCode(await apply(s), 0);
  expect(s.backend.instance(inst.id as string)?.status).toBe("running");
  expectCode(await plan(s), 0);

  // Only timeouts change: an in-place update that touches nothing at the API.
  writeConfig(
    s,
    [keyBlock, instanceBlock({ extra: '  timeouts = { update = "45m" }\n' }), outputs].join("\n\n"),
  );
  const timeoutsPlan = expectCode(await plan(s), 2);
  expect(timeoutsPlan.stdout).toMatch(/1 to change/);
  expectCode(await apply(s), 0);
  expectCode(await plan(s), 0);

  // Destroy leaves nothing behind.
  expectCode(await s.tf.run(["destroy", "-auto-approve", "-input=false"]), 0);
  expect(liveInstances(s)).toHaveLength(0);
  expect(s.backend.state().api_keys[key.id as string]?.revoked_at).not.toBeNull();
});

test("import: the first apply records the arguments the API does not return, in place and without redeploying", async () => {
  writeConfig(s, instanceBlock());
  expectCode(await apply(s), 0);
  const inst = await stateOf(s, "gpurental_instance.a");
  await s.tf.ok(["state", "rm", "gpurental_instance.a"]);
  await s.tf.ok(["import", "-input=false", "gpurental_instance.a", inst.id as string]);

  const first = expectCode(await plan(s), 2);
  expect(first.stdout).toMatch(/gpurental_instance\.a will be updated in-place/);
  expect(first.stdout).not.toMatch(/must be replaced|forces replacement/);
  expect(first.stdout).toMatch(/Arguments of imported instance .* recorded as configured/);
  expect(first.stdout + first.stderr).not.toContain(SECRET_ENV_VALUE);

  const applied = expectCode(await apply(s), 0);
  expect(applied.stdout).toMatch(/1 changed, 0 destroyed/);
  expect(applied.stdout + applied.stderr).not.toContain(SECRET_ENV_VALUE);
  expect(liveInstances(s).map((i) => i.id)).toEqual([inst.id]);
  expect(await stateOf(s, "gpurental_instance.a")).toMatchObject({
    ssh_key_id: s.creds.ssh_key_id,
    env: { A: "1" },
    unset_env: ["TZ"],
  });
  const settled = expectCode(await plan(s), 0);
  expect(settled.stdout).not.toMatch(/recorded as configured/);

  // From now on the values are known, and changing one replaces the instance as always.
  writeConfig(s, instanceBlock().replace('env         = { A = "1" }', 'env         = { A = "2" }'));
  const changed = expectCode(await plan(s), 2);
  expect(changed.stdout).toMatch(/gpurental_instance\.a must be replaced/);
});

test("drift: destroyed out of band plans a create; auto-stopped plans a start; revoked key plans a create", async () => {
  writeConfig(s, [keyBlock, instanceBlock()].join("\n\n"));
  expectCode(await apply(s), 0);
  const id = (await stateOf(s, "gpurental_instance.a")).id as string;
  const keyId = (await stateOf(s, "gpurental_api_key.ci")).id as string;

  // Balance runs out: the platform stops the instance.
  s.backend.setBalance(s.creds.org_id, 1);
  s.backend.clock.advance(60_000);
  expect(s.backend.instance(id)?.status).toBe("stopped");
  s.backend.topUp(s.creds.org_id, 5_000_000_000);
  const startPlan = expectCode(await plan(s), 2);
  expect(startPlan.stdout).toMatch(/desired_status\s+= "stopped" -> "running"/);
  expectCode(await apply(s), 0);
  expect(s.backend.instance(id)?.status).toBe("running");
  expectCode(await plan(s), 0);

  // Destroyed and revoked outside Terraform.
  await backendFetch(`${s.backend.url}/v1/instances/${id}`, {
    method: "DELETE",
    headers: { authorization: `Bearer ${s.creds.admin_session_token}` },
  });
  await backendFetch(`${s.backend.url}/v1/api-keys/${keyId}`, {
    method: "DELETE",
    headers: { authorization: `Bearer ${s.creds.admin_session_token}` },
  });
  const recreate = expectCode(await plan(s), 2);
  expect(recreate.stdout).toMatch(/gpurental_instance\.a will be created/);
  expect(recreate.stdout).toMatch(/gpurental_api_key\.ci will be created/);
  expectCode(await apply(s), 0);
  expect(liveInstances(s)).toHaveLength(1);
  expectCode(await plan(s), 0);
});

test("failed provisioning taints the instance and the next apply replaces it", async () => {
  s.backend.setHostBehaviour("00000000-0000-4000-8000-000000000031", { provisionFails: true });
  writeConfig(s, instanceBlock());
  const failed = expectCode(await apply(s), 1);
  expect(output(failed)).toContain("provision_failed");
  const st = await s.tf.ok(["state", "list"]);
  expect(st.stdout).toContain("gpurental_instance.a");
  const tainted = expectCode(await plan(s), 2);
  expect(tainted.stdout).toMatch(/is tainted, so must be replaced/);

  s.backend.setHostBehaviour("00000000-0000-4000-8000-000000000031", { provisionFails: false });
  expectCode(await apply(s), 0);
  const live = liveInstances(s);
  expect(live).toHaveLength(1);
  expect(live[0]?.status).toBe("running");
  expectCode(await plan(s), 0);

  // A create-only argument changes: the instance is replaced.
  writeConfig(s, instanceBlock().replace("disk_gb     = 50", "disk_gb     = 60"));
  const replace = expectCode(await plan(s), 2);
  expect(replace.stdout).toMatch(/must be replaced/);
  expect(replace.stdout).toMatch(/disk_gb\s+= 50 -> 60 # forces replacement/);
  expectCode(await apply(s), 0);
  const after = liveInstances(s);
  expect(after).toHaveLength(1);
  expect(after[0]).toMatchObject({ disk_gb: 60, status: "running" });
  expect(after[0]?.id).not.toBe(live[0]?.id);
  expectCode(await plan(s), 0);
});

test("injected 429/503 and lost deploy answers converge without duplicates or orphans", async () => {
  s.backend.addFault({
    route: "POST /v1/instances",
    kind: "status",
    status: 429,
    retryAfterSeconds: 1,
    times: 1,
  });
  s.backend.addFault({ route: "POST /v1/instances", kind: "status", status: 503, times: 1 });
  s.backend.addFault({ route: "POST /v1/instances", kind: "lost-response", times: 2 });
  s.backend.addFault({ route: "GET /v1/instances/:id", kind: "status", status: 503, times: 2 });
  s.backend.addFault({
    route: "GET /v1/instances",
    kind: "status",
    status: 429,
    retryAfterSeconds: 1,
    times: 1,
  });
  writeConfig(s, [instanceBlock({ name: "a" }), instanceBlock({ name: "b" })].join("\n\n"));
  expectCode(await apply(s), 0);
  const live = liveInstances(s);
  expect(live).toHaveLength(2);
  const ids = [(await stateOf(s, "gpurental_instance.a")).id, (await stateOf(s, "gpurental_instance.b")).id];
  expect(new Set(ids).size).toBe(2);
  expect(live.map((i) => i.id).sort()).toEqual([...ids].sort());
  expectCode(await plan(s), 0);

  // Stop and destroy converge through the same kind of trouble.
  s.backend.addFault({ route: "POST /v1/instances/:id/stop", kind: "status", status: 503, times: 1 });
  s.backend.addFault({ route: "DELETE /v1/instances/:id", kind: "lost-response", times: 1 });
  s.backend.addFault({ route: "DELETE /v1/instances/:id", kind: "status", status: 503, times: 1 });
  writeConfig(
    s,
    [instanceBlock({ name: "a", desired: "stopped" }), instanceBlock({ name: "b" })].join("\n\n"),
  );
  expectCode(await apply(s), 0);
  expect(s.backend.instance(ids[0] as string)?.status).toBe("stopped");
  expectCode(await s.tf.run(["destroy", "-auto-approve", "-input=false"]), 0);
  expect(liveInstances(s)).toHaveLength(0);
});

test("the saved plan marks the key's secret and the instance's credentials sensitive", async () => {
  writeConfig(s, [keyBlock, instanceBlock()].join("\n\n"));
  const planned = expectCode(await s.tf.run(["plan", "-input=false", "-out=tfplan"]), 0);
  expect(planned.stdout).toMatch(/secret_env\s+= \(sensitive value\)/);
  const shown = expectCode(await s.tf.run(["show", "-json", "tfplan"]), 0);
  const changes = (
    JSON.parse(shown.stdout) as {
      resource_changes: { address: string; change: { after_sensitive: Record<string, unknown> } }[];
    }
  ).resource_changes;
  const sensitiveOf = (address: string) => changes.find((c) => c.address === address)?.change.after_sensitive;
  expect(sensitiveOf("gpurental_api_key.ci")).toMatchObject({ secret: true });
  expect(sensitiveOf("gpurental_instance.a")).toMatchObject({
    access_token: true,
    jupyter_url: true,
    open_url: true,
    secret_env: true,
  });
});

test("TF_LOG=trace output of a full apply holds no token, secret or access token", async () => {
  const jupyter = `resource "gpurental_instance" "j" {
  offer_id    = "${s.creds.offer_id}"
  template_id = "${s.creds.jupyter_template_id}"
  disk_gb     = 40
  secret_env  = { TOKEN = "${SECRET_ENV_VALUE}" }
}`;
  writeConfig(s, [keyBlock, jupyter].join("\n\n"));
  const r = expectCode(await apply(s, [], { TF_LOG: "trace" }), 0);
  const inst = await stateOf(s, "gpurental_instance.j");
  const key = await stateOf(s, "gpurental_api_key.ci");
  expect(typeof inst.access_token).toBe("string");
  const all = output(r);
  expect(all).toContain("[TRACE]");
  for (const secret of [
    s.creds.admin_session_token,
    key.secret as string,
    inst.access_token as string,
    SECRET_ENV_VALUE,
  ]) {
    expect(all).not.toContain(secret);
  }
});
