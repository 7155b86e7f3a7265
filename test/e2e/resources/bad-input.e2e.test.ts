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
  stopSuite,
  writeConfig,
} from "./helpers";

// Bad input with the real terraform: each is refused with an error on the attribute that names the
// rule and the value, at plan time where the configuration alone shows it, and nothing is created.

jest.setTimeout(300_000);

let s: Suite;

beforeAll(async () => {
  s = await startSuite();
});
afterAll(() => stopSuite(s));
beforeEach(() => resetSuite(s));

const EXAMPLE = '"00000000-0000-4000-8000-000000000041"';

function instance(over: Record<string, string>, extra = ""): string {
  const args: Record<string, string> = {
    offer_id: `"${s.creds.offer_id}"`,
    template_id: `"${s.creds.template_id}"`,
    disk_gb: "50",
    ...over,
  };
  return `resource "gpurental_instance" "a" {
${Object.entries(args)
  .map(([k, v]) => `  ${k} = ${v}`)
  .join("\n")}
${extra}}`;
}

/** Terraform's output on one line, so that a message wrapped over lines can be matched whole. */
function flat(text: string): string {
  return text.replace(/\s*\n\s*│?\s*/g, " ");
}

/** A plan refused for bad input: exit 1, nothing created, nothing in the state. */
async function refusedPlan(): Promise<string> {
  const r = expectCode(await plan(s), 1);
  expect(liveInstances(s)).toHaveLength(0);
  expect((await s.tf.run(["state", "list"])).stdout.trim()).toBe("");
  return flat(output(r));
}

test.each([
  [
    "offer_id",
    '""',
    `offer_id must be the ID of an offer, a UUID such as ${EXAMPLE}; got "" (an empty string).`,
  ],
  [
    "offer_id",
    '"offer-41"',
    `offer_id must be the ID of an offer, a UUID such as ${EXAMPLE}; got "offer-41".`,
  ],
  [
    "template_id",
    '"pytorch"',
    `template_id must be the ID of a template, a UUID such as ${EXAMPLE}; got "pytorch".`,
  ],
  [
    "ssh_key_id",
    '"key-1"',
    `ssh_key_id must be the ID of an SSH key, a UUID such as ${EXAMPLE}; got "key-1".`,
  ],
])(
  "%s = %s is refused at plan on the attribute, and nothing is created",
  async (attribute, value, message) => {
    writeConfig(s, instance({ [attribute]: value }));
    const out = await refusedPlan();
    expect(out).toContain("Error: Invalid attribute value");
    // Terraform points at the attribute's own line.
    expect(out).toMatch(new RegExp(`in resource "gpurental_instance" "a": \\d+: +${attribute} = ${value}`));
    expect(out).toContain(message);
    // apply stops at the same error.
    expectCode(await apply(s), 1);
    expect(liveInstances(s)).toHaveLength(0);
  },
);

test("ids of data sources that are not UUIDs are refused at plan on the attribute", async () => {
  writeConfig(
    s,
    `data "gpurental_offer" "o" {
  id = ""
}

data "gpurental_instance" "i" {
  id = "i-123"
}

data "gpurental_offers" "d" {
  deployable_with = { template_id = "ssh", disk_gb = 50 }
}`,
  );
  const out = await refusedPlan();
  expect(out).toMatch(/in data "gpurental_offer" "o": \d+: +id = ""/);
  expect(out).toContain(
    `id must be the ID of an offer, a UUID such as ${EXAMPLE}; got "" (an empty string).`,
  );
  expect(out).toContain(`id must be the ID of an instance, a UUID such as ${EXAMPLE}; got "i-123".`);
  expect(out).toContain(
    `deployable_with.template_id must be the ID of a template, a UUID such as ${EXAMPLE}; got "ssh".`,
  );
});

test("env names containing = or NUL are refused at plan on the key, stating the rule", async () => {
  writeConfig(
    s,
    `${instance({
      env: '{ "A=B" = "1" }',
      secret_env: '{ "C\\u0000D" = var.pin }',
      unset_env: '["TZ=UTC"]',
    })}

variable "pin" {
  type      = string
  sensitive = true
  default   = "hidden-value-7f3a"
}`,
  );
  const out = await refusedPlan();
  expect(out).toContain('Error: Environment variable name contains "="');
  expect(out).toMatch(/in resource "gpurental_instance" "a": \d+: +env = \{ "A=B" = "1" \}/);
  expect(out).toContain("Error: Environment variable name contains a NUL character");
  expect(out).toContain(
    'An environment variable name cannot contain "=" (it separates the name from the value) or NUL (it ends the entry)',
  );
  expect(out).toContain('The name "TZ=UTC" of unset_env contains "="');
  // A secret value is never shown, by the provider or by Terraform's own snippet of the source.
  expect(out).not.toContain("hidden-value-7f3a");
});

