import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type FakeBackend, startFakeBackend } from "../fake-backend";
import { startTestProxy, TEST_API_HOST, type TestProxy } from "../testing/test-proxy";
import { createTestPki, issueCertificate } from "../tls/issue";
import { type ClientOptions, GpurentalClient, type LogLevel } from "./client";
import { ConnectionSetupError, NetworkError } from "./errors";
import { FIRST_CONTACT_BUDGET_MS } from "./network/transport";

// The client over real networks: the fake backend over HTTPS with a private CA, a real proxy
// (CONNECT tunnels, 407, refusals, killed), and each way a connection can be set up wrong, with
// the error that names the host and the setting to change, not retried; and the fail-fast rule for
// a client that has never reached the API.

let dir: string;
let https: FakeBackend;
let caFile: string;
let logs: { level: LogLevel; msg: string; fields: Record<string, unknown> }[];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "gpurental-net-"));
  https = await startFakeBackend({ tls: true, tlsNames: [TEST_API_HOST], seed: "demo" });
  caFile = join(dir, "ca.pem");
  writeFileSync(caFile, https.caCertPem!);
});
afterAll(async () => {
  await https.close();
  rmSync(dir, { recursive: true, force: true });
});
beforeEach(() => {
  logs = [];
});

const token = () => https.credentials!.admin_session_token;

function client(extra: Partial<ClientOptions> & { env?: NodeJS.ProcessEnv } = {}): GpurentalClient {
  const { env, ...rest } = extra;
  return new GpurentalClient({
    baseUrl: https.url,
    token: token(),
    baseUrlSource: "base_url in the provider block",
    network: { env: env ?? {}, caCertFile: { value: caFile, source: "ca_cert_file in the provider block" } },
    retry: { baseDelayMs: 5, maxDelayMs: 20 },
    logger: (level, msg, fields) => logs.push({ level, msg, fields }),
    ...rest,
  });
}

const attempts = () => logs.filter((l) => l.msg === "request").length;

async function failure(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (e) {
    return e as Error;
  }
  throw new Error("expected the call to fail");
}

describe("trust", () => {
  it("talks HTTPS to the fake backend with ca_cert_file", async () => {
    await expect(client().getMe()).resolves.toHaveProperty("organization");
  });

  it.each([
    ["SSL_CERT_FILE", () => ({ SSL_CERT_FILE: caFile })],
    ["SSL_CERT_DIR", () => ({ SSL_CERT_DIR: `/nonexistent:${dir}` })],
    ["NODE_EXTRA_CA_CERTS", () => ({ NODE_EXTRA_CA_CERTS: caFile })],
  ])("trusts a CA given by %s, read from the client's own environment", async (_name, env) => {
    const c = client({ network: { env: env() } });
    await expect(c.getMe()).resolves.toHaveProperty("organization");
  });

  it("reads a CA file again once it was replaced (a resident process outlives it)", async () => {
    const other = await startFakeBackend({ tls: true, seed: "demo" });
    try {
      const file = join(dir, "replaced.pem");
      writeFileSync(file, https.caCertPem!);
      const opts = (url: string, t: string) => ({
        baseUrl: url,
        token: t,
        network: { env: {}, caCertFile: { value: file, source: "ca_cert_file" } },
      });
      await new GpurentalClient(opts(https.url, token())).getMe();
      await new Promise((r) => setTimeout(r, 20));
      writeFileSync(file, other.caCertPem!);
      const c = new GpurentalClient(opts(other.url, other.credentials!.admin_session_token));
      await expect(c.getMe()).resolves.toHaveProperty("organization");
    } finally {
      await other.close();
    }
  });

  it("refuses an unknown CA at once, naming the host and the settings", async () => {
    const err = await failure(client({ network: { env: {} } }).getMe());
    expect(err).toBeInstanceOf(ConnectionSetupError);
    expect((err as ConnectionSetupError).problem).toBe("unknown_ca");
    expect(err.message).toMatch(
      /certificate of 127\.0\.0\.1 is not signed by an authority this machine trusts/,
    );
    expect(err.message).toContain("ca_cert_file (GPURENTAL_CA_CERT_FILE) or SSL_CERT_FILE");
    expect(attempts()).toBe(1);
  });

  it("rejects a ca_cert_file that holds no certificate when the client is made", () => {
    const bad = join(dir, "bad.pem");
    writeFileSync(bad, "not a certificate\n");
    expect(() => client({ network: { caCertFile: { value: bad, source: "ca_cert_file" } } })).toThrow(
      /ca_cert_file: .*bad\.pem holds no PEM certificate/,
    );
  });
});

