import {
  AmbiguousRequestError,
  ApiError,
  type ApiErrorInit,
  InstanceErrorStateError,
  WaitTimeoutError,
} from "../api/errors";
import type { Instance } from "../api/schemas";
import { EXPLAINED_CODES, errorToDiagnostic, formatTime, formatYen, refusalDiagnostic } from "./refusals";

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
    expect(limit.detail).toContain("25 instances");
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
