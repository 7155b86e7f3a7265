import type { Instance, Offer } from "../api/schemas";
import { makeTemplate } from "../api/testing/fixtures";
import { instanceHourlyBurn } from "../report/money";
import { checkDeploy, compareVersions, type DeployCheckData, type DeployCheckInput } from "./plan-checks";

const NOW = Date.parse("2026-11-22T08:00:00.000Z");

function offer(over: Partial<Offer> = {}, machine: Partial<Offer["machine"]> = {}): Offer {
  return {
    id: "offer-1",
    availability: "available",
    free_units: 2,
    next_maintenance: null,
    price_per_hour_micro: 2_500_000,
    storage_price_per_gb_hour_micro: 200,
    ...over,
    machine: {
      id: "machine-1",
      disk_gb: 2000,
      available_disk_gb: 1500,
      cuda_version: "12.4",
      vm_capable: false,
      architecture: "x86_64",
      ...machine,
    },
  };
}

const template = makeTemplate;

function instance(over: Partial<Instance> = {}): Instance {
  return {
    id: "inst",
    status: "running",
    disk_gb: 100,
    price_per_hour_micro: 1_000_000,
    storage_price_per_gb_hour_micro: 100,
    offer: { id: "offer-other" },
    ...over,
  } as Instance;
}

const input: DeployCheckInput = {
  offer_id: "offer-1",
  template_id: "template-1",
  disk_gb: 100,
  ssh_key_id: null,
};

function run(data: Partial<DeployCheckData>, over: Partial<DeployCheckInput> = {}) {
  return checkDeploy({ ...input, ...over }, { offer: offer(), template: template(), now: NOW, ...data }).map(
    (d) => ({ code: d.summary.split(":")[0], severity: d.severity, path: d.path }),
  );
}

describe("compareVersions", () => {
  it.each([
    ["12.4", "12.4", 0],
    ["12.10", "12.4", 1],
    ["11.8", "12.0", -1],
    ["12", "12.0", 0],
  ])("%s vs %s", (a, b, sign) => {
    expect(Math.sign(compareVersions(a, b))).toBe(sign);
  });
});

