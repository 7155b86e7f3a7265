import { execFileSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type ReleaseResult, release } from "../../scripts/release/release";
import { type FakeBackend, startFakeBackend } from "../../src/fake-backend";
import { generateServerCertificate } from "../../src/plugin/cert";
import { runProcess, startProcess } from "../../src/testing/child-process";
import { until } from "../../src/testing/until";
import { version } from "../../src/version";
import { cdktfCliEnv } from "../cdktf/cli-env";
import { findTerraform } from "../e2e/harness";
import { TestKeyring } from "./gpg";
import { type StaticServer, serveStatic } from "./static-server";

// The release as users get it: `npm run release` (linux_amd64 here) signed with a throwaway key,
// its site folder served over HTTPS by a static server whose certificate Terraform trusts through
// SSL_CERT_FILE, and the real terraform installing the standalone provider from it, as a private
// registry and as a network mirror, then planning, applying and destroying with no node on PATH.

const PLATFORM = "linux_amd64";
const ZIP = `terraform-provider-gpurental_${version}_${PLATFORM}.zip`;
const SUMS = `terraform-provider-gpurental_${version}_SHA256SUMS`;
const COMMAND_ZIP = `gpurental_${version}_${PLATFORM}.zip`;

/** The one entry of a release zip, by unzip(1). */
function unzipped(zip: string): { name: string; data: Buffer } {
  const name = execFileSync("unzip", ["-Z1", zip], { encoding: "utf8" }).trim();
  return { name, data: execFileSync("unzip", ["-p", zip, name], { maxBuffer: 256 << 20 }) };
}

let root: string;
let keyring: TestKeyring;
let keyId: string;
let rel: ReleaseResult;
let server: StaticServer;
let backend: FakeBackend;
let terraform: string;
/** A PATH with terraform and nothing else: no node. */
let binDir: string;
let caFile: string;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "gpurental-release-"));
  keyring = new TestKeyring(join(root, "gnupg"));
  keyId = keyring.newKey("gpurental release test");
  rel = await release({
    platforms: [PLATFORM],
    outDir: join(root, "release"),
    env: { ...keyring.env, GPURENTAL_RELEASE_GPG_KEY: keyId },
    log: () => {},
  });
  const cert = generateServerCertificate();
  caFile = join(root, "ca.pem");
  writeFileSync(caFile, cert.certPem);
  server = await serveStatic(rel.site, cert);
  backend = await startFakeBackend({ port: 0, seed: "demo", transitions: "immediate" });
  terraform = findTerraform();
  binDir = join(root, "bin");
  mkdirSync(binDir);
  symlinkSync(terraform, join(binDir, "terraform"));
}, 120_000);

afterAll(async () => {
  await server?.close();
  await backend?.close();
  keyring?.close();
  if (root) rmSync(root, { recursive: true, force: true });
});

afterEach(() => server.overrides.clear());

/** A working directory with its own HOME, temp dir and CLI config, and terraform with no node on PATH. */
function workspace(name: string, main: string, cliConfig = "") {
  const dir = join(root, name);
  for (const sub of ["work", "home", "tmp"]) mkdirSync(join(dir, sub), { recursive: true });
  writeFileSync(join(dir, "cli.tfrc"), cliConfig);
  writeFileSync(join(dir, "work", "main.tf"), main);
  const env: NodeJS.ProcessEnv = {
    PATH: binDir,
    HOME: join(dir, "home"),
    TMPDIR: join(dir, "tmp"),
    SSL_CERT_FILE: caFile,
    TF_CLI_CONFIG_FILE: join(dir, "cli.tfrc"),
    CHECKPOINT_DISABLE: "1",
    TF_IN_AUTOMATION: "1",
    TF_INPUT: "0",
    GPURENTAL_BASE_URL: backend.url,
    GPURENTAL_TOKEN: backend.credentials!.admin_session_token,
  };
  /** Starts terraform; `group`: in a process group of its own, as a terminal or a CI job runs it. */
  const start = (args: string[], extra: NodeJS.ProcessEnv = {}, group = false) =>
    startProcess(terraform, args, { cwd: join(dir, "work"), env: { ...env, ...extra }, processGroup: group });
  const run = (args: string[], extra: NodeJS.ProcessEnv = {}) => start(args, extra).result;
  const ok = async (args: string[], extra: NodeJS.ProcessEnv = {}) => {
    const r = await run(args, extra);
    if (r.code !== 0) throw new Error(`terraform ${args.join(" ")} exited ${r.code}:\n${r.output}`);
    return r.output;
  };
  const lockFile = () => readFileSync(join(dir, "work", ".terraform.lock.hcl"), "utf8");
  return { dir, start, run, ok, lockFile };
}

