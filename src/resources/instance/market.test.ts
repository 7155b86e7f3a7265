import { DEMO_IDS, type FakeBackend } from "../../fake-backend";
import { isUnknown, unknown } from "../../framework";
import type { CtyValue } from "../../plugin/cty";
import { useFakeBackend } from "../../testing/fake-backend";

// gpurental_instance with an offer_filter, driven in memory the way Terraform drives it, against the
// in-process fake backend: choosing the offer at plan and apply time, moving on after a lost race,
// the market moving under a running instance, a changed filter judged from state, and the plan-time
// false refusals (empty label, maintenance).

type Rec = Record<string, CtyValue>;

// Terraform's working directory of the provider, where its deploy journal goes, is one for the file.
const fake = useFakeBackend({ workDir: "file" });

const configured = () => fake.configured();

const RTX = { gpu_model: "RTX 4090", num_gpus: 1, max_price_per_hour_micro: 3_000_000, region: null };

const config = (over: Rec = {}): Rec => ({
  offer_filter: RTX,
  template_id: fake.creds.template_id,
  disk_gb: 50,
  label: "market",
  ...over,
});

/** An RTX 4090 offer on a machine of its own. */
function rtxOffer(price: number, over: Parameters<FakeBackend["createOffer"]>[0] | object = {}) {
  const m = fake.backend.createMachine({ disk_gb: 2000, public_ip: "203.0.113.90" });
  return fake.backend.createOffer({
    machine_id: m.id,
    gpu_model: "RTX 4090",
    price_per_hour_micro: price,
    ...over,
  });
}

