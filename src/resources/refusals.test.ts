import {
  AmbiguousRequestError,
  ApiError,
  type ApiErrorInit,
  InstanceErrorStateError,
  NetworkError,
  RequestAbortedError,
  ResponseValidationError,
  TimeoutError,
  WaitTimeoutError,
} from "../api/errors";
import type { Instance } from "../api/schemas";
import {
  attributeOfCode,
  EXPLAINED_CODES,
  errorToDiagnostic,
  formatTime,
  formatYen,
  instanceErrorDiagnostic,
  refusalDiagnostic,
} from "./refusals";

const INSTANCE_ATTRS = ["offer_id", "template_id", "disk_gb", "label", "ssh_key_id", "env", "desired_status"];

function apiError(init: Partial<ApiErrorInit> & { code: string; status: number }): ApiError {
  return new ApiError({ message: "refused", endpoint: "POST /v1/instances", requestId: "req-1", ...init });
}

describe("formatYen", () => {
  it.each([
    [0, "¥0.00"],
    [2_500_000, "¥2.50"],
    [1_234_567, "¥1.234567"],
    [-35_000_000, "-¥35.00"],
    [1_000_000_000_000, "¥1,000,000.00"],
  ])("%d micro is %s", (micro, text) => {
    expect(formatYen(micro)).toBe(text);
  });
});

describe("formatTime", () => {
  it("renders UTC without milliseconds", () => {
    expect(formatTime("2026-11-22T08:00:00.000Z")).toBe("2026-11-22 08:00:00 UTC");
    expect(formatTime(null)).toBe("an unknown time");
  });
});