function registryConfig(): string {
  const c = backend.credentials!;
  return `terraform {
  required_providers {
    gpurental = {
      source  = "localhost:${server.port}/gpurental/gpurental"
      version = "${version}"
    }
  }
}

provider "gpurental" {}

resource "gpurental_instance" "gpu" {
  offer_id    = "${c.offer_id}"
  template_id = "${c.template_id}"
  disk_gb     = 50
  label       = "from-a-release"
}

output "status" {
  value = gpurental_instance.gpu.status
}
`;
}

function mirrorCliConfig(): string {
  return `provider_installation {
  network_mirror {
    url     = "https://localhost:${server.port}/mirror/"
    include = ["registry.terraform.io/gpurental/gpurental"]
  }
  direct {
    exclude = ["registry.terraform.io/gpurental/gpurental"]
  }
}
`;
}

/** The resident provider processes serving sockets in `dir` (Linux /proc). */
function residentPids(dir: string): number[] {
  return readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .filter((pid) => {
      try {
        const args = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
        const i = args.indexOf("--resident");
        return i !== -1 && (args[i + 1] ?? "").startsWith(`${dir}/`);
      } catch {
        return false;
      }
    })
    .map(Number);
}

const hashesOf = (lock: string) => [...lock.matchAll(/"((?:h1|zh):[^"]+)"/g)].map((m) => m[1]);

test("the release holds the signed sums, the manifest and one zip per platform; a second build is byte-identical", async () => {
  const archive = rel.built.find((b) => b.platform === PLATFORM)!;
  expect(archive.executed).toBe(`terraform-provider-gpurental ${version}`);
  // The compact form: what Terraform hashes on every command is a fraction of the 129 MB runtime.
  expect(archive.form).toBe("compact");
  expect(archive.size).toBeLessThan(35e6);
  expect(rel.files.sort()).toEqual(
    [SUMS, `${SUMS}.sig`, ZIP, COMMAND_ZIP, `terraform-provider-gpurental_${version}_manifest.json`].sort(),
  );
  expect(
    JSON.parse(
      readFileSync(join(rel.outDir, `terraform-provider-gpurental_${version}_manifest.json`), "utf8"),
    ),
  ).toEqual({
    version: 1,
    metadata: { protocol_versions: ["6.0"] },
  });
  // gpg verifies the detached signature with the public key the release ships.
  keyring.gpg(["--verify", join(rel.outDir, `${SUMS}.sig`), join(rel.outDir, SUMS)]);
  expect(readFileSync(join(rel.outDir, SUMS), "utf8")).toContain(`${archive.shasum}  ${ZIP}\n`);
  // The command's archive: the same executable, named gpurental, under the same signed sums, and
  // hosted beside the provider's; the registry and the mirror list only the provider.
  expect(archive.command).toEqual({
    filename: COMMAND_ZIP,
    shasum: expect.stringMatching(/^[0-9a-f]{64}$/),
    executed: `gpurental --version: ${version}`,
  });
  expect(readFileSync(join(rel.outDir, SUMS), "utf8")).toContain(
    `${archive.command.shasum}  ${COMMAND_ZIP}\n`,
  );
  const command = unzipped(join(rel.outDir, COMMAND_ZIP));
  const provider = unzipped(join(rel.outDir, ZIP));
  expect([command.name, provider.name]).toEqual(["gpurental", `terraform-provider-gpurental_v${version}`]);
  // Buffers of 29 MB: compared as bytes, never by Jest's deep equality.
  expect(command.data.equals(provider.data)).toBe(true);
  expect(existsSync(join(rel.site, "releases", version, COMMAND_ZIP))).toBe(true);
  expect(JSON.stringify(readdirSync(join(rel.site, "mirror")))).not.toContain("gpurental_");

  const again = await release({
    platforms: [PLATFORM],
    outDir: join(root, "release-again"),
    env: { ...keyring.env, GPURENTAL_RELEASE_GPG_KEY: keyId },
    log: () => {},
  });
  expect(readFileSync(join(again.outDir, ZIP)).equals(readFileSync(join(rel.outDir, ZIP)))).toBe(true);
  expect(
    readFileSync(join(again.outDir, COMMAND_ZIP)).equals(readFileSync(join(rel.outDir, COMMAND_ZIP))),
  ).toBe(true);
  expect(readFileSync(join(again.outDir, SUMS), "utf8")).toBe(readFileSync(join(rel.outDir, SUMS), "utf8"));
}, 120_000);

