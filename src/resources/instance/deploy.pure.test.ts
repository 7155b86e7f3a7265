import type { Instance } from "../../api/schemas";
import { type JournalEntry, landedCandidates, matchesRequest } from "../../journal";
import { formatMs } from "../../provider/deadline";
import type { DeploySettings } from "../../provider/provider-data";
import { instanceFingerprint, willAdoptNote } from "./deploy";
import type { InstanceArgs } from "./model";

// The parts of a journaled deploy that need no backend: which listed instance a lost deploy
// created, the configuration's fingerprint, the plan's note on an entry it will adopt and the
// durations the errors name. The deploy and the adoption themselves: instance-deploy-send.test.ts and
// instance-deploy-adopt.test.ts.

describe("willAdoptNote", () => {
  const entry = (over: Partial<JournalEntry>): JournalEntry => ({
    entry: "e1",
    kind: "instance",
    fingerprint: "fingerprint-of-the-configuration",
    request: {},
    before: [],
    sent_at: "2026-11-24T10:00:00.000Z",
    run: { id: "gone-run", pid: 1, boot: "a-boot-before-a-restart" },
    id: null,
    answered_at: null,
    handed_at: null,
    taken: null,
    closed: null,
    ...over,
  });

  test("an entry with an instance: adopted by id, deployed when it was answered", () => {
    expect(willAdoptNote(entry({ id: "inst_1", answered_at: "2026-11-24T10:00:05.000Z" }))).toEqual({
      severity: "warning",
      summary: "Will adopt instance inst_1, deployed at 2026-11-24T10:00:05.000Z",
      detail:
        "An earlier apply deployed instance inst_1 for this configuration (sent at 2026-11-24T10:00:00.000Z) and no state holds it. Applying adopts it instead of deploying another one. Deploy journal entry e1.",
    });
    expect(willAdoptNote(entry({ id: "inst_1" })).summary).toBe(
      "Will adopt instance inst_1, deployed at 2026-11-24T10:00:00.000Z",
    );
  });

  test("an entry without its answer: looked for first", () => {
    expect(willAdoptNote(entry({}))).toEqual({
      severity: "warning",
      summary: "Will look for a deploy sent at 2026-11-24T10:00:00.000Z",
      detail:
        "An earlier apply sent a deploy for this configuration at 2026-11-24T10:00:00.000Z and stopped before its answer was recorded, so it may have landed. Applying first looks for the instance it created and adopts it; it deploys a new one only when the deploy did not land. Deploy journal entry e1.",
    });
  });
});

describe("formatMs", () => {
  test.each([
    [90_000, "90 s"],
    [300, "0.3 s"],
    [1250, "1.3 s"],
    [60_000, "60 s"],
    [119_999, "120 s"],
    [120_000, "2 min"],
    [150_000, "150 s"],
    [180_000, "3 min"],
  ])("%d ms is %s", (ms, text) => {
    expect(formatMs(ms)).toBe(text);
  });
});