test("the instance limit warning and refusal count the instances that exist", async () => {
  const m = s.backend.createMachine({ disk_gb: 4000 });
  const bulk = s.backend.createOffer({ machine_id: m.id, free_units: 40 });
  const deploy = () =>
    backendFetch(`${s.backend.url}/v1/instances`, {
      method: "POST",
      headers: { authorization: `Bearer ${s.creds.admin_session_token}`, "content-type": "application/json" },
      body: JSON.stringify({ offer_id: bulk.id, template_id: s.creds.template_id, disk_gb: 10 }),
    });
  for (let i = 0; i < 10; i++) expect((await deploy()).status).toBe(201);
  writeConfig(s, instance({ offer_id: `"${bulk.id}"`, disk_gb: "10" }));
  // Ten exist: far from the limit, nothing to warn about.
  expect(output(expectCode(await plan(s), 2))).not.toContain("INSTANCE_LIMIT_REACHED");
  for (let i = 0; i < 15; i++) expect((await deploy()).status).toBe(201);
  const p = flat(output(expectCode(await plan(s), 2)));
  expect(p).toContain("Warning: INSTANCE_LIMIT_REACHED");
  expect(p).toContain("The organization has 25 instances that are not destroyed, and the limit is 25");
  const a = flat(output(expectCode(await apply(s), 1)));
  expect(a).toContain("Error: INSTANCE_LIMIT_REACHED");
  expect(a).toContain("The organization has 25 instances that are not destroyed, and the limit is 25");
  expect(liveInstances(s)).toHaveLength(25);
});

test("an unreachable base_url is named with the address in every error, and nothing is created", async () => {
  writeConfig(
    s,
    instance({}, '  timeouts = { create = "3s" }\n'),
    'provider "gpurental" {\n  base_url = "http://127.0.0.1:1"\n}',
  );
  const r = flat(output(expectCode(await apply(s), 1)));
  const where = "http://127.0.0.1:1 (base_url in the provider block)";
  // The API never answered once: the plan itself fails, saying where it tried and for how long,
  // instead of passing with its checks skipped.
  expect(r).not.toContain("Some plan-time checks were skipped");
  expect(r).toContain("Error: Cannot reach the gpurental API");
  expect(r).toContain(`cannot connect to ${where}: connect ECONNREFUSED 127.0.0.1:1`);
  expect(r).toMatch(/tried \d+ times over \d+ s without reaching the API once/);
  expect(r).toContain("Check the provider's base_url (or GPURENTAL_BASE_URL)");
  expect(liveInstances(s)).toHaveLength(0);
});

test("a null env value is not set: the plan passes and the instance runs without it", async () => {
  writeConfig(
    s,
    `${instance({ env: '{ KEPT = "1", OPTIONAL = var.maybe }' })}

variable "maybe" {
  type    = string
  default = null
}`,
  );
  expectCode(await apply(s), 0);
  const [live] = liveInstances(s);
  const env = s.backend.instance(live!.id)?.env ?? [];
  expect(env).toEqual(expect.arrayContaining([expect.objectContaining({ key: "KEPT", value: "1" })]));
  expect(env.map((e) => e.key)).not.toContain("OPTIONAL");
  expect(output(expectCode(await plan(s), 0))).toContain("No changes.");
});

test("a label with terminal control characters is refused at plan, shown escaped", async () => {
  writeConfig(s, instance({ label: '"evil\\u001b]0;PWNED\\u0007\\u001b[2Jx"' }));
  const out = await refusedPlan();
  expect(out).toContain("label contains the character \\x1b (at character 5 of");
  expect(out).not.toContain("\u001b]0;PWNED");
});

test("a password in GPURENTAL_BASE_URL is masked in the plan's error", async () => {
  writeConfig(s, instance({}));
  const r = flat(
    output(
      expectCode(await plan(s, [], { GPURENTAL_BASE_URL: "http://user:s3cr3tPASS@127.0.0.1:18801" }), 1),
    ),
  );
  expect(r).toContain("Error: Invalid API address");
  expect(r).toContain('got "http://***@127.0.0.1:18801"');
  expect(r).not.toContain("s3cr3tPASS");
});