test("a release is built from a Node.js line with security support, and names when it ends", async () => {
  expect(archiveNode()).toMatch(/^22\./);
  expect(readFileSync(join(rel.outDir, "RELEASE-NOTES.md"), "utf8")).toContain(
    "The Node.js line built in has security\nsupport until 2027-04-30.",
  );
  const opts = {
    platforms: [PLATFORM],
    outDir: join(root, "refused"),
    env: { ...keyring.env, GPURENTAL_RELEASE_GPG_KEY: keyId },
    log: () => {},
  };
  await expect(release({ ...opts, now: new Date("2027-05-01T00:00:00Z") })).rejects.toThrow(
    "Node.js 22 has had no security fixes since 2027-04-30: build with a newer --node",
  );
  await expect(release({ ...opts, node: "20" })).rejects.toThrow(
    '--node must be a Node.js LTS line this repository carries (22, 24), not "20"',
  );
  expect(existsSync(join(root, "refused"))).toBe(false);
});

function archiveNode(): string {
  return rel.built.find((b) => b.platform === PLATFORM)?.node ?? "";
}

test("terraform init installs from the private registry with the signature verified; plan, apply and destroy run with no node on PATH", async () => {
  const ws = workspace("registry", registryConfig());
  expect(readdirSync(binDir)).toEqual(["terraform"]);
  const init = await ws.ok(["init", "-no-color"]);
  expect(init).toContain(
    `Installed localhost:${server.port}/gpurental/gpurental v${version} (self-signed, key ID ${rel.keyId})`,
  );
  const archive = rel.built.find((b) => b.platform === PLATFORM)!;
  const hashes = hashesOf(ws.lockFile());
  expect(hashes).toEqual(expect.arrayContaining([archive.h1, `zh:${archive.shasum}`]));

  const before = Object.keys(backend.state().instances).length;
  await ws.ok(["apply", "-no-color", "-auto-approve"]);
  expect(Object.keys(backend.state().instances).length).toBe(before + 1);
  const plan = await ws.ok(["plan", "-no-color", "-detailed-exitcode"]);
  expect(plan).toContain("No changes.");

  // In automation (TF_IN_AUTOMATION here), the launches of one command are sessions of one
  // provider process of that command (src/executable/compact/command-session.c), which exits
  // with it: plan's three launches, each a session.
  // A short directory: a socket's path must fit in 103 bytes, and this test's temp paths are deep.
  const commandDir = mkdtempSync(join(tmpdir(), "gr-"));
  chmodSync(commandDir, 0o700);
  const traced = await ws.ok(["plan", "-no-color", "-detailed-exitcode"], {
    TF_LOG_PROVIDER: "debug",
    GPURENTAL_PROVIDER_RESIDENT_DIR: commandDir,
  });
  expect(traced).toContain("No changes.");
  expect(traced.match(/session started/g)).toHaveLength(3);
  for (let i = 0; i < 50 && residentPids(commandDir).length > 0; i++)
    await new Promise((r) => setTimeout(r, 100));
  expect(residentPids(commandDir)).toEqual([]);
  expect(readdirSync(commandDir).filter((f) => f.endsWith(".sock"))).toEqual([]);
  rmSync(commandDir, { recursive: true, force: true });

  // The resident provider process works with the executable: the first plan starts it (the
  // executable itself with --resident), the second is served by it.
  const runDir = join(ws.dir, "run");
  const resident = { GPURENTAL_PROVIDER_RESIDENT: "on", GPURENTAL_PROVIDER_RESIDENT_DIR: runDir };
  try {
    await ws.ok(["plan", "-no-color", "-detailed-exitcode"], resident);
    await new Promise((r) => setTimeout(r, 500));
    const again = await ws.ok(["plan", "-no-color", "-detailed-exitcode"], { ...resident, TF_LOG: "debug" });
    expect(again).toContain("No changes.");
    const pids = residentPids(runDir);
    expect(pids).toHaveLength(1);
    // The compact executable runs its runtime from the user's cache, and so does the resident.
    const cmdline = readFileSync(`/proc/${pids[0]}/cmdline`, "utf8").split("\0");
    expect(cmdline[0]).toMatch(
      new RegExp(
        `^${join(ws.dir, "home", ".cache", "gpurental", "runtime")}/terraform-provider-gpurental-[0-9a-f]{32}$`,
      ),
    );
    expect(cmdline[1]).toBe("--resident");
  } finally {
    for (const pid of residentPids(runDir)) process.kill(pid, "SIGTERM");
  }

  await ws.ok(["destroy", "-no-color", "-auto-approve"]);
  const left = Object.values(backend.state().instances).filter(
    (i) => i.label === "from-a-release" && i.status !== "destroyed",
  );
  expect(left).toEqual([]);
}, 180_000);

