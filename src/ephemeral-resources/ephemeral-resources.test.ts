import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { GpurentalClient } from "../api/client";
import { journalFiles, readJournalFile } from "../journal";
import type { CtyValue } from "../plugin/cty";
import { useFakeBackend } from "../testing/fake-backend";

// The ephemeral resources driven in memory the way Terraform drives them (Validate, Open, Close,
// and the shutdown that follows a run whose Close never came), against the in-process fake backend.

type Rec = Record<string, CtyValue>;

const fake = useFakeBackend({ workDir: "test" });

const harness = () => fake.provider();

async function configured(token = fake.creds.admin_session_token, terraformVersion = "1.11.4") {
  const h = harness();
  expect(await h.configure({ base_url: fake.url, token }, terraformVersion)).toEqual([]);
  return h;
}

function admin(): GpurentalClient {
  return fake.client();
}

function key(id: string) {
  return fake.backend.state().api_keys[id];
}

/** Every record the deploy journal of the working directory holds, as text. */
function journalText(): string {
  const dir = join(fake.workDir, ".terraform", "gpurental-journal");
  return readdirSync(dir)
    .map((f) => readFileSync(join(dir, f), "utf8"))
    .join("\n");
}

describe('ephemeral "gpurental_api_key"', () => {
  test("Open creates the key, journaled without its secret; Close revokes it and closes the entry", async () => {
    const h = await configured();
    const opened = await h.open("gpurental_api_key", { name: "run", kind: "team" });
    expect(opened.diags).toEqual([]);
    const v = opened.value as Rec;
    expect(v).toMatchObject({ name: "run", kind: "team" });
    expect(v.secret).toMatch(/^gpr_[0-9a-f]{48}$/);
    // Keys do not expire: no renew_at, so Terraform never calls Renew.
    expect(opened.renewAt).toBeNull();
    expect(key(v.id as string)?.revoked_at).toBeNull();
    // What travels through Terraform and the journal: ids, never the secret.
    expect(opened.private.toString("utf8")).not.toContain(v.secret as string);
    expect(journalText()).not.toContain(v.secret as string);
    const [file] = journalFiles(join(fake.workDir, ".terraform", "gpurental-journal"));
    const entry = [...readJournalFile(file!).entries.values()].find((e) => e.id === v.id);
    expect(entry).toMatchObject({ kind: "api_key", closed: null, request: { ephemeral: true, name: "run" } });

    expect(await h.close("gpurental_api_key", opened.private)).toEqual([]);
    expect(key(v.id as string)?.revoked_at).not.toBeNull();
    const after = [...readJournalFile(file!).entries.values()].find((e) => e.id === v.id);
    expect(after?.closed?.reason).toBe("revoked");
  });

  test("a Close that never came: the shutdown revokes what is still open, and only that", async () => {
    const h = await configured();
    const closed = await h.open("gpurental_api_key", { name: "closed" });
    const left = await h.open("gpurental_api_key", { name: "left" });
    await h.close("gpurental_api_key", closed.private);
    const leftId = (left.value as Rec).id as string;
    expect(key(leftId)?.revoked_at).toBeNull();
    await h.service.closeOpenEphemeralResources();
    expect(key(leftId)?.revoked_at).not.toBeNull();
  });

  test("an API key cannot create keys: the refusal names the credential, nothing is created", async () => {
    const created = await admin().createApiKey({ name: "ci", kind: "team" });
    const h = await configured(created.secret);
    const before = Object.keys(fake.backend.state().api_keys).length;
    const opened = await h.open("gpurental_api_key", { name: "run" });
    expect(opened.diags.map((d) => d.summary)).toEqual([
      "ADMIN_REQUIRED: API keys cannot be created with an API key",
    ]);
    expect(JSON.stringify(opened.diags)).not.toContain(created.secret);
    expect(Object.keys(fake.backend.state().api_keys)).toHaveLength(before);
  });

  test("bad input is refused by Validate, naming the field and the limit", async () => {
    const h = await configured();
    const res = await h.service.ValidateEphemeralResourceConfig({
      type_name: "gpurental_api_key",
      config: null,
    });
    expect(res.diagnostics).toEqual([]);
    const bad = await h.open("gpurental_api_key", { name: "x".repeat(65), kind: "robot" });
    expect(bad.diags.map((d) => d.path)).toEqual([[{ attribute: "name" }], [{ attribute: "kind" }]]);
  });

  test("a client older than Terraform 1.10 is refused, naming its version", async () => {
    const h = await configured(fake.creds.admin_session_token, "1.9.8");
    const before = Object.keys(fake.backend.state().api_keys).length;
    const opened = await h.open("gpurental_api_key", { name: "run" });
    expect(opened.diags).toHaveLength(1);
    expect(opened.diags[0]!.summary).toBe("Ephemeral resources need Terraform 1.10 or later");
    expect(opened.diags[0]!.detail).toContain("this is Terraform 1.9.8");
    expect(Object.keys(fake.backend.state().api_keys)).toHaveLength(before);
  });
});

describe('ephemeral "gpurental_instance_access"', () => {
  test("gives the token, the addresses carrying it and the SSH command of an instance", async () => {
    const h = await configured();
    const inst = await admin().deployInstance({
      offer_id: fake.creds.offer_id,
      template_id: fake.creds.jupyter_template_id,
      disk_gb: 50,
    });
    const running = fake.backend.renderInstance(inst.id) as Rec;
    const opened = await h.open("gpurental_instance_access", { instance_id: inst.id });
    expect(opened.diags).toEqual([]);
    expect(opened.value).toMatchObject({
      status: running.status,
      access_token: running.access_token,
      jupyter_url: running.jupyter_url,
      open_url: running.open_url,
      ssh_command: `ssh -p ${running.ssh_port} ${running.ssh_user}@${running.ssh_host}`,
    });
    expect(running.access_token).toBeTruthy();
    // Nothing to close.
    expect(await h.close("gpurental_instance_access", opened.private)).toEqual([]);
  });

  test("an unknown or malformed instance id is an error on instance_id", async () => {
    const h = await configured();
    const bad = await h.open("gpurental_instance_access", { instance_id: "nope" });
    expect(bad.diags.map((d) => [d.path, d.detail.includes('"nope"')])).toEqual([
      [[{ attribute: "instance_id" }], true],
    ]);
    const missing = await h.open("gpurental_instance_access", {
      instance_id: "00000000-0000-4000-8000-00000000dead",
    });
    expect(missing.diags).toHaveLength(1);
    expect(missing.diags[0]!.path).toEqual([{ attribute: "instance_id" }]);
  });
});