describe("certificates and schemes that cannot work", () => {
  const pki = createTestPki();
  let own: FakeBackend[] = [];
  afterEach(async () => {
    await Promise.all(own.map((b) => b.close()));
    own = [];
  });
  const serve = async (cert: { certPem: string; keyPem: string }) => {
    const b = await startFakeBackend({ tls: cert, seed: "demo" });
    own.push(b);
    const ca = join(dir, `own-ca-${own.length}.pem`);
    writeFileSync(ca, pki.ca.certPem);
    return { url: b.url, ca };
  };

  it("names a host name mismatch", async () => {
    const cert = issueCertificate({ commonName: "other.test", dnsNames: ["other.test"], issuer: pki.ca });
    const { url, ca } = await serve(cert);
    const err = await failure(client({ baseUrl: url, network: { env: { SSL_CERT_FILE: ca } } }).getMe());
    expect((err as ConnectionSetupError).problem).toBe("host_mismatch");
    expect(err.message).toMatch(
      /certificate of 127\.0\.0\.1 is not valid for that name .*base_url in the provider block/,
    );
    expect(attempts()).toBe(1);
  });

  it("names an expired certificate", async () => {
    const cert = issueCertificate({
      commonName: "localhost",
      ipAddresses: ["127.0.0.1"],
      issuer: pki.ca,
      notBefore: new Date(Date.now() - 3 * 86_400_000),
      notAfter: new Date(Date.now() - 86_400_000),
    });
    const { url, ca } = await serve(cert);
    const err = await failure(client({ baseUrl: url, network: { env: { SSL_CERT_FILE: ca } } }).getMe());
    expect((err as ConnectionSetupError).problem).toBe("expired_certificate");
    expect(err.message).toMatch(/certificate of 127\.0\.0\.1 has expired/);
    expect(attempts()).toBe(1);
  });

  it("names http:// sent to a TLS port, even for a deploy (nothing was applied)", async () => {
    const c = client({ baseUrl: https.url.replace("https:", "http:") });
    const err = await failure(c.createSshKey({ name: "k", public_key: "ssh-ed25519 AAAA k" }));
    expect((err as ConnectionSetupError).problem).toBe("http_to_tls_port");
    expect(err.message).toMatch(
      /127\.0\.0\.1:\d+ speaks TLS, but base_url in the provider block says http:\/\/.*Use https:\/\//,
    );
    expect(attempts()).toBe(1);
  });

  it("names https:// sent to a plain-HTTP port", async () => {
    const plain = await startFakeBackend({ seed: "demo" });
    own.push(plain);
    const err = await failure(client({ baseUrl: plain.url.replace("http:", "https:") }).getMe());
    expect((err as ConnectionSetupError).problem).toBe("tls_to_http_port");
    expect(err.message).toMatch(/does not speak TLS .*says https:\/\/ but that port serves plain HTTP/);
    expect(attempts()).toBe(1);
  });
});

