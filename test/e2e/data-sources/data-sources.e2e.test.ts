import { GpurentalClient } from "../../../src/api/client";
import { DEMO_IDS, type FakeBackend, startFakeBackend } from "../../../src/fake-backend";
import type { DemoCredentials } from "../../../src/fake-backend/types";
import { TerraformHarness } from "../harness";

// The real terraform CLI reads every data source of the real provider against the fake backend in
// this process; the assertions are on `terraform output -json`.

jest.setTimeout(240_000);

let fb: FakeBackend;
let creds: DemoCredentials;
let tf: TerraformHarness;
let instanceId: string;
let accessToken: string;
let apiKeySecret: string;

const CONFIG = `
terraform {
  required_providers {
    gpurental = { source = "gpurental/gpurental" }
  }
}

# base_url and token come from GPURENTAL_BASE_URL and GPURENTAL_TOKEN.
provider "gpurental" {}

variable "instance_id" {
  type = string
}

data "gpurental_offers" "rtx" {
  gpu_model = "RTX 4090"
  num_gpus  = 1
  sort      = "price_asc"
}

data "gpurental_offer" "chosen" {
  id = [for o in data.gpurental_offers.rtx.offers : o.id if o.next_maintenance == null][0]
}

data "gpurental_templates" "ssh" {
  tab  = "recommended"
  mode = "ssh"
}

data "gpurental_template" "chosen" {
  id = data.gpurental_templates.ssh.templates[0].id
}

data "gpurental_ssh_keys" "mine" {}

data "gpurental_instance" "one" {
  id = var.instance_id
}

data "gpurental_instances" "all" {
  include_destroyed = true
}

data "gpurental_api_keys" "all" {}

data "gpurental_instance_logs" "last" {
  instance_id = var.instance_id
  tail        = 2
}

data "gpurental_instance_logs" "default" {
  instance_id = data.gpurental_instance.one.id
}

output "offer_ids" {
  value = data.gpurental_offers.rtx.offers[*].id
}

output "offer" {
  value = {
    id        = data.gpurental_offer.chosen.id
    gpu_model = data.gpurental_offer.chosen.gpu_model
    price     = data.gpurental_offer.chosen.price_per_hour_micro
    disk_gb   = data.gpurental_offer.chosen.machine.disk_gb
  }
}

output "template" {
  value = {
    id       = data.gpurental_template.chosen.id
    name     = data.gpurental_template.chosen.name
    cuda_max = data.gpurental_template.chosen.cuda_max
    onstart  = data.gpurental_template.chosen.onstart
    env      = data.gpurental_template.chosen.env
  }
}

output "ssh_key_names" {
  value = data.gpurental_ssh_keys.mine.ssh_keys[*].name
}

output "instance" {
  value = {
    status    = data.gpurental_instance.one.status
    ssh       = "ssh -p \${data.gpurental_instance.one.ssh_port} \${data.gpurental_instance.one.ssh_user}@\${data.gpurental_instance.one.ssh_host}"
    label     = data.gpurental_instance.one.label
    offer_gpu = data.gpurental_instance.one.offer.gpu_model
  }
}

output "access_token" {
  value     = data.gpurental_instance.one.access_token
  sensitive = true
}

output "instance_ids" {
  value = data.gpurental_instances.all.instances[*].id
}

output "api_keys" {
  value = [for k in data.gpurental_api_keys.all.api_keys : { name = k.name, kind = k.kind, prefix = k.prefix }]
}

output "log_tail" {
  value = data.gpurental_instance_logs.last.lines
}

output "log_default_tail" {
  value = data.gpurental_instance_logs.default.tail
}
`;

beforeAll(async () => {
  fb = await startFakeBackend({ port: 0, seed: "demo" });
  creds = fb.credentials!;
  const client = new GpurentalClient({ baseUrl: fb.url, token: creds.admin_session_token });
  const created = await client.createApiKey({ name: "e2e reader", kind: "team" });
  apiKeySecret = created.secret;
  const deployed = await client.deployInstance({
    offer_id: creds.offer_id,
    template_id: creds.jupyter_template_id,
    disk_gb: 30,
    label: "e2e data sources",
    ssh_key_id: creds.ssh_key_id,
  });
  instanceId = deployed.id;
  const running = await client.getInstance(instanceId);
  accessToken = running.access_token!;
  fb.appendLogs(instanceId, ["booting", "ready", "serving"]);
  tf = await TerraformHarness.create();
  tf.env.GPURENTAL_BASE_URL = fb.url;
  tf.env.GPURENTAL_TOKEN = creds.admin_session_token;
  tf.write({ "main.tf": CONFIG });
  await tf.ok(["init"]);
});

