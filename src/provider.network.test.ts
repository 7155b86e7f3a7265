import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createHarness } from "./framework/testing";
import { createProvider } from "./provider";
import { useFakeBackend } from "./testing/fake-backend";
import { startTestProxy, TEST_API_HOST, type TestProxy } from "./testing/test-proxy";

// The provider's network settings: the proxy and CA arguments and their environment fallbacks,
// read from each launch's own environment, as a resident process's sessions get them.

const fake = useFakeBackend();
let dir: string;
let proxies: TestProxy[] = [];
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "gpurental-provider-net-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(async () => {
  await Promise.all(proxies.map((p) => p.kill()));
  proxies = [];
});

function harness(env: NodeJS.ProcessEnv) {
  return createHarness(
    createProvider({ cwd: dir, env, clientOptions: { retry: { maxAttempts: 2, baseDelayMs: 1 } } }),
  );
}
const viaName = () => `http://${TEST_API_HOST}:${new URL(fake.url).port}`;

test("two providers built from different launch environments each use their own proxy", async () => {
  const a = await startTestProxy();
  const b = await startTestProxy();
  proxies.push(a, b);
  const ha = harness({ HTTP_PROXY: a.url });
  const hb = harness({ http_proxy: b.url });
  for (const h of [ha, hb]) {
    expect(await h.configure({ base_url: viaName(), token: fake.creds.admin_session_token })).toEqual([]);
  }
  expect((await ha.readData("gpurental_offers", {})).diags).toEqual([]);
  expect((await hb.readData("gpurental_offers", {})).diags).toEqual([]);
  expect(a.connects.length).toBeGreaterThan(0);
  expect(b.connects.length).toBeGreaterThan(0);
});

test("the provider block's http_proxy and no_proxy override the environment's", async () => {
  const envProxy = await startTestProxy();
  const blockProxy = await startTestProxy();
  proxies.push(envProxy, blockProxy);
  const h = harness({ HTTP_PROXY: envProxy.url });
  const diags = await h.configure({
    base_url: viaName(),
    token: fake.creds.admin_session_token,
    http_proxy: blockProxy.url,
  });
  expect(diags).toEqual([]);
  expect((await h.readData("gpurental_offers", {})).diags).toEqual([]);
  expect(envProxy.connects).toEqual([]);
  expect(blockProxy.connects.length).toBeGreaterThan(0);

  // no_proxy in the block sends the request direct, where the name does not resolve.
  const direct = harness({ HTTP_PROXY: envProxy.url });
  await direct.configure({
    base_url: viaName(),
    token: fake.creds.admin_session_token,
    no_proxy: "gpurental.test",
  });
  const r = await direct.readData("gpurental_offers", {});
  expect(r.diags.map((d) => d.detail).join()).toMatch(/ENOTFOUND|EAI_AGAIN/);
  expect(envProxy.connects).toEqual([]);
});

test("unusable network settings are errors on their argument, and proxy credentials are never shown", async () => {
  const h = harness({});
  const diags = await h.configure({
    base_url: fake.url,
    token: fake.creds.admin_session_token,
    ca_cert_file: join(dir, "missing.pem"),
  });
  expect(diags.map((d) => [d.summary, d.path])).toEqual([
    ["Invalid network setting", [{ attribute: "ca_cert_file" }]],
  ]);
  expect(diags[0]?.detail).toMatch(
    /ca_cert_file in the provider block: the CA file .*missing\.pem cannot be read \(ENOENT\)/,
  );

  const bad = await harness({}).configure({
    base_url: "https://api.example.com",
    token: fake.creds.admin_session_token,
    https_proxy: "socks5://user:hunter2@proxy:1080",
  });
  expect(bad.map((d) => [d.summary, d.path])).toEqual([
    ["Invalid network setting", [{ attribute: "https_proxy" }]],
  ]);
  expect(JSON.stringify(bad)).not.toContain("hunter2");

  const env = await harness({ HTTPS_PROXY: "socks5://p:1080" }).configure({
    base_url: "https://api.example.com",
    token: fake.creds.admin_session_token,
  });
  expect(env.map((d) => d.detail)).toEqual([expect.stringMatching(/^HTTPS_PROXY names a SOCKS proxy/)]);
});
