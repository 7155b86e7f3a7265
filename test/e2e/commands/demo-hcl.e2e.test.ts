import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { HCL_EXAMPLE_FILES } from "../../../src/cli/demo/example";
import { runHclDemo } from "../../../src/cli/demo/hcl";
import { runBinary } from "./io";

// `gpurental demo --hcl` with the real terraform, from the npm package (the built dist/): the
// fake backend, the provider in a private mirror, examples/hcl written into the work folder,
// terraform init, apply and destroy, and what it shows. The standalone executable runs the same
// code (test/release/standalone.e2e.test.ts runs it with no node on PATH).

jest.setTimeout(300_000);

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

let root: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "gpurental-demo-hcl-"));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

test("applies examples/hcl with terraform, shows its outputs without a secret, destroys it and keeps nothing", async () => {
  const out = collector();
  const secrets: string[] = [];
  let seen: { instances: number; keys: number; files: string[] } | undefined;
  const result = await runHclDemo({
    tempDir: root,
    transitions: "immediate",
    out: out.stream,
    onDeployed: ({ backend, orgId, statePath }) => {
      const state = backend.state();
      const c = backend.credentials!;
      secrets.push(c.admin_session_token, c.control_token);
      // The instance's access token and the CI key's secret are in the state, never in the output.
      const tfstate = JSON.parse(readFileSync(statePath, "utf8")) as {
        resources: { type: string; instances: { attributes: Record<string, unknown> }[] }[];
      };
      for (const r of tfstate.resources)
        for (const i of r.instances)
          for (const name of ["secret", "access_token"])
            if (typeof i.attributes[name] === "string") secrets.push(i.attributes[name] as string);
      seen = {
        instances: backend.listInstances(orgId).filter((i) => i.status === "running").length,
        keys: Object.values(state.api_keys).filter((k) => k.org_id === orgId && k.revoked_at === null).length,
        files: readdirSync(join(statePath, "..")).filter((f) => f.endsWith(".tf")),
      };
    },
  });
  expect(seen).toEqual({ instances: 1, keys: 1, files: [...HCL_EXAMPLE_FILES].sort() });
  // The API key's secret is among them: what the state holds is looked for in the output.
  expect(secrets.filter((s) => s.startsWith("gpr_"))).toHaveLength(1);
  const text = out.text();
  expect(result.statusAfterDeploy).toBe("running");
  expect(result.outputs.ssh_command).toMatch(/^ssh -p \d+ \S+@\S+$/);
  expect(result.outputs).not.toHaveProperty("ci_api_key_secret");
  expect(result.outputs).not.toHaveProperty("access_token");
  expect(text).toContain("examples/hcl with terraform against the embedded fake backend");
  expect(text).toContain("provider 0.1.0 installed (the package's");
  expect(text).toMatch(/gpurental_instance\.workstation: Creation complete/);
  expect(text).toContain(`SSH           ${result.outputs.ssh_command}`);
  expect(text).toContain("destroyed: no instance and no API key left in the fake backend");
  for (const s of secrets) expect(text).not.toContain(s);
  expect({ instances: result.liveInstancesAtEnd, keys: result.liveApiKeysAtEnd }).toEqual({
    instances: 0,
    keys: 0,
  });
  expect(existsSync(result.workDir)).toBe(false);
});

test("with --work-dir the folder is kept, and its log holds no secret", async () => {
  const workDir = join(root, "kept");
  const out = collector();
  const secrets: string[] = [];
  await runHclDemo({
    workDir,
    transitions: "immediate",
    out: out.stream,
    onDeployed: ({ backend }) => {
      secrets.push(backend.credentials!.admin_session_token);
    },
  });
  const log = readFileSync(join(workDir, "terraform.log"), "utf8");
  expect(log).toContain("Apply complete!");
  for (const s of secrets) expect(log).not.toContain(s);
  expect(
    readdirSync(join(workDir, "hcl"))
      .filter((f) => f.endsWith(".tf"))
      .sort(),
  ).toEqual([...HCL_EXAMPLE_FILES].sort());
});

test("`gpurental demo --hcl --cdk cdktn` is refused, naming both options", async () => {
  const r = await runBinary(["demo", "--hcl", "--cdk", "cdktn"], { PATH: process.env.PATH }, root);
  expect(r.code).toBe(1);
  expect(r.stderr).toMatch(/option '--hcl' cannot be used with option '--cdk <cdk>'/);
});
