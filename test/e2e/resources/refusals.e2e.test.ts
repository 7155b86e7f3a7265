import { DEMO_IDS } from "../../../src/fake-backend";
import {
  apply,
  backendFetch,
  expectCode,
  liveInstances,
  output,
  plan,
  resetSuite,
  type Suite,
  startSuite,
  stateOf,
  stopSuite,
  writeConfig,
} from "./helpers";

// Every deploy refusal of contract 7.2 and every start failure of 7.3 shows its code in terraform's
// output (at plan time where the API lets the provider foresee it), and the credential cases: API
// key vs session, team vs personal, ORG_MISMATCH through org_id, a revoked key.

jest.setTimeout(300_000);

let s: Suite;

beforeAll(async () => {
  s = await startSuite();
});
afterAll(() => stopSuite(s));
beforeEach(() => resetSuite(s));

function inst(
  name: string,
  over: { offer?: string; template?: string; disk?: number; ssh?: string; extra?: string } = {},
) {
  return `resource "gpurental_instance" "${name}" {
  offer_id    = "${over.offer ?? s.creds.offer_id}"
  template_id = "${over.template ?? s.creds.template_id}"
  disk_gb     = ${over.disk ?? 50}
  label       = "${name}"
${over.ssh ? `  ssh_key_id  = "${over.ssh}"\n` : ""}${over.extra ?? ""}}`;
}

/** The codes of the error blocks in terraform's output, each with the line it points at. */
function errorCodes(text: string): string[] {
  return [...text.matchAll(/Error: ([A-Z_]+): /g)].map((m) => m[1]!);
}

test("refusals foreseeable at plan time are reported by plan, on the attribute", async () => {
  const b = s.backend;
  const tight = b.createMachine({ disk_gb: 1000, available_disk_gb: 100, public_ip: "203.0.113.40" });
  const tightOffer = b.createOffer({
    machine_id: tight.id,
    gpu_model: "RTX 4090",
    price_per_hour_micro: 2_000_000,
  });
  const arm = b.createTemplate({ name: "ARM image", mode: "ssh", architecture: "arm64" });
  const foreign = b.createTemplate({
    name: "Other lab private registry",
    mode: "ssh",
    visibility: "public",
    owner_org_id: DEMO_IDS.otherOrg,
    uses_private_registry: true,
  });
  writeConfig(
    s,
    [
      inst("sold_out", { offer: DEMO_IDS.offerSoldOut }),
      inst("maintenance", { offer: DEMO_IDS.offerMaintenance }),
      inst("too_large", { offer: DEMO_IDS.offerSmall, disk: 800 }),
      inst("exhausted", { offer: tightOffer.id, disk: 200 }),
      inst("inactive", { template: DEMO_IDS.templateInactive }),
      inst("coming_soon", { template: DEMO_IDS.templateComingSoon }),
      inst("vm", { template: DEMO_IDS.templateVm }),
      inst("cuda", { offer: DEMO_IDS.offerNewCuda }),
      inst("arch", { template: arm.id }),
      inst("owner", { template: foreign.id }),
      inst("ssh_key", { ssh: DEMO_IDS.memberSshKey }),
    ].join("\n\n"),
  );
  const r = expectCode(await plan(s), 1);
  const text = output(r);
  expect(errorCodes(text).sort()).toEqual(
    [
      "OFFER_UNAVAILABLE",
      "DISK_TOO_LARGE",
      "MACHINE_DISK_EXHAUSTED",
      "TEMPLATE_NOT_FOUND",
      "TEMPLATE_COMING_SOON",
      "OFFER_NOT_VM_CAPABLE",
      "TEMPLATE_CUDA_TOO_NEW",
      "TEMPLATE_ARCH_UNSUPPORTED",
      "TEMPLATE_REQUIRES_OWNER",
      "SSH_KEY_NOT_FOUND",
    ].sort(),
  );
  // Each points at its attribute in the configuration, with the carried facts in words.
  expect(text).toMatch(/DISK_TOO_LARGE[\s\S]*?disk_gb\s+= 800[\s\S]*?500 GB/);
  expect(text).toMatch(/MACHINE_DISK_EXHAUSTED[\s\S]*?only 100 GB left/);
  // A maintenance window is only a warning: how close is too close is the service's call.
  expect(text).toMatch(/Warning: MACHINE_IN_MAINTENANCE[\s\S]*?offer_id\s+=/);
  expect(liveInstances(s)).toHaveLength(0);

  // The balance, read through the session, is checked at plan time too.
  s.backend.setBalance(s.creds.org_id, 1_000_000);
  writeConfig(s, inst("poor"));
  const poor = expectCode(await plan(s), 1);
  expect(errorCodes(output(poor))).toEqual(["INSUFFICIENT_BALANCE"]);
  expect(output(poor)).toContain("¥1.00");
});