test("in automation, kill -9 of terraform, of the command's provider process, and Ctrl-C mid-apply: the next apply converges, none deployed twice", async () => {
  // An organization of its own, so that only this test's instances are counted.
  const org = backend.createOrg({ name: "interrupted", balance_micro: 1_000_000_000_000 });
  const user = backend.createUser({ email: "interrupted@release.test" });
  backend.addMember(org.id, user.id, "admin");
  const machine = backend.createMachine({ disk_gb: 20_000, available_disk_gb: 20_000, registered: true });
  const offer = backend.createOffer({
    machine_id: machine.id,
    gpu_model: "RTX 4090",
    num_gpus: 1,
    free_units: 20,
  });
  const main = registryConfig()
    .replace(/resource "gpurental_instance"[\s\S]*$/, "")
    .concat(`resource "gpurental_instance" "gpu" {
  count       = 4
  offer_id    = "${offer.id}"
  template_id = "${backend.credentials!.template_id}"
  disk_gb     = 50
  label       = "interrupted"
}
`);
  const ws = workspace("interrupted", main);
  // A short directory: a socket's path must fit in 103 bytes, and this test's temp paths are deep.
  const commandDir = mkdtempSync(join(tmpdir(), "gr-"));
  chmodSync(commandDir, 0o700);
  const env = {
    GPURENTAL_TOKEN: backend.createSession(user.id, org.id),
    GPURENTAL_PROVIDER_RESIDENT_DIR: commandDir,
  };
  const live = () => backend.listInstances(org.id).filter((i) => i.status !== "destroyed");
  const inState = async () =>
    (await ws.ok(["state", "list"], env)).split("\n").filter((l) => l.startsWith("gpurental_instance."));
  try {
    await ws.ok(["init", "-no-color"], env);
    let deploys = 0;
    for (const victim of ["terraform", "the command's provider process", "Ctrl-C"] as const) {
      backend.setTransitions({ afterMs: 600_000 });
      const apply = ws.start(["apply", "-no-color", "-auto-approve"], env, true);
      await until(
        "4 instances are creating",
        () => live().filter((i) => i.status === "creating").length === 4,
      );
      const [command] = residentPids(commandDir);
      expect(command).toBeDefined();
      // Ctrl-C reaches terraform's process group (its launches ignore it); the command's process
      // was started outside it and ends with its sessions.
      if (victim === "Ctrl-C") process.kill(-apply.child.pid!, "SIGINT");
      else process.kill(victim === "terraform" ? apply.child.pid! : command!, "SIGKILL");
      await apply.result;
      // Nothing of the command is left: its launches and its provider process exit with it.
      await until("the command's provider process is gone", () => residentPids(commandDir).length === 0);

      backend.setTransitions("immediate");
      const again = await ws.ok(["apply", "-no-color", "-auto-approve"], env);
      // After a Ctrl-C, the creates Terraform stopped answered first, so their instances may be in
      // the state already. After kill -9 none is, and the journal gives each one back.
      if (victim !== "Ctrl-C")
        expect(again.match(/Adopted instance [0-9a-f-]+, deployed at/g)).toHaveLength(4);
      deploys += 4;
      expect(live()).toHaveLength(4);
      expect(await inState()).toHaveLength(4);
      // Counted over every instance ever deployed: none was deployed twice.
      expect(backend.listInstances(org.id)).toHaveLength(deploys);
      await ws.ok(["destroy", "-no-color", "-auto-approve"], env);
      expect(live()).toEqual([]);
    }
  } finally {
    backend.setTransitions("immediate");
    for (const pid of residentPids(commandDir)) process.kill(pid, "SIGKILL");
    rmSync(commandDir, { recursive: true, force: true });
  }
}, 180_000);