describe("checkDeploy", () => {
  it("passes a deploy that would succeed", () => {
    expect(
      run({ instances: [], balanceMicro: 100_000_000, sshKeys: [], sshKeysAreExhaustive: true }),
    ).toEqual([]);
  });

  it("skips every check whose data is missing", () => {
    expect(run({ offer: undefined, template: undefined }, { ssh_key_id: "k", disk_gb: 99999 })).toEqual([]);
  });

  it.each<[string, Partial<DeployCheckData>, Partial<DeployCheckInput>, string, string]>([
    ["missing offer", { offer: null }, {}, "OFFER_UNAVAILABLE", "offer_id"],
    ["withdrawn offer", { offer: offer({ availability: "withdrawn" }) }, {}, "OFFER_UNAVAILABLE", "offer_id"],
    [
      "sold out offer",
      { offer: offer({ availability: "sold_out", free_units: 0 }) },
      {},
      "OFFER_UNAVAILABLE",
      "offer_id",
    ],
    ["disk over the machine's", {}, { disk_gb: 2001 }, "DISK_TOO_LARGE", "disk_gb"],
    ["disk over what is left", {}, { disk_gb: 1600 }, "MACHINE_DISK_EXHAUSTED", "disk_gb"],
    ["missing template", { template: null }, {}, "TEMPLATE_NOT_FOUND", "template_id"],
    ["inactive template", { template: template({ active: false }) }, {}, "TEMPLATE_NOT_FOUND", "template_id"],
    ["coming soon", { template: template({ coming_soon: true }) }, {}, "TEMPLATE_COMING_SOON", "template_id"],
    [
      "vm on a container machine",
      { template: template({ mode: "vm" }) },
      {},
      "OFFER_NOT_VM_CAPABLE",
      "offer_id",
    ],
    [
      "old CUDA template",
      { template: template({ cuda_max: "11.8" }) },
      {},
      "TEMPLATE_CUDA_TOO_NEW",
      "template_id",
    ],
    [
      "arm template",
      { template: template({ architecture: "arm64" }) },
      {},
      "TEMPLATE_ARCH_UNSUPPORTED",
      "template_id",
    ],
    [
      "another organization's private-registry template",
      { template: template({ uses_private_registry: true, owner_org_id: "org-2" }), orgId: "org-1" },
      {},
      "TEMPLATE_REQUIRES_OWNER",
      "template_id",
    ],
    [
      "SSH key not among the session's",
      { sshKeys: [{ id: "k1", name: "a", fingerprint: "f" }], sshKeysAreExhaustive: true },
      { ssh_key_id: "k2" },
      "SSH_KEY_NOT_FOUND",
      "ssh_key_id",
    ],
  ])("%s -> %s error on %s", (_name, data, over, code, attribute) => {
    expect(run(data, over)).toEqual([{ code, severity: "error", path: [{ attribute }] }]);
  });

  it("only warns about a maintenance within 24 hours: the deploy's own answer decides", () => {
    const d = checkDeploy(input, {
      offer: offer({ next_maintenance: "2026-11-22T10:00:00.000Z" }),
      template: template(),
      now: NOW,
    });
    expect(d).toMatchObject([
      { severity: "warning", summary: expect.stringMatching(/^MACHINE_IN_MAINTENANCE: /) },
    ]);
    expect(d[0]?.path).toEqual([{ attribute: "offer_id" }]);
    expect(d[0]?.detail).toContain("2026-11-22 10:00:00 UTC");
    expect(d[0]?.detail).toContain("the deploy's own answer decides");
  });

  it("does not check maintenance a day or more away", () => {
    expect(run({ offer: offer({ next_maintenance: "2026-11-23T09:00:00.000Z" }) })).toEqual([]);
  });

  it("does not check SSH keys a team key could attach", () => {
    expect(run({ sshKeys: [], sshKeysAreExhaustive: false }, { ssh_key_id: "k2" })).toEqual([]);
  });

  it("accepts our own organization's private-registry template", () => {
    expect(
      run({ template: template({ uses_private_registry: true, owner_org_id: "org-1" }), orgId: "org-1" }),
    ).toEqual([]);
  });

  it("only warns about a sold-out offer one of our instances holds (a replacement frees it)", () => {
    expect(
      run({
        offer: offer({ free_units: 0 }),
        instances: [instance({ offer: { id: "offer-1" } })],
      }),
    ).toEqual([{ code: "OFFER_UNAVAILABLE", severity: "warning", path: [{ attribute: "offer_id" }] }]);
  });

  it("only warns about exhausted disk that destroying our instance on the machine would free", () => {
    expect(
      run({ instances: [instance({ offer: { id: "offer-1" }, disk_gb: 200 })] }, { disk_gb: 1600 }),
    ).toEqual([{ code: "MACHINE_DISK_EXHAUSTED", severity: "warning", path: [{ attribute: "disk_gb" }] }]);
  });

  it("checks the balance against one hour of the whole burn", () => {
    // own: 2.5 + 100 GB * 200 micro = 2_520_000; others: running 1_010_000 + stopped 10_000
    const instances = [instance(), instance({ status: "stopped" }), instance({ status: "destroying" })];
    expect(run({ instances, balanceMicro: 3_540_000 })).toEqual([]);
    expect(run({ instances, balanceMicro: 3_539_999 })).toEqual([
      { code: "INSUFFICIENT_BALANCE", severity: "warning", path: undefined },
    ]);
    expect(run({ instances, balanceMicro: 2_000_000 })).toEqual([
      { code: "INSUFFICIENT_BALANCE", severity: "error", path: undefined },
    ]);
  });

  it("puts the amounts in the balance finding", () => {
    const d = checkDeploy(input, {
      offer: offer(),
      template: template(),
      now: NOW,
      instances: [],
      balanceMicro: 0,
    });
    expect(d[0]?.detail).toContain("¥2.52");
  });

  it("warns at the instance limit", () => {
    const instances = Array.from({ length: 25 }, () => instance({ status: "stopped" }));
    expect(run({ instances })).toEqual([
      { code: "INSTANCE_LIMIT_REACHED", severity: "warning", path: undefined },
    ]);
    expect(run({ instances: instances.slice(1) })).toEqual([]);
  });

  it("counts the instances that exist in the limit warning, not the limit", () => {
    const instances = Array.from({ length: 27 }, () => instance({ status: "running" }));
    const [d] = checkDeploy(input, { offer: offer(), template: template(), now: NOW, instances });
    expect(d?.detail).toContain(
      "The organization has 27 instances that are not destroyed, and the limit is 25",
    );
  });

  it("reports independent refusals together", () => {
    expect(
      run({ template: template({ coming_soon: true, architecture: "arm64" }) }, { disk_gb: 5000 }).map(
        (d) => d.code,
      ),
    ).toEqual(["DISK_TOO_LARGE", "TEMPLATE_COMING_SOON", "TEMPLATE_ARCH_UNSUPPORTED"]);
  });
});

