import { type ChildProcess, execFileSync } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stripVTControlCharacters } from "node:util";
import { type ReleaseResult, release } from "../../scripts/release/release";
import { GpurentalClient } from "../../src/api/client";
import { DEMO_IDS } from "../../src/fake-backend";
import { generateServerCertificate } from "../../src/plugin/cert";
import { type ProcessResult, startProcess } from "../../src/testing/child-process";
import { version } from "../../src/version";
import { findTerraform } from "../e2e/harness";
import { findPostgres, type PostgresServer, postgresRequired, startPostgres } from "../e2e/postgres";
import { type StaticServer, serveStatic } from "./static-server";

// A Terraform user with no Node.js: a release built with --throwaway-key (linux_amd64), its site
// served over HTTPS, and the `gpurental` command unzipped from its own archive and run with a PATH
// that holds terraform and a shell's tools but no `node`: the fake backend, `demo --hcl`, `strays`
// finding a planted stray, `plan-report` on a saved plan, with apply and destroy going through the
// release's provider from the network mirror; then the README's Terraform-only quick start, read
// from the README and run as it is written (only the site's address is the test server's).

jest.setTimeout(300_000);

const PLATFORM = "linux_amd64";
const README = join(__dirname, "..", "..", "README.md");
const EXAMPLES_CI = join(__dirname, "..", "..", "examples", "ci");
/** What a Terraform user's shell has; node is deliberately not among them. */
const TOOLS = ["sh", "bash", "curl", "unzip", "sha256sum", "cat", "sleep", "rm", "mkdir", "ls", "kill"];

let root: string;
let rel: ReleaseResult;
let server: StaticServer;
let caFile: string;
/** The standalone command, unzipped from gpurental_<v>_linux_amd64.zip. */
let gpurental: string;
/** terraform and the tools, without node. */
let binDir: string;
let fake: { child: ChildProcess; settings: Record<string, string>; log: () => string } | undefined;
/** What the user's GnuPG home held before the release: the throwaway key must not touch it. */
const userGnupg = () => join(root, "user-gnupg");

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "gpurental-standalone-"));
  mkdirSync(userGnupg());
  writeFileSync(join(userGnupg(), "pubring.kbx"), "the user's keyring");
  mkdirSync(join(root, "builder-home"));
  rel = await release({
    platforms: [PLATFORM],
    outDir: join(root, "release"),
    throwawayKey: true,
    env: { ...process.env, GNUPGHOME: userGnupg(), HOME: join(root, "builder-home") },
    log: () => {},
  });
  const cert = generateServerCertificate();
  caFile = join(root, "ca.pem");
  writeFileSync(caFile, cert.certPem);
  server = await serveStatic(rel.site, cert);

  binDir = join(root, "bin");
  mkdirSync(binDir);
  symlinkSync(findTerraform(), join(binDir, "terraform"));
  for (const tool of TOOLS) {
    const found = execFileSync("sh", ["-c", `command -v ${tool}`], { encoding: "utf8" }).trim();
    if (found.startsWith("/")) symlinkSync(found, join(binDir, tool));
  }
  mkdirSync(join(root, "tools"));
  const zip = join(rel.outDir, `gpurental_${version}_${PLATFORM}.zip`);
  execFileSync("unzip", ["-q", zip, "-d", join(root, "tools")]);
  gpurental = join(root, "tools", "gpurental");
  for (const dir of ["home", "tmp"]) mkdirSync(join(root, dir));
}, 300_000);

afterAll(async () => {
  // Stopped and gone before its folder is removed: at exit it writes its code cache there.
  if (fake && fake.child.exitCode === null) {
    const exited = new Promise((r) => fake?.child.once("exit", r));
    fake.child.kill("SIGTERM");
    await exited;
  }
  await server?.close();
  if (root) rmSync(root, { recursive: true, force: true });
});

