// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the expected values are Terraform interpolations.

import { App, TerraformOutput, TerraformStack, TerraformVariable, Testing } from "cdktf";
import type { Construct } from "constructs";
import { GpuWorkstationStack, type GpuWorkstationStackProps } from "../../examples/cdktf-app/stack";
import {
  ApiKey,
  type ApiKeyProps,
  GpurentalProvider,
  type GpurentalProviderProps,
  Instance,
  type InstanceProps,
  OfferLookup,
  type OfferLookupProps,
  TemplateLookup,
  type TemplateLookupProps,
} from "../../src";
import {
  apiKey,
  dataGpurentalInstance,
  dataGpurentalOffers,
  instance,
  provider,
} from "../../src/bindings/cdktf";
import { firstUnsafeCharacter } from "../../src/display";

const OFFER = "00000000-0000-4000-8000-000000000041";
const TEMPLATE = "00000000-0000-4000-8000-000000000051";
const SSH_KEY = "00000000-0000-4000-8000-000000000061";

/** Synthesizes with validations on and returns the error (all messages) or "" when valid. */
function synthErrors(build: (scope: Construct) => void): string {
  const app = Testing.app();
  const stack = new TerraformStack(app, "test");
  new GpurentalProvider(stack, "gpurental");
  build(stack);
  try {
    Testing.synth(stack, true);
    return "";
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

/** What a token resolves to in the synthesized JSON, read back through an output. */
function resolved(stack: TerraformStack, value: unknown): unknown {
  const id = `probe${stack.node.children.length}`;
  new TerraformOutput(stack, id, { value });
  const out = JSON.parse(Testing.synth(stack)) as { output: Record<string, { value: unknown }> };
  return out.output[id]?.value;
}

describe("ApiKey", () => {
  it("synthesizes a gpurental_api_key with the given name and kind", () => {
    const synthesized = Testing.synthScope((scope) => {
      new ApiKey(scope, "ci", { name: "ci-pipelines", kind: "team" });
    });
    expect(synthesized).toHaveResourceWithProperties(apiKey.ApiKey, { name: "ci-pipelines", kind: "team" });
  });

  it("defaults to a personal key", () => {
    const synthesized = Testing.synthScope((scope) => {
      new ApiKey(scope, "mine", { name: "laptop" });
    });
    expect(synthesized).toHaveResourceWithProperties(apiKey.ApiKey, { kind: "personal" });
  });

  it("keeps the construct id as the Terraform address", () => {
    const synthesized = JSON.parse(
      Testing.synthScope((scope) => {
        new ApiKey(scope, "ci", { name: "x" });
      }),
    ) as { resource: { gpurental_api_key: Record<string, unknown> } };
    expect(Object.keys(synthesized.resource.gpurental_api_key)).toEqual(["ci"]);
  });

  it("exposes the secret and prefix as references", () => {
    const app = Testing.app();
    const stack = new TerraformStack(app, "s");
    const key = new ApiKey(stack, "ci", { name: "x" });
    expect(resolved(stack, key.secret)).toBe("${gpurental_api_key.ci.secret}");
    expect(resolved(stack, key.prefix)).toBe("${gpurental_api_key.ci.prefix}");
    expect(resolved(stack, key.apiKeyId)).toBe("${gpurental_api_key.ci.id}");
  });

  it("references an existing key by id through the api keys data source", () => {
    const app = Testing.app();
    const stack = new TerraformStack(app, "s");
    const id = "00000000-0000-4000-8000-0000000000a1";
    const key = ApiKey.fromApiKeyId(stack, "existing", id);
    expect(resolved(stack, key.prefix)).toContain(`val if val.id == "${id}"`);
    const synthesized = JSON.parse(Testing.synth(stack)) as {
      data: { gpurental_api_keys: Record<string, { lifecycle: { postcondition: unknown[] } }> };
    };
    expect(synthesized.data.gpurental_api_keys.existing?.lifecycle.postcondition).toHaveLength(1);
  });

  it("refuses an id that is no API key id, which would be written into an expression", () => {
    const stack = new TerraformStack(Testing.app(), "s");
    expect(() => ApiKey.fromApiKeyId(stack, "a", "key-1")).toThrow(
      'ApiKey.fromApiKeyId("a") needs an API key id (a UUID), got "key-1"',
    );
    expect(() => ApiKey.fromApiKeyId(stack, "b", 'x" || true || "${a}')).toThrow("needs an API key id");
  });

  it("refuses, when made, a reference to an existing object by an id or through a provider it cannot use", () => {
    const stack = new TerraformStack(Testing.app(), "s");
    const id = "00000000-0000-4000-8000-0000000000a2";
    const token = `gps_${"ab".repeat(24)}`;
    // From JavaScript: what TypeScript would refuse.
    const loose = Instance.fromInstanceId as (...a: unknown[]) => unknown;
    const looseKey = ApiKey.fromApiKeyId as (...a: unknown[]) => unknown;
    expect(() => loose(stack, "n", 42)).toThrow(
      'Instance.fromInstanceId("n"): id must be an ID, a UUID such as',
    );
    expect(() => loose(stack, "s", "inst-1")).toThrow('Instance.fromInstanceId("s"): id must be an ID');
    for (const [name, from] of [
      ["Instance.fromInstanceId", loose],
      ["ApiKey.fromApiKeyId", looseKey],
    ] as const) {
      let message = "";
      try {
        from(stack, `${name}-p`, id, { token });
      } catch (err) {
        message = (err as Error).message;
      }
      expect(message).toBe(
        `${name}("${name}-p"): provider must be a provider of this app (a GpurentalProvider), got an object with the keys token`,
      );
      // Null is unset, as for a construct's provider prop.
      expect(() => from(stack, `${name}-null`, id, null)).not.toThrow();
    }
    // A refused reference leaves nothing in the tree: its id is free again.
    const refused = ["n", "s", "Instance.fromInstanceId-p", "ApiKey.fromApiKeyId-p"];
    for (const name of refused) expect(stack.node.tryFindChild(name)).toBeUndefined();
    expect(() => ApiKey.fromApiKeyId(stack, "a", "key-1")).toThrow("needs an API key id");
    expect(stack.node.tryFindChild("a")).toBeUndefined();
    expect(() => Instance.fromInstanceId(stack, "n", id)).not.toThrow();
    const json = JSON.parse(Testing.synth(stack)) as { data: Record<string, Record<string, object>> };
    expect(Object.values(json.data.gpurental_instance ?? {})).toEqual([{ id }, { id }]);
  });
});

describe("Instance", () => {
  const base: InstanceProps = { offerId: OFFER, templateId: TEMPLATE };

  it("synthesizes a gpurental_instance with defaults", () => {
    const synthesized = Testing.synthScope((scope) => {
      new Instance(scope, "gpu", base);
    });
    expect(synthesized).toHaveResourceWithProperties(instance.Instance, {
      offer_id: OFFER,
      template_id: TEMPLATE,
      disk_gb: 50,
    });
  });

  it("passes every setting through", () => {
    const synthesized = Testing.synthScope((scope) => {
      new Instance(scope, "gpu", {
        ...base,
        diskGb: 200,
        label: "trainer",
        sshKeyId: SSH_KEY,
        env: { TZ: "UTC" },
        secretEnv: { HF_TOKEN: "hf_x" },
        unsetEnv: ["DEBUG"],
        desiredStatus: "stopped",
        timeouts: { create: "20m", update: "45m" },
      });
    });
    expect(synthesized).toHaveResourceWithProperties(instance.Instance, {
      disk_gb: 200,
      label: "trainer",
      ssh_key_id: SSH_KEY,
      env: { TZ: "UTC" },
      secret_env: { HF_TOKEN: "hf_x" },
      unset_env: ["DEBUG"],
      desired_status: "stopped",
      timeouts: { create: "20m", update: "45m" },
    });
  });

  it("builds the SSH command and exposes the attributes users reach for", () => {
    const app = Testing.app();
    const stack = new TerraformStack(app, "s");
    const gpu = new Instance(stack, "gpu", base);
    expect(resolved(stack, gpu.sshCommand)).toBe(
      "ssh -p ${gpurental_instance.gpu.ssh_port} ${gpurental_instance.gpu.ssh_user}@${gpurental_instance.gpu.ssh_host}",
    );
    expect(resolved(stack, gpu.jupyterUrl)).toBe("${gpurental_instance.gpu.jupyter_url}");
    // The provider's own masked address, kept whatever storeAccessSecrets says.
    expect(resolved(stack, gpu.jupyterAddress)).toBe("${gpurental_instance.gpu.jupyter_address}");
    expect(resolved(stack, gpu.accessToken)).toBe("${gpurental_instance.gpu.access_token}");
    expect(resolved(stack, gpu.status)).toBe("${gpurental_instance.gpu.status}");
    expect(resolved(stack, gpu.instanceId)).toBe("${gpurental_instance.gpu.id}");
  });

  it("keeps the access secrets out of the state with storeAccessSecrets: false, and says so when misused", () => {
    const synthesized = Testing.synthScope((scope) => {
      new Instance(scope, "gpu", { ...base, storeAccessSecrets: false });
    });
    expect(synthesized).toHaveResourceWithProperties(instance.Instance, { store_access_secrets: false });
    const unset = Testing.synthScope((scope) => {
      new Instance(scope, "gpu", base);
    });
    expect(JSON.parse(unset).resource.gpurental_instance.gpu).not.toHaveProperty("store_access_secrets");
    expect(
      synthErrors((s) => new Instance(s, "i", { ...base, storeAccessSecrets: "no" as unknown as boolean })),
    ).toContain("storeAccessSecrets must be true or false");
  });

  it("declares ephemeral resources through the stack's escape hatch (cdktf 0.21 has no class for them)", () => {
    const app = Testing.app();
    const stack = new TerraformStack(app, "s");
    new GpurentalProvider(stack, "gpurental");
    stack.addOverride("ephemeral.gpurental_api_key.run", { name: "run", kind: "team" });
    const runKey = "${ephemeral.gpurental_api_key.run.secret}";
    const alias = new GpurentalProvider(stack, "run", { alias: "run", token: runKey });
    const gpu = new Instance(stack, "gpu", {
      ...base,
      provider: alias,
      storeAccessSecrets: false,
      secretEnvWo: { RUN_KEY: runKey },
      secretEnvWoVersion: 1,
    });
    stack.addOverride("ephemeral.gpurental_instance_access.gpu", { instance_id: gpu.instanceId });
    const json = JSON.parse(Testing.synth(stack)) as Record<string, Record<string, Record<string, unknown>>>;
    expect(json.ephemeral).toEqual({
      gpurental_api_key: { run: { name: "run", kind: "team" } },
      gpurental_instance_access: { gpu: { instance_id: "${gpurental_instance.gpu.id}" } },
    });
    expect(json.resource!.gpurental_instance!.gpu).toMatchObject({
      provider: "gpurental.run",
      secret_env_wo: { RUN_KEY: runKey },
    });
  });

  it("references an existing instance through the instance data source", () => {
    const synthesized = Testing.synthScope((scope) => {
      const existing = Instance.fromInstanceId(scope, "old", "00000000-0000-4000-8000-0000000000b1");
      new ApiKey(scope, "k", { name: existing.status });
    });
    expect(synthesized).toHaveDataSourceWithProperties(dataGpurentalInstance.DataGpurentalInstance, {
      id: "00000000-0000-4000-8000-0000000000b1",
    });
    expect(synthesized).toHaveResourceWithProperties(apiKey.ApiKey, {
      name: "${data.gpurental_instance.old.status}",
    });
  });

  it("synthesizes an offer filter, one GPU unless told otherwise, and no offer_id", () => {
    const synthesized = Testing.synthScope((scope) => {
      new Instance(scope, "gpu", {
        offer: { gpuModel: "RTX 4090", maxPricePerHourMicro: 3_000_000 },
        templateId: TEMPLATE,
      });
      new Instance(scope, "big", {
        offer: { gpuModel: "A100 80GB", numGpus: 2, region: "cn-east-1" },
        templateId: TEMPLATE,
      });
    });
    const resources = (
      JSON.parse(synthesized) as { resource: { gpurental_instance: Record<string, Record<string, unknown>> } }
    ).resource.gpurental_instance;
    expect(resources.gpu?.offer_filter).toEqual({
      gpu_model: "RTX 4090",
      num_gpus: 1,
      max_price_per_hour_micro: 3_000_000,
    });
    expect(resources.gpu).not.toHaveProperty("offer_id");
    expect(resources.big?.offer_filter).toEqual({ gpu_model: "A100 80GB", num_gpus: 2, region: "cn-east-1" });
  });

  it("exposes the offer it rents", () => {
    const app = Testing.app();
    const stack = new TerraformStack(app, "s");
    const gpu = new Instance(stack, "gpu", { offer: { gpuModel: "RTX 4090" }, templateId: TEMPLATE });
    expect(resolved(stack, gpu.offerId)).toBe("${gpurental_instance.gpu.offer_id}");
    expect(resolved(stack, gpu.gpuModel)).toBe("${gpurental_instance.gpu.offer.gpu_model}");
    expect(resolved(stack, gpu.region)).toBe("${gpurental_instance.gpu.offer.region}");
    expect(resolved(stack, gpu.pricePerHourMicro)).toBe("${gpurental_instance.gpu.price_per_hour_micro}");
  });

  it("warns about keys the platform overlay always sets", () => {
    const app = Testing.app();
    const stack = new TerraformStack(app, "s");
    new GpurentalProvider(stack, "gpurental");
    const gpu = new Instance(stack, "gpu", { ...base, env: { JUPYTER_TOKEN: "x" } });
    Testing.synth(stack, true);
    const warnings = gpu.node.metadata.filter((m) => m.type === "@cdktf/warn").map((m) => String(m.data));
    expect(warnings).toEqual([expect.stringContaining("env sets JUPYTER_TOKEN")]);
  });
});

describe("Instance secrets", () => {
  const base: InstanceProps = { offerId: OFFER, templateId: TEMPLATE };
  const warningsOf = (c: Construct) =>
    c.node.metadata.filter((m) => m.type === "@cdktf/warn").map((m) => String(m.data));

  it("takes secretEnvWo from an ephemeral variable: cdk.tf.json holds the reference and no warning", () => {
    const app = Testing.app();
    const stack = new TerraformStack(app, "s");
    new GpurentalProvider(stack, "gpurental");
    const token = new TerraformVariable(stack, "api_token", { type: "string", sensitive: true });
    token.addOverride("ephemeral", true);
    const gpu = new Instance(stack, "gpu", {
      ...base,
      secretEnvWo: { API_TOKEN: token.stringValue },
      secretEnvWoVersion: 3,
    });
    const synthesized = Testing.synth(stack, true);
    expect(synthesized).toHaveResourceWithProperties(instance.Instance, {
      secret_env_wo: { API_TOKEN: "${var.api_token}" },
      secret_env_wo_version: 3,
    });
    expect(JSON.parse(synthesized).variable.api_token).toMatchObject({ ephemeral: true, sensitive: true });
    expect(warningsOf(gpu)).toEqual([]);
  });

  it("warns when a secret prop holds literals, naming the keys and never the values", () => {
    const app = Testing.app();
    const stack = new TerraformStack(app, "s");
    const token = new TerraformVariable(stack, "t", { type: "string", sensitive: true });
    const gpu = new Instance(stack, "gpu", {
      ...base,
      secretEnv: { HF_TOKEN: "hf_literal_value", FROM_VAR: token.stringValue },
      secretEnvWo: { DB_PASSWORD: "db_literal_value" },
      secretEnvWoVersion: 1,
    });
    const warnings = warningsOf(gpu);
    expect(warnings).toEqual([
      expect.stringContaining("secretEnv holds literal values (HF_TOKEN), which will be written into"),
      expect.stringContaining("secretEnvWo holds literal values (DB_PASSWORD)"),
    ]);
    expect(warnings.join("\n")).not.toMatch(/hf_literal_value|db_literal_value|FROM_VAR/);
    expect(warnings[1]).toContain("ephemeral");
  });

  it("validates secretEnvWo with the other env props and requires its version", () => {
    const message = synthErrors((s) => {
      new Instance(s, "nover", { ...base, secretEnvWo: { A: "1" } });
      new Instance(s, "clash", {
        ...base,
        secretEnv: { A: "1" },
        secretEnvWo: { A: "2" },
        secretEnvWoVersion: 1,
      });
      new Instance(s, "half", { ...base, secretEnvWo: { B: "2" }, secretEnvWoVersion: 1.5 });
    });
    expect(message).toContain("[test/nover] secretEnvWo needs secretEnvWoVersion");
    expect(message).toContain('[test/clash] "A" is in both secretEnv and secretEnvWo');
    expect(message).toContain(
      "[test/half] secretEnvWoVersion must be a whole number from 0 to 9007199254740991, got 1.5",
    );
  });
});

describe("lookups", () => {
  it("writes what a lookup's message quotes as text: a literal's ${ escaped, a number token as a reference", () => {
    const app = Testing.app();
    const stack = new TerraformStack(app, "s");
    const gpus = new TerraformVariable(stack, "gpus", { type: "number" });
    new OfferLookup(stack, "offer", { gpuModel: "RTX ${4090}", numGpus: gpus.numberValue });
    const synthesized = JSON.parse(Testing.synth(stack)) as {
      data: {
        gpurental_offers: Record<string, { lifecycle: { postcondition: { error_message: string }[] } }>;
      };
    };
    const message = synthesized.data.gpurental_offers.offer?.lifecycle.postcondition[0]?.error_message;
    expect(message).toContain('gpu_model "RTX $${4090}"');
    expect(message).toContain("with ${var.gpus} GPU(s)");
  });

  it("picks the cheapest matching offer, those going into maintenance within a day last", () => {
    const app = Testing.app();
    const stack = new TerraformStack(app, "s");
    const offer = new OfferLookup(stack, "offer", {
      gpuModel: "RTX 4090",
      maxPricePerHourMicro: 3_000_000,
      region: "cn-east-1",
      deployableWith: { templateId: TEMPLATE, diskGb: 100 },
    });
    const synthesized = Testing.synth(stack);
    expect(synthesized).toHaveDataSourceWithProperties(dataGpurentalOffers.DataGpurentalOffers, {
      gpu_model: "RTX 4090",
      num_gpus: 1,
      max_price_per_hour_micro: 3_000_000,
      region: "cn-east-1",
      deployable_with: { template_id: TEMPLATE, disk_gb: 100 },
      sort: "price_asc",
    });
    const offerRef = String(resolved(stack, offer.offerId));
    expect(offerRef).toMatch(
      /^\$\{concat\(\[ for key, val in data\.gpurental_offers\.offer\.offers: val if val\.next_maintenance == null \? true : timecmp\(/,
    );
    expect(offerRef).toContain("val if !(val.next_maintenance == null ? true : timecmp(");
    expect(offerRef).toMatch(/\)\.0\.id\}$/);
  });

  it("picks an active template of a mode", () => {
    const app = Testing.app();
    const stack = new TerraformStack(app, "s");
    const template = new TemplateLookup(stack, "tpl", { mode: "ssh" });
    expect(String(resolved(stack, template.templateId))).toContain("data.gpurental_templates.tpl.templates");
  });
});

describe("GpurentalProvider", () => {
  it("writes only the settings given, leaving the rest to GPURENTAL_* at run time", () => {
    const synthesized = Testing.synthScope((scope) => {
      new GpurentalProvider(scope, "gpurental", { baseUrl: "https://api.example.com" });
    });
    expect(synthesized).toHaveProviderWithProperties(provider.GpurentalProvider, {
      base_url: "https://api.example.com",
    });
    expect(synthesized).not.toContain("token");
  });

  it("takes the token from a variable without warning", () => {
    const app = Testing.app();
    const stack = new TerraformStack(app, "s");
    const token = new TerraformVariable(stack, "token", { type: "string", sensitive: true });
    const p = new GpurentalProvider(stack, "gpurental", { token: token.stringValue });
    Testing.synth(stack, true);
    expect(p.node.metadata.filter((m) => m.type === "@cdktf/warn")).toEqual([]);
  });

  it("writes the network settings given, and warns of proxy credentials in a literal", () => {
    const app = Testing.app();
    const stack = new TerraformStack(app, "s");
    const p = new GpurentalProvider(stack, "gpurental", {
      caCertFile: "ca.pem",
      httpsProxy: "http://user:pw@proxy.example:3128",
      noProxy: "internal.example,10.0.0.0/8",
    });
    expect(Testing.synth(stack)).toHaveProviderWithProperties(provider.GpurentalProvider, {
      ca_cert_file: "ca.pem",
      https_proxy: "http://user:pw@proxy.example:3128",
      no_proxy: "internal.example,10.0.0.0/8",
    });
    expect(p.node.metadata.filter((m) => m.type === "@cdktf/warn").map((m) => String(m.data))).toEqual([
      expect.stringMatching(/^httpsProxy holds credentials.*set HTTPS_PROXY where Terraform runs/),
    ]);
    const bad = new GpurentalProvider(new TerraformStack(Testing.app(), "t"), "g", { noProxy: " " });
    expect(bad.node.validate()).toEqual([expect.stringContaining("noProxy must be a non-empty string")]);
  });

  it("warns when a literal token would be written into the configuration", () => {
    const app = Testing.app();
    const stack = new TerraformStack(app, "s");
    const p = new GpurentalProvider(stack, "gpurental", { token: "gps_literal" });
    expect(p.node.metadata.filter((m) => m.type === "@cdktf/warn").map((m) => String(m.data))).toEqual([
      expect.stringMatching(/^token is a literal string.*set GPURENTAL_TOKEN.*not a TerraformVariable/),
    ]);
  });
});

describe("validation at synth time", () => {
  const instanceBase: InstanceProps = { offerId: OFFER, templateId: TEMPLATE };
  type Case = [string, (scope: Construct) => void, string[]];
  const longString = (n: number) => "x".repeat(n);
  const envOf = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`K${i}`, "v"]));

  const cases: Case[] = [
    [
      "api key name empty",
      (s) => new ApiKey(s, "k", { name: "" }),
      ["name must have 1 to 64 characters, got 0"],
    ],
    [
      "api key name too long",
      (s) => new ApiKey(s, "k", { name: longString(65) }),
      ["name must have 1 to 64 characters, got 65"],
    ],
    [
      "api key kind unknown",
      (s) => new ApiKey(s, "k", { name: "x", kind: "shared" } as unknown as ApiKeyProps),
      ['kind must be one of "personal", "team", got "shared"'],
    ],
    [
      "disk too small",
      (s) => new Instance(s, "i", { ...instanceBase, diskGb: 5 }),
      ["diskGb must be a whole number from 10 to 20000 GB, got 5"],
    ],
    [
      "disk too large",
      (s) => new Instance(s, "i", { ...instanceBase, diskGb: 20001 }),
      ["diskGb must be a whole number from 10 to 20000 GB, got 20001"],
    ],
    [
      "disk not whole",
      (s) => new Instance(s, "i", { ...instanceBase, diskGb: 10.5 }),
      ["diskGb must be a whole number from 10 to 20000 GB, got 10.5"],
    ],
    [
      "offer id empty",
      (s) => new Instance(s, "i", { ...instanceBase, offerId: "" }),
      ['offerId must be an ID, a UUID such as "00000000-0000-4000-8000-000000000041", got ""'],
    ],
    [
      "offer id not a UUID",
      (s) => new Instance(s, "i", { ...instanceBase, offerId: "offer-41" }),
      ['offerId must be an ID, a UUID such as "00000000-0000-4000-8000-000000000041", got "offer-41"'],
    ],
    [
      "template id empty",
      (s) => new Instance(s, "i", { ...instanceBase, templateId: "" }),
      ['templateId must be an ID, a UUID such as "00000000-0000-4000-8000-000000000041", got ""'],
    ],
    [
      "ssh key id empty",
      (s) => new Instance(s, "i", { ...instanceBase, sshKeyId: "" }),
      ['sshKeyId must be an ID, a UUID such as "00000000-0000-4000-8000-000000000041", got ""'],
    ],
    [
      "env names with = or NUL",
      (s) => new Instance(s, "i", { ...instanceBase, env: { "A=B": "1" }, secretEnv: { "C\u0000": "x" } }),
      [
        'env keys must not contain "=" (it separates a name from its value) or NUL (it ends the entry), got "A=B"',
        'secretEnv keys must not contain "=" (it separates a name from its value) or NUL (it ends the entry), got "C\\u0000"',
      ],
    ],
    [
      "label too long",
      (s) => new Instance(s, "i", { ...instanceBase, label: longString(65) }),
      ["label must have at most 64 characters, got 65"],
    ],
    [
      "desired status unknown",
      (s) => new Instance(s, "i", { ...instanceBase, desiredStatus: "paused" } as unknown as InstanceProps),
      ['desiredStatus must be one of "running", "stopped", got "paused"'],
    ],
    [
      "timeout not a duration",
      (s) => new Instance(s, "i", { ...instanceBase, timeouts: { create: "ten minutes" } }),
      [
        'timeouts.create must be a duration of at most 480h such as "30s", "20m" or "1h30m", got "ten minutes"',
      ],
    ],
    [
      "timeouts the provider refuses: too long, or rounding to nothing",
      (s) => new Instance(s, "i", { ...instanceBase, timeouts: { create: "500h", delete: "0.1ms" } }),
      [
        'timeouts.create must be a duration of at most 480h such as "30s", "20m" or "1h30m", got "500h"',
        'got "0.1ms"',
      ],
    ],
    [
      "too many env entries",
      (s) =>
        new Instance(s, "i", {
          ...instanceBase,
          env: envOf(90),
          unsetEnv: Array.from({ length: 11 }, (_, i) => `U${i}`),
        }),
      ["env, secretEnv, secretEnvWo and unsetEnv must have at most 100 entries together, got 101"],
    ],
    [
      "env key too long",
      (s) => new Instance(s, "i", { ...instanceBase, env: { [longString(257)]: "v" } }),
      ["env keys must have 1 to 256 characters, got 257"],
    ],
    [
      "env value too long",
      (s) => new Instance(s, "i", { ...instanceBase, secretEnv: { BIG: longString(4097) } }),
      ["secretEnv.BIG must be a string of at most 4096 characters, got 4097 characters"],
    ],
    [
      "env key in two props",
      (s) => new Instance(s, "i", { ...instanceBase, env: { TZ: "UTC" }, unsetEnv: ["TZ"] }),
      ['"TZ" is in both env and unsetEnv; use only one of them'],
    ],
    [
      "offer gpu model empty",
      (s) => new OfferLookup(s, "o", { gpuModel: "" }),
      ['gpuModel must not be empty or blank, got ""'],
    ],
    [
      "offer filter of spaces, which the provider refuses",
      (s) => new Instance(s, "i", { templateId: TEMPLATE, offer: { gpuModel: "  ", region: " " } }),
      [
        'offer.gpuModel must not be empty or blank, got "  "',
        'offer.region must not be empty or blank, got " "',
      ],
    ],
    [
      "offer lookup price negative and deploy disk too small",
      (s) =>
        new OfferLookup(s, "o", {
          gpuModel: "RTX 4090",
          maxPricePerHourMicro: -1,
          deployableWith: { templateId: TEMPLATE, diskGb: 5 },
        }),
      [
        "maxPricePerHourMicro must be a whole number from 0 to 1000000000000 micro-yuan, got -1",
        "deployableWith.diskGb must be a whole number from 10 to 20000 GB, got 5",
      ],
    ],
    [
      "instance with both offer and offerId",
      (s) => new Instance(s, "i", { ...instanceBase, offer: { gpuModel: "RTX 4090" } }),
      ["set only one of offer and offerId"],
    ],
    [
      "instance with neither offer nor offerId",
      (s) => new Instance(s, "i", { templateId: TEMPLATE }),
      [
        "set offer (a market filter: { gpuModel, numGpus, maxPricePerHourMicro }) or offerId (a pinned offer)",
      ],
    ],
    [
      "instance offer filter out of range",
      (s) =>
        new Instance(s, "i", {
          templateId: TEMPLATE,
          offer: { gpuModel: "", numGpus: 0, maxPricePerHourMicro: 2.5, region: "" },
        }),
      [
        'offer.gpuModel must not be empty or blank, got ""',
        "offer.numGpus must be a whole number from 1 to 1024 GPUs, got 0",
        "offer.maxPricePerHourMicro must be a whole number from 0 to 1000000000000 micro-yuan, got 2.5",
        'offer.region must not be empty or blank, got ""',
      ],
    ],
    [
      "env value of 4097 characters beyond the BMP",
      (s) => new Instance(s, "i", { ...instanceBase, env: { BIG: "😀".repeat(4097) } }),
      ["env.BIG must be a string of at most 4096 characters, got 4097 characters"],
    ],
    [
      "offer gpu count zero",
      (s) => new OfferLookup(s, "o", { gpuModel: "RTX 4090", numGpus: 0 }),
      ["numGpus must be a whole number from 1 to 1024 GPUs, got 0"],
    ],
    [
      "template mode unknown",
      (s) => new TemplateLookup(s, "t", { mode: "desktop" } as unknown as TemplateLookupProps),
      ['mode must be one of "ssh", "jupyter", "vm", got "desktop"'],
    ],
    [
      "template tab unknown",
      (s) => new TemplateLookup(s, "t", { mode: "ssh", tab: "favourites" }),
      ['tab must be one of "recommended", "system", "public", "mine", "all", got "favourites"'],
    ],
    [
      "provider base url not http",
      (s) => new GpurentalProvider(s, "other", { baseUrl: "ftp://x", alias: "other" }),
      ['baseUrl must be an http:// or https:// address, got "ftp://x"'],
    ],
    [
      "provider org id empty",
      (s) => new GpurentalProvider(s, "other", { orgId: "", alias: "other" } as GpurentalProviderProps),
      ['orgId must be an ID, a UUID such as "00000000-0000-4000-8000-000000000041", got ""'],
    ],
    [
      "provider org id no UUID, which the provider refuses",
      (s) => new GpurentalProvider(s, "other", { orgId: "acme", alias: "other" }),
      ['orgId must be an ID, a UUID such as "00000000-0000-4000-8000-000000000041", got "acme"'],
    ],
  ];

  it.each(cases)("%s", (_name, build, expected) => {
    const message = synthErrors(build);
    for (const part of expected) expect(message).toContain(part);
  });

  // Props a JavaScript caller (or a cast) can pass whatever their types say: each is a named
  // error, never a TypeError, and no message quotes a secret or prints a control character.
  const loose = (props: Record<string, unknown>) => props as unknown as InstanceProps;
  const circular: Record<string, unknown> = {};
  circular.self = circular;
  it.each<[string, (s: Construct) => void, string[]]>([
    ["a disk of BigInt", (s) => new Instance(s, "i", loose({ ...instanceBase, diskGb: 100n })), ["got 100n"]],
    [
      "a disk of NaN",
      (s) => new Instance(s, "i", loose({ ...instanceBase, diskGb: Number.NaN })),
      ["got NaN"],
    ],
    [
      "a circular label",
      (s) => new Instance(s, "i", loose({ ...instanceBase, label: circular })),
      ["label must be a string, got an object"],
    ],
    [
      "a label with ESC",
      (s) => new Instance(s, "i", { ...instanceBase, label: "gpu\u001b[2J" }),
      ["label must not contain control characters", "\\x1b"],
    ],
    ["an api key name with an override", (s) => new ApiKey(s, "k", { name: "ab\u202ec" }), ["\\u202e"]],
    [
      "unsetEnv as one string",
      (s) => new Instance(s, "i", loose({ ...instanceBase, unsetEnv: "FOO" })),
      ['unsetEnv must be a list of variable names, got "FOO"'],
    ],
    [
      "unsetEnv holding a number",
      (s) => new Instance(s, "i", loose({ ...instanceBase, unsetEnv: [5] })),
      ["unsetEnv must hold variable names, got 5"],
    ],
    [
      "a secret env value that is no string",
      (s) => new Instance(s, "i", loose({ ...instanceBase, secretEnv: { PIN: 48151623 } })),
      ["secretEnv.PIN must be a string of at most 4096 characters, got a number"],
    ],
    [
      "an env key with ESC",
      (s) => new Instance(s, "i", loose({ ...instanceBase, env: { "K\u001b]0;x": 5 } })),
      ["env.K\\x1b]0;x must be a string"],
    ],
    [
      "offer as a string",
      (s) => new Instance(s, "i", loose({ templateId: TEMPLATE, offer: "RTX 4090" })),
      ['offer must be an object, got "RTX 4090"'],
    ],
    [
      "timeouts as a list, and an offer lookup's deployment as a number",
      (s) => {
        new Instance(s, "i", loose({ ...instanceBase, timeouts: ["20m"] }));
        new OfferLookup(
          s,
          "o",
          loose({ gpuModel: "RTX 4090", deployableWith: 50 }) as unknown as OfferLookupProps,
        );
      },
      ['timeouts must be an object, got ["20m"]', "deployableWith must be an object, got 50"],
    ],
    [
      "a provider or a dependency that is no construct of the app",
      (s) => {
        new Instance(s, "i", loose({ ...instanceBase, provider: { alias: "x" }, dependsOn: [undefined] }));
        new Instance(s, "j", loose({ ...instanceBase, provider: { token: "gps_0123456789abcdef-never" } }));
        new GpurentalProvider(
          s,
          "url",
          loose({ alias: "url", baseUrl: new URL("ftp://me:s3cret-pw@host/") }) as GpurentalProviderProps,
        );
        new ApiKey(s, "k", { name: "ci", provider: "gpurental" } as unknown as ApiKeyProps);
        new GpurentalProvider(s, "other", loose({ alias: 7n }) as GpurentalProviderProps);
      },
      [
        "provider must be a provider of this app (a GpurentalProvider), got an object with the keys alias",
        "dependsOn must be a list of resources or data sources of this app, got undefined in the list",
        'provider must be a provider of this app (a GpurentalProvider), got "gpurental"',
        "alias must be a non-empty string, got 7n",
        "got an object with the keys token",
        'baseUrl must be an http:// or https:// address, got "ftp://***@host/"',
      ],
    ],
    [
      "a secret env value with NUL",
      (s) => new Instance(s, "i", { ...instanceBase, secretEnv: { PIN: "4815\u00001623" } }),
      ["secretEnv.PIN must not contain a NUL character"],
    ],
    [
      "a base URL with a password",
      (s) => new GpurentalProvider(s, "other", { baseUrl: "ftp://me:s3cret-pw@host/", alias: "other" }),
      ["baseUrl must be an http:// or https:// address"],
    ],
  ])("%s is a named error", (_name, build, expected) => {
    const message = synthErrors(build);
    for (const part of expected) expect(message).toContain(part);
    expect(message).not.toMatch(/TypeError|48151623|s3cret-pw|0123456789abcdef/);
    expect(firstUnsafeCharacter(message.replace(/[\n\t]/g, " "))).toBeUndefined();
  });

  it("refuses a prop the construct does not take, at any depth, and names the one meant", () => {
    const message = synthErrors((s) => {
      new Instance(
        s,
        "gpu",
        loose({ ...instanceBase, diskGB: 100, labels: "x", timeouts: { Create: "20m" }, sshKey: SSH_KEY }),
      );
      new Instance(
        s,
        "filtered",
        loose({ templateId: TEMPLATE, offer: { gpuModel: "RTX 4090", numGPUs: 2 } }),
      );
      new ApiKey(s, "key", { name: "ci", kinds: "team" } as unknown as ApiKeyProps);
      new OfferLookup(
        s,
        "offer",
        loose({
          gpuModel: "A100",
          deployableWith: { templateId: TEMPLATE, diskGb: 50, disk: 1 },
        }) as unknown as OfferLookupProps,
      );
      new TemplateLookup(s, "template", { mode: "ssh", favourite: true } as unknown as TemplateLookupProps);
      new GpurentalProvider(s, "other", {
        alias: "other",
        org_id: "x",
        "k\u001b[2J": 1,
      } as GpurentalProviderProps);
    });
    expect(message).toContain(
      "[test/gpu] diskGB is not a prop of this construct and would be ignored; did you mean diskGb?",
    );
    expect(message).toContain(
      "[test/gpu] labels is not a prop of this construct and would be ignored; did you mean label?",
    );
    expect(message).toContain(
      "[test/gpu] timeouts.Create is not a prop of this construct and would be ignored; did you mean timeouts.create?",
    );
    expect(message).toContain(
      "[test/gpu] sshKey is not a prop of this construct and would be ignored; did you mean sshKeyId?",
    );
    expect(message).toContain(
      "[test/filtered] offer.numGPUs is not a prop of this construct and would be ignored; did you mean offer.numGpus?",
    );
    expect(message).toContain(
      "[test/key] kinds is not a prop of this construct and would be ignored; did you mean kind?",
    );
    expect(message).toContain(
      "[test/offer] deployableWith.disk is not a prop of this construct and would be ignored; did you mean deployableWith.diskGb?",
    );
    expect(message).toContain(
      "[test/template] favourite is not a prop of this construct and would be ignored\n",
    );
    expect(message).toContain(
      "[test/other] org_id is not a prop of this construct and would be ignored; did you mean orgId?",
    );
    expect(message).toContain("[test/other] k\\x1b[2J is not a prop of this construct");
    expect(firstUnsafeCharacter(message.replace(/[\n\t]/g, " "))).toBeUndefined();
    // A key set to undefined loses nothing, and every declared prop is taken.
    expect(synthErrors((s) => new Instance(s, "i", loose({ ...instanceBase, extra: undefined })))).toBe("");
  });

  it("takes a GPU model or a region of any length, as the provider does", () => {
    const long = "RTX ".repeat(100);
    expect(synthErrors((s) => new OfferLookup(s, "o", { gpuModel: long, region: long }))).toBe("");
  });

  it("takes null env, offer and timeouts props as unset, and skips null names and values, as the provider does", () => {
    const message = synthErrors(
      (s) =>
        new Instance(
          s,
          "i",
          loose({ ...instanceBase, env: null, secretEnv: null, unsetEnv: [null, "TZ"], secretEnvWo: null }),
        ),
    );
    expect(message).toBe("");
    expect(synthErrors((s) => new Instance(s, "i", loose({ ...instanceBase, env: { A: null } })))).toBe("");
    expect(
      synthErrors((s) => {
        new Instance(s, "i", loose({ ...instanceBase, offer: null, timeouts: null }));
        new OfferLookup(
          s,
          "o",
          loose({ gpuModel: "RTX 4090", deployableWith: null }) as unknown as OfferLookupProps,
        );
      }),
    ).toBe("");
  });

  it("takes null for any optional prop, at any depth, as unset: the configuration is the one without it", () => {
    /** The configuration synthesized, validations on; the error when they fail. */
    const configuration = (build: (scope: Construct) => void): string => {
      const stack = new TerraformStack(Testing.app(), "test");
      build(stack);
      try {
        return Testing.synth(stack, true);
      } catch (err) {
        return err instanceof Error ? err.message : String(err);
      }
    };
    const gpurental = (s: Construct) => new GpurentalProvider(s, "gpurental");
    const timeouts = { create: "20m" };
    const cases: Array<[string, (s: Construct, props: Record<string, unknown>) => void, object, object]> = [
      [
        "Instance",
        (s, p) => {
          gpurental(s);
          new Instance(s, "i", loose(p));
        },
        {
          ...instanceBase,
          offer: null,
          diskGb: null,
          label: null,
          sshKeyId: null,
          env: null,
          secretEnv: null,
          secretEnvWo: null,
          secretEnvWoVersion: null,
          unsetEnv: null,
          storeAccessSecrets: null,
          desiredStatus: null,
          timeouts: null,
          provider: null,
          dependsOn: null,
        },
        instanceBase,
      ],
      [
        "Instance with an offer filter",
        (s, p) => {
          gpurental(s);
          new Instance(s, "i", loose(p));
        },
        {
          templateId: TEMPLATE,
          offerId: null,
          offer: { gpuModel: "RTX 4090", numGpus: null, maxPricePerHourMicro: null, region: null },
          timeouts: { ...timeouts, update: null, delete: null },
        },
        { templateId: TEMPLATE, offer: { gpuModel: "RTX 4090" }, timeouts },
      ],
      [
        "ApiKey",
        (s, p) => {
          gpurental(s);
          new ApiKey(s, "k", p as unknown as ApiKeyProps);
        },
        { name: "ci", kind: null, provider: null },
        { name: "ci" },
      ],
      [
        "OfferLookup",
        (s, p) => {
          gpurental(s);
          new OfferLookup(s, "o", p as unknown as OfferLookupProps);
        },
        {
          gpuModel: "RTX 4090",
          numGpus: null,
          maxPricePerHourMicro: null,
          region: null,
          deployableWith: null,
          provider: null,
        },
        { gpuModel: "RTX 4090" },
      ],
      [
        "TemplateLookup",
        (s, p) => {
          gpurental(s);
          new TemplateLookup(s, "t", p as unknown as TemplateLookupProps);
        },
        { mode: "ssh", tab: null, provider: null },
        { mode: "ssh" },
      ],
      [
        "GpurentalProvider",
        (s, p) => new GpurentalProvider(s, "gpurental", p as GpurentalProviderProps),
        {
          baseUrl: null,
          token: null,
          orgId: null,
          journalDir: null,
          journalUrl: null,
          reconcileTimeout: null,
          caCertFile: null,
          httpsProxy: null,
          httpProxy: null,
          noProxy: null,
          alias: null,
        },
        {},
      ],
    ];
    for (const [name, build, withNull, without] of cases) {
      const json = configuration((s) => build(s, { ...withNull }));
      expect([name, json]).toEqual([name, configuration((s) => build(s, { ...without }))]);
      // Left out of the configuration, as undefined is, rather than written as null.
      expect([name, json]).not.toEqual([name, expect.stringMatching(/": null|Validation failed/)]);
    }
  });

  it("names a required prop that is null or left out as required, once", () => {
    const message = synthErrors((s) => {
      new Instance(s, "gpu", loose({ offerId: OFFER, templateId: null }));
      new Instance(s, "missing", loose({ offerId: OFFER }));
      new Instance(s, "filtered", loose({ templateId: TEMPLATE, offer: { gpuModel: null } }));
      new ApiKey(s, "key", { name: null } as unknown as ApiKeyProps);
      new OfferLookup(s, "offer", {
        gpuModel: null,
        deployableWith: { templateId: TEMPLATE, diskGb: null },
      } as unknown as OfferLookupProps);
      new TemplateLookup(s, "template", { mode: null } as unknown as TemplateLookupProps);
      // A prop the construct does not take stays an error when it is null, as in Terraform.
      new Instance(s, "extra", loose({ ...instanceBase, labels: null }));
    });
    const lines = message.split("\n").filter((line) => line.includes("[test/"));
    expect(lines.map((line) => line.trim())).toEqual([
      "[test/gpu] templateId is required, got null",
      "[test/missing] templateId is required",
      "[test/filtered] offer.gpuModel is required, got null",
      "[test/key] name is required, got null",
      "[test/offer] gpuModel is required, got null",
      "[test/offer] deployableWith.diskGb is required, got null",
      "[test/template] mode is required, got null",
      "[test/extra] labels is not a prop of this construct and would be ignored; did you mean label?",
    ]);
  });

  it("refuses props that are no object with a named error, and takes none for a construct that needs none", () => {
    const values: unknown[] = [null, undefined, 5, "gps_0123456789abcdef-never", [], true, () => 1];
    const got = (v: unknown) =>
      v === null || v === undefined ? String(v) : `a ${Array.isArray(v) ? "list" : typeof v}`;
    for (const value of values) {
      const message = synthErrors((s) => {
        new Instance(s, "gpu", value as InstanceProps);
        new ApiKey(s, "key", value as ApiKeyProps);
        new OfferLookup(s, "offer", value as OfferLookupProps);
        new TemplateLookup(s, "template", value as TemplateLookupProps);
        new GpurentalProvider(s, "other", value as GpurentalProviderProps);
      });
      const none = value === null || value === undefined;
      const lines = message.split("\n").filter((line) => line.includes("[test/"));
      expect(lines.map((line) => line.trim())).toEqual([
        `[test/gpu] Instance props must be an object, got ${got(value)}`,
        `[test/key] ApiKey props must be an object, got ${got(value)}`,
        `[test/offer] OfferLookup props must be an object, got ${got(value)}`,
        `[test/template] TemplateLookup props must be an object, got ${got(value)}`,
        ...(none ? [] : [`[test/other] GpurentalProvider props must be an object, got ${got(value)}`]),
      ]);
    }
    // A provider given no props reads every setting where Terraform runs it.
    const stack = new TerraformStack(Testing.app(), "test");
    new GpurentalProvider(stack, "gpurental", null as unknown as GpurentalProviderProps);
    expect(JSON.parse(Testing.synth(stack, true)).provider).toEqual({ gpurental: [{}] });
  });

  it("reports every problem of every construct together, naming the construct", () => {
    const message = synthErrors((s) => {
      new ApiKey(s, "key", { name: "" });
      new Instance(s, "gpu", { ...instanceBase, diskGb: 5, label: longString(70) });
      new OfferLookup(s, "offer", { gpuModel: "RTX 4090", numGpus: 0 } satisfies OfferLookupProps);
    });
    expect(message).toContain("[test/key] name must have 1 to 64 characters, got 0");
    expect(message).toContain("[test/gpu] diskGb must be a whole number from 10 to 20000 GB, got 5");
    expect(message).toContain("[test/gpu] label must have at most 64 characters, got 70");
    expect(message).toContain("[test/offer] numGpus must be a whole number from 1 to 1024 GPUs, got 0");
  });

  it("counts lengths in characters, as the API does, and accepts an empty label", () => {
    const message = synthErrors((s) => {
      new Instance(s, "gpu", {
        ...instanceBase,
        label: "😀".repeat(64),
        env: { [`K${"😀".repeat(255)}`]: "😀".repeat(4096) },
      });
      new Instance(s, "blank", { ...instanceBase, label: "" });
    });
    expect(message).toBe("");
  });

  it("skips values that are unresolved tokens", () => {
    const message = synthErrors((s) => {
      const size = new TerraformVariable(s, "size", { type: "number" });
      const name = new TerraformVariable(s, "name", { type: "string" });
      const env = new TerraformVariable(s, "env", { type: "map(string)" });
      new ApiKey(s, "key", { name: name.stringValue });
      new Instance(s, "gpu", {
        ...instanceBase,
        diskGb: size.numberValue,
        env: env.value as Record<string, string>,
      });
      new Instance(s, "gpu2", { ...instanceBase, env: { FROM_VAR: name.stringValue } });
    });
    expect(message).toBe("");
  });
});

describe("example app", () => {
  it("matches the snapshot", () => {
    const app = new App({ outdir: "unused", skipValidation: true });
    const stack = new GpuWorkstationStack(app, "gpu-workstation", { statePath: "/state/terraform.tfstate" });
    expect(Testing.synth(stack, true)).toMatchSnapshot();
  });

  it("keeps the state in a local file, or in PostgreSQL with no connection string written", () => {
    const backendOf = (props: GpuWorkstationStackProps) => {
      const stack = new GpuWorkstationStack(Testing.app(), "gpu-workstation", props);
      return (JSON.parse(Testing.synth(stack)) as { terraform: { backend: unknown } }).terraform.backend;
    };
    expect(backendOf({ statePath: "/state/terraform.tfstate" })).toEqual({
      local: { path: "/state/terraform.tfstate" },
    });
    // The server and its password come from PG_CONN_STR when Terraform runs.
    expect(backendOf({ postgres: {} })).toEqual({ pg: { schema_name: "gpu_workstation" } });
    expect(backendOf({ postgres: { schemaName: "team_a" } })).toEqual({ pg: { schema_name: "team_a" } });
    expect(() => backendOf({})).toThrow("gpu-workstation: give either statePath or postgres");
    expect(() => backendOf({ statePath: "/s", postgres: {} })).toThrow("give either statePath or postgres");
  });

  it("marks the secrets' outputs sensitive", () => {
    const app = Testing.app();
    const stack = new GpuWorkstationStack(app, "gpu-workstation", { statePath: "/state/terraform.tfstate" });
    const synthesized = JSON.parse(Testing.synth(stack)) as {
      output: Record<string, { value: string; sensitive?: boolean }>;
    };
    for (const [name, output] of Object.entries(synthesized.output)) {
      const secret = /\.(secret|access_token)\}|\.jupyter_url\}$/.test(output.value);
      expect([name, output.sensitive === true]).toEqual([name, secret]);
    }
  });
});
