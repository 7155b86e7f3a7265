import { join } from "node:path";
import { useFakeBackend } from "../testing/fake-backend";
import { startTestProxy, TEST_API_HOST } from "../testing/test-proxy";
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