/** The environment of a person with terraform and no Node.js; its own HOME and temp directory. */
function userEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    PATH: binDir,
    HOME: join(root, "home"),
    TMPDIR: join(root, "tmp"),
    SSL_CERT_FILE: caFile,
    CHECKPOINT_DISABLE: "1",
    TF_IN_AUTOMATION: "1",
    TF_INPUT: "0",
    ...extra,
  };
}

/**
 * Runs a program without blocking (the static server answers from this process), in a process group
 * of its own: whatever the run leaves there (a fake backend a failed script started) is killed when
 * it ends, or after `timeoutMs`.
 */
async function run(
  cmd: string,
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
  timeoutMs = 240_000,
): Promise<ProcessResult> {
  const { child, result } = startProcess(cmd, args, { cwd, env, processGroup: true, timeoutMs });
  try {
    return await result;
  } finally {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
    } catch {}
  }
}

async function ok(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<string> {
  const r = await run(cmd, args, cwd, env);
  if (r.code !== 0) throw new Error(`${cmd} ${args.join(" ")} exited ${r.code}:\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

/** Waits for `cond`, at most `ms`, and fails naming `what`. */
async function waitFor(what: string, cond: () => boolean, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out after ${ms / 1000} s waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The variables of a --shell-env file, as a shell reads them. */
function readShellEnv(file: string): Record<string, string> {
  const names = ["GPURENTAL_BASE_URL", "GPURENTAL_TOKEN", "GPURENTAL_ORG_ID", "GPURENTAL_SSH_KEY_ID"];
  const out = execFileSync(
    "sh",
    ["-c", `. "$1" && printf '%s\\n' ${names.map((n) => `"$${n}"`).join(" ")}`, "sh", file],
    {
      encoding: "utf8",
      env: { PATH: binDir },
    },
  ).split("\n");
  return Object.fromEntries(names.map((n, i) => [n, out[i] ?? ""]));
}

/** The fake backend started from the standalone command, shared by the tests that need one. */
async function fakeBackend(): Promise<NonNullable<typeof fake>> {
  if (fake) return fake;
  const envFile = join(root, "fake.env");
  const { child, output } = startProcess(
    gpurental,
    ["fake-backend", "--seed", "demo", "--transitions", "immediate", "--shell-env", envFile],
    { cwd: root, env: userEnv() },
  );
  await waitFor(
    "the fake backend's --shell-env file",
    () => existsSync(envFile) && readFileSync(envFile).length > 0,
  );
  // The file may be written before its log line reaches this process through the pipe.
  await waitFor("the fake backend's listening line", () => output().includes("listening on"));
  fake = { child, settings: readShellEnv(envFile), log: output };
  return fake;
}

/** A working directory whose terraform installs the provider from the release site's mirror. */
function mirrorWorkspace(name: string, main: string): { dir: string; env: NodeJS.ProcessEnv } {
  const dir = join(root, name);
  mkdirSync(join(dir, "work"), { recursive: true });
  writeFileSync(
    join(dir, "cli.tfrc"),
    `provider_installation {
  network_mirror {
    url     = "https://localhost:${server.port}/mirror/"
    include = ["registry.terraform.io/gpurental/gpurental"]
  }
  direct {
    exclude = ["registry.terraform.io/gpurental/gpurental"]
  }
}
`,
  );
  writeFileSync(join(dir, "work", "main.tf"), main);
  return { dir: join(dir, "work"), env: { TF_CLI_CONFIG_FILE: join(dir, "cli.tfrc") } };
}

test("the PATH of these tests has terraform and no node", () => {
  expect(readdirSync(binDir)).toContain("terraform");
  expect(readdirSync(binDir)).not.toContain("node");
  expect(
    execFileSync("sh", ["-c", "command -v node || echo none"], {
      encoding: "utf8",
      env: { PATH: binDir },
    }).trim(),
  ).toBe("none");
});

test("a --throwaway-key release says it is for trying only, leaves the user's keyring alone, and gives the command's size", () => {
  expect(rel.throwawayKey).toBe(true);
  const notes = readFileSync(join(rel.outDir, "RELEASE-NOTES.md"), "utf8");
  expect(notes).toContain(`**Signed with a throwaway key (${rel.keyId}): for trying, not for production.**`);
  const archive = rel.built.find((b) => b.platform === PLATFORM)!;
  expect(notes).toMatch(
    new RegExp(
      `\\| ${PLATFORM} \\| gpurental_${version.replace(/\./g, "\\.")}_${PLATFORM}\\.zip \\| ${(archive.size / 1e6).toFixed(1)} MB, compact \\|`,
    ),
  );
  expect(JSON.parse(readFileSync(join(rel.site, "releases", version, "release.json"), "utf8"))).toMatchObject(
    {
      throwaway_key: true,
      commands: [{ platform: PLATFORM, filename: `gpurental_${version}_${PLATFORM}.zip` }],
    },
  );
  // The user's GnuPG home and home folder: as they were. The key's own home is gone.
  expect(readdirSync(userGnupg())).toEqual(["pubring.kbx"]);
  expect(readdirSync(join(root, "builder-home"))).toEqual([]);
  // (This process's own: another test file may be signing a release at the same time.)
  expect(readdirSync(tmpdir()).filter((f) => f.startsWith(`gpurental-release-key-${process.pid}-`))).toEqual(
    [],
  );
  // Its public key still verifies the sums it signed.
  const gnupg = join(root, "verify-gnupg");
  mkdirSync(gnupg, { mode: 0o700 });
  try {
    const env = { ...process.env, GNUPGHOME: gnupg };
    execFileSync("gpg", ["--batch", "--import", join(rel.outDir, "gpurental-signing-key.asc")], {
      env,
      stdio: "ignore",
    });
    const sums = join(rel.outDir, `terraform-provider-gpurental_${version}_SHA256SUMS`);
    execFileSync("gpg", ["--batch", "--verify", `${sums}.sig`, sums], { env, stdio: "ignore" });
  } finally {
    execFileSync("gpgconf", ["--homedir", gnupg, "--kill", "all"], { stdio: "ignore" });
    execFileSync("gpgconf", ["--homedir", gnupg, "--remove-socketdir"], { stdio: "ignore" });
  }
});

test("--throwaway-key refuses a named key, rather than guess which one signs", async () => {
  await expect(
    release({
      platforms: [PLATFORM],
      outDir: join(root, "refused"),
      throwawayKey: true,
      env: { ...process.env, GPURENTAL_RELEASE_GPG_KEY: "ABCDEF" },
      log: () => {},
    }),
  ).rejects.toThrow("--throwaway-key signs with a key of its own: unset GPURENTAL_RELEASE_GPG_KEY");
  expect(existsSync(join(root, "refused"))).toBe(false);
});

test("the command runs with no node: --version, --help, and fake-backend with its settings for the shell", async () => {
  expect((await ok(gpurental, ["--version"], root, userEnv())).trim()).toBe(version);
  const help = await ok(gpurental, ["--help"], root, userEnv());
  for (const cmd of ["fake-backend", "demo", "example", "strays", "plan-report", "provider"])
    expect(help).toContain(`  ${cmd} `);
  const { settings, log } = await fakeBackend();
  expect(settings.GPURENTAL_BASE_URL).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  expect(settings.GPURENTAL_TOKEN).toMatch(/^gps_/);
  expect(log()).toContain(`listening on ${settings.GPURENTAL_BASE_URL}`);
  expect(log()).not.toContain(settings.GPURENTAL_TOKEN);
  const me = await new GpurentalClient({
    baseUrl: settings.GPURENTAL_BASE_URL!,
    token: settings.GPURENTAL_TOKEN!,
  }).getMe();
  expect(me.organization.id).toBe(settings.GPURENTAL_ORG_ID);
  // The CDK demos are the npm package's: said in one line, naming the one this command runs.
  const cdk = await run(gpurental, ["demo"], root, userEnv());
  expect({ code: cdk.code, err: cdk.stderr }).toEqual({
    code: 1,
    err: "gpurental demo: the CDK demos run from the npm package, with Node.js; this executable runs the plain Terraform one: gpurental demo --hcl\n",
  });
});

test("demo --hcl applies and destroys examples/hcl with terraform alone, the command installing itself as the provider", async () => {
  const r = await run(gpurental, ["demo", "--hcl"], root, userEnv());
  if (r.code !== 0) throw new Error(`demo --hcl exited ${r.code}:\n${r.stdout}\n${r.stderr}`);
  expect(r.stdout).toContain(`provider ${version} installed (this executable, `);
  expect(r.stdout).toMatch(/gpurental_instance\.workstation: Creation complete/);
  expect(r.stdout).toContain("destroyed: no instance and no API key left in the fake backend");
  expect(r.stdout).toContain("✓ work folder");
  // The work folder went, and with it the provider it installed; only the one runtime is unpacked.
  expect(readdirSync(join(root, "tmp")).filter((f) => f.startsWith("gpurental-demo-"))).toEqual([]);
  // (The launcher keeps a stamp file beside each runtime: src/executable/compact/README.md.)
  const runtimes = readdirSync(join(root, "home", ".cache", "gpurental", "runtime")).filter((f) =>
    /^terraform-provider-gpurental-[0-9a-f]{32}$/.test(f),
  );
  expect(runtimes).toHaveLength(1);
});

test("strays finds a planted stray, plan-report reports a saved plan; apply and destroy use the release's provider over HTTPS", async () => {
  const { settings } = await fakeBackend();
  const api = { GPURENTAL_BASE_URL: settings.GPURENTAL_BASE_URL, GPURENTAL_TOKEN: settings.GPURENTAL_TOKEN };
  const instance = (label: string) => `
resource "gpurental_instance" "${label}" {
  offer_filter = { gpu_model = "RTX 4090", num_gpus = 1 }
  template_id  = "${DEMO_IDS.templateSsh}"
  disk_gb      = 50
  label        = "${label}"
}
`;
  const terraformBlock = `terraform {
  required_providers {
    gpurental = { source = "gpurental/gpurental", version = "${version}" }
  }
}
`;
  const ws = mirrorWorkspace("strays", terraformBlock + instance("kept"));
  const env = userEnv({ ...ws.env, ...api });
  const init = await ok("terraform", ["init", "-no-color"], ws.dir, env);
  expect(init).toContain(`Installed gpurental/gpurental v${version}`);
  await ok("terraform", ["apply", "-no-color", "-auto-approve"], ws.dir, env);

  // A stray: an instance deployed outside Terraform.
  const client = new GpurentalClient({ baseUrl: api.GPURENTAL_BASE_URL!, token: api.GPURENTAL_TOKEN! });
  const planted = await client.deployInstance({
    offer_id: DEMO_IDS.offer,
    template_id: DEMO_IDS.templateSsh,
    disk_gb: 20,
    label: "planted-by-hand",
  });
  const strays = await run(gpurental, ["strays", ws.dir, "--json"], root, env);
  expect(strays.code).toBe(2);
  const found = JSON.parse(strays.stdout) as { instances: { id: string }[] };
  expect(found.instances.map((i) => i.id)).toEqual([planted.id]);

  // A saved plan that adds an instance: the report names what it creates and what it costs.
  writeFileSync(join(ws.dir, "main.tf"), terraformBlock + instance("kept") + instance("added"));
  await ok("terraform", ["plan", "-no-color", "-out=plan.bin"], ws.dir, env);
  const report = await run(gpurental, ["plan-report", join(ws.dir, "plan.bin"), "--dir", ws.dir], root, env);
  expect(report.code).toBe(0);
  expect(report.stdout).toContain("gpurental_instance.added");
  expect(report.stdout).toMatch(/RTX 4090/);
  expect(report.stdout).not.toContain(api.GPURENTAL_TOKEN!);

  // The stray goes with --destroy --yes, then the configuration with terraform destroy.
  const removed = await run(gpurental, ["strays", ws.dir, "--destroy", "--yes"], root, env);
  expect(removed.code).toBe(0);
  await ok("terraform", ["destroy", "-no-color", "-auto-approve"], ws.dir, env);
  const left = (await client.listInstances()).filter((i) => i.status !== "destroyed");
  expect(left).toEqual([]);
});

test("the README's Terraform-only quick start runs as written, with no node on PATH", async () => {
  const readme = readFileSync(README, "utf8");
  const marker = "<!-- quick-start-terraform:";
  const at = readme.indexOf(marker);
  expect(at).toBeGreaterThan(-1);
  const block = /```sh\n([\s\S]*?)```/.exec(readme.slice(at))?.[1] ?? "";
  // It names this version's archives, so a release bump cannot leave it behind.
  expect(block).toContain(`gpurental_${version}_${PLATFORM}.zip`);
  expect(block).toContain("site=https://tf.example.com\n");
  const script = block.replace("site=https://tf.example.com\n", `site=https://localhost:${server.port}\n`);
  const dir = join(root, "quick-start");
  mkdirSync(dir);
  writeFileSync(join(dir, "quick-start.sh"), script);
  const r = await run("bash", ["-euo", "pipefail", "quick-start.sh"], dir, userEnv({ PATH: binDir }));
  // Terraform colours its output for a person: what is asserted is the text.
  const out = stripVTControlCharacters(r.stdout);
  if (r.code !== 0) throw new Error(`the quick start exited ${r.code}:\n${out}\n${r.stderr}`);
  expect(out).toContain(`gpurental_${version}_${PLATFORM}.zip: OK`);
  expect(out).toContain(`Installed gpurental/gpurental v${version} (verified checksum)`);
  expect(out).toContain("Plan: 2 to add, 0 to change, 0 to destroy.");
  // plan-report's comment, strays' answer, then the apply and the destroy.
  expect(out).toContain("#### Instances: 1 to create");
  expect(out).toMatch(
    /\| create \| `gpurental_instance\.workstation` "terraform-example" \| RTX 4090 × 1 \|/,
  );
  expect(out).toContain("Apply complete! Resources: 2 added");
  expect(out).toContain("No strays: every instance and API key of the organization is held by a state read.");
  expect(out).toContain("Destroy complete! Resources: 2 destroyed.");
  // No secret of the run reaches the terminal: the session token is only in fake.env.
  const token = readShellEnv(join(dir, "fake.env")).GPURENTAL_TOKEN as string;
  expect(token).toMatch(/^gps_/);
  expect(`${out}${r.stderr}`).not.toContain(token);
  // The fake backend the script started is stopped by its last line.
  await waitFor(
    "the quick start's fake backend to stop",
    () => readFileSync(join(dir, "fake.log"), "utf8").includes("stopped"),
    10_000,
  );
});

// examples/ci's Terraform-only pipeline (hcl-pipeline.sh) on a runner with no Node.js: the command
// downloaded from the release site and checked against its sums, the provider from the site's
// mirror, the state and the deploy journal in a private PostgreSQL (GPURENTAL_JOURNAL_URL: the
// released executable runs the journal's PostgreSQL client from its own assets, as the provider
// and as the command), the report posted to a stand-in for GitHub's API, a nightly strays run that
// finds a planted stray. Skipped, saying why, without PostgreSQL.
const postgres = findPostgres();
if (postgres.missing && !postgresRequired())
  process.stderr.write(
    `test/release/standalone.e2e.test.ts: the HCL pipeline is skipped: ${postgres.missing}\n`,
  );
const describeWithPostgres = postgres.binDir || postgresRequired() ? describe : describe.skip;

describeWithPostgres("examples/ci's Terraform-only pipeline", () => {
  const GITHUB_TOKEN = "ghs_testtoken0123456789";
  /** In the URLs only: the server trusts loopback, and the password must appear in no output. */
  const PG_PASSWORD = "pg-secret-7f3e91";
  let pg: PostgresServer | undefined;
  let github: { server: Server; url: string; comments: { id: number; body: string }[] };
  let repo: string;
  let teamKey: string;
  let ranEnv: NodeJS.ProcessEnv;
  const printed: string[] = [];

  beforeAll(async () => {
    if (!postgres.binDir) throw new Error(postgres.missing);
    pg = await startPostgres(postgres);
    github = await fakeGitHub(GITHUB_TOKEN);
    const { settings } = await fakeBackend();
    const admin = new GpurentalClient({
      baseUrl: settings.GPURENTAL_BASE_URL!,
      token: settings.GPURENTAL_TOKEN!,
    });
    teamKey = (await admin.createApiKey({ name: "ci-hcl", kind: "team" })).secret;
    // A checkout of a repository laid out as examples/ci: the script and the configuration.
    repo = join(root, "hcl-repo");
    mkdirSync(repo);
    cpSync(join(EXAMPLES_CI, "hcl-pipeline.sh"), join(repo, "hcl-pipeline.sh"));
    cpSync(join(EXAMPLES_CI, "hcl"), join(repo, "hcl"), { recursive: true });
    writeFileSync(join(root, "github-event.json"), JSON.stringify({ pull_request: { number: 7 } }));
    ranEnv = userEnv({
      PATH: systemPathWithoutNode(),
      GPURENTAL_BASE_URL: settings.GPURENTAL_BASE_URL,
      GPURENTAL_TOKEN: teamKey,
      PG_CONN_STR: pg.connStr().replace("://tf@", `://tf:${PG_PASSWORD}@`),
      // The journal beside the state, as the workflow's secret names it.
      GPURENTAL_JOURNAL_URL: pg.connStr().replace("://tf@", `://tf:${PG_PASSWORD}@`),
      GPURENTAL_RELEASE_SITE: `https://localhost:${server.port}`,
      GPURENTAL_VERSION: version,
      PIPELINE_TOOLS: join(root, "runner-tools"),
    });
  });

  afterAll(async () => {
    await pg?.stop();
    await new Promise((r) => github?.server.close(r));
  });

  const stage = async (name: string, extra: NodeJS.ProcessEnv = {}): Promise<ProcessResult> => {
    const r = await run("./hcl-pipeline.sh", [name], repo, { ...ranEnv, ...extra });
    printed.push(r.stdout, r.stderr);
    return r;
  };

  test("plan, comment (then updated), apply, and a nightly strays run, with no node on PATH", async () => {
    const gates = { PIPELINE_GATES: "--fail-on disk-loss,refusal" };
    const plan = await stage("plan", gates);
    expect({ code: plan.code, err: plan.stderr }).toMatchObject({ code: 0 });
    expect(plan.stdout).toContain("Plan: 2 to add, 0 to change, 0 to destroy.");
    expect(readFileSync(join(repo, "pipeline-out", "report.md"), "utf8")).toContain(
      "#### Instances: 2 to create",
    );
    // The command came from the release, checked against its sums, once.
    expect(readdirSync(join(root, "runner-tools", version))).toEqual(["gpurental"]);

    const event = { GITHUB_TOKEN, GITHUB_API_URL: github.url, GITHUB_REPOSITORY: "acme/infra" };
    const env = { ...event, GITHUB_EVENT_PATH: join(root, "github-event.json") };
    expect((await stage("comment", env)).stdout).toContain("Posted the plan report.");
    expect((await stage("comment", env)).stdout).toContain("Updated the plan report (comment 1).");
    expect(github.comments).toHaveLength(1);
    expect(github.comments[0]?.body).toContain("#### Instances: 2 to create");

    const apply = await stage("apply");
    expect(apply.code).toBe(0);
    expect(apply.stdout).toContain("Apply complete! Resources: 2 added");
    expect(await pg!.query("select count(*) from gpu_fleet_hcl.states")).toBe("1");
    // The released provider recorded each deploy in the database before sending it (one journal,
    // this state's), and kept no journal file on the runner.
    expect(await pg!.query("select count(*) from gpurental_journal.journals")).toBe("1");
    const deploys = await pg!.query(
      "select count(distinct record->>'entry') from gpurental_journal.records where record->>'kind' = 'instance'",
    );
    expect({ deploysRecorded: Number(deploys) }).toEqual({ deploysRecorded: 2 });
    expect(existsSync(join(repo, "hcl", ".terraform", "gpurental-journal"))).toBe(false);

    const { settings } = await fakeBackend();
    const client = new GpurentalClient({ baseUrl: settings.GPURENTAL_BASE_URL!, token: teamKey });
    const clean = await stage("strays");
    expect(clean.code).toBe(0);
    const planted = await client.deployInstance({
      offer_id: DEMO_IDS.offer,
      template_id: DEMO_IDS.templateSsh,
      disk_gb: 20,
      label: "left-by-hand",
    });
    const found = await stage("strays");
    expect(found.code).toBe(2);
    expect(found.stdout).toContain(planted.id);

    const destroy = await stage("plan", { PIPELINE_DESTROY: "true" });
    expect(destroy.stdout).toContain("Plan: 0 to add, 0 to change, 2 to destroy.");
    expect((await stage("apply")).code).toBe(0);
    await client.destroyInstance(planted.id);
    for (const text of printed) {
      expect(text).not.toContain(teamKey);
      expect(text).not.toContain(GITHUB_TOKEN);
      expect(text).not.toContain(PG_PASSWORD);
    }
  });
});

/** A PATH with every program of /usr/bin and /bin, and terraform, but no node, npm or npx. */
function systemPathWithoutNode(): string {
  const dir = join(root, "system-bin");
  if (existsSync(dir)) return dir;
  mkdirSync(dir);
  for (const from of ["/usr/local/bin", "/usr/bin", "/bin"]) {
    if (!existsSync(from)) continue;
    for (const name of readdirSync(from)) {
      if (/^(node|nodejs|npm|npx|corepack)$/.test(name) || existsSync(join(dir, name))) continue;
      symlinkSync(join(from, name), join(dir, name));
    }
  }
  return dir;
}

/** GitHub's three REST calls the comment stage makes, for one pull request, with a bearer token. */
async function fakeGitHub(token: string) {
  const comments: { id: number; body: string }[] = [];
  const server = createServer((req, res) => {
    let text = "";
    req.on("data", (c: Buffer) => {
      text += c.toString("utf8");
    });
    req.on("end", () => {
      const url = new URL(req.url ?? "/", "http://github.test");
      const answer = (status: number, body: unknown) => {
        res.writeHead(status, { "content-type": "application/json" });
        res.end(JSON.stringify(body));
      };
      if (req.headers.authorization !== `Bearer ${token}`) return answer(401, { message: "Bad credentials" });
      const issue = "/repos/acme/infra/issues/7/comments";
      if (req.method === "GET" && url.pathname === issue) return answer(200, comments);
      if (req.method === "POST" && url.pathname === issue) {
        const comment = { id: comments.length + 1, body: JSON.parse(text).body as string };
        comments.push(comment);
        return answer(201, comment);
      }
      const edit = /^\/repos\/acme\/infra\/issues\/comments\/(\d+)$/.exec(url.pathname);
      const comment = edit && comments.find((c) => c.id === Number(edit[1]));
      if (req.method === "PATCH" && comment) {
        comment.body = JSON.parse(text).body;
        return answer(200, comment);
      }
      answer(404, { message: "Not Found" });
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, comments };
}
