import type { GpurentalClient } from "../api/client";
import { ApiError } from "../api/errors";
import { redactText } from "../api/redact";
import { useFakeBackend } from "../testing/fake-backend";

// The 401 TOKEN_INVALID messages pass through the project's credential masking (src/api/redact.ts)
// wherever they are shown: the client's errors, the provider's diagnostics and logs. They must read
// the same afterwards, nothing of their own words taken for a credential.

const fake = useFakeBackend();

function client(token: string): GpurentalClient {
  return fake.client({ token, retry: { maxAttempts: 1 } });
}

/** The error of a GET /v1/instances with these headers, as the fake answers it. */
async function refusal(
  headers: Record<string, string>,
): Promise<{ status: number; code: string; message: string }> {
  const res = await fetch(`${fake.url}/v1/instances`, { headers });
  const body = (await res.json()) as { error: { code: string; message: string } };
  return { status: res.status, code: body.error.code, message: body.error.message };
}

describe("401 TOKEN_INVALID", () => {
  test("a missing or malformed Authorization header is refused in words that survive masking", async () => {
    const headerSets: Record<string, string>[] = [
      {},
      { authorization: "Basic dXNlcjpwYXNz" },
      { authorization: "Bearer" },
    ];
    for (const headers of headerSets) {
      const a = await refusal(headers);
      expect(a).toEqual({
        status: 401,
        code: "TOKEN_INVALID",
        message:
          "Missing or malformed Authorization header: it must hold the scheme Bearer, a space and the token",
      });
      expect(redactText(a.message)).toBe(a.message);
      expect(redactText(JSON.stringify(a))).toBe(JSON.stringify(a));
    }
  });

  test("an unknown or revoked token is refused in words that survive masking, also in the client's error", async () => {
    const admin = client(fake.creds.admin_session_token);
    const { key, secret } = await admin.createApiKey({ name: "revoked" });
    await admin.revokeApiKey(key.id);
    for (const token of ["gps_0123456789abcdef0123", `gpr_${"0".repeat(48)}`, secret]) {
      const a = await refusal({ authorization: `Bearer ${token}` });
      expect(a).toEqual({
        status: 401,
        code: "TOKEN_INVALID",
        message: "The token is missing, unknown or revoked",
      });
      expect(redactText(JSON.stringify(a))).toBe(JSON.stringify(a));
      const err = await client(token)
        .listInstances()
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ApiError);
      expect((err as ApiError).message).toContain(
        ": 401 TOKEN_INVALID: The token is missing, unknown or revoked",
      );
      expect((err as ApiError).message).not.toContain("[REDACTED]");
    }
  });
});