describe("refusal catalogue", () => {
  const contractCodes = [
    // 7.1
    "TOKEN_INVALID",
    "ADMIN_REQUIRED",
    "ORG_MISMATCH",
    "API_KEY_NOT_FOUND",
    "INSTANCE_NOT_FOUND",
    "INVALID_STATE",
    "INSUFFICIENT_BALANCE",
    // 7.2
    "OFFER_UNAVAILABLE",
    "MACHINE_IN_MAINTENANCE",
    "DISK_TOO_LARGE",
    "MACHINE_DISK_EXHAUSTED",
    "TEMPLATE_NOT_FOUND",
    "TEMPLATE_COMING_SOON",
    "OFFER_NOT_VM_CAPABLE",
    "TEMPLATE_CUDA_TOO_NEW",
    "TEMPLATE_ARCH_UNSUPPORTED",
    "TEMPLATE_REQUIRES_OWNER",
    "OFFER_NOT_PINNABLE",
    "SSH_KEY_NOT_FOUND",
    "INSTANCE_LIMIT_REACHED",
    // 7.3
    "HOST_UNREACHABLE",
    "START_REFUSED",
    "START_UNAVAILABLE",
    "CAPACITY_UNAVAILABLE",
  ];

  it("explains every code of contract 7.1-7.3", () => {
    for (const code of contractCodes) expect(EXPLAINED_CODES).toContain(code);
  });

  it.each(contractCodes)("%s: summary starts with the code, detail is words", (code) => {
    const d = errorToDiagnostic(apiError({ code, status: 409 }), "deploy", INSTANCE_ATTRS);
    expect(d.severity).toBe("error");
    expect(d.summary.startsWith(`${code}: `)).toBe(true);
    expect(d.detail.length).toBeGreaterThan(40);
    expect(d.detail).toContain("request req-1");
  });

  it.each([
    ["OFFER_UNAVAILABLE", "offer_id"],
    ["MACHINE_IN_MAINTENANCE", "offer_id"],
    ["DISK_TOO_LARGE", "disk_gb"],
    ["MACHINE_DISK_EXHAUSTED", "disk_gb"],
    ["TEMPLATE_NOT_FOUND", "template_id"],
    ["TEMPLATE_COMING_SOON", "template_id"],
    ["OFFER_NOT_VM_CAPABLE", "offer_id"],
    ["TEMPLATE_CUDA_TOO_NEW", "template_id"],
    ["TEMPLATE_ARCH_UNSUPPORTED", "template_id"],
    ["TEMPLATE_REQUIRES_OWNER", "template_id"],
    ["OFFER_NOT_PINNABLE", "offer_id"],
    ["SSH_KEY_NOT_FOUND", "ssh_key_id"],
    ["INVALID_STATE", "desired_status"],
    ["HOST_UNREACHABLE", "desired_status"],
    ["START_REFUSED", "desired_status"],
    ["START_UNAVAILABLE", "desired_status"],
    ["CAPACITY_UNAVAILABLE", "desired_status"],
  ])("%s points at %s", (code, attribute) => {
    const d = errorToDiagnostic(apiError({ code, status: 409 }), "deploy", INSTANCE_ATTRS);
    expect(d.path).toEqual([{ attribute }]);
  });

  it.each(["INSUFFICIENT_BALANCE", "INSTANCE_LIMIT_REACHED", "TOKEN_INVALID", "ORG_MISMATCH"])(
    "%s points at no attribute",
    (code) => {
      expect(
        errorToDiagnostic(apiError({ code, status: 409 }), "deploy", INSTANCE_ATTRS).path,
      ).toBeUndefined();
    },
  );

  it.each(["OFFER_UNAVAILABLE", "MACHINE_IN_MAINTENANCE", "OFFER_NOT_VM_CAPABLE", "OFFER_NOT_PINNABLE"])(
    "%s of an offer chosen by offer_filter is placed on offer_filter and advises on the filter",
    (code) => {
      const attrs = [...INSTANCE_ATTRS, "offer_filter"];
      const d = errorToDiagnostic(apiError({ code, status: 409 }), "deploy", attrs, "filter");
      expect(d.path).toEqual([{ attribute: "offer_filter" }]);
      expect(d.detail).toContain("offer_filter moves on to the next matching offer");
      expect(d.detail).not.toMatch(/offer_id|Choose a(n| current| VM-capable)? offer/);
    },
  );

  it.each(["DISK_TOO_LARGE", "MACHINE_DISK_EXHAUSTED"])(
    "%s of an offer chosen by offer_filter stays on disk_gb and advises loosening the filter",
    (code) => {
      const d = errorToDiagnostic(apiError({ code, status: 409 }), "deploy", INSTANCE_ATTRS, "filter");
      expect(d.path).toEqual([{ attribute: "disk_gb" }]);
      expect(d.detail).toContain("loosen offer_filter so that offers on");
    },
  );

  it("does not place a code on an attribute the resource lacks", () => {
    const d = errorToDiagnostic(apiError({ code: "DISK_TOO_LARGE", status: 422 }), "deploy", [
      "name",
      "kind",
    ]);
    expect(d.path).toBeUndefined();
  });

  it("uses the carried fields in words", () => {
    const balance = errorToDiagnostic(
      apiError({
        code: "INSUFFICIENT_BALANCE",
        status: 402,
        balance_micro: 1_000_000,
        required_micro: 3_500_000,
      }),
      "deploy",
    );
    expect(balance.detail).toContain("¥1.00");
    expect(balance.detail).toContain("¥3.50");
    expect(balance.detail).toContain("top up at least ¥2.50");

    const disk = errorToDiagnostic(
      apiError({ code: "DISK_TOO_LARGE", status: 422, max_disk_gb: 500 }),
      "deploy",
    );
    expect(disk.detail).toContain("500 GB");
    expect(disk.detail).toContain("at most 500");

    const exhausted = errorToDiagnostic(
      apiError({
        code: "MACHINE_DISK_EXHAUSTED",
        status: 409,
        available_disk_gb: 120,
        requested_disk_gb: 400,
      }),
      "deploy",
    );
    expect(exhausted.detail).toContain("400 GB were requested");
    expect(exhausted.detail).toContain("only 120 GB left");

    const maintenance = errorToDiagnostic(
      apiError({ code: "MACHINE_IN_MAINTENANCE", status: 409, next_maintenance: "2026-11-23T01:30:00.000Z" }),
      "deploy",
    );
    expect(maintenance.detail).toContain("2026-11-23 01:30:00 UTC");

    const limit = errorToDiagnostic(
      apiError({ code: "INSTANCE_LIMIT_REACHED", status: 409, limit: 25 }),
      "deploy",
    );
    // The refusal carries the limit, not a count: the message claims none.
    expect(limit.detail).toContain("has reached its limit of 25 instances that are not destroyed");
    const counted = errorToDiagnostic(
      apiError({ code: "INSTANCE_LIMIT_REACHED", status: 409, limit: 25 }),
      "deploy",
      undefined,
      "pinned",
      { count: 27 },
    );
    expect(counted.detail).toContain(
      "The organization has 27 instances that are not destroyed, and the limit is 25",
    );
  });

  it("names the credential needed for ADMIN_REQUIRED on API keys", () => {
    const d = errorToDiagnostic(apiError({ code: "ADMIN_REQUIRED", status: 403 }), "create_key", [
      "name",
      "kind",
    ]);
    expect(d.summary).toMatch(/^ADMIN_REQUIRED: /);
    expect(d.detail).toMatch(/signed-in session/);
    expect(d.detail).toMatch(/admin/);
  });

  it("places a VALIDATION_ERROR on the field it names", () => {
    const d = errorToDiagnostic(
      apiError({ code: "VALIDATION_ERROR", status: 422, field: "env_overrides.3.value", limit: 4096 }),
      "deploy",
      INSTANCE_ATTRS,
    );
    expect(d.path).toEqual([{ attribute: "env" }]);
    expect(d.detail).toContain("4096");
  });

  it("keeps unknown codes, summary first", () => {
    const d = errorToDiagnostic(
      apiError({ code: "SOMETHING_NEW", status: 409, message: "a new refusal" }),
      "deploy",
    );
    expect(d.summary).toBe("SOMETHING_NEW: a new refusal");
  });

  it("can build a warning for a plan-time finding", () => {
    const d = refusalDiagnostic("INSTANCE_LIMIT_REACHED", { limit: 25 }, "plan_check", {
      severity: "warning",
    });
    expect(d.severity).toBe("warning");
    expect(d.summary).toMatch(/^INSTANCE_LIMIT_REACHED: /);
  });
});

