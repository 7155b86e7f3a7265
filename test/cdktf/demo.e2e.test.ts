import type { ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { Writable } from "node:stream";
import { DEMO_STACK, type DeployedContext, runDemo } from "../../src/cli/demo/demo";
import { DEMO_IDS } from "../../src/fake-backend";
import { type ProcessResult, startProcess } from "../../src/testing/child-process";

// End to end with the real terraform and cdktf CLIs: the example app is synthesized, deployed
// against the in-process fake backend, checked (outputs and the backend's own records) and
// destroyed; then the `gpurental demo` command itself, as `npm run demo` runs it, with its failure
// paths. Needs the built package (dist/, made by `npm ci` through `prepare`).

jest.setTimeout(300_000);

const ROOT = join(__dirname, "..", "..");
const BIN = join(ROOT, "bin", "gpurental");

function collector(): { stream: Writable; text: () => string } {
  const chunks: Buffer[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      chunks.push(Buffer.from(chunk));
      done();
    },
  });
  return { stream, text: () => Buffer.concat(chunks).toString("utf8") };
}

function runCli(
  args: string[],
  env: NodeJS.ProcessEnv = {},
  onStdout?: (soFar: string, child: ChildProcess) => void,
): Promise<ProcessResult> {
  const run = startProcess(process.execPath, [BIN, ...args], { cwd: ROOT, env: { ...process.env, ...env } });
  if (onStdout) run.child.stdout?.on("data", () => onStdout(run.stdout(), run.child));
  return run.result;
}