test("refusals only the deploy can tell are reported by apply with their code", async () => {
  const b = s.backend;
  const stale = b.createMachine({ disk_gb: 1000, public_ip: "203.0.113.41", registered: false });
  const staleOffer = b.createOffer({
    machine_id: stale.id,
    gpu_model: "RTX 4090",
    price_per_hour_micro: 2_000_000,
  });
  b.loseNextRace(DEMO_IDS.offerSmall, 1);
  writeConfig(
    s,
    [inst("pin", { offer: staleOffer.id }), inst("race", { offer: DEMO_IDS.offerSmall })].join("\n\n"),
  );
  expectCode(await plan(s), 2);
  const r = expectCode(await apply(s), 1);
  expect(errorCodes(output(r)).sort()).toEqual(["OFFER_NOT_PINNABLE", "OFFER_UNAVAILABLE"]);
  expect(liveInstances(s)).toHaveLength(0);
  // Nothing was recorded for a refused deploy.
  expect((await s.tf.run(["state", "list"])).stdout.trim()).toBe("");
});

test("the instance limit: a warning at plan time, the refusal at apply", async () => {
  const m = s.backend.createMachine({ disk_gb: 4000, public_ip: "203.0.113.60" });
  const bulk = s.backend.createOffer({
    machine_id: m.id,
    gpu_model: "T4",
    price_per_hour_micro: 100_000,
    free_units: 30,
  });
  for (let i = 0; i < 25; i++) {
    const res = await backendFetch(`${s.backend.url}/v1/instances`, {
      method: "POST",
      headers: { authorization: `Bearer ${s.creds.admin_session_token}`, "content-type": "application/json" },
      body: JSON.stringify({ offer_id: bulk.id, template_id: s.creds.template_id, disk_gb: 10 }),
    });
    expect(res.status).toBe(201);
  }
  writeConfig(s, inst("over"));
  const p = expectCode(await plan(s), 2);
  expect(output(p)).toMatch(/Warning: INSTANCE_LIMIT_REACHED/);
  const r = expectCode(await apply(s), 1);
  expect(errorCodes(output(r))).toEqual(["INSTANCE_LIMIT_REACHED"]);
  expect(output(r)).toContain("25 instances");
});

test("every start failure of 7.3 names its code, and the state keeps the real status", async () => {
  const b = s.backend;
  const cases = [
    ["unreachable", { unreachable: true }],
    ["refused", { refuseStart: "refused" as const }],
    ["unavailable", { startUnavailable: true }],
    ["capacity", { capacityUnavailable: true }],
  ] as const;
  const machines: Record<string, string> = {};
  const blocks = (desired: string) =>
    cases
      .map(([name], i) => {
        if (!machines[name]) {
          const m = b.createMachine({ disk_gb: 1000, public_ip: `203.0.113.${50 + i}` });
          machines[name] = b.createOffer({
            machine_id: m.id,
            gpu_model: "RTX 4090",
            price_per_hour_micro: 1_000_000,
          }).id;
        }
        const timeouts = name === "unavailable" ? '  timeouts = { update = "8s" }\n' : "";
        return inst(name, { offer: machines[name], extra: `  desired_status = "${desired}"\n${timeouts}` });
      })
      .join("\n\n");
  writeConfig(s, blocks("stopped"));
  expectCode(await apply(s), 0);
  for (const [name, behaviour] of cases) {
    const offer = b.state().offers[machines[name]!]!;
    b.setHostBehaviour(offer.machine_id, behaviour);
  }
  writeConfig(s, blocks("running"));
  const r = expectCode(await apply(s), 1);
  expect(errorCodes(output(r)).sort()).toEqual(
    ["CAPACITY_UNAVAILABLE", "HOST_UNREACHABLE", "START_REFUSED", "START_UNAVAILABLE"].sort(),
  );
  for (const [name] of cases) {
    expect((await stateOf(s, `gpurental_instance.${name}`)).status).toBe("stopped");
  }
  // The next plan tries the start again.
  const again = expectCode(await plan(s), 2);
  expect(again.stdout).toMatch(/desired_status\s+= "stopped" -> "running"/);
});