test("with no private directory for its runtime, the executable runs from memory and every plan says so", async () => {
  const ws = workspace("in-memory", registryConfig());
  await ws.ok(["init", "-no-color"]);
  // HOME and TMPDIR that anyone may write to (not sticky): the launcher trusts neither.
  for (const sub of ["home", "tmp"]) chmodSync(join(ws.dir, sub), 0o777);
  const plan = await ws.ok(["plan", "-no-color"]);
  expect(plan).toContain("Warning: The provider unpacks itself into memory at every launch");
  expect(plan).toContain("Set GPURENTAL_RUNTIME_DIR to a directory of yours");
  expect(plan).toContain("Plan: 1 to add, 0 to change, 0 to destroy.");
  expect(readdirSync(join(ws.dir, "home"))).toEqual([]);
  // Given a directory, it unpacks once and the warning is gone.
  const runtimeDir = join(ws.dir, "runtime");
  const again = await ws.ok(["plan", "-no-color"], { GPURENTAL_RUNTIME_DIR: runtimeDir });
  expect(again).not.toContain("into memory");
  // The runtime, and the stamp of its verified file (docs/design/runtime-integrity.md).
  const unpacked = readdirSync(runtimeDir).filter((f) => f.startsWith("terraform-provider-gpurental-"));
  expect(unpacked.filter((f) => !f.endsWith(".stamp"))).toHaveLength(1);
  expect(unpacked.filter((f) => f.endsWith(".stamp"))).toEqual([
    `${unpacked.find((f) => !f.endsWith(".stamp"))}.stamp`,
  ]);
}, 120_000);

test("terraform init installs from the network mirror, and `providers lock -net-mirror` writes the same hash", async () => {
  const main = `terraform {
  required_providers {
    gpurental = { source = "gpurental/gpurental", version = "${version}" }
  }
}
`;
  const ws = workspace("mirror", main, mirrorCliConfig());
  const init = await ws.ok(["init", "-no-color"]);
  expect(init).toContain(`Installed gpurental/gpurental v${version}`);
  const archive = rel.built.find((b) => b.platform === PLATFORM)!;
  expect(hashesOf(ws.lockFile())).toEqual([archive.h1]);

  const lockOnly = workspace("lock", main);
  await lockOnly.ok([
    "providers",
    "lock",
    `-net-mirror=https://localhost:${server.port}/mirror/`,
    `-platform=${PLATFORM}`,
  ]);
  expect(hashesOf(lockOnly.lockFile())).toEqual([archive.h1]);
}, 120_000);

