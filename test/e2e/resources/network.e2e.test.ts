import { writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { networkInterfaces } from "node:os";
import { join } from "node:path";
import { startFakeBackend } from "../../../src/fake-backend";
import { residentPids } from "../../../src/testing/resident";
import { startTestProxy, TEST_API_HOST, type TestProxy } from "../../../src/testing/test-proxy";
import {
  apply,
  expectCode,
  liveInstances,
  plan,
  resetSuite,
  type Suite,
  startSuite,
  stateResources,
  stopSuite,
  TERRAFORM_BLOCK,
  trustBackend,
  until,
  writeConfig,
} from "./helpers";
import { ResidentDirs } from "./residents";

// The real terraform over real network parts: the fake backend over HTTPS with a private CA, a
// real proxy (CONNECT) that alone resolves the API's test host name, NO_PROXY, the proxy killed in
// the middle of an apply, and a wrong port or an untrusted certificate failing a plan fast with
// a message that says what to change.

jest.setTimeout(300_000);

let s: Suite;
let proxy: TestProxy | undefined;
const residents = new ResidentDirs();

beforeAll(async () => {
  s = await startSuite();
});
afterAll(async () => {
  await residents.stop(s?.tf);
  residents.remove();
  await stopSuite(s);
});
beforeEach(() => resetSuite(s));
afterEach(async () => {
  await proxy?.kill().catch(() => undefined);
  proxy = undefined;
  for (const k of ["HTTPS_PROXY", "NO_PROXY", "SSL_CERT_FILE", "GPURENTAL_RECONCILE_TIMEOUT"])
    delete s.tf.env[k];
  s.tf.env.GPURENTAL_BASE_URL = s.backend.url;
  trustBackend(s.tf, s.backend);
});

const port = () => new URL(s.backend.url).port;
const viaProxyUrl = () => `https://${TEST_API_HOST}:${port()}`;

function instances(count: number): string {
  return `resource "gpurental_instance" "n" {
  count       = ${count}
  offer_id    = "${s.creds.offer_id}"
  template_id = "${s.creds.template_id}"
  disk_gb     = 50
  label       = "net-\${count.index}"
}`;
}

async function expectBackendEqualsState(): Promise<void> {
  const state = await stateResources(s).catch(() => ({}));
  const inState = Object.values(state)
    .filter((r) => r.type === "gpurental_instance")
    .map((r) => r.values.id)
    .sort();
  expect(
    liveInstances(s)
      .map((i) => i.id)
      .sort(),
  ).toEqual(inState);
}

test("apply and destroy through the proxy's CONNECT tunnel to HTTPS, trusting the CA by SSL_CERT_FILE", async () => {
  proxy = await startTestProxy();
  s.tf.env.HTTPS_PROXY = proxy.url;
  s.tf.env.GPURENTAL_BASE_URL = viaProxyUrl();
  // As Go programs read it: the private CA through SSL_CERT_FILE instead of ca_cert_file.
  s.tf.env.SSL_CERT_FILE = s.tf.env.GPURENTAL_CA_CERT_FILE;
  delete s.tf.env.GPURENTAL_CA_CERT_FILE;
  writeConfig(s, instances(2));
  expectCode(await apply(s), 0);
  expect(liveInstances(s)).toHaveLength(2);
  expect(proxy.connects.length).toBeGreaterThan(0);
  expect(new Set(proxy.connects)).toEqual(new Set([`${TEST_API_HOST}:${port()}`]));
  expectCode(await plan(s), 0);
  expectCode(await s.tf.run(["destroy", "-auto-approve", "-input=false"]), 0);
  expect(liveInstances(s)).toHaveLength(0);
});

test("https_proxy in the provider block with credentials; a wrong password is a named 407, never printed", async () => {
  proxy = await startTestProxy({ credentials: "ci:pr0xy-pass" });
  s.tf.env.GPURENTAL_BASE_URL = viaProxyUrl();
  const block = (pw: string) => `provider "gpurental" {
  https_proxy = "http://ci:${pw}@127.0.0.1:${proxy!.port}"
}`;
  writeConfig(s, instances(1), block("wrong-pass"));
  const started = Date.now();
  const refused = expectCode(await plan(s, [], { TF_LOG: "trace" }), 1);
  expect(Date.now() - started).toBeLessThan(30_000);
  expect(refused.stderr.replace(/\s+/g, " ")).toMatch(
    /refused the credentials in its URL \(407 Proxy Authentication Required\)\. Correct the user name and password in https_proxy in the provider block/,
  );
  expect(`${refused.stdout}${refused.stderr}`).not.toMatch(/wrong-pass|pr0xy-pass/);
  writeConfig(s, instances(1), block("pr0xy-pass"));
  expectCode(await apply(s), 0);
  expect(liveInstances(s)).toHaveLength(1);
});

test("NO_PROXY (a CIDR) sends a non-loopback address past a proxy that is down", async () => {
  const ip = Object.values(networkInterfaces())
    .flat()
    .find((a) => a && a.family === "IPv4" && !a.internal)?.address;
  if (!ip) return; // a machine with loopback only cannot show it
  const backend = await startFakeBackend({ seed: "demo", host: "0.0.0.0", tls: true, tlsNames: [ip] });
  try {
    const dead = await closedPort();
    s.tf.env.HTTPS_PROXY = `http://127.0.0.1:${dead}`;
    s.tf.env.NO_PROXY = `example.test,${ip.split(".").slice(0, 2).join(".")}.0.0/16`;
    s.tf.env.GPURENTAL_BASE_URL = `https://${ip}:${new URL(backend.url).port}`;
    s.tf.env.GPURENTAL_TOKEN = backend.credentials!.admin_session_token;
    trustBackend(s.tf, backend);
    writeConfig(
      s,
      `data "gpurental_offers" "all" {}\noutput "n" { value = length(data.gpurental_offers.all.offers) }`,
    );
    expectCode(await apply(s), 0);
    // Without NO_PROXY the same address goes to the dead proxy, and says so.
    delete s.tf.env.NO_PROXY;
    const r = expectCode(await apply(s), 1);
    expect(r.stderr.replace(/\s+/g, " ")).toMatch(
      /cannot connect to the proxy http:\/\/127\.0\.0\.1:\d+ \(HTTPS_PROXY\)/,
    );
  } finally {
    await backend.close();
  }
});

test("the proxy killed in the middle of an apply: retried, nothing left behind, backend equals state", async () => {
  proxy = await startTestProxy();
  s.tf.env.HTTPS_PROXY = proxy.url;
  s.tf.env.GPURENTAL_BASE_URL = viaProxyUrl();
  // Instances take a while to run, so the apply is still polling when the proxy dies.
  s.backend.setTransitions({ afterMs: 3_000 });
  // A deploy cut off inside the dead proxy never reached the API: listing cannot find it, and the
  // default two minutes of looking would only slow the suite; the next apply deploys it.
  s.tf.env.GPURENTAL_RECONCILE_TIMEOUT = "5s";
  writeConfig(s, instances(3));
  const run = s.tf.spawn(["apply", "-auto-approve", "-input=false", "-no-color"]);
  await until(() => s.backend.listInstances(s.creds.org_id).length >= 1, "a deploy", 60_000);
  await proxy.kill();
  await new Promise((r) => setTimeout(r, 1_500));
  await proxy.restart();
  const first = await run.result;
  // The provider rode out the outage; should an ambiguous deploy have failed the apply, the next
  // apply adopts what the journal recorded instead of deploying again.
  if (first.code !== 0) expectCode(await apply(s), 0);
  expect(liveInstances(s)).toHaveLength(3);
  await expectBackendEqualsState();
  expectCode(await s.tf.run(["destroy", "-auto-approve", "-input=false"]), 0);
  expect(liveInstances(s)).toHaveLength(0);
});

test("one resident provider process serves two commands with different proxies, each through its own", async () => {
  proxy = await startTestProxy();
  const other = await startTestProxy();
  try {
    const second = s.tf.workingDir("second");
    const dir = residents.use(s.tf, "net");
    residents.use(second, "net");
    const offers = `${TERRAFORM_BLOCK}\nprovider "gpurental" {}\ndata "gpurental_offers" "all" {}\n`;
    s.tf.write({ "main.tf": offers });
    second.write({ "main.tf": offers });
    expectCode(await second.run(["init", "-input=false"]), 0);
    for (const [tf, p] of [
      [s.tf, proxy],
      [second, other],
    ] as const) {
      tf.env.HTTPS_PROXY = p.url;
      tf.env.GPURENTAL_BASE_URL = viaProxyUrl();
      tf.env.GPURENTAL_TOKEN = s.creds.admin_session_token;
      expectCode(await tf.run(["plan", "-input=false"]), 0);
    }
    expect(residentPids(dir)).toHaveLength(1);
    expect(proxy.connects.length).toBeGreaterThan(0);
    expect(other.connects.length).toBeGreaterThan(0);
  } finally {
    await other.kill();
    await residents.stop(s.tf);
  }
});

test("a wrong port fails the plan within 30 s, saying how long it tried", async () => {
  s.tf.env.GPURENTAL_BASE_URL = `https://127.0.0.1:${await closedPort()}`;
  writeConfig(s, `${instances(1)}\ndata "gpurental_offers" "all" {}`);
  const started = Date.now();
  const r = expectCode(await plan(s), 1);
  const seconds = (Date.now() - started) / 1000;
  expect(seconds).toBeLessThan(35);
  expect(r.stderr).toMatch(/Cannot reach the gpurental API/);
  expect(r.stderr.replace(/\s+/g, " ")).toMatch(
    /ECONNREFUSED.*tried \d+ times over \d+ s without reaching the API/,
  );
});

test("an untrusted certificate fails at once, naming ca_cert_file and SSL_CERT_FILE", async () => {
  delete s.tf.env.GPURENTAL_CA_CERT_FILE;
  writeConfig(s, instances(1));
  const started = Date.now();
  const r = expectCode(await plan(s), 1);
  expect(Date.now() - started).toBeLessThan(15_000);
  const text = r.stderr.replace(/\s+/g, " ");
  expect(text).toMatch(/certificate of 127\.0\.0\.1 is not signed by an authority this machine trusts/);
  expect(text).toMatch(/ca_cert_file \(GPURENTAL_CA_CERT_FILE\) or SSL_CERT_FILE/);
  expect(text).toMatch(/not retried/);
  // The provider block's ca_cert_file fixes it.
  const ca = join(s.tf.root, "block-ca.pem");
  writeFileSync(ca, s.backend.caCertPem!);
  writeConfig(s, instances(1), `provider "gpurental" {\n  ca_cert_file = "${ca}"\n}`);
  expectCode(await plan(s), 2);
});

async function closedPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
  const p = (srv.address() as { port: number }).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return p;
}
