// What the package offers besides the constructs, the same under either CDK: the typed /v1 client
// and the embedded fake backend. Neither loads a CDK library.

import type { FakeBackend, FakeBackendOptions } from "./fake-backend";

export * as api from "./api";
export { GpurentalClient } from "./api/client";
export { ApiError, GpurentalError } from "./api/errors";
export type { DemoCredentials, FakeBackend, FakeBackendOptions } from "./fake-backend";
export { version } from "./version";

/** Starts the embedded fake backend (loaded on first use, so CDK apps never load its HTTP server). */
export async function startFakeBackend(options?: FakeBackendOptions): Promise<FakeBackend> {
  const mod = await import("./fake-backend");
  return mod.startFakeBackend(options);
}
