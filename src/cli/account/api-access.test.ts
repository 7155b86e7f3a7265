import { execFileSync, spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { type FakeBackend, startFakeBackend } from "../../fake-backend";
import { useFakeBackend } from "../../testing/fake-backend";
import { startTestProxy, TEST_API_HOST } from "../../testing/test-proxy";
import { ApiSettingsError, apiAccess } from "./api-access";

// The reading commands (strays, plan-report) reach the API as the provider does: the proxy
// variables and CA files of their own environment.

const fake = useFakeBackend({ workDir: "file" });

test("goes through HTTP_PROXY to a name only the proxy resolves", async () => {
  const proxy = await startTestProxy();
  try {
    const { client } = apiAccess(
      {},
      {
        GPURENTAL_BASE_URL: `http://${TEST_API_HOST}:${new URL(fake.url).port}`,
        GPURENTAL_TOKEN: fake.creds.admin_session_token,
        HTTP_PROXY: proxy.url,
      },
      "test",
    );
    await expect(client.getMe()).resolves.toHaveProperty("organization");
    expect(proxy.connects.length).toBeGreaterThan(0);
  } finally {
    await proxy.kill();
  }
});

test("an unreadable GPURENTAL_CA_CERT_FILE is a settings error naming the variable", () => {
  const env = {
    GPURENTAL_BASE_URL: "https://api.example.com",
    GPURENTAL_TOKEN: fake.creds.admin_session_token,
    GPURENTAL_CA_CERT_FILE: join(fake.workDir, "none.pem"),
  };
  expect(() => apiAccess({}, env, "test")).toThrow(ApiSettingsError);
  expect(() => apiAccess({}, env, "test")).toThrow(
    /GPURENTAL_CA_CERT_FILE: the CA file .*none\.pem cannot be read/,
  );
});

test("a file of a setting is read whole only up to a bound: a device that never ends is refused, a pipe is read", () => {
  const base = { GPURENTAL_BASE_URL: "https://api.example.com" };
  expect(() => apiAccess({ tokenFile: "/dev/zero" }, base, "test")).toThrow(
    "--token-file /dev/zero gives more than 64 KiB: it is no token file",
  );
  expect(() =>
    apiAccess(
      {},
      { ...base, GPURENTAL_TOKEN: fake.creds.admin_session_token, GPURENTAL_CA_CERT_FILE: "/dev/zero" },
      "test",
    ),
  ).toThrow("GPURENTAL_CA_CERT_FILE: the CA file /dev/zero gives more than 16 MiB: it is no CA bundle");
  // A token given through a pipe (`--token-file <(vault read …)`), as /dev/stdin of a child is.
  const fifo = join(fake.workDir, "token.fifo");
  execFileSync("mkfifo", [fifo]);
  const writer = spawn("sh", ["-c", `printf '%s\\n' "$T" > ${fifo}`], {
    env: { ...process.env, T: fake.creds.admin_session_token },
  });
  try {
    expect(apiAccess({ tokenFile: fifo }, base, "test").credential).toBe("session");
  } finally {
    writer.kill();
  }
});

describe("a private CA", () => {
  let https: FakeBackend;
  let caFile: string;
  beforeAll(async () => {
    https = await startFakeBackend({ tls: true, seed: "demo" });
    caFile = join(fake.workDir, "ca.pem");
    writeFileSync(caFile, https.caCertPem ?? "");
  });
  afterAll(() => https.close());
  const env = () => ({
    GPURENTAL_BASE_URL: https.url,
    GPURENTAL_TOKEN: https.credentials?.admin_session_token,
  });

  it("is trusted from --ca-cert-file as from GPURENTAL_CA_CERT_FILE", async () => {
    await expect(apiAccess({ caCertFile: caFile }, env(), "test").client.getMe()).resolves.toHaveProperty(
      "organization",
    );
    await expect(
      apiAccess({}, { ...env(), GPURENTAL_CA_CERT_FILE: caFile }, "test").client.getMe(),
    ).resolves.toHaveProperty("organization");
    await expect(apiAccess({}, env(), "test").client.getMe()).rejects.toThrow(/certificate/i);
  });

  it("takes the flag over the variable, and an unreadable one names the flag", () => {
    const none = join(fake.workDir, "none.pem");
    expect(() =>
      apiAccess({ caCertFile: none }, { ...env(), GPURENTAL_CA_CERT_FILE: caFile }, "test"),
    ).toThrow(/--ca-cert-file: the CA file .*none\.pem cannot be read/);
    expect(() =>
      apiAccess({ caCertFile: caFile }, { ...env(), GPURENTAL_CA_CERT_FILE: none }, "test"),
    ).not.toThrow();
    expect(() => apiAccess({ caCertFile: " " }, env(), "test")).toThrow("--ca-cert-file must not be empty");
  });
});

test("a refusal of the client's names the flag or the variable the address came from, never the client's field", () => {
  const token = fake.creds.admin_session_token;
  const address = "http://api.example.com/?token=s3cr3tvalue";
  const flag = () => apiAccess({ baseUrl: address }, { GPURENTAL_TOKEN: token }, "test");
  expect(flag).toThrow(ApiSettingsError);
  expect(flag).toThrow(
    /^--base-url must not have a query or fragment, got "http:\/\/api\.example\.com\/\?token=/,
  );
  const variable = () => apiAccess({}, { GPURENTAL_BASE_URL: address, GPURENTAL_TOKEN: token }, "test");
  expect(variable).toThrow(/^GPURENTAL_BASE_URL must not have a query or fragment/);
  for (const run of [flag, variable]) {
    try {
      run();
    } catch (err) {
      expect((err as Error).message).not.toContain("baseUrl");
      expect((err as Error).message).not.toContain("s3cr3tvalue");
    }
  }
});
