import {
  AmbiguousRequestError,
  ApiError,
  InstanceErrorStateError,
  NetworkError,
  RequestAbortedError,
  ResponseValidationError,
  TimeoutError,
  WaitTimeoutError,
} from "../api/errors";
import type { Instance } from "../api/schemas";
import { apiError, instance } from "../testing/refusals";
import { errorToDiagnostic, instanceErrorDiagnostic } from "./refusals";

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
