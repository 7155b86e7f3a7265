import { attributeOfCode, EXPLAINED_CODES, refusalDiagnostic } from "./refusals";

// Every explanation in words, as refusalDiagnostic builds it from the carried fields, for each way
// the instance's offer can be given and each operation whose wording differs. A refusal that
// reads wrong, or loses the figures that tell the user what to do, is what these pin.
describe("explanations", () => {
  const facts = {
    message: "msg from the API",
    balance_micro: 1_000_000,
    required_micro: 3_500_000,
    max_disk_gb: 500,
    available_disk_gb: 120,
    requested_disk_gb: 400,
    next_maintenance: "2026-11-23T01:30:00.000Z",
    limit: 30,
    field: "disk_gb",
  };
  type Case = [
    code: string,
    op: Parameters<typeof refusalDiagnostic>[2],
    choice: "pinned" | "filter",
    given: Parameters<typeof refusalDiagnostic>[1],
    detail: string,
  ];
  const OFFERS = "The gpurental_offers data source lists the offers that can be rented now";
  const FILTER = "offer_filter moves on to the next matching offer when one is refused at deploy time";
  const TEMPLATES = "The gpurental_templates data source lists the templates this organization can use.";
  const cases: Case[] = [
    [
      "TOKEN_INVALID",
      "deploy",
      "pinned",
      {},
      "whose creator has left the organization. Check the provider's token",
    ],
    [
      "TOKEN_INVALID",
      "plan_check",
      "pinned",
      {},
      "has left the organization, or the endpoint needs a signed-in session rather than an API key. Check",
    ],
    [
      "TOKEN_INVALID",
      "create_key",
      "pinned",
      {},
      "or the endpoint needs a signed-in session rather than an API key. Check",
    ],
    [
      "ADMIN_REQUIRED",
      "create_key",
      "pinned",
      {},
      "API keys can only be created and revoked with a signed-in session",
    ],
    [
      "ADMIN_REQUIRED",
      "delete_key",
      "pinned",
      {},
      "API keys can only be created and revoked with a signed-in session",
    ],
    [
      "ADMIN_REQUIRED",
      "deploy",
      "pinned",
      {},
      "Only an admin of the organization in a signed-in session may do this",
    ],
    [
      "ORG_MISMATCH",
      "read",
      "pinned",
      {},
      "is sent as X-Org-Id and names an organization the token does not belong to",
    ],
    [
      "API_KEY_NOT_FOUND",
      "delete_key",
      "pinned",
      {},
      "A revoked key cannot be brought back: create a new one.",
    ],
    [
      "INSTANCE_NOT_FOUND",
      "read",
      "pinned",
      {},
      "The instance id is unknown or belongs to another organization",
    ],
    [
      "INVALID_STATE",
      "stop",
      "pinned",
      facts,
      "The API said: msg from the API. Stop is accepted only from running",
    ],
    ["INVALID_STATE", "stop", "pinned", {}, "^Stop is accepted only from running, start only from stopped"],
    [
      "INSUFFICIENT_BALANCE",
      "start",
      "pinned",
      facts,
      "^Starting the instance needs a balance covering one hour",
    ],
    ["INSUFFICIENT_BALANCE", "deploy", "pinned", facts, "^Deploying the instance needs a balance"],
    ["INSUFFICIENT_BALANCE", "plan_check", "pinned", facts, "^Deploying the instance needs a balance"],
    ["INSUFFICIENT_BALANCE", "read", "pinned", facts, "^This action needs a balance"],
    [
      "INSUFFICIENT_BALANCE",
      "deploy",
      "pinned",
      facts,
      "stopped one. The balance is ¥1.00; ¥3.50 is required, so top up at least ¥2.50. An admin",
    ],
    [
      "INSUFFICIENT_BALANCE",
      "deploy",
      "pinned",
      { balance_micro: 5_000_000, required_micro: 3_000_000 },
      "so top up at least ¥0.00.",
    ],
    [
      "INSUFFICIENT_BALANCE",
      "deploy",
      "pinned",
      { balance_micro: 1 },
      "stopped one. Top up the balance. An admin",
    ],
    [
      "INSUFFICIENT_BALANCE",
      "deploy",
      "pinned",
      { required_micro: 1 },
      "stopped one. Top up the balance. An admin",
    ],
    [
      "OFFER_UNAVAILABLE",
      "deploy",
      "pinned",
      {},
      `took its last free unit. Choose another offer_id. ${OFFERS}`,
    ],
    ["OFFER_UNAVAILABLE", "deploy", "filter", {}, `took its last free unit. ${FILTER}`],
    [
      "MACHINE_IN_MAINTENANCE",
      "deploy",
      "pinned",
      facts,
      `booked offline at 2026-11-23 01:30:00 UTC, too soon to start an instance on it. Choose an offer on another machine, or deploy after the maintenance. ${OFFERS}`,
    ],
    [
      "MACHINE_IN_MAINTENANCE",
      "plan_check",
      "pinned",
      facts,
      "booked offline at 2026-11-23 01:30:00 UTC. Choose an offer",
    ],
    [
      "MACHINE_IN_MAINTENANCE",
      "deploy",
      "filter",
      {},
      `booked offline at an unknown time, too soon to start an instance on it. Deploy after the maintenance, or let offers on other machines match. ${FILTER}`,
    ],
    [
      "DISK_TOO_LARGE",
      "deploy",
      "pinned",
      facts,
      "^The offer's machine has 500 GB of disk in total and 400 GB were requested. Lower disk_gb to at most 500, or choose an offer on a machine with more disk.$",
    ],
    [
      "DISK_TOO_LARGE",
      "deploy",
      "filter",
      {},
      "^The offer's machine has less disk in total than requested. Lower disk_gb, or loosen offer_filter so that offers on a machine with more disk match.$",
    ],
    [
      "MACHINE_DISK_EXHAUSTED",
      "deploy",
      "pinned",
      facts,
      "^400 GB were requested but the offer's machine has only 120 GB left to commit. Lower disk_gb to at most 120, or choose an offer on another machine.$",
    ],
    [
      "MACHINE_DISK_EXHAUSTED",
      "deploy",
      "filter",
      {},
      "^the offer's machine has not enough disk left to commit. Lower disk_gb, or loosen offer_filter so that offers on other machines match.$",
    ],
    ["TEMPLATE_NOT_FOUND", "deploy", "pinned", {}, `an inactive one cannot. Check template_id. ${TEMPLATES}`],
    [
      "TEMPLATE_COMING_SOON",
      "deploy",
      "pinned",
      {},
      `^The template cannot be deployed yet. Choose another template_id. ${TEMPLATES}`,
    ],
    [
      "OFFER_NOT_VM_CAPABLE",
      "deploy",
      "pinned",
      {},
      `cannot run VMs. Choose a VM-capable offer, or a container template \\(mode ssh or jupyter\\). ${OFFERS}`,
    ],
    [
      "OFFER_NOT_VM_CAPABLE",
      "deploy",
      "filter",
      {},
      `cannot run VMs. Choose a container template \\(mode ssh or jupyter\\), or let VM-capable offers match. ${FILTER}`,
    ],
    [
      "TEMPLATE_CUDA_TOO_NEW",
      "deploy",
      "pinned",
      facts,
      "^msg from the API. The template pins an older CUDA stack",
    ],
    ["TEMPLATE_CUDA_TOO_NEW", "deploy", "pinned", {}, "^The template pins an older CUDA stack"],
    [
      "TEMPLATE_ARCH_UNSUPPORTED",
      "deploy",
      "pinned",
      facts,
      `^msg from the API. Only x86_64 templates can be deployed. Choose an x86_64 template. ${TEMPLATES}`,
    ],
    ["TEMPLATE_ARCH_UNSUPPORTED", "deploy", "pinned", {}, "^Only x86_64 templates"],
    [
      "TEMPLATE_REQUIRES_OWNER",
      "deploy",
      "pinned",
      {},
      "Duplicate it into this organization with your own registry credentials",
    ],
    [
      "OFFER_NOT_PINNABLE",
      "deploy",
      "pinned",
      {},
      `^The offer_id is stale: its machine is no longer registered. Choose a current offer. ${OFFERS}`,
    ],
    [
      "OFFER_NOT_PINNABLE",
      "deploy",
      "filter",
      {},
      `^The offer's machine is no longer registered with the fleet. ${FILTER}`,
    ],
    ["SSH_KEY_NOT_FOUND", "deploy", "pinned", {}, "or leave ssh_key_id unset \\(then SSH is impossible\\)"],
    [
      "INSTANCE_LIMIT_REACHED",
      "deploy",
      "pinned",
      facts,
      "^The organization has reached its limit of 30 instances that are not destroyed; stopped instances and instances in error count too. Destroy instances you no longer need \\(the gpurental_instances data source lists them\\)",
    ],
    [
      "INSTANCE_LIMIT_REACHED",
      "deploy",
      "pinned",
      {},
      "^The organization has reached its limit of 25 instances",
    ],
    [
      "INSTANCE_LIMIT_REACHED",
      "deploy",
      "pinned",
      { count: 27, limit: 25 },
      "^The organization has 27 instances that are not destroyed, and the limit is 25; ",
    ],
    ["HOST_UNREACHABLE", "start", "pinned", {}, 'or set desired_status = "stopped" until then'],
    [
      "START_REFUSED",
      "start",
      "pinned",
      facts,
      "^The API said: msg from the API. The instance stays stopped with its disk",
    ],
    ["START_REFUSED", "start", "pinned", {}, "^The instance stays stopped with its disk"],
    ["START_UNAVAILABLE", "start", "pinned", {}, "or raise timeouts.update"],
    ["CAPACITY_UNAVAILABLE", "start", "pinned", {}, "^The GPUs released when the balance ran out"],
    [
      "VALIDATION_ERROR",
      "deploy",
      "pinned",
      facts,
      "^msg from the API \\(field disk_gb\\); the limit is 30. Correct the value and apply again.$",
    ],
    [
      "VALIDATION_ERROR",
      "deploy",
      "pinned",
      {},
      "^A field has the wrong type or is out of range. Correct the value",
    ],
    [
      "RATE_LIMITED",
      "read",
      "pinned",
      {},
      "waiting as long as the API asked \\(Retry-After\\), until the operation's time limit; it ends at once when the API asks to wait longer than the time left. Run terraform again later, raise the resource's timeouts, or lower terraform's -parallelism",
    ],
    [
      "SERVICE_UNAVAILABLE",
      "read",
      "pinned",
      {},
      "waiting as long as the API asked \\(Retry-After\\), until the operation's time limit. Run terraform again shortly, or raise the resource's timeouts",
    ],
  ];

  it.each(cases)("%s (%s, offer %s, %j)", (code, op, choice, given, detail) => {
    const d = refusalDiagnostic(code, given, op, { offerChoice: choice });
    expect(d.detail).toMatch(new RegExp(detail.replace(/[.?*+[\]{}|]/g, (c) => (c === "." ? "\\." : c))));
  });

  it.each(EXPLAINED_CODES)("%s has a title in words after its code", (code) => {
    expect(refusalDiagnostic(code, {}, "deploy").summary).toMatch(new RegExp(`^${code}: [a-z]\\w* \\w+`));
  });

  it.each(["toString", "constructor", "__proto__"])("a code named %s is an unknown code", (code) => {
    expect(refusalDiagnostic(code, { message: "odd" }, "deploy")).toEqual({
      severity: "error",
      summary: `${code}: odd`,
      detail: "odd.",
    });
    expect(attributeOfCode(code)).toBeUndefined();
  });

  it("an unknown code keeps the API's words, or says the API refused", () => {
    expect(refusalDiagnostic("NEW_CODE", { message: "It is refused." }, "deploy")).toEqual({
      severity: "error",
      summary: "NEW_CODE: It is refused.",
      detail: "It is refused.",
    });
    expect(refusalDiagnostic("NEW_CODE", {}, "deploy")).toEqual({
      severity: "error",
      summary: "NEW_CODE: the API refused the request",
      detail: "The API refused the request.",
    });
  });

  it("an unknown code's message keeps the dots inside it and gets one full stop", () => {
    expect(refusalDiagnostic("NEW_CODE", { message: "versions 1..3 only" }, "deploy").detail).toBe(
      "versions 1..3 only.",
    );
  });

  it("INSTANCE_LIMIT_REACHED names the count and the limit the API gave, 25 when it gave none", () => {
    expect(refusalDiagnostic("INSTANCE_LIMIT_REACHED", { count: 30, limit: 30 }, "deploy").detail).toMatch(
      /^The organization has 30 instances that are not destroyed, and the limit is 30;/,
    );
    expect(refusalDiagnostic("INSTANCE_LIMIT_REACHED", { count: 25 }, "deploy").detail).toMatch(
      /^The organization has 25 instances that are not destroyed, and the limit is 25;/,
    );
  });

  it("puts the prefix first and the severity asked for", () => {
    expect(
      refusalDiagnostic("ORG_MISMATCH", {}, "read", { prefix: "Before:", severity: "warning" }),
    ).toMatchObject({
      severity: "warning",
      detail: expect.stringMatching(/^Before: The provider's org_id/),
    });
  });

  it.each([
    ["offer_id", "offer_id"],
    ["template_id", "template_id"],
    ["disk_gb.value", "disk_gb"],
    ["label", "label"],
    ["ssh_key_id", "ssh_key_id"],
    ["env_overrides.2.key", "env"],
    ["name", "name"],
    ["kind", "kind"],
  ])("a VALIDATION_ERROR of field %s is placed on %s", (field, attribute) => {
    expect(refusalDiagnostic("VALIDATION_ERROR", { field }, "deploy").path).toEqual([{ attribute }]);
  });

  it.each([undefined, "", "tail", "constructor"])(
    "a VALIDATION_ERROR of field %j is placed nowhere",
    (field) => {
      expect(refusalDiagnostic("VALIDATION_ERROR", { field }, "deploy").path).toBeUndefined();
    },
  );

  it("places an offer refusal on offer_filter only when the offer was chosen by it", () => {
    expect(refusalDiagnostic("OFFER_UNAVAILABLE", {}, "deploy").path).toEqual([{ attribute: "offer_id" }]);
    expect(
      refusalDiagnostic("OFFER_UNAVAILABLE", {}, "deploy", {
        offerChoice: "filter",
        attributes: ["offer_id"],
      }).path,
    ).toBeUndefined();
    expect(refusalDiagnostic("DISK_TOO_LARGE", {}, "deploy", { offerChoice: "filter" }).path).toEqual([
      { attribute: "disk_gb" },
    ]);
  });

  it("attributeOfCode names the attribute of a code, and none for an unknown one", () => {
    expect(attributeOfCode("INVALID_STATE")).toBe("desired_status");
    expect(attributeOfCode("TEMPLATE_NOT_FOUND")).toBe("template_id");
    expect(attributeOfCode("INSTANCE_LIMIT_REACHED")).toBeUndefined();
    expect(attributeOfCode("NEW_CODE")).toBeUndefined();
  });
});
