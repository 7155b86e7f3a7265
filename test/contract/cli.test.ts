import { type ChildProcess, spawnSync } from "node:child_process";
import { createPrivateKey, X509Certificate } from "node:crypto";
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { buildSync } from "esbuild";
import { GpurentalClient } from "../../src/api/client";
import { startProcess } from "../../src/testing/child-process";
import { createTestPki } from "../../src/tls/issue";

// The command runs from an esbuild bundle, so the test needs no prior `npm run build`.
const root = resolve(__dirname, "../..");
let dir: string;
let bundle: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "gpurental-cli-"));
  const contents = [
    // Only this command is bundled, so the test does not depend on the other commands' modules;
    // the error handling mirrors src/cli/main.ts.
    `import { Command, CommanderError } from "commander";`,
    `import { register } from ${JSON.stringify(join(root, "src/cli/fake-backend"))};`,
    `const program = new Command("gpurental").exitOverride();`,
    "register(program);",
    "program.parseAsync(process.argv).catch((e) => {",
    "  if (e instanceof CommanderError) { process.exitCode = e.exitCode; return; }",
    "  console.error(e); process.exitCode = 1;",
    "});",
    "",
  ].join("\n");
  bundle = join(dir, "cli.js");
  buildSync({
    stdin: { contents, resolveDir: root, loader: "ts" },
    bundle: true,
    platform: "node",
    outfile: bundle,
    logLevel: "silent",
  });
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// Every fake backend a test started, stopped after it whether it passed or not.
const started = new Set<ChildProcess>();
afterEach(() => {
  for (const child of started)
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  started.clear();
});

function run(args: string[]): {
  child: ChildProcess;
  out: () => string;
  err: () => string;
  exit: Promise<number>;
} {
  const p = startProcess(process.execPath, [bundle, "fake-backend", ...args]);
  started.add(p.child);
  const exit = p.exited.then(({ code, signal }) => code ?? (signal ? 128 : -1));
  return { child: p.child, out: p.stdout, err: p.stderr, exit };
}

