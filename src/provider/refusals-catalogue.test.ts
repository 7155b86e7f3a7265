import { apiError, INSTANCE_ATTRS } from "../testing/refusals";
import {
  attributeOfCode,
  EXPLAINED_CODES,
  errorToDiagnostic,
  formatTime,
  formatYen,
  refusalDiagnostic,
} from "./refusals";

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