describe("proxies", () => {
  let proxy: TestProxy;
  const apiUrl = () => `https://${TEST_API_HOST}:${new URL(https.url).port}`;
  afterEach(async () => {
    await proxy?.kill().catch(() => undefined);
  });

  it("tunnels to a name only the proxy resolves, from HTTPS_PROXY", async () => {
    proxy = await startTestProxy();
    const c = client({
      baseUrl: apiUrl(),
      network: { env: { HTTPS_PROXY: proxy.url }, caCertFile: { value: caFile, source: "ca_cert_file" } },
    });
    await expect(c.getMe()).resolves.toHaveProperty("organization");
    for (let i = 0; i < 6; i++) await c.listOffers();
    // Tunnels are kept alive: a handful of calls opens at most two (undici's pool opens a second).
    expect(proxy.connects.length).toBeLessThanOrEqual(2);
    expect(new Set(proxy.connects)).toEqual(new Set([`${TEST_API_HOST}:${new URL(https.url).port}`]));
  });

  it("goes direct for a NO_PROXY host and for loopback", async () => {
    proxy = await startTestProxy();
    const env = { https_proxy: proxy.url, no_proxy: "example.test" };
    await client({ network: { env, caCertFile: { value: caFile, source: "ca_cert_file" } } }).getMe();
    expect(proxy.connects).toEqual([]);
  });

  it("sends the URL's credentials, and names a 407 without logging them", async () => {
    proxy = await startTestProxy({ credentials: "alice:s3cr%t" });
    const ok = client({
      baseUrl: apiUrl(),
      network: {
        env: { HTTPS_PROXY: `http://alice:s3cr%25t@127.0.0.1:${proxy.port}` },
        caCertFile: { value: caFile, source: "ca_cert_file" },
      },
    });
    await expect(ok.getMe()).resolves.toHaveProperty("organization");
    const bad = client({
      baseUrl: apiUrl(),
      network: {
        env: { HTTPS_PROXY: `http://alice:wrong-pw@127.0.0.1:${proxy.port}` },
        caCertFile: { value: caFile, source: "ca_cert_file" },
      },
    });
    const err = await failure(bad.getMe());
    expect((err as ConnectionSetupError).problem).toBe("proxy_auth_required");
    expect(err.message).toContain(
      `the proxy http://***@127.0.0.1:${proxy.port} (HTTPS_PROXY) refused the credentials in its URL`,
    );
    expect(`${err.message} ${JSON.stringify(logs)}`).not.toMatch(/wrong-pw|s3cr/);
  });

  it("names a proxy that refuses the host, not retried", async () => {
    proxy = await startTestProxy({ deny: [TEST_API_HOST] });
    const c = client({
      baseUrl: apiUrl(),
      network: { env: { HTTPS_PROXY: proxy.url }, caCertFile: { value: caFile, source: "ca_cert_file" } },
    });
    const err = await failure(c.getMe());
    expect((err as ConnectionSetupError).problem).toBe("proxy_refused");
    expect(err.message).toMatch(
      /refused to open a connection to api\.gpurental\.test:\d+ \(HTTP 403 to CONNECT\)/,
    );
    expect(attempts()).toBe(1);
  });

  it("names a proxy that cannot be reached, and keeps trying within the first-contact budget", async () => {
    proxy = await startTestProxy();
    await proxy.kill();
    let clock = 0;
    const c = client({
      baseUrl: apiUrl(),
      network: { env: { HTTPS_PROXY: proxy.url }, caCertFile: { value: caFile, source: "ca_cert_file" } },
      now: () => clock,
      sleep: async (ms) => {
        clock += ms + 1_000;
      },
    });
    const err = await failure(c.getMe());
    expect(err).toBeInstanceOf(NetworkError);
    expect(err.message).toMatch(
      /cannot connect to the proxy http:\/\/127\.0\.0\.1:\d+ \(HTTPS_PROXY\): .*ECONNREFUSED/,
    );
    expect(err.message).toMatch(/tried \d+ times over 2\d s without reaching the API/);
  });
});

describe("fail fast until the API has answered once", () => {
  let closed: Server;
  let closedUrl: string;
  beforeAll(async () => {
    closed = createServer();
    await new Promise<void>((r) => closed.listen(0, "127.0.0.1", r));
    closedUrl = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
    await new Promise<void>((r) => closed.close(() => r()));
  });

  function clocked(extra: Partial<ClientOptions>) {
    let clock = 0;
    return client({
      now: () => clock,
      sleep: async (ms) => {
        clock += ms + 500;
      },
      ...extra,
    });
  }

  it("gives up on a refused connection within the budget, not at the call's deadline, and says so", async () => {
    const c = clocked({ baseUrl: closedUrl });
    const err = await failure(c.listOffers({}, { deadlineMs: 5 * 60_000 }));
    expect(err).toBeInstanceOf(NetworkError);
    expect((err as NetworkError).apiReached).toBe(false);
    expect(err.message).toMatch(
      /cannot connect to http:\/\/127\.0\.0\.1:\d+ \(base_url in the provider block\): .*ECONNREFUSED/,
    );
    expect(err.message).toMatch(
      new RegExp(`tried \\d+ times over ${FIRST_CONTACT_BUDGET_MS / 1000} s without reaching the API`),
    );
    expect(logs.some((l) => l.level === "info" && l.msg === "waiting for the API")).toBe(true);
    // Later calls of the same client fail on their first refusal.
    logs = [];
    await failure(c.getMe());
    expect(attempts()).toBe(1);
  });

  it("keeps retrying until the deadline once the API has answered", async () => {
    const b = await startFakeBackend({ seed: "demo" });
    const c = clocked({ baseUrl: b.url, token: b.credentials!.admin_session_token });
    await c.getMe();
    await b.close();
    const err = await failure(c.getMe({ deadlineMs: 60_000 }));
    expect((err as NetworkError).apiReached).toBe(true);
    expect(err.message).not.toMatch(/without reaching the API/);
    expect(attempts()).toBeGreaterThan(10);
  });
});