const instance = {
  id: "i-1",
  status: "error",
  error_code: "provision_failed",
  error_message: "The host could not provision the workload",
} as unknown as Instance;

describe("other errors", () => {
  it("explains an instance in error with its code and message", () => {
    const d = errorToDiagnostic(new InstanceErrorStateError(instance, ["running"]), "deploy");
    expect(d.summary).toBe("provision_failed: instance i-1 is error");
    expect(d.detail).toContain("could not provision");
    expect(d.detail).toContain("tainted");
  });

  it("explains a wait that timed out", () => {
    const d = errorToDiagnostic(new WaitTimeoutError("i-1", ["running"], 1000, undefined), "deploy");
    expect(d.summary).toMatch(/Timed out/);
  });

  it("explains a lost answer", () => {
    const d = errorToDiagnostic(
      new AmbiguousRequestError("POST /v1/instances", "connection", "socket hang up"),
      "deploy",
    );
    expect(d.summary).toMatch(/lost/);
  });
});

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

describe("errorToDiagnostic beyond API refusals", () => {
  it("names the operation and the HTTP status, with or without a request id", () => {
    const d = errorToDiagnostic(
      new ApiError({ message: "m", endpoint: "GET /v1/me", status: 409, code: "INVALID_STATE" }),
      "stop",
    );
    expect(d.detail).toMatch(/^Stopping the instance failed\. /);
    expect(d.detail).toMatch(/ \(HTTP 409\)$/);
    expect(errorToDiagnostic(apiError({ code: "X", status: 400 }), "import").detail).toMatch(
      /^Importing the object failed\. .* \(HTTP 400, request req-1\)$/,
    );
  });

  it.each([
    ["deploy", "Deploying the instance failed."],
    ["start", "Starting the instance failed."],
    ["destroy", "Destroying the instance failed."],
    ["read", "Reading the object failed."],
    ["create_key", "Creating the API key failed."],
    ["delete_key", "Revoking the API key failed."],
  ] as const)("an API error of %s starts with %j", (op, words) => {
    expect(errorToDiagnostic(apiError({ code: "X", status: 400 }), op).detail.startsWith(`${words} `)).toBe(
      true,
    );
  });

  it("an interruption, however raised", () => {
    for (const err of [
      new RequestAbortedError("GET /v1/me"),
      Object.assign(new Error("x"), { name: "AbortError" }),
    ]) {
      expect(errorToDiagnostic(err, "deploy")).toEqual({
        severity: "error",
        summary: "Interrupted",
        detail: "The operation was cancelled before it finished; the state records what is known so far.",
      });
    }
  });

  it("an API that cannot be reached or did not answer names the address and what to check", () => {
    const refused = new NetworkError(
      "GET /v1/me",
      "cannot connect to http://127.0.0.1:9 (base_url): ECONNREFUSED",
    );
    expect(errorToDiagnostic(refused, "read")).toEqual({
      severity: "error",
      summary: "Cannot reach the gpurental API",
      detail:
        "Reading the object failed. GET /v1/me: cannot connect to http://127.0.0.1:9 (base_url): ECONNREFUSED. The request was retried until the operation's time limit. Check the provider's base_url (or GPURENTAL_BASE_URL) and that the API is reachable from this machine.",
    });
    expect(errorToDiagnostic(refused, "plan_check").detail).toMatch(/^GET \/v1\/me: cannot connect/);
    const silent = new TimeoutError("GET /v1/me", 30_000, "request", "http://127.0.0.1:9 (base_url)");
    expect(errorToDiagnostic(silent, "deploy")).toMatchObject({
      summary: "The gpurental API did not answer",
      detail: expect.stringMatching(
        /^Deploying the instance failed\. GET \/v1\/me: no response from http:\/\/127\.0\.0\.1:9 \(base_url\) within 30000 ms\. /,
      ),
    });
  });

  it("another client error, and anything else thrown", () => {
    const unreadable = new ResponseValidationError("GET /v1/me", 200, [
      { path: "id", message: "expected string" },
    ]);
    expect(errorToDiagnostic(unreadable, "read")).toMatchObject({
      summary: "Reading the object failed.",
      detail: unreadable.message,
    });
    expect(errorToDiagnostic(unreadable, "plan_check").summary).toBe("The API call failed.");
    // A whole call that ran out of time is not an unreachable API.
    expect(errorToDiagnostic(new TimeoutError("GET /v1/me", 1000, "deadline"), "read").summary).toBe(
      "Reading the object failed.",
    );
    expect(errorToDiagnostic(new TypeError("boom"), "destroy")).toEqual({
      severity: "error",
      summary: "Destroying the instance failed.",
      detail: "boom",
    });
    expect(errorToDiagnostic("a string", "plan_check")).toEqual({
      severity: "error",
      summary: "Unexpected error",
      detail: "a string",
    });
  });

  it("a wait that timed out says the last status when one was seen", () => {
    const seen = errorToDiagnostic(
      new WaitTimeoutError("i-1", ["running", "stopped"], 1000, {
        status: "creating",
      } as unknown as Instance),
      "deploy",
    );
    expect(seen.summary).toBe("Timed out waiting for the instance to become running or stopped");
    expect(seen.detail).toContain("with its last known status (creating); run terraform apply again");
    const unseen = errorToDiagnostic(new WaitTimeoutError("i-1", ["running"], 1000, undefined), "deploy");
    expect(unseen.detail).toContain("with its last known status; run terraform apply again");
  });

  it("a lost answer says nothing was recorded", () => {
    const d = errorToDiagnostic(
      new AmbiguousRequestError("POST /v1/instances", "connection", "reset"),
      "deploy",
    );
    expect(d).toMatchObject({ severity: "error", summary: "The API's answer was lost" });
    expect(d.detail).toMatch(/Nothing was recorded in the state for it; run terraform apply again/);
  });
});

