import * as cdktf from "cdktf";
import * as cdktn from "cdktn";
import * as onCdktf from "../../src";
import * as onCdktn from "../../src/cdktn";

// One source, two builds: the same app written against either CDK synthesizes the same Terraform
// configuration (the resources, data sources, outputs and provider, down to the checks), and the
// same invalid props fail both synths with the same messages.

type Cdk = typeof cdktf | typeof cdktn;
type Lib = typeof onCdktf | typeof onCdktn;

function gpuStack(
  cdk: Cdk,
  lib: Lib,
  stack: cdktf.TerraformStack | cdktn.TerraformStack,
  diskGb: number,
): void {
  new lib.GpurentalProvider(stack, "gpurental");
  const template = new lib.TemplateLookup(stack, "template", { mode: "jupyter" });
  const key = new lib.ApiKey(stack, "ci", { name: "ci-pipelines", kind: "team" });
  const offer = new lib.OfferLookup(stack, "market", { gpuModel: "RTX 4090", numGpus: 1 });
  const gpu = new lib.Instance(stack, "gpu", {
    offer: { gpuModel: "RTX 4090", numGpus: 1, maxPricePerHourMicro: 3_000_000 },
    templateId: template.templateId,
    diskGb,
    env: { TZ: "UTC" },
    desiredStatus: "stopped",
    timeouts: { create: "20m" },
  });
  const again = lib.Instance.fromInstanceId(stack, "again", gpu.instanceId);
  const outputs: Array<[string, string | number, boolean?]> = [
    ["ssh", gpu.sshCommand],
    ["jupyter", gpu.jupyterAddress],
    ["cheapest", offer.offerId],
    ["again_status", again.status],
    ["secret", key.secret, true],
  ];
  for (const [name, value, sensitive] of outputs) {
    // biome-ignore lint/suspicious/noExplicitAny: the two CDKs' TerraformOutput take the same props.
    new (cdk.TerraformOutput as any)(stack, name, { value, sensitive });
  }
}

/** The app synthesized with `cdk` and its build of the constructs, without the CDK's own metadata. */
function synth(cdk: Cdk, lib: Lib, diskGb = 50): Record<string, unknown> {
  const app = cdk.Testing.app();
  const stack = new cdk.TerraformStack(app, "gpu");
  // biome-ignore lint/suspicious/noExplicitAny: each build takes its own CDK's stack.
  gpuStack(cdk, lib, stack as any, diskGb);
  // biome-ignore lint/suspicious/noExplicitAny: each CDK's Testing takes its own stack.
  const doc = JSON.parse(cdk.Testing.synth(stack as any, true)) as Record<string, unknown>;
  delete doc["//"];
  return JSON.parse(JSON.stringify(doc).replace(/"\/\/":\{"metadata":\{[^}]*\}\}/g, '"//":{}'));
}

test("the same app synthesizes the same configuration under cdktf and cdktn", () => {
  const onTf = synth(cdktf, onCdktf);
  const onTn = synth(cdktn, onCdktn);
  expect(Object.keys(onTf).sort()).toEqual(["data", "output", "provider", "resource", "terraform"]);
  for (const key of ["data", "output", "provider", "resource"])
    expect([key, onTn[key]]).toEqual([key, onTf[key]]);
  expect((onTn.terraform as Record<string, unknown>).required_providers).toEqual(
    (onTf.terraform as Record<string, unknown>).required_providers,
  );
});

test("invalid props fail both synths with the same message", () => {
  const message = (cdk: Cdk, lib: Lib): string => {
    try {
      synth(cdk, lib, 5);
    } catch (err) {
      return (err as Error).message;
    }
    throw new Error("synth did not fail");
  };
  const onTf = message(cdktf, onCdktf);
  expect(onTf).toContain("[gpu/gpu] diskGb must be a whole number from 10 to 20000 GB, got 5");
  const line = (text: string) => text.split("\n").filter((l) => l.includes("diskGb"));
  expect(line(message(cdktn, onCdktn))).toEqual(line(onTf));
});