async function waitFor(cond: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe("gpurental fake-backend", () => {
  test("starts, prints the URL only, writes credentials (0600), logs requests without tokens, stops on SIGTERM", async () => {
    const creds = join(dir, "creds.json");
    const state = join(dir, "state.json");
    const p = run(["--port", "0", "--seed", "demo", "--credentials", creds, "--state-file", state]);
    await waitFor(() => /listening on http:\/\/127\.0\.0\.1:\d+/.test(p.out()));
    const url = /listening on (http:\/\/\S+)/.exec(p.out())?.[1] ?? "";
    const c = JSON.parse(readFileSync(creds, "utf8"));
    expect(statSync(creds).mode & 0o777).toBe(0o600);
    for (const k of [
      "base_url",
      "org_id",
      "admin_session_token",
      "member_session_token",
      "offer_id",
      "template_id",
      "ssh_key_id",
    ]) {
      expect(c).toHaveProperty(k);
    }
    expect(c.base_url).toBe(url);
    const me = await fetch(`${url}/v1/me`, { headers: { authorization: `Bearer ${c.admin_session_token}` } });
    expect(me.status).toBe(200);
    const key = await fetch(`${url}/v1/api-keys`, {
      method: "POST",
      headers: { authorization: `Bearer ${c.admin_session_token}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "cli" }),
    });
    const { secret } = (await key.json()) as { secret: string };
    await fetch(`${url}/v1/offers`, { headers: { authorization: `Bearer ${secret}` } });
    await waitFor(() => p.out().includes("GET /v1/offers 200"));
    for (const s of [c.admin_session_token, c.member_session_token, c.control_token, secret]) {
      expect(p.out()).not.toContain(s);
      expect(p.err()).not.toContain(s);
    }
    p.child.kill("SIGTERM");
    expect(await p.exit).toBe(0);
    expect(p.out()).toContain("stopped");
    expect(JSON.parse(readFileSync(state, "utf8")).version).toBe(1);
  });

  test("--tls serves HTTPS with a generated CA written beside the credentials; --tls-cert/--tls-key serve one's own", async () => {
    const sub = mkdtempSync(join(dir, "tls-"));
    const creds = join(sub, "creds.json");
    const p = run(["--seed", "demo", "--credentials", creds, "--tls", "--tls-name", "api.gpurental.test"]);
    await waitFor(() => /CA certificate written/.test(p.out()));
    const url = /listening on (https:\/\/\S+)/.exec(p.out())?.[1] ?? "";
    const caFile = join(sub, "gpurental-fake-ca.pem");
    const ca = new X509Certificate(readFileSync(caFile));
    expect(ca.ca).toBe(true);
    const c = JSON.parse(readFileSync(creds, "utf8"));
    expect(c.base_url).toBe(url);
    const client = new GpurentalClient({
      baseUrl: url,
      token: c.admin_session_token,
      network: { env: {}, caCertFile: { value: caFile, source: "ca_cert_file" } },
    });
    await expect(client.getMe()).resolves.toHaveProperty("organization");
    p.child.kill("SIGTERM");
    expect(await p.exit).toBe(0);

    const pki = createTestPki();
    writeFileSync(join(sub, "cert.pem"), pki.server.certPem);
    writeFileSync(join(sub, "key.pem"), pki.server.keyPem);
    writeFileSync(join(sub, "own-ca.pem"), pki.ca.certPem);
    const q = run(["--tls-cert", join(sub, "cert.pem"), "--tls-key", join(sub, "key.pem"), "--seed", "demo"]);
    await waitFor(() => /listening on https:/.test(q.out()));
    const ownUrl = /listening on (https:\/\/\S+)/.exec(q.out())?.[1] ?? "";
    const res = await new GpurentalClient({
      baseUrl: ownUrl,
      token: "gps_x",
      network: { env: { SSL_CERT_FILE: join(sub, "own-ca.pem") } },
      retry: { maxAttempts: 1 },
    })
      .getMe()
      .catch((e: Error) => e);
    expect(String(res)).toMatch(/401|TOKEN_INVALID/); // TLS worked; the token did not
    q.child.kill("SIGTERM");
    expect(await q.exit).toBe(0);
  });

  test("--shell-env writes the admin's settings (0600) for a shell without Node.js, last, never on the terminal", async () => {
    const sub = mkdtempSync(join(dir, "shell-env-"));
    const envFile = join(sub, "fake.env");
    const p = run(["--seed", "demo", "--shell-env", envFile, "--tls"]);
    await waitFor(() => /settings for a shell written/.test(p.out()));
    expect(statSync(envFile).mode & 0o777).toBe(0o600);
    const url = /listening on (https:\/\/\S+)/.exec(p.out())?.[1] ?? "";
    // A POSIX shell reads it as it is, and hands the values on unchanged.
    const read = spawnSync(
      "sh",
      [
        "-c",
        '. "$1" && printf "%s\\n" "$GPURENTAL_BASE_URL" "$GPURENTAL_TOKEN" "$GPURENTAL_CA_CERT_FILE"',
        "sh",
        envFile,
      ],
      { encoding: "utf8", env: { PATH: process.env.PATH } },
    );
    const [base, token, ca] = read.stdout.split("\n");
    expect(base).toBe(url);
    expect(token).toMatch(/^gps_/);
    // The CA goes beside it, named absolutely so that the file works from any directory.
    expect(ca).toBe(join(sub, "gpurental-fake-ca.pem"));
    const client = new GpurentalClient({
      baseUrl: base as string,
      token: token as string,
      network: { env: {}, caCertFile: { value: ca as string, source: "ca_cert_file" } },
    });
    await expect(client.getMe()).resolves.toHaveProperty("organization");
    expect(p.out()).not.toContain(token);
    expect(p.err()).not.toContain(token);
    p.child.kill("SIGTERM");
    expect(await p.exit).toBe(0);

    const q = run(["--shell-env", envFile]);
    expect(await q.exit).toBe(1);
    expect(q.err()).toContain("--shell-env needs --seed demo");
  });

  test("--tls without a place for the CA, or --tls-cert without --tls-key, is refused", async () => {
    const p = run(["--tls"]);
    expect(await p.exit).toBe(1);
    expect(p.err()).toContain("--tls needs --ca-file, --credentials or --shell-env");
    const q = run(["--tls-cert", "x.pem"]);
    expect(await q.exit).toBe(1);
    expect(q.err()).toContain("--tls-cert and --tls-key go together");
  });

  test("an invalid port is refused naming --port, exit code 1", async () => {
    const p = run(["--port", "70000"]);
    expect(await p.exit).toBe(1);
    expect(p.err()).toContain("--port");
  });

  test("a busy port gives a clear message and exit code 1", async () => {
    const server: Server = createServer();
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
    const port = (server.address() as { port: number }).port;
    try {
      const p = run(["--port", String(port)]);
      expect(await p.exit).toBe(1);
      expect(p.err()).toContain(`port ${port} on 127.0.0.1 is already in use`);
    } finally {
      server.close();
    }
  });
  test("a state file in a missing directory is refused naming --state-file, and nothing keeps listening", async () => {
    const p = run(["--state-file", join(dir, "no-such-dir", "state.json")]);
    expect(await p.exit).toBe(1);
    expect(p.err()).toContain("--state-file");
    expect(p.err()).toContain("cannot be written (ENOENT)");
    expect(p.out()).not.toContain("listening");
  });

  test.each([
    ["not JSON", "{bad", "is not valid JSON"],
    ["an array", "[]", "must hold a JSON object"],
    ["another version", '{"version":2}', "has version 2; expected 1"],
    ["records missing", '{"version":1}', "field orgs must be an object"],
  ])("a state file holding %s is refused with its name and the reason", async (_what, text, reason) => {
    const file = join(dir, `broken-${reason.length}.json`);
    writeFileSync(file, text);
    const p = run(["--state-file", file]);
    expect(await p.exit).toBe(1);
    expect(p.err()).toContain(`--state-file: state file ${file}: ${reason}`);
  });

  test("an existing credentials file readable by others is narrowed to 0600", async () => {
    const creds = join(dir, "wide-creds.json");
    writeFileSync(creds, "{}", { mode: 0o644 });
    chmodSync(creds, 0o644);
    const p = run(["--seed", "demo", "--credentials", creds]);
    await waitFor(() => p.out().includes("credentials written"));
    expect(statSync(creds).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(creds, "utf8"))).toHaveProperty("admin_session_token");
    p.child.kill("SIGTERM");
    expect(await p.exit).toBe(0);
  });

  test("a credentials file that cannot be written stops the server with exit code 1", async () => {
    const p = run(["--seed", "demo", "--credentials", join(dir, "no-such-dir", "creds.json")]);
    expect(await p.exit).toBe(1);
    expect(p.err()).toContain("--credentials");
    expect(p.err()).toContain("cannot be written (ENOENT)");
    expect(p.out()).not.toContain("listening");
  });

  test.each([[""], ["short"], ["has a space in it...."]])(
    "a control token %j that would leave /_control open is refused",
    async (token) => {
      const p = run(["--control-token", token]);
      expect(await p.exit).toBe(1);
      expect(p.err()).toContain("--control-token must be 16 to 256 printable ASCII characters");
    },
  );

  test("an empty --host is refused naming the flag: it would bind every interface", async () => {
    const p = run(["--host", "", "--seed", "demo"]);
    expect(await p.exit).toBe(1);
    expect(p.err()).toContain(
      "--host must not be empty: give the address to bind, 127.0.0.1 by default (0.0.0.0 or :: for every interface).",
    );
    expect(p.out()).not.toContain("listening");
  });

  test("--tls-cert and --tls-key that are no certificate, no key, or not a pair are refused naming the flag and the path", async () => {
    const sub = mkdtempSync(join(dir, "own-tls-"));
    const pki = createTestPki();
    const other = createTestPki();
    const cert = join(sub, "cert.pem");
    const key = join(sub, "key.pem");
    const otherKey = join(sub, "other-key.pem");
    const text = join(sub, "notes.txt");
    writeFileSync(cert, pki.server.certPem);
    writeFileSync(key, pki.server.keyPem);
    writeFileSync(otherKey, other.server.keyPem);
    writeFileSync(text, "root:x:0:0:root:/root:/bin/sh\n");
    const encrypted = join(sub, "encrypted.pem");
    writeFileSync(
      encrypted,
      createPrivateKey(pki.server.keyPem)
        .export({ type: "pkcs8", format: "pem", cipher: "aes-256-cbc", passphrase: "pw" })
        .toString(),
    );
    for (const [args, message] of [
      [
        [text, key],
        `--tls-cert ${text} is not a PEM certificate: it must hold a "-----BEGIN CERTIFICATE-----" block`,
      ],
      [[key, key], `--tls-cert ${key} is not a PEM certificate`],
      [
        [cert, text],
        `--tls-key ${text} is not a PEM private key: it must hold a "-----BEGIN PRIVATE KEY-----" block`,
      ],
      [[cert, cert], `--tls-key ${cert} is not a PEM private key`],
      [
        [cert, encrypted],
        `--tls-key ${encrypted} is encrypted with a passphrase, which the fake backend cannot take`,
      ],
      [
        [cert, otherKey],
        `--tls-key ${otherKey} is not the private key of the certificate of --tls-cert ${cert}`,
      ],
      [[join(sub, "none.pem"), key], `--tls-cert ${join(sub, "none.pem")} cannot be read (ENOENT)`],
      [[cert, join(sub, "none.pem")], `--tls-key ${join(sub, "none.pem")} cannot be read (ENOENT)`],
    ] as const) {
      const p = run(["--tls-cert", args[0], "--tls-key", args[1]]);
      expect(await p.exit).toBe(1);
      expect(p.err()).toContain(`error: ${message}`);
      expect(p.err()).not.toContain("PEM routines");
      expect(p.out()).not.toContain("listening");
    }
  });

  test("an unknown --host is refused naming the flag", async () => {
    const p = run(["--host", "no-such-host.invalid"]);
    expect(await p.exit).toBe(1);
    expect(p.err()).toContain("--host no-such-host.invalid");
  });
});