describe("instanceErrorDiagnostic", () => {
  it.each([
    ["provision_failed", "marked tainted"],
    ["workload_completed", "exited on its own"],
    ["workload_gone", "gone from its host"],
    ["stop_timed_out", "its GPUs are billed"],
    ["start_timed_out", "retry the start"],
    ["gpus_unavailable", "this deletes the disk"],
    ["something_new", "Check the instance's logs (data source gpurental_instance_logs)."],
    ["constructor", "Check the instance's logs (data source gpurental_instance_logs)."],
  ])("%s: %s", (code, words) => {
    const d = instanceErrorDiagnostic(
      { id: "i-1", status: "error", error_code: code, error_message: null } as unknown as Instance,
      "start",
    );
    expect(d.summary).toBe(`${code}: instance i-1 is error`);
    expect(d.detail).toContain(words);
    expect(d.detail).toMatch(
      new RegExp(`^Starting the instance failed\\. The instance's error_code is ${code}\\. [A-Z]`),
    );
  });

  it("without an error_code it names the status, and quotes the platform's message", () => {
    const d = instanceErrorDiagnostic(
      {
        id: "i-2",
        status: "stopped",
        error_code: null,
        error_message: "The host said no",
      } as unknown as Instance,
      "plan_check",
    );
    expect(d.summary).toBe("stopped: instance i-2 is stopped");
    expect(d.detail).toBe(
      "The instance's error_code is not set. The platform said: The host said no. Check the instance's logs (data source gpurental_instance_logs).",
    );
  });
});

describe("formatYen and formatTime at their edges", () => {
  it.each([
    [500_000, "¥0.50"],
    [10_000, "¥0.01"],
    [1_000_001, "¥1.000001"],
    [-1, "-¥0.000001"],
    [123_456_789_000_000, "¥123,456,789.00"],
  ])("%d micro is %s", (micro, text) => {
    expect(formatYen(micro)).toBe(text);
  });

  it("keeps text that is no time, and says so when there is none", () => {
    expect(formatTime("next tuesday")).toBe("next tuesday");
    expect(formatTime(undefined)).toBe("an unknown time");
    expect(formatTime("")).toBe("an unknown time");
    expect(formatTime("2026-01-02T03:04:05.678Z")).toBe("2026-01-02 03:04:05 UTC");
  });
});