afterAll(async () => {
  tf?.cleanup();
  await fb?.close();
});

type Outputs = Record<string, { value: unknown; sensitive: boolean }>;

it("reads every data source and exposes the values as outputs", async () => {
  const applied = await tf.ok(["apply", "-auto-approve", `-var=instance_id=${instanceId}`]);
  const outputs = JSON.parse((await tf.ok(["output", "-json"])).stdout) as Outputs;
  const value = (name: string) => outputs[name]?.value;

  expect(value("offer_ids")).toEqual([DEMO_IDS.offerMaintenance, DEMO_IDS.offer]);
  expect(value("offer")).toEqual({
    id: DEMO_IDS.offer,
    gpu_model: "RTX 4090",
    price: 2_500_000,
    disk_gb: 2000,
  });
  expect(value("template")).toEqual({
    id: DEMO_IDS.templateSsh,
    name: "PyTorch 2.5 (SSH)",
    cuda_max: "12.4",
    onstart: "nvidia-smi",
    env: [{ key: "TZ", value: "UTC", secret: false }],
  });
  expect(value("ssh_key_names")).toEqual(["admin laptop"]);
  expect(value("instance")).toEqual({
    status: "running",
    ssh: expect.stringMatching(/^ssh -p \d+ \S+@203\.0\.113\.10$/),
    label: "e2e data sources",
    offer_gpu: "RTX 4090",
  });
  expect(outputs.access_token).toEqual({ value: accessToken, sensitive: true, type: "string" });
  expect(value("instance_ids")).toEqual([instanceId]);
  expect(value("api_keys")).toEqual([
    { name: "e2e reader", kind: "team", prefix: apiKeySecret.slice(0, 12) },
  ]);
  expect(value("log_tail")).toEqual(["ready", "serving"]);
  expect(value("log_default_tail")).toBe(200);

  // The access token is only shown when asked for by name; the apply output never has it.
  expect(applied.stdout).not.toContain(accessToken);
  expect(applied.stdout).toContain("access_token = <sensitive>");
});

it("TF_LOG=trace of a refresh shows neither the token nor the access token nor an API key secret", async () => {
  const r = await tf.run(["plan", "-refresh-only", `-var=instance_id=${instanceId}`], { TF_LOG: "trace" });
  expect(r.code).toBe(0);
  const all = `${r.stdout}${r.stderr}`;
  expect(all).toContain("gpurental_instance_logs");
  for (const secret of [creds.admin_session_token, accessToken, apiKeySecret])
    expect(all).not.toContain(secret);
});

it("a plan with an unknown offer id fails with the API's code, without the token in the output", async () => {
  tf.write({
    "main.tf": `${CONFIG}
data "gpurental_offer" "missing" {
  id = "00000000-0000-4000-8000-0000000009ff"
}
`,
  });
  try {
    const r = await tf.run(["plan", `-var=instance_id=${instanceId}`]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("OFFER_NOT_FOUND");
    expect(r.stderr).toContain('data "gpurental_offer" "missing"');
    expect(`${r.stdout}${r.stderr}`).not.toContain(creds.admin_session_token);
  } finally {
    tf.write({ "main.tf": CONFIG });
  }
});

it("validate rejects tail out of range, naming the limit, the value and the line", async () => {
  tf.write({
    "main.tf": CONFIG.replace("tail        = 2", "tail        = 5000"),
  });
  try {
    const r = await tf.run(["validate"]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("tail must be a whole number from 1 to 1000");
    expect(r.stderr).toContain("got 5000");
    expect(r.stderr).toMatch(/on main\.tf line \d+, in data "gpurental_instance_logs" "last"/);
  } finally {
    tf.write({ "main.tf": CONFIG });
  }
});