async function control(method: string, path: string, body?: unknown) {
  const res = await fetch(`${fake.url}/_control${path}`, {
    method,
    headers: { "x-control-token": fake.backend.controlToken, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  expect(res.status).toBe(200);
}

async function created(h: Awaited<ReturnType<typeof configured>>, cfg: Rec) {
  const p = await h.plan("gpurental_instance", null, cfg);
  expect(p.diags.filter((d) => d.severity === "error")).toEqual([]);
  const r = await h.apply("gpurental_instance", null, p.planned, cfg);
  return { plan: p, ...r };
}

describe("validation", () => {
  test("exactly one of offer_id and offer_filter, the error on the attribute", async () => {
    const h = await configured();
    const both = await h.validate("gpurental_instance", config({ offer_id: fake.creds.offer_id }));
    expect(both.map((d) => [d.summary, d.path])).toEqual([
      ["Both offer_id and offer_filter are set", [{ attribute: "offer_filter" }]],
    ]);
    const neither = await h.validate("gpurental_instance", config({ offer_filter: null }));
    expect(neither.map((d) => [d.summary, d.path])).toEqual([
      ["Missing offer_filter or offer_id", [{ attribute: "offer_filter" }]],
    ]);
    expect(await h.validate("gpurental_instance", config())).toEqual([]);
    // An unknown value counts as set.
    expect(await h.validate("gpurental_instance", config({ offer_filter: null, offer_id: unknown }))).toEqual(
      [],
    );
  });

  test("an empty offer_id is refused on offer_id, not left for the deploy to reject", async () => {
    const h = await configured();
    const diags = await h.validate("gpurental_instance", config({ offer_filter: null, offer_id: "" }));
    expect(diags.map((d) => [d.severity, d.path])).toEqual([["error", [{ attribute: "offer_id" }]]]);
    expect(diags[0]?.detail).toContain(
      'offer_id must be the ID of an offer, a UUID such as "00000000-0000-4000-8000-000000000041"; got "" (an empty string). See the gpurental_offers data source, or set offer_filter instead',
    );
  });

  test.each<[string, Rec, string]>([
    ["an empty model", { gpu_model: " " }, "offer_filter.gpu_model must not be empty."],
    ["no GPU", { num_gpus: 0 }, "offer_filter.num_gpus must be a whole number from 1 to 1024; got 0."],
    [
      "a negative price",
      { max_price_per_hour_micro: -1 },
      "offer_filter.max_price_per_hour_micro must be a whole number from 0 to 1000000000000; got -1.",
    ],
    ["an empty region", { region: "" }, "offer_filter.region must not be empty."],
  ])("refuses %s, naming the field and the value, on offer_filter", async (_name, over, message) => {
    const h = await configured();
    const diags = await h.validate("gpurental_instance", config({ offer_filter: { ...RTX, ...over } }));
    // On offer_filter itself: Terraform before 1.15 shows a path inside it at the resource's first line.
    expect(diags.map((d) => [d.detail, d.path])).toEqual([[message, [{ attribute: "offer_filter" }]]]);
  });
});

describe("create with a filter", () => {
  test("plans the chosen offer and its price unknown, and deploys on the cheapest candidate", async () => {
    const h = await configured();
    const r = await created(h, config());
    for (const a of ["offer_id", "offer", "price_per_hour_micro"])
      expect(isUnknown(r.plan.planned?.[a])).toBe(true);
    expect(r.plan.diags).toEqual([]);
    expect(r.diags).toEqual([]);
    // ¥2.30 is cheaper, but its machine goes into maintenance within 24 hours: tried last.
    expect(r.value).toMatchObject({
      offer_id: DEMO_IDS.offer,
      offer_filter: RTX,
      offer: { gpu_model: "RTX 4090", num_gpus: 1, region: "cn-east-1" },
      price_per_hour_micro: 2_500_000,
      status: "running",
    });
  });

  test("lands on the next candidate after a lost race, with a warning naming both", async () => {
    const h = await configured();
    const cheap = rtxOffer(2_000_000);
    fake.backend.loseNextRace(cheap.id, 1);
    const r = await created(h, config());
    expect(r.value?.offer_id).toBe(DEMO_IDS.offer);
    expect(r.diags).toMatchObject([
      {
        severity: "warning",
        summary: `Deployed on offer ${DEMO_IDS.offer} (¥2.50/h) instead of offer ${cheap.id} (¥2.00/h)`,
        path: [{ attribute: "offer_filter" }],
      },
    ]);
    expect(r.diags[0]?.detail).toContain(`offer ${cheap.id} (¥2.00/h): OFFER_UNAVAILABLE`);
  });

  test("when every candidate is taken, one error lists each offer tried with its code", async () => {
    const h = await configured();
    const cheap = rtxOffer(2_000_000);
    const p = await h.plan("gpurental_instance", null, config());
    for (const id of [cheap.id, DEMO_IDS.offer]) fake.backend.loseNextRace(id, 1);
    const r = await h.apply("gpurental_instance", null, p.planned, config());
    expect(r.value).toBeNull();
    // The maintenance offer is tried last and refused by the fake backend.
    expect(r.diags.map((d) => [d.severity, d.summary, d.path])).toEqual([
      [
        "error",
        "No offer matching offer_filter could be deployed on (3 tried)",
        [{ attribute: "offer_filter" }],
      ],
    ]);
    const detail = r.diags[0]!.detail;
    expect(detail).toContain(`offer ${cheap.id} (¥2.00/h): OFFER_UNAVAILABLE`);
    expect(detail).toContain(`offer ${DEMO_IDS.offer} (¥2.50/h): OFFER_UNAVAILABLE`);
    expect(detail).toContain(`offer ${DEMO_IDS.offerMaintenance} (¥2.30/h): MACHINE_IN_MAINTENANCE`);
    // A maintenance is no other deploy's doing: the words cover every reason a candidate is passed over.
    expect(detail).toContain("The deploy was refused on each offer tried");
    expect(detail).toContain("or the machine goes into maintenance too soon");
    expect(fake.backend.listInstances(fake.creds.org_id)).toEqual([]);
  });

  test("a lost deploy answer is reconciled, never followed by a deploy on another offer", async () => {
    const h = await configured();
    rtxOffer(2_000_000);
    fake.backend.addFault({ route: "POST /v1/instances", kind: "lost-response", times: 1 });
    const r = await created(h, config());
    fake.backend.clearFaults();
    expect(r.diags).toEqual([]);
    expect(fake.backend.listInstances(fake.creds.org_id).map((i) => i.id)).toEqual([r.value?.id]);
  });

  test("nothing matching fails the plan on offer_filter, saying which criterion left out which offers", async () => {
    const h = await configured();
    const p = await h.plan(
      "gpurental_instance",
      null,
      config({ offer_filter: { ...RTX, max_price_per_hour_micro: 2_000_000 } }),
    );
    expect(p.diags.map((d) => [d.severity, d.summary, d.path])).toEqual([
      ["error", "No offer matches offer_filter", [{ attribute: "offer_filter" }]],
    ]);
    const detail = p.diags[0]!.detail;
    expect(detail).toContain(
      "3 RTX 4090 offers were considered: 1 with another GPU count (4), 2 above the maximum price (cheapest ¥2.30/h)",
    );
    expect(detail).toContain(
      `offer ${DEMO_IDS.offerMaintenance} at ¥2.30/h: ¥2.30/h is above the maximum of ¥2.00/h`,
    );
  });

  test("an unknown GPU model lists the models on offer", async () => {
    const h = await configured();
    const p = await h.plan(
      "gpurental_instance",
      null,
      config({ offer_filter: { ...RTX, gpu_model: "H100" } }),
    );
    expect(p.diags[0]?.detail).toContain("No offer of H100 is listed on the market now.");
    expect(p.diags[0]?.detail).toContain("GPU models on offer now: A100 80GB, RTX 3090, RTX 4090, RTX 5090.");
  });

  test("offer-dependent refusals are errors only when no candidate passes", async () => {
    const h = await configured();
    // The vm template: no RTX 4090 machine can run VMs...
    const vm = await h.plan("gpurental_instance", null, config({ template_id: DEMO_IDS.templateVm }));
    expect(vm.diags.map((d) => d.summary)).toEqual(["No offer matches offer_filter"]);
    expect(vm.diags[0]?.detail).toContain("on machines that cannot run the vm template");
    // ... until one can.
    const m = fake.backend.createMachine({ disk_gb: 2000, vm_capable: true });
    fake.backend.createOffer({ machine_id: m.id, gpu_model: "RTX 4090", price_per_hour_micro: 2_900_000 });
    const ok = await h.plan("gpurental_instance", null, config({ template_id: DEMO_IDS.templateVm }));
    expect(ok.diags).toEqual([]);
    // Template-only refusals stay on template_id.
    const soon = await h.plan(
      "gpurental_instance",
      null,
      config({ template_id: DEMO_IDS.templateComingSoon }),
    );
    expect(soon.diags.map((d) => [d.summary.split(":")[0], d.path])).toEqual([
      ["TEMPLATE_COMING_SOON", [{ attribute: "template_id" }]],
    ]);
  });

  test("when every candidate goes into maintenance within 24 hours, the plan warns and goes on", async () => {
    const h = await configured();
    const p = await h.plan(
      "gpurental_instance",
      null,
      config({ offer_filter: { ...RTX, max_price_per_hour_micro: 2_400_000 } }),
    );
    expect(p.diags.map((d) => [d.severity, d.summary.split(":")[0], d.path])).toEqual([
      ["warning", "MACHINE_IN_MAINTENANCE", [{ attribute: "offer_filter" }]],
    ]);
    // The advice is about the filter the user wrote, not about an offer_id they did not set.
    const detail = p.diags[0]!.detail;
    expect(detail).toContain("let offers on other machines match");
    expect(detail).toContain("loosen it (another region, a higher max_price_per_hour_micro)");
    expect(detail).not.toMatch(/offer_filter instead of offer_id|Choose an offer/);
  });

  test("a filter known only after apply skips the market checks, not the template's", async () => {
    const h = await configured();
    const p = await h.plan(
      "gpurental_instance",
      null,
      config({ offer_filter: { ...RTX, gpu_model: unknown, max_price_per_hour_micro: 1 } }),
    );
    expect(p.diags).toEqual([]);
    const soon = await h.plan(
      "gpurental_instance",
      null,
      config({ offer_filter: { ...RTX, gpu_model: unknown }, template_id: DEMO_IDS.templateComingSoon }),
    );
    expect(soon.diags.map((d) => [d.severity, d.summary.split(":")[0], d.path])).toEqual([
      ["error", "TEMPLATE_COMING_SOON", [{ attribute: "template_id" }]],
    ]);
  });
});

describe("the market moves under a running instance", () => {
  test("cheaper offers, sell-outs and withdrawals plan no change at all", async () => {
    const h = await configured();
    const state = (await created(h, config())).value!;
    rtxOffer(1_000_000);
    await control("PATCH", `/offers/${DEMO_IDS.offer}`, { availability: "withdrawn" });
    await control("PATCH", `/offers/${DEMO_IDS.offerMaintenance}`, { free_units: 0 });
    const refreshed = (await h.read("gpurental_instance", state)).value!;
    expect(refreshed).toEqual(state);
    const again = await h.plan("gpurental_instance", refreshed, config());
    expect(again.diags).toEqual([]);
    expect(again.requiresReplace).toEqual([]);
    expect(again.planned).toEqual(refreshed);
  });

  test("a pinned offer_id that left the market plans no change either", async () => {
    const h = await configured();
    const cfg = config({ offer_filter: null, offer_id: fake.creds.offer_id });
    const state = (await created(h, cfg)).value!;
    await control("PATCH", `/offers/${fake.creds.offer_id}`, { availability: "withdrawn" });
    const refreshed = (await h.read("gpurental_instance", state)).value!;
    const again = await h.plan("gpurental_instance", refreshed, cfg);
    expect(again.diags).toEqual([]);
    expect(again.planned).toEqual(refreshed);
  });
});

describe("changing the filter", () => {
  test.each<[string, Rec]>([
    ["a lower maximum it still meets", { max_price_per_hour_micro: 2_500_000 }],
    ["its own region", { region: "CN-EAST-1" }],
    ["no maximum", { max_price_per_hour_micro: null }],
  ])("to %s is recorded in place, without the API", async (_name, over) => {
    const h = await configured();
    const state = (await created(h, config())).value!;
    const next = config({ offer_filter: { ...RTX, ...over } });
    const p = await h.plan("gpurental_instance", state, next);
    expect(p.diags).toEqual([]);
    expect(p.requiresReplace).toEqual([]);
    expect(p.planned).toEqual({ ...state, offer_filter: { ...RTX, ...over } });
    const applied = await h.apply("gpurental_instance", state, p.planned, next);
    expect(applied.diags).toEqual([]);
    expect(applied.value).toEqual(p.planned);
    expect(fake.backend.listInstances(fake.creds.org_id)).toHaveLength(1);
  });

  test.each<[string, Rec, string]>([
    [
      "a maximum below its price",
      { max_price_per_hour_micro: 2_400_000 },
      "it was rented at ¥2.50/h, above the maximum of ¥2.40/h",
    ],
    ["another model", { gpu_model: "RTX 3090" }, "it rents RTX 4090, not RTX 3090"],
    ["another region", { region: "cn-north-1" }, "it runs in cn-east-1, not cn-north-1"],
  ])("to %s replaces it, saying why", async (_name, over, why) => {
    const h = await configured();
    const state = (await created(h, config())).value!;
    const p = await h.plan("gpurental_instance", state, config({ offer_filter: { ...RTX, ...over } }));
    expect(p.requiresReplace).toEqual([["offer_filter"]]);
    expect(p.diags.map((d) => [d.severity, d.path])).toEqual([["warning", [{ attribute: "offer_filter" }]]]);
    expect(p.diags[0]?.detail).toContain(why);
  });

  test("from a pinned offer_id to a filter it satisfies is recorded in place; back to the same id too", async () => {
    const h = await configured();
    const pinned = config({ offer_filter: null, offer_id: fake.creds.offer_id });
    const state = (await created(h, pinned)).value!;
    const toFilter = await h.plan("gpurental_instance", state, config());
    expect(toFilter.requiresReplace).toEqual([]);
    expect(toFilter.planned).toMatchObject({ offer_id: fake.creds.offer_id, offer_filter: RTX });
    const filtered = (await h.apply("gpurental_instance", state, toFilter.planned, config())).value!;
    const back = await h.plan("gpurental_instance", filtered, pinned);
    expect(back.requiresReplace).toEqual([]);
    const other = await h.plan("gpurental_instance", filtered, { ...pinned, offer_id: DEMO_IDS.offerSmall });
    expect(other.requiresReplace).toEqual([["offer_id"]]);
  });

  test("stopping and starting keeps the chosen offer and its snapshot", async () => {
    const h = await configured();
    const state = (await created(h, config())).value!;
    const stop = config({ desired_status: "stopped" });
    const p = await h.plan("gpurental_instance", state, stop);
    expect(p.planned).toMatchObject({ offer_id: state.offer_id, offer: state.offer });
    const stopped = await h.apply("gpurental_instance", state, p.planned, stop);
    expect(stopped.diags).toEqual([]);
    expect(stopped.value).toMatchObject({ status: "stopped", offer: state.offer, offer_filter: RTX });
  });
});

test("a state written before offer_filter existed upgrades, and the next refresh records the offer", async () => {
  const h = await configured();
  const cfg = config({ offer_filter: null, offer_id: fake.creds.offer_id });
  const state = (await created(h, cfg)).value!;
  const { offer_filter: _filter, offer: _offer, ...before } = state;
  const upgraded = await h.upgrade("gpurental_instance", 0, JSON.stringify(before));
  expect(upgraded.diags).toEqual([]);
  expect(upgraded.value).toMatchObject({ offer_filter: null, offer: null, offer_id: fake.creds.offer_id });
  const refreshed = (await h.read("gpurental_instance", upgraded.value!)).value!;
  expect(refreshed).toEqual(state);
  const p = await h.plan("gpurental_instance", refreshed, cfg);
  expect(p.diags).toEqual([]);
  expect(p.planned).toEqual(refreshed);
});

test("an offer whose machine left the fleet (OFFER_NOT_PINNABLE) counts as taken, on offer_filter", async () => {
  const h = await configured();
  const m = fake.backend.createMachine({ disk_gb: 2000, registered: false });
  const stale = fake.backend.createOffer({
    machine_id: m.id,
    gpu_model: "RTX 4090",
    price_per_hour_micro: 100_000,
  });
  const p = await h.plan(
    "gpurental_instance",
    null,
    config({ offer_filter: { ...RTX, max_price_per_hour_micro: 200_000 } }),
  );
  expect(p.diags).toEqual([]);
  const r = await h.apply(
    "gpurental_instance",
    null,
    p.planned,
    config({ offer_filter: { ...RTX, max_price_per_hour_micro: 200_000 } }),
  );
  expect(r.diags.map((d) => [d.summary, d.path])).toEqual([
    ["No offer matching offer_filter could be deployed on (1 tried)", [{ attribute: "offer_filter" }]],
  ]);
  expect(r.diags[0]?.detail).toContain(`offer ${stale.id} (¥0.10/h): OFFER_NOT_PINNABLE`);
});

describe("plan-time false refusals", () => {
  test("an empty label is accepted, sent, and plans no change afterwards", async () => {
    const h = await configured();
    const cfg = config({ label: "" });
    expect(await h.validate("gpurental_instance", cfg)).toEqual([]);
    const state = (await created(h, cfg)).value!;
    expect(state.label).toBe("");
    const refreshed = (await h.read("gpurental_instance", state)).value!;
    const again = await h.plan("gpurental_instance", refreshed, cfg);
    expect(again.planned).toEqual(refreshed);
    // "" and unset both mean no label: switching between them replaces nothing.
    const unset = await h.plan("gpurental_instance", refreshed, config({ label: null }));
    expect(unset.requiresReplace).toEqual([]);
  });

  test("env names and values are counted in characters, not UTF-16 units", async () => {
    const h = await configured();
    const emoji = "😀";
    const ok = config({ env: { [`K${emoji.repeat(255)}`]: emoji.repeat(4096) } });
    expect(await h.validate("gpurental_instance", ok)).toEqual([]);
    const long = config({ env: { K: emoji.repeat(4097) } });
    expect((await h.validate("gpurental_instance", long)).map((d) => d.detail)).toEqual([
      'The value of "K" in env has 4097 characters; the API accepts at most 4096.',
    ]);
    // A long key is shortened in the message, as the key-too-long one is.
    const both = config({ env: { [`K${emoji.repeat(256)}`]: emoji.repeat(4097) } });
    expect((await h.validate("gpurental_instance", both)).map((d) => d.detail)).toEqual([
      `The key "K${emoji.repeat(39)}…" of env has 257 characters; the API accepts at most 256.`,
      `The value of "K${emoji.repeat(39)}…" in env has 4097 characters; the API accepts at most 4096.`,
    ]);
  });

  test("a label of 64 characters beyond the BMP is accepted", async () => {
    const h = await configured();
    expect(await h.validate("gpurental_instance", config({ label: "😀".repeat(64) }))).toEqual([]);
  });
});