const CATALOGUE_TABLE: [code: string, title: string, attribute: string | undefined][] = [
  ["TOKEN_INVALID", "the credential was not accepted", undefined],
  ["ADMIN_REQUIRED", "this action needs an admin", undefined],
  ["ORG_MISMATCH", "org_id names another organization than the credential's", undefined],
  ["API_KEY_NOT_FOUND", "no such API key", undefined],
  ["INSTANCE_NOT_FOUND", "no such instance", undefined],
  ["INVALID_STATE", "the instance's status does not allow this action", "desired_status"],
  ["INSUFFICIENT_BALANCE", "the balance does not cover one hour of the organization's burn", undefined],
  ["OFFER_UNAVAILABLE", "the offer cannot be rented", "offer_id"],
  ["MACHINE_IN_MAINTENANCE", "the offer's machine goes into maintenance too soon", "offer_id"],
  ["DISK_TOO_LARGE", "disk_gb is larger than the machine's disk", "disk_gb"],
  ["MACHINE_DISK_EXHAUSTED", "the machine has not enough disk left", "disk_gb"],
  ["TEMPLATE_NOT_FOUND", "the template is missing, not visible, or inactive", "template_id"],
  ["TEMPLATE_COMING_SOON", "the template is marked coming soon", "template_id"],
  ["OFFER_NOT_VM_CAPABLE", "the offer's machine cannot run the vm template", "offer_id"],
  ["TEMPLATE_CUDA_TOO_NEW", "the machine's CUDA is newer than the template supports", "template_id"],
  ["TEMPLATE_ARCH_UNSUPPORTED", "the template's architecture is not supported", "template_id"],
  ["TEMPLATE_REQUIRES_OWNER", "only the template's owner can deploy it", "template_id"],
  ["OFFER_NOT_PINNABLE", "the offer's machine is not registered with the fleet", "offer_id"],
  ["SSH_KEY_NOT_FOUND", "the SSH key cannot be attached by this credential", "ssh_key_id"],
  ["INSTANCE_LIMIT_REACHED", "the organization has reached its instance limit", undefined],
  ["HOST_UNREACHABLE", "the instance's machine is not connected", "desired_status"],
  ["START_REFUSED", "the host refused to start the instance", "desired_status"],
  ["START_UNAVAILABLE", "the start cannot be completed right now", "desired_status"],
  ["CAPACITY_UNAVAILABLE", "the instance's GPUs are in use or out of service", "desired_status"],
  ["VALIDATION_ERROR", "the API rejected a value", undefined],
  ["RATE_LIMITED", "the API is rate limiting requests", undefined],
  ["SERVICE_UNAVAILABLE", "the API is unavailable", undefined],
];

// The catalogue pinned code by code: its titles and attributes are built once at module load, so
// the mutation run ignores them (stryker.config.js, group refusals) and this table holds them.
describe("the catalogue, code by code", () => {
  it("explains exactly these codes", () => {
    expect([...EXPLAINED_CODES].sort()).toEqual(CATALOGUE_TABLE.map(([code]) => code).sort());
  });

  it.each(CATALOGUE_TABLE)("%s: %s, on %s", (code, title, attribute) => {
    const d = refusalDiagnostic(code, {}, "deploy");
    expect(d.summary).toBe(`${code}: ${title}`);
    expect(attributeOfCode(code)).toBe(attribute);
    expect(d.path).toEqual(code === "VALIDATION_ERROR" || !attribute ? undefined : [{ attribute }]);
  });

  it("gives each hint in full where it applies", () => {
    expect(refusalDiagnostic("OFFER_UNAVAILABLE", {}, "deploy").detail).toContain(
      "The gpurental_offers data source lists the offers that can be rented now; an offer_filter instead of offer_id lets the provider choose one when the instance is created, and move on to the next when one is taken.",
    );
    expect(refusalDiagnostic("OFFER_UNAVAILABLE", {}, "deploy", { offerChoice: "filter" }).detail).toContain(
      "offer_filter moves on to the next matching offer when one is refused at deploy time; to widen the choice, loosen it (another region, a higher max_price_per_hour_micro). The gpurental_offers data source shows the market.",
    );
    expect(refusalDiagnostic("TEMPLATE_COMING_SOON", {}, "deploy").detail).toBe(
      "The template cannot be deployed yet. Choose another template_id. The gpurental_templates data source lists the templates this organization can use.",
    );
  });
});
