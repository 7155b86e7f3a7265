// What the refusal tests share: an API refusal as the client raises it, the instance attributes a
// refusal may point at, and an instance in error.
import { ApiError, type ApiErrorInit } from "../api/errors";
import type { Instance } from "../api/schemas";

export const INSTANCE_ATTRS = [
  "offer_id",
  "template_id",
  "disk_gb",
  "label",
  "ssh_key_id",
  "env",
  "desired_status",
];

export function apiError(init: Partial<ApiErrorInit> & { code: string; status: number }): ApiError {
  return new ApiError({ message: "refused", endpoint: "POST /v1/instances", requestId: "req-1", ...init });
}

export const instance = {
  id: "i-1",
  status: "error",
  error_code: "provision_failed",
  error_message: "The host could not provision the workload",
} as unknown as Instance;