/** Command lines of live processes that mention `needle` (providers run from the work folder's mirror). */
function processesMentioning(needle: string): string[] {
  const found: string[] = [];
  for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8").replace(/\0/g, " ");
      if (cmd.includes(needle)) found.push(`${pid}: ${cmd}`);
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

function sensitiveOutputs(statePath: string): string[] {
  const state = JSON.parse(readFileSync(statePath, "utf8")) as {
    outputs: Record<string, { value: unknown; sensitive?: boolean }>;
  };
  return Object.values(state.outputs)
    .filter((o) => o.sensitive)
    .map((o) => String(o.value));
}

beforeAll(() => {
  if (!existsSync(join(ROOT, "dist", "cli", "main.js"))) {
    throw new Error("the package is not built: run `npm run build` first");
  }
});

describe("example CDKTF app against the in-process fake backend", () => {
  it("deploys, reports, destroys everything and leaves the temp directory as it found it", async () => {
    // The demo's work folder goes in a temp directory of this test's, so what it leaves there can be
    // listed.
    const tmp = mkdtempSync(join(tmpdir(), "gpurental-demo-test-"));
    const out = collector();
    let synthesized = false;
    let seen: {
      instance?: Record<string, unknown>;
      keys?: Array<Record<string, unknown>>;
      secrets?: string[];
    } = {};
    try {
      const result = await runDemo({
        tempDir: tmp,
        transitions: "immediate",
        out: out.stream,
        onDeployed: ({ backend, outputs, orgId, statePath }: DeployedContext) => {
          synthesized = existsSync(
            join(dirname(statePath), "app", "cdktf.out", "stacks", DEMO_STACK, "cdk.tf.json"),
          );
          const record = backend.instance(String(outputs.instance_id));
          seen = {
            instance: record ? { ...record } : undefined,
            keys: Object.values(backend.state().api_keys)
              .filter((k) => k.org_id === orgId && k.revoked_at === null)
              .map((k) => ({ ...k })),
            secrets: sensitiveOutputs(statePath),
          };
        },
      });

      // Outputs: what a user needs, and no secret.
      const o = result.outputs;
      expect(o.instance_id).toMatch(/^[0-9a-f-]{36}$/);
      expect(o.instance_status).toBe("running");
      expect(o.ssh_command).toMatch(/^ssh -p \d+ \S+@\S+$/);
      expect(o.jupyter_address).toMatch(/^https?:\/\/\S+token=…$/);
      expect(o).not.toHaveProperty("jupyter_url");
      expect(o.offer_gpu_model).toBe("RTX 4090");
      expect(o.offer_id).toBe(DEMO_IDS.offer);
      expect(o.ci_key_prefix).toMatch(/^gpr_[0-9a-f]{8}$/);
      expect(o).not.toHaveProperty("ci_key_secret");
      expect(o).not.toHaveProperty("access_token");

      // The backend's own records: the cheapest rentable offer (the cheaper one goes into
      // maintenance within 24 hours), the Jupyter template, the demo admin's SSH key.
      expect(result.statusAfterDeploy).toBe("running");
      expect(seen.instance).toMatchObject({
        status: "running",
        offer_id: DEMO_IDS.offer,
        template_id: DEMO_IDS.templateJupyter,
        disk_gb: 50,
        label: "cdktf-workstation",
      });
      expect(seen.keys).toEqual([expect.objectContaining({ name: "ci-pipelines", kind: "team" })]);

      // The secrets exist in the state (sensitive outputs) and never in what the demo printed.
      const printed = out.text();
      expect(seen.secrets?.length).toBe(3);
      for (const secret of seen.secrets ?? []) {
        expect(secret.length).toBeGreaterThan(8);
        expect(printed).not.toContain(secret);
      }
      expect(printed).toContain(`instance ${String(o.instance_id)} is running`);
      for (const part of [
        `Work folder: ${tmp}/gpurental-demo-`,
        "removed when the demo ends",
        "fake backend up at http://127.0.0.1:",
        "provider 0.1.0 installed",
        "deployed",
        "SSH           ssh -p ",
        "Jupyter",
        "Spend so far",
        "destroyed: no instance and no API key left",
        "fake backend stopped\n",
        `work folder ${tmp}/gpurental-demo-`,
      ]) {
        expect(printed).toContain(part);
      }
      expect(synthesized).toBe(true);

      // Destroyed: nothing left in the backend, nothing left running, nothing left on disk.
      expect(result.liveInstancesAtEnd).toBe(0);
      expect(result.liveApiKeysAtEnd).toBe(0);
      expect(result.workDir.startsWith(`${tmp}/gpurental-demo-`)).toBe(true);
      expect(readdirSync(tmp)).toEqual([]);
      expect(processesMentioning(tmp)).toEqual([]);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });
});

describe("demo --keep", () => {
  it("waits, and when stopped in a hurry says what the fake backend still held; a --work-dir stays", async () => {
    const work = mkdtempSync(join(tmpdir(), "gpurental-demo-keep-"));
    const out = collector();
    const stop = new AbortController();
    const hurry = new AbortController();
    try {
      const run = runDemo({
        workDir: work,
        keep: true,
        transitions: "immediate",
        out: out.stream,
        signal: stop.signal,
        hurry: hurry.signal,
        // Stands for a second Ctrl-C (or SIGTERM), once the demo waits.
        onDeployed: () => {
          setTimeout(() => {
            stop.abort();
            hurry.abort();
          }, 200);
        },
      });
      await expect(run).rejects.toThrow("interrupted");
      const printed = out.text();
      expect(printed).toContain("Kept running (--keep)");
      // How to reach it from a shell without Node.js: a file of `export` lines, never the token itself.
      expect(printed).toContain(`  . ${work}/fake-backend.env `);
      const envFile = readFileSync(join(work, "fake-backend.env"), "utf8");
      expect(envFile).toMatch(/^export GPURENTAL_BASE_URL='http:\/\/127\.0\.0\.1:\d+'$/m);
      const token = /^export GPURENTAL_TOKEN='(gps_[^']+)'$/m.exec(envFile)?.[1];
      expect(token).toBeDefined();
      expect(printed).not.toContain(token);
      expect(statSync(join(work, "fake-backend.env")).mode & 0o777).toBe(0o600);
      expect(printed).toContain(`${work}/credentials.json`);
      expect(printed).toContain(
        "fake backend stopped with 1 instance(s) and 1 API key(s) not destroyed; they existed only in this process, so nothing is left running or billing",
      );
      expect(printed).toContain(`Work folder kept: ${work}`);
      expect(existsSync(join(work, `terraform.${DEMO_STACK}.tfstate`))).toBe(true);
      expect(processesMentioning(work)).toEqual([]);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  });
});

/** A fresh temp directory for one CLI run (its TMPDIR), so what the run leaves there can be listed. */
function freshTmp(): string {
  return mkdtempSync(join(tmpdir(), "gpurental-demo-tmp-"));
}

describe("gpurental demo", () => {
  it("ends a failed step with its reason and the end of cdktf's output, leaving nothing behind", async () => {
    const tmp = freshTmp();
    try {
      // No offer of this model exists: the instance's offer filter fails the plan, saying why.
      const run = await runCli(["demo"], { TMPDIR: tmp, GPURENTAL_GPU_MODEL: "H100" });
      expect(run.code).toBe(1);
      expect(run.stdout).toContain("No offer matches offer_filter");
      expect(run.stdout).toContain("No offer of H100 is listed on the market now.");
      expect(run.stdout).toContain(
        "The end of cdktf's output (run with --work-dir <dir> to keep all of it):",
      );
      expect(run.stdout).toContain("fake backend stopped");
      expect(run.stderr).toContain(
        "gpurental demo: cdktf deploy failed (exit code 1); see the end of cdktf's output above",
      );
      expect(readdirSync(tmp)).toEqual([]);
      expect(processesMentioning(tmp)).toEqual([]);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });

  it("keeps a --work-dir after a failure, with cdktf's whole output", async () => {
    const work = mkdtempSync(join(tmpdir(), "gpurental-demo-fail-"));
    try {
      const failed = await runCli(["demo", "--work-dir", work], { GPURENTAL_GPU_MODEL: "H100" });
      expect(failed.code).toBe(1);
      expect(failed.stderr).toContain(`cdktf deploy failed (exit code 1); see ${work}/cdktf.log`);
      expect(readFileSync(join(work, "cdktf.log"), "utf8")).toContain("No offer matches offer_filter");
      expect(failed.stdout).toContain(`Work folder kept: ${work}`);
      expect(processesMentioning(work)).toEqual([]);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  });

  it.each([
    ["Ctrl-C", "SIGINT"],
    ["SIGTERM", "SIGTERM"],
  ] as const)("stops cleanly on %s during the deploy, leaving nothing behind", async (_name, signal) => {
    const tmp = freshTmp();
    try {
      let sent = false;
      const run = await runCli(["demo"], { TMPDIR: tmp }, (soFar, child) => {
        if (!sent && soFar.includes("deploying with cdktf")) {
          sent = true;
          setTimeout(() => child.kill(signal), 1500);
        }
      });
      expect(sent).toBe(true);
      expect(run.code).toBe(130);
      expect(run.stderr).toContain("gpurental demo: interrupted");
      expect(run.stdout).toContain("fake backend stopped");
      expect(readdirSync(tmp)).toEqual([]);
      expect(processesMentioning(tmp)).toEqual([]);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });

  it("with --keep, Ctrl-C destroys what it deployed, stops and removes its folder", async () => {
    const tmp = freshTmp();
    try {
      let sent = false;
      const run = await runCli(["demo", "--keep"], { TMPDIR: tmp }, (soFar, child) => {
        if (!sent && soFar.includes("Press Ctrl-C")) {
          sent = true;
          // The state lives in the work folder while the demo waits.
          expect(readdirSync(tmp)).toHaveLength(1);
          child.kill("SIGINT");
        }
      });
      expect(sent).toBe(true);
      expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: "" });
      expect(run.stdout).toContain("Kept running (--keep)");
      expect(run.stdout).toContain("destroyed: no instance and no API key left");
      expect(run.stdout).toContain("fake backend stopped\n");
      expect(readdirSync(tmp)).toEqual([]);
      expect(processesMentioning(tmp)).toEqual([]);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });

  it("says clearly when terraform is missing", async () => {
    const run = await runCli(["demo"], { TERRAFORM_BINARY_NAME: "/nonexistent/terraform" });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('the terraform CLI was not found (looked for "/nonexistent/terraform"');
    expect(run.stdout).not.toContain("fake backend up");
  });

  it("says clearly when the port is busy, and stops", async () => {
    const server: Server = createServer();
    await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
    const address = server.address();
    const port = typeof address === "object" && address ? address.port : 0;
    try {
      const run = await runCli(["demo", "--port", String(port)]);
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(`port ${port} is already in use`);
    } finally {
      server.close();
    }
  });

  it("rejects a malformed port", async () => {
    const run = await runCli(["demo", "--port", "http"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("--port must be a number");
  });
});
