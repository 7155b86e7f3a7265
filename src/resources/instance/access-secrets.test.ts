import { isUnknown } from "../../framework";
import type { CtyValue } from "../../plugin/cty";
import { useFakeBackend } from "../../testing/fake-backend";
import { maskedJupyterAddress } from "./convert";

// gpurental_instance's store_access_secrets, driven in memory the way Terraform drives it: with
// `false`, access_token, jupyter_url and open_url are null in every plan and state (create, plan,
// refresh, import, turning it on and off) while jupyter_address and the SSH attributes stay; unset,
// everything is as before the argument existed.

type Rec = Record<string, CtyValue>;

const fake = useFakeBackend({ workDir: "file" });

const configured = () => fake.configured();

const config = (over: Rec = {}): Rec => ({
  offer_id: fake.creds.offer_id,
  template_id: fake.creds.jupyter_template_id,
  disk_gb: 50,
  ...over,
});

const SECRETS = ["access_token", "jupyter_url", "open_url"] as const;

function expectNoSecrets(v: Rec | null, token: string): void {
  expect(v).not.toBeNull();
  for (const a of SECRETS) expect(v![a]).toBeNull();
  expect(JSON.stringify(v)).not.toContain(token);
}

test("false: no secret in the plan or the state through create, refresh, plan, stop and import", async () => {
  const h = await configured();
  const cfg = config({ store_access_secrets: false });
  const p = await h.plan("gpurental_instance", null, cfg);
  expect(p.diags).toEqual([]);
  for (const a of SECRETS) expect(p.planned![a]).toBeNull();
  const created = await h.apply("gpurental_instance", null, p.planned, cfg);
  expect(created.diags).toEqual([]);
  const state = created.value!;
  const api = fake.backend.renderInstance(state.id as string) as Record<string, string>;
  const token = api.access_token!;
  expect(token).toBeTruthy();
  expectNoSecrets(state, token);
  expect(state.store_access_secrets).toBe(false);
  expect(state.jupyter_address).toBe(maskedJupyterAddress(api.jupyter_url!, token));
  expect(state.jupyter_address).toContain("token=…");
  expect(state.ssh_host).toBe(api.ssh_host);

  const refreshed = (await h.read("gpurental_instance", state)).value!;
  expectNoSecrets(refreshed, token);
  const again = await h.plan("gpurental_instance", refreshed, cfg);
  expect(again.diags).toEqual([]);
  expect(again.planned).toEqual(refreshed);

  const stopCfg = { ...cfg, desired_status: "stopped" };
  const stopPlan = await h.plan("gpurental_instance", refreshed, stopCfg);
  for (const a of SECRETS) expect(stopPlan.planned![a]).toBeNull();
  const stopped = await h.apply("gpurental_instance", refreshed, stopPlan.planned, stopCfg);
  expect(stopped.diags).toEqual([]);
  expectNoSecrets(stopped.value, token);

  // An import reads before the configuration is known; the first apply records false in place.
  const imported = await h.import("gpurental_instance", state.id as string);
  const read = await h.read("gpurental_instance", imported.value!, imported.private);
  const importPlan = await h.plan("gpurental_instance", read.value, stopCfg, read.private);
  expect(importPlan.requiresReplace).toEqual([]);
  expectNoSecrets(importPlan.planned, token);
  const recorded = await h.apply(
    "gpurental_instance",
    read.value,
    importPlan.planned,
    stopCfg,
    importPlan.private,
  );
  expect(recorded.diags).toEqual([]);
  expectNoSecrets(recorded.value, token);
});

test("turned on again: an in-place update reads the secrets, nothing is redeployed", async () => {
  const h = await configured();
  const off = config({ store_access_secrets: false });
  const p = await h.plan("gpurental_instance", null, off);
  const state = (await h.apply("gpurental_instance", null, p.planned, off)).value!;
  const deploys = fake.backend.listInstances(fake.creds.org_id).length;
  const on = config({ store_access_secrets: true });
  const plan = await h.plan("gpurental_instance", state, on);
  expect(plan.requiresReplace).toEqual([]);
  for (const a of SECRETS) expect(isUnknown(plan.planned![a])).toBe(true);
  const applied = await h.apply("gpurental_instance", state, plan.planned, on);
  expect(applied.diags).toEqual([]);
  const api = fake.backend.renderInstance(state.id as string) as Record<string, string>;
  expect(applied.value).toMatchObject({ access_token: api.access_token, jupyter_url: api.jupyter_url });
  expect(fake.backend.listInstances(fake.creds.org_id)).toHaveLength(deploys);
});

test("unset: the secrets are kept as before, and a state from before the argument plans nothing", async () => {
  const h = await configured();
  const cfg = config();
  const p = await h.plan("gpurental_instance", null, cfg);
  const state = (await h.apply("gpurental_instance", null, p.planned, cfg)).value!;
  expect(state.store_access_secrets).toBe(true);
  expect(state.access_token).toBeTruthy();
  // A state written by an earlier version has no store_access_secrets (null) and no jupyter_address.
  const legacy = { ...state, store_access_secrets: null, jupyter_address: null };
  const refreshed = (await h.read("gpurental_instance", legacy)).value!;
  expect(refreshed.access_token).toBe(state.access_token);
  expect(refreshed.jupyter_address).toBe(state.jupyter_address);
  const plan = await h.plan("gpurental_instance", refreshed, cfg);
  expect(plan.diags).toEqual([]);
  expect(plan.planned).toEqual(refreshed);
});

test.each([
  ["https://h.example/lab?token=abc123", "abc123", "https://h.example/lab?token=…"],
  ["https://h.example/lab?x=1&token=abc123#top", "abc123", "https://h.example/lab?x=1&token=…#top"],
  ["https://relay.example/abc123/lab", "abc123", "https://relay.example/…/lab"],
  ["https://h.example/lab", null, "https://h.example/lab"],
  // What could be a credential though it is not the access token.
  [
    "https://h.example/lab?TOKEN=other&access_token=x2",
    "abc123",
    "https://h.example/lab?TOKEN=…&access_token=…",
  ],
  ["https://user:pw@h.example/lab?token=abc123", "abc123", "https://…@h.example/lab?token=…"],
])("maskedJupyterAddress(%s)", (url, token, masked) => {
  expect(maskedJupyterAddress(url, token)).toBe(masked);
});