test("credentials: a team key made by a session deploys; API key and member limits; ORG_MISMATCH; revoked key", async () => {
  // An admin session creates a team key; a second provider block uses its secret (unknown until
  // apply) to deploy an instance.
  writeConfig(
    s,
    `resource "gpurental_api_key" "team" {
  name = "deployer"
  kind = "team"
}

provider "gpurental" {
  alias = "team"
  token = gpurental_api_key.team.secret
}

resource "gpurental_instance" "via_key" {
  provider    = gpurental.team
  offer_id    = "${s.creds.offer_id}"
  template_id = "${s.creds.template_id}"
  disk_gb     = 30
}`,
  );
  expectCode(await apply(s), 0);
  const key = await stateOf(s, "gpurental_api_key.team");
  const viaKey = await stateOf(s, "gpurental_instance.via_key");
  expect(viaKey.deployed_via_api_key).toMatchObject({ id: key.id, kind: "team", revoked: false });
  expect(viaKey.deployed_by).toBe(`deployer (${key.prefix as string})`);
  expectCode(await plan(s), 0);

  // With the key as the only credential: creating keys is refused at plan time.
  const secret = key.secret as string;
  writeConfig(
    s,
    'resource "gpurental_api_key" "more" {\n  name = "more"\n}',
    `provider "gpurental" {\n  token = "${secret}"\n}`,
  );
  const byKey = expectCode(await s.tf.run(["plan", "-input=false", "-state=other.tfstate"]), 1);
  expect(output(byKey)).toMatch(/Error: ADMIN_REQUIRED: /);
  expect(output(byKey)).toMatch(/configured with an API key/);

  // A member session may create personal keys but not team keys.
  s.tf.env.GPURENTAL_TOKEN = s.creds.member_session_token;
  writeConfig(s, 'resource "gpurental_api_key" "m" {\n  name = "mine"\n  kind = "team"\n}');
  const member = expectCode(await apply(s, ["-state=member.tfstate"]), 1);
  expect(output(member)).toMatch(/Error: ADMIN_REQUIRED: /);
  expect(output(member)).toMatch(/admin/);
  writeConfig(s, 'resource "gpurental_api_key" "m" {\n  name = "mine"\n}');
  expectCode(await apply(s, ["-state=member.tfstate"]), 0);
  expectCode(await s.tf.run(["destroy", "-auto-approve", "-input=false", "-state=member.tfstate"]), 0);

  // org_id naming another organization.
  s.tf.env.GPURENTAL_TOKEN = s.creds.admin_session_token;
  s.tf.env.GPURENTAL_ORG_ID = DEMO_IDS.otherOrg;
  writeConfig(s, inst("elsewhere"));
  const mismatch = expectCode(
    await s.tf.run(["apply", "-auto-approve", "-input=false", "-state=org.tfstate"]),
    1,
  );
  expect(output(mismatch)).toMatch(/Error: ORG_MISMATCH: /);
  delete s.tf.env.GPURENTAL_ORG_ID;

  // A revoked key: every call answers TOKEN_INVALID.
  await backendFetch(`${s.backend.url}/v1/api-keys/${key.id as string}`, {
    method: "DELETE",
    headers: { authorization: `Bearer ${s.creds.admin_session_token}` },
  });
  s.tf.env.GPURENTAL_TOKEN = secret;
  writeConfig(s, inst("revoked"));
  const revoked = expectCode(
    await s.tf.run(["apply", "-auto-approve", "-input=false", "-state=revoked.tfstate"]),
    1,
  );
  expect(output(revoked)).toMatch(/Error: TOKEN_INVALID: /);
});

test("a personal key deploys while its creator is a member, and is refused once the creator leaves", async () => {
  s.tf.env.GPURENTAL_TOKEN = s.creds.member_session_token;
  writeConfig(s, 'resource "gpurental_api_key" "mine" {\n  name = "mine"\n}');
  expectCode(await apply(s), 0);
  const secret = (await stateOf(s, "gpurental_api_key.mine")).secret as string;

  s.tf.env.GPURENTAL_TOKEN = secret;
  writeConfig(s, inst("personal"));
  expectCode(await apply(s, ["-state=personal.tfstate"]), 0);
  expect(liveInstances(s)).toHaveLength(1);

  // The member leaves: the key stops working for every call, refresh included, and nothing is lost.
  s.backend.removeMember(s.creds.org_id, s.creds.member_user_id);
  const refused = expectCode(await plan(s, ["-state=personal.tfstate"]), 1);
  expect(output(refused)).toMatch(/Error: TOKEN_INVALID: /);
  expect(output(refused)).toMatch(/personal\s+API\s+key\s+whose\s+creator\s+has\s+left\s+the\s+organization/);
  expect(output(refused)).not.toContain(secret);
  expect(liveInstances(s)).toHaveLength(1);
  expect(await s.tf.ok(["state", "list", "-state=personal.tfstate"])).toMatchObject({
    stdout: expect.stringContaining("gpurental_instance.personal"),
  });
});

test("a stop the host never confirms ends in stop_timed_out, and the state says running", async () => {
  writeConfig(s, inst("slow"));
  expectCode(await apply(s), 0);
  const id = (await stateOf(s, "gpurental_instance.slow")).id as string;
  s.backend.setHostBehaviour(DEMO_IDS.machineLarge, { neverConfirmStop: true });
  writeConfig(s, inst("slow", { extra: '  desired_status = "stopped"\n' }));
  const running = apply(s);
  // While terraform waits for the stop, 31 minutes pass on the backend's clock.
  const deadline = Date.now() + 60_000;
  while (s.backend.instance(id)?.status !== "stopping" && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
  }
  s.backend.clock.advance(31 * 60_000);
  const r = expectCode(await running, 1);
  expect(output(r)).toMatch(/Error: stop_timed_out: /);
  expect(await stateOf(s, "gpurental_instance.slow")).toMatchObject({
    status: "running",
    error_code: "stop_timed_out",
  });
  const again = expectCode(await plan(s), 2);
  expect(again.stdout).toMatch(/desired_status\s+= "running" -> "stopped"/);
});