describe("matching what a lost request created", () => {
  const now = Date.parse("2026-11-24T10:00:00.000Z");
  const inst = (
    over: Omit<Partial<Instance>, "offer" | "template"> & { offer?: string; template?: string } = {},
  ): Instance => {
    const { offer, template, ...rest } = over;
    return {
      id: "inst_1",
      offer: { id: offer ?? "off_1" },
      template: { id: template ?? "tpl_1" },
      disk_gb: 50,
      label: "web",
      status: "running",
      created_at: "2026-11-24T10:00:01.000Z",
      ...rest,
    } as unknown as Instance;
  };
  const req = { offer_id: "off_1", template_id: "tpl_1", disk_gb: 50, label: "web" };

  test.each<[string, Instance, Record<string, unknown>, boolean]>([
    ["every field the same", inst(), req, true],
    ["another offer", inst({ offer: "off_2" }), req, false],
    ["another template", inst({ template: "tpl_2" }), req, false],
    ["another disk", inst({ disk_gb: 60 }), req, false],
    ["another label", inst({ label: "db" }), req, false],
    ["destroyed", inst({ status: "destroyed" }), req, false],
    ["stopped", inst({ status: "stopped" }), req, true],
    ["no label on either side, null and empty", inst({ label: null }), { ...req, label: "" }, true],
    ["no label on either side, empty and absent", inst({ label: "" }), { ...req, label: undefined }, true],
    ["a label where none was asked for", inst(), { ...req, label: null }, false],
  ])("%s", (_what, i, r, matches) => {
    expect(matchesRequest(i, r)).toBe(matches);
  });

  test("candidates: new, unreferenced and created in the window", () => {
    const list = [
      inst({ id: "old" }),
      inst({ id: "named" }),
      inst({ id: "too_early", created_at: "2026-11-24T09:57:59.000Z" }),
      inst({ id: "skewed", created_at: "2026-11-24T09:58:00.000Z" }),
      inst({ id: "undated", created_at: null }),
      inst({ id: "other", label: "db" }),
      inst({ id: "ours" }),
    ];
    expect(
      landedCandidates(list, req, { before: ["old"], sentAt: now }, new Set(["named"])).map((i) => i.id),
    ).toEqual(["skewed", "undated", "ours"]);
  });
});

describe("instanceFingerprint", () => {
  const account: DeploySettings["account"] = { base_url: "https://api.example", org_id: null };
  const a = (over: Partial<InstanceArgs> = {}): InstanceArgs => ({
    offer_id: "off_1",
    offer_filter: null,
    template_id: "tpl_1",
    disk_gb: 50,
    label: "web",
    ssh_key_id: null,
    env: { A: "1" },
    secret_env: { S: "secret" },
    unset_env: ["B", "A"],
    desired_status: "running",
    ...over,
  });
  const fp = (over: Partial<InstanceArgs> = {}, acc = account) => instanceFingerprint(a(over), acc);

  test("what makes two configurations the same", () => {
    expect(fp({ unset_env: ["A", "B"] })).toBe(fp());
    expect(fp({ label: "" })).toBe(fp({ label: null }));
    expect(fp({ desired_status: "stopped" })).toBe(fp());
    expect(fp({ secret_env_wo_version: null })).toBe(fp());
  });

  test.each<[string, Partial<InstanceArgs>]>([
    ["offer", { offer_id: "off_2" }],
    [
      "offer filter instead of an offer",
      { offer_filter: { gpu_model: "RTX 4090" } as InstanceArgs["offer_filter"] },
    ],
    ["template", { template_id: "tpl_2" }],
    ["disk", { disk_gb: 60 }],
    ["label", { label: "db" }],
    ["no label", { label: null }],
    ["ssh key", { ssh_key_id: "key_1" }],
    ["env", { env: { A: "2" } }],
    ["unset env", { unset_env: ["A"] }],
    ["no unset env", { unset_env: null }],
    ["a secret value", { secret_env: { S: "another" } }],
    ["a write-only version", { secret_env_wo_version: 2 }],
  ])("a different %s is another configuration", (_what, over) => {
    expect(fp(over)).not.toBe(fp());
  });

  test("a configuration's fingerprint is stable across provider versions, so their journals are adopted after an upgrade", () => {
    expect(fp()).toBe("sha256:416cdb9b9d90cb240dca814f387f1dbc9d174f0a78cf1f58a3fdaac72df239e0");
  });

  test("another offer filter is another configuration", () => {
    const filter = (gpu_model: string) => ({ offer_filter: { gpu_model, num_gpus: 1 }, offer_id: null });
    expect(fp(filter("RTX 4090"))).not.toBe(fp(filter("A100")));
    expect(fp(filter("RTX 4090"))).toBe(fp(filter("RTX 4090")));
  });

  test("another account is another configuration", () => {
    expect(fp({}, { ...account, org_id: "org_2" })).not.toBe(fp());
  });
});