test("terraform init refuses a tampered zip and a signature by another key, with its own errors", async () => {
  const zipPath = `/releases/${version}/${ZIP}`;
  const tampered = Buffer.from(readFileSync(join(rel.outDir, ZIP)));
  tampered[tampered.length - 100] = (tampered[tampered.length - 100] ?? 0) ^ 0xff;
  server.overrides.set(zipPath, tampered);
  const ws = workspace("tampered", registryConfig());
  const r = await ws.run(["init", "-no-color"]);
  expect(r.code).toBe(1);
  expect(r.output).toMatch(/Failed to install provider/);
  expect(r.output).toMatch(/checksum/i);
  expect(existsSync(join(ws.dir, "work", ".terraform.lock.hcl"))).toBe(false);
  server.overrides.clear();

  const other = keyring.newKey("someone else");
  const wrongSig = join(root, "wrong.sig");
  keyring.sign(other, join(rel.outDir, SUMS), wrongSig);
  server.overrides.set(`/releases/${version}/${SUMS}.sig`, readFileSync(wrongSig));
  const ws2 = workspace("wrong-signature", registryConfig());
  const r2 = await ws2.run(["init", "-no-color"]);
  expect(r2.code).toBe(1);
  expect(r2.output).toMatch(/Failed to install provider/);
  expect(r2.output).toMatch(/signature/i);
}, 120_000);

test("`terraform providers lock -net-mirror` gives a CDKTF stack the lock file with which `cdktf deploy` needs no --skip-provider-lock", async () => {
  const repo = join(__dirname, "..", "..");
  const dir = join(root, "cdktf");
  for (const sub of ["app", "home", "tmp"]) mkdirSync(join(dir, sub), { recursive: true });
  writeFileSync(join(dir, "cli.tfrc"), mirrorCliConfig());
  const c = backend.credentials!;
  writeFileSync(
    join(dir, "app", "main.js"),
    `const { App, TerraformStack } = require("cdktf");
const { GpurentalProvider, Instance } = require(${JSON.stringify(join(repo, "dist", "index.js"))});
const app = new App();
const stack = new TerraformStack(app, "gpu");
new GpurentalProvider(stack, "gpurental");
new Instance(stack, "gpu", { offerId: "${c.offer_id}", templateId: "${c.template_id}", diskGb: 50, label: "cdktf-release" });
app.synth();
`,
  );
  writeFileSync(
    join(dir, "app", "cdktf.json"),
    JSON.stringify({
      language: "typescript",
      app: "node main.js",
      output: "cdktf.out",
      sendCrashReports: false,
    }),
  );
  const env = cdktfCliEnv({
    HOME: join(dir, "home"),
    TMPDIR: join(dir, "tmp"),
    CDKTF_HOME: join(dir, "home", ".cdktf"),
    SSL_CERT_FILE: caFile,
    TF_CLI_CONFIG_FILE: join(dir, "cli.tfrc"),
    GPURENTAL_BASE_URL: backend.url,
    GPURENTAL_TOKEN: c.admin_session_token,
    NODE_PATH: join(repo, "node_modules"),
  });
  const cdktf = join(repo, "node_modules", "cdktf-cli", "bundle", "bin", "cdktf");
  // Asynchronous: the static server and the fake backend answer from this process.
  const run = async (cmd: string, args: string[], cwd = join(dir, "app")) => {
    const r = await runProcess(cmd, args, { cwd, env });
    if (r.code !== 0) throw new Error(`${cmd} ${args.join(" ")} exited ${r.code}:\n${r.output}`);
    return r.output;
  };
  await run(process.execPath, [cdktf, "synth"]);
  const stackDir = join(dir, "app", "cdktf.out", "stacks", "gpu");
  await run(
    terraform,
    ["providers", "lock", `-net-mirror=https://localhost:${server.port}/mirror/`, `-platform=${PLATFORM}`],
    stackDir,
  );
  const archive = rel.built.find((b) => b.platform === PLATFORM)!;
  expect(readFileSync(join(stackDir, ".terraform.lock.hcl"), "utf8")).toContain(archive.h1);
  const deploy = await run(process.execPath, [cdktf, "deploy", "--auto-approve"]);
  expect(deploy).not.toMatch(/providers lock/);
  expect(
    Object.values(backend.state().instances).filter(
      (i) => i.label === "cdktf-release" && i.status !== "destroyed",
    ),
  ).toHaveLength(1);
  await run(process.execPath, [cdktf, "destroy", "--auto-approve"]);
  expect(
    Object.values(backend.state().instances).filter(
      (i) => i.label === "cdktf-release" && i.status !== "destroyed",
    ),
  ).toHaveLength(0);
}, 300_000);