describe("plan-time findings at their edges", () => {
  const detailsOf = (data: Partial<DeployCheckData>, over: Partial<DeployCheckInput> = {}) =>
    checkDeploy({ ...input, ...over }, { offer: offer(), template: template(), now: NOW, ...data });

  it("says how sure each finding is, and adds what the offer's or template's state is", () => {
    const [missing] = detailsOf({ offer: null });
    expect(missing?.detail).toMatch(/^The API would refuse this deploy\. .*The offer does not exist\.$/s);
    const [withdrawn] = detailsOf({ offer: offer({ availability: "withdrawn" }) });
    expect(withdrawn?.detail).toMatch(/The offer has been withdrawn\.$/);
    const [soldOut] = detailsOf({
      offer: offer({ availability: "sold_out" }),
      instances: [instance({ offer: { id: "offer-1" } })],
    });
    expect(soldOut?.detail).toMatch(
      /^The API may refuse this deploy unless other instances of the organization are destroyed first in the same apply \(as when this plan replaces one\)\. .*The offer is sold out\.$/s,
    );
    const [inactive] = detailsOf({ template: template({ active: false }) });
    expect(inactive?.detail).toMatch(/The template is inactive\.$/);
    const [maintenance] = detailsOf({ offer: offer({ next_maintenance: "2026-11-22T10:00:00.000Z" }) });
    expect(maintenance?.detail).toMatch(
      /^The API may refuse this deploy: the contract leaves open how close to a maintenance/,
    );
  });

  it("quotes the CUDA versions and the architecture", () => {
    expect(detailsOf({ template: template({ cuda_max: "11.8" }) })[0]?.detail).toContain(
      "The template supports CUDA up to 11.8; the machine has 12.4",
    );
    expect(detailsOf({ template: template({ architecture: "arm64" }) })[0]?.detail).toContain(
      "The template declares architecture arm64",
    );
  });

  it("a maintenance exactly 24 hours away, or at a time that cannot be read, is not checked", () => {
    expect(run({ offer: offer({ next_maintenance: "2026-11-23T08:00:00.000Z" }) })).toEqual([]);
    expect(run({ offer: offer({ next_maintenance: "2026-11-23T07:59:59.999Z" }) })).toHaveLength(1);
    expect(run({ offer: offer({ next_maintenance: "soon" }) })).toEqual([]);
    expect(run({ offer: offer({ next_maintenance: undefined as unknown as null }) })).toEqual([]);
  });

  it("an offer with no free unit is sold out whatever its availability says; one unit is enough", () => {
    expect(run({ offer: offer({ free_units: 0 }) })).toEqual([
      { code: "OFFER_UNAVAILABLE", severity: "error", path: [{ attribute: "offer_id" }] },
    ]);
    expect(run({ offer: offer({ free_units: 1 }) })).toEqual([]);
    expect(run({ offer: offer({ free_units: undefined }) })).toEqual([]);
  });

  it("disk exactly the machine's, or exactly what is left, passes", () => {
    expect(run({}, { disk_gb: 1500 })).toEqual([]);
    expect(run({ offer: offer({}, { disk_gb: 1500 }) }, { disk_gb: 1500 })).toEqual([]);
    expect(run({}, { disk_gb: 1501 })).toEqual([
      { code: "MACHINE_DISK_EXHAUSTED", severity: "error", path: [{ attribute: "disk_gb" }] },
    ]);
  });

  it("counts as freeable the disk of our instances on the same machine under another offer, and nothing else", () => {
    const onMachine = instance({
      offer: { id: "offer-9", machine: { id: "machine-1" } } as Instance["offer"],
      disk_gb: 100,
    });
    const elsewhere = instance({
      offer: { id: "offer-9", machine: { id: "machine-2" } } as Instance["offer"],
      disk_gb: 500,
    });
    expect(run({ instances: [onMachine] }, { disk_gb: 1600 })[0]?.severity).toBe("warning");
    expect(run({ instances: [onMachine] }, { disk_gb: 1601 })[0]?.severity).toBe("error");
    expect(run({ instances: [elsewhere] }, { disk_gb: 1600 })[0]?.severity).toBe("error");
    expect(run({ instances: [instance()] }, { disk_gb: 1600 })[0]?.severity).toBe("error");
    const noMachineId = offer({}, { id: undefined as unknown as string });
    const unknownMachine = instance({ offer: { id: "offer-9" } as Instance["offer"], disk_gb: 500 });
    expect(run({ offer: noMachineId, instances: [unknownMachine] }, { disk_gb: 1600 })[0]?.severity).toBe(
      "error",
    );
  });

  it("checks VM and CUDA only against an active template and the machine's known facts", () => {
    expect(run({ template: template({ mode: "vm" }) }, {})).toHaveLength(1);
    expect(run({ template: template({ mode: "vm" }), offer: offer({}, { vm_capable: true }) })).toEqual([]);
    expect(run({ template: template({ mode: "vm" }), offer: offer({}, { vm_capable: undefined }) })).toEqual(
      [],
    );
    expect(run({ template: template({ mode: "jupyter" }) })).toEqual([]);
    expect(run({ template: template({ cuda_max: "12.4" }) })).toEqual([]);
    expect(run({ template: template({ cuda_max: "11.8" }), offer: offer({}, { cuda_version: "" }) })).toEqual(
      [],
    );
    expect(
      run({ template: template({ mode: "vm", cuda_max: "11.8", active: false }) }).map((f) => f.code),
    ).toEqual(["TEMPLATE_NOT_FOUND"]);
  });

  it("TEMPLATE_REQUIRES_OWNER needs a private registry, an owner and a caller's organization to compare", () => {
    const other = { uses_private_registry: true, owner_org_id: "org-2" };
    expect(run({ template: template(other), orgId: "org-1" })).toHaveLength(1);
    expect(run({ template: template(other) })).toEqual([]);
    expect(run({ template: template({ ...other, uses_private_registry: false }), orgId: "org-1" })).toEqual(
      [],
    );
    expect(run({ template: template({ ...other, owner_org_id: null }), orgId: "org-1" })).toEqual([]);
  });

  it("the SSH key found among the session's passes", () => {
    expect(
      run(
        { sshKeys: [{ id: "k1", name: "a", fingerprint: "f" }], sshKeysAreExhaustive: true },
        { ssh_key_id: "k1" },
      ),
    ).toEqual([]);
    expect(run({ sshKeysAreExhaustive: true }, { ssh_key_id: "k2" })).toEqual([]);
  });

  it("a balance exactly the requirement passes; exactly this instance's own burn is only a warning", () => {
    expect(run({ instances: [], balanceMicro: 2_520_000 })).toEqual([]);
    expect(run({ instances: [instance()], balanceMicro: 2_520_000 })).toEqual([
      { code: "INSUFFICIENT_BALANCE", severity: "warning", path: undefined },
    ]);
    expect(run({ instances: [instance()], balanceMicro: 2_519_999 })[0]?.severity).toBe("error");
    expect(run({ balanceMicro: 0 })).toEqual([]);
    expect(
      run({ instances: [], balanceMicro: 0, offer: offer({ price_per_hour_micro: undefined }) }),
    ).toEqual([]);
    expect(
      run({ instances: [], balanceMicro: 0, offer: offer({ storage_price_per_gb_hour_micro: undefined }) }),
    ).toEqual([]);
  });

  it("a sold-out offer none of our instances holds is an error, whatever we hold elsewhere", () => {
    expect(
      run({ offer: offer({ free_units: 0 }), instances: [instance({ offer: { id: "offer-other" } })] }),
    ).toEqual([{ code: "OFFER_UNAVAILABLE", severity: "error", path: [{ attribute: "offer_id" }] }]);
  });

  it("quotes the disk sizes, and adds nothing after a finding without a note", () => {
    const [tooLarge] = detailsOf({}, { disk_gb: 2001 });
    expect(tooLarge?.detail).toBe(
      "The API would refuse this deploy. The offer's machine has 2000 GB of disk in total and 2001 GB were requested. Lower disk_gb to at most 2000, or choose an offer on a machine with more disk.",
    );
    const [exhausted] = detailsOf({}, { disk_gb: 1600 });
    expect(exhausted?.detail).toBe(
      "The API would refuse this deploy. 1600 GB were requested but the offer's machine has only 1500 GB left to commit. Lower disk_gb to at most 1500, or choose an offer on another machine.",
    );
  });

  it.each<[string, Partial<DeployCheckData>, Partial<DeployCheckInput>, string[]]>([
    [
      "the offer's refusals and a template found after them",
      {
        offer: offer({ free_units: 0, next_maintenance: "2026-11-22T10:00:00.000Z" }),
        template: template({ coming_soon: true, mode: "vm", cuda_max: "11.8", architecture: "arm64" }),
      },
      { disk_gb: 2001 },
      [
        "OFFER_UNAVAILABLE",
        "MACHINE_IN_MAINTENANCE",
        "DISK_TOO_LARGE",
        "TEMPLATE_COMING_SOON",
        "OFFER_NOT_VM_CAPABLE",
        "TEMPLATE_CUDA_TOO_NEW",
        "TEMPLATE_ARCH_UNSUPPORTED",
      ],
    ],
    [
      "exhausted disk and a missing template",
      { offer: offer({ free_units: 0 }), template: null },
      { disk_gb: 1600 },
      ["OFFER_UNAVAILABLE", "MACHINE_DISK_EXHAUSTED", "TEMPLATE_NOT_FOUND"],
    ],
    [
      "a template of another owner after the machine's own refusals",
      {
        offer: offer({}, { vm_capable: false }),
        template: template({ mode: "vm", uses_private_registry: true, owner_org_id: "org-b" }),
        orgId: "org-a",
        sshKeys: [],
        sshKeysAreExhaustive: true,
      },
      { ssh_key_id: "k9" },
      ["OFFER_NOT_VM_CAPABLE", "TEMPLATE_REQUIRES_OWNER", "SSH_KEY_NOT_FOUND"],
    ],
  ])("orders %s as the API checks them", (_name, data, over, codes) => {
    // Each code's rank is checked against a code found before it in the API's order.
    expect(run(data, over).map((f) => f.code)).toEqual(codes);
  });

  it("orders findings as the API checks, whatever order they are found in", () => {
    expect(
      run(
        {
          offer: offer({ availability: "withdrawn" }),
          template: template({ coming_soon: true }),
          instances: Array.from({ length: 25 }, () => instance({ status: "stopped" })),
          balanceMicro: 0,
          sshKeys: [],
          sshKeysAreExhaustive: true,
        },
        { ssh_key_id: "k9", disk_gb: 3000 },
      ).map((f) => f.code),
    ).toEqual([
      "OFFER_UNAVAILABLE",
      "DISK_TOO_LARGE",
      "TEMPLATE_COMING_SOON",
      "SSH_KEY_NOT_FOUND",
      "INSUFFICIENT_BALANCE",
      "INSTANCE_LIMIT_REACHED",
    ]);
  });
});

describe("instanceHourlyBurn", () => {
  it.each([
    ["running", 1_010_000],
    ["starting", 1_010_000],
    ["creating", 1_010_000],
    ["stopping", 1_010_000],
    ["stopped", 10_000],
    ["error", 0],
    ["destroying", 0],
    ["destroyed", 0],
  ] as const)("a %s instance burns %d micro an hour", (status, micro) => {
    expect(
      instanceHourlyBurn({
        status,
        disk_gb: 100,
        storage_price_per_gb_hour_micro: 100,
        price_per_hour_micro: 1_000_000,
      }),
    ).toBe(micro);
  });
});

describe("compareVersions beyond digits", () => {
  it.each([
    ["12.x", "12.0", 0],
    ["12", "12.0.0", 0],
    ["12.0.1", "12", 1],
    ["11", "11.0.1", -1],
  ])("%s against %s", (a, b, sign) => {
    expect(Math.sign(compareVersions(a, b))).toBe(sign);
  });
});
