import { DEMO_IDS } from "../../../src/fake-backend";
import {
  apply,
  control,
  expectCode,
  liveInstances,
  output,
  plan,
  resetSuite,
  type Suite,
  startSuite,
  stateOf,
  stopSuite,
  writeConfig,
} from "./helpers";

// Offers are a live market, through the real terraform CLI against the fake backend: an instance
// with an offer_filter is deployed on the cheapest candidate and kept there whatever the market
// does; a lost race moves on to the next candidate; a filter nothing satisfies fails the plan with
// the reasons; a changed filter replaces the instance only when it no longer matches; a pinned
// offer_id that left the market breaks nothing.

jest.setTimeout(300_000);

let s: Suite;

beforeAll(async () => {
  s = await startSuite();
});
afterAll(() => stopSuite(s));
beforeEach(() => resetSuite(s));

interface Filter {
  model?: string;
  max?: number | null;
  region?: string;
}

function filtered(f: Filter = {}): string {
  const max = f.max === undefined ? 3_000_000 : f.max;
  return `resource "gpurental_instance" "gpu" {
  offer_filter = {
    gpu_model = "${f.model ?? "RTX 4090"}"
    num_gpus  = 1
${max === null ? "" : `    max_price_per_hour_micro = ${max}\n`}${f.region ? `    region = "${f.region}"\n` : ""}  }
  template_id = "${s.creds.template_id}"
  disk_gb     = 50
  label       = "market"
}

output "offer" {
  value = "\${gpurental_instance.gpu.offer.gpu_model} \${gpurental_instance.gpu.offer_id} \${gpurental_instance.gpu.price_per_hour_micro}"
}`;
}

/** A new RTX 4090 offer on a machine of its own, created through the control API. */
async function newOffer(price: number): Promise<string> {
  const m = (await control(s, "POST", "/machines", { disk_gb: 2000 })) as { id: string };
  const o = (await control(s, "POST", "/offers", {
    machine_id: m.id,
    gpu_model: "RTX 4090",
    price_per_hour_micro: price,
  })) as { id: string };
  return o.id;
}

const instanceId = async () => (await stateOf(s, "gpurental_instance.gpu")).id as string;

test("(a) a cheaper offer appearing and (b) the chosen offer selling out or being withdrawn plan nothing", async () => {
  writeConfig(s, filtered());
  const applied = expectCode(await apply(s), 0);
  // The ¥2.30 offer's machine goes into maintenance within 24 hours: it is tried last.
  expect(applied.stdout).toContain(`offer = "RTX 4090 ${DEMO_IDS.offer} 2500000"`);
  const id = await instanceId();

  await newOffer(1_000_000);
  expectCode(await plan(s), 0);

  await control(s, "PATCH", `/offers/${DEMO_IDS.offer}`, { availability: "sold_out", free_units: 0 });
  expectCode(await plan(s), 0);
  await control(s, "PATCH", `/offers/${DEMO_IDS.offer}`, { availability: "withdrawn" });
  await control(s, "PATCH", `/offers/${DEMO_IDS.offerMaintenance}`, { price_per_hour_micro: 900_000 });
  const r = expectCode(await plan(s), 0);
  expect(r.stdout).toContain("No changes.");
  expect(await instanceId()).toBe(id);
  expect(liveInstances(s).map((i) => i.id)).toEqual([id]);
});

test("(c) the cheapest candidate losing the race: the instance lands on the next, with a warning naming both", async () => {
  const cheapest = await newOffer(2_000_000);
  await control(s, "POST", `/offers/${cheapest}/lose-next-race`, {});
  writeConfig(s, filtered());
  const r = expectCode(await apply(s), 0);
  const text = output(r);
  expect(text).toContain(
    `Warning: Deployed on offer ${DEMO_IDS.offer} (¥2.50/h) instead of offer ${cheapest} (¥2.00/h)`,
  );
  expect(text).toMatch(new RegExp(`offer ${cheapest} \\(¥2\\.00/h\\): OFFER_UNAVAILABLE`));
  expect((await stateOf(s, "gpurental_instance.gpu")).offer_id).toBe(DEMO_IDS.offer);
  expect(liveInstances(s)).toHaveLength(1);
  expectCode(await plan(s), 0);
});

test("(d) a filter nothing satisfies fails the plan on offer_filter, with the reasons", async () => {
  writeConfig(s, filtered({ max: 2_000_000 }));
  const r = expectCode(await plan(s), 1);
  const text = output(r);
  expect(text).toContain("Error: No offer matches offer_filter");
  expect(text).toMatch(/with gpurental_instance\.gpu,[\s\S]*?offer_filter = \{/);
  // Terraform wraps the detail to its width.
  const flat = text.replace(/\s+/g, " ");
  expect(flat).toContain(
    "3 RTX 4090 offers were considered: 1 with another GPU count (4), 2 above the maximum price (cheapest ¥2.30/h).",
  );
  expect(flat).toContain(
    `offer ${DEMO_IDS.offerMaintenance} at ¥2.30/h: ¥2.30/h is above the maximum of ¥2.00/h`,
  );
  expect(liveInstances(s)).toHaveLength(0);
});

test("(e) a tightened filter the instance still satisfies updates in place; one it does not replaces it", async () => {
  writeConfig(s, filtered());
  expectCode(await apply(s), 0);
  const first = await instanceId();

  // Rented at ¥2.50: a maximum of ¥2.60 in cn-east-1 still matches.
  writeConfig(s, filtered({ max: 2_600_000, region: "cn-east-1" }));
  const tightened = expectCode(await plan(s), 2);
  expect(tightened.stdout).toContain("1 to change, 0 to destroy");
  expect(tightened.stdout).not.toContain("must be replaced");
  expectCode(await apply(s), 0);
  expect(await instanceId()).toBe(first);
  expect((await stateOf(s, "gpurental_instance.gpu")).offer_filter).toMatchObject({
    max_price_per_hour_micro: 2_600_000,
    region: "cn-east-1",
  });
  expectCode(await plan(s), 0);

  // Another model: the running RTX 4090 no longer matches.
  writeConfig(s, filtered({ model: "RTX 3090" }));
  const changed = expectCode(await plan(s), 2);
  expect(changed.stdout).toMatch(/must be replaced/);
  expect(changed.stdout).toMatch(/# forces replacement/);
  expect(output(changed)).toContain(
    `Warning: Instance ${first} no longer satisfies offer_filter and will be replaced`,
  );
  expectCode(await apply(s), 0);
  const second = await stateOf(s, "gpurental_instance.gpu");
  expect(second.id).not.toBe(first);
  expect(second.offer_id).toBe(DEMO_IDS.offerSmall);
  expect(liveInstances(s).map((i) => i.id)).toEqual([second.id]);
});

test("(f) a pinned offer_id whose offer was withdrawn after create plans nothing", async () => {
  // An empty label too: the contract sets no minimum, and "" must not drift to null.
  writeConfig(
    s,
    `resource "gpurental_instance" "gpu" {
  offer_id    = "${s.creds.offer_id}"
  template_id = "${s.creds.template_id}"
  disk_gb     = 50
  label       = ""
}`,
  );
  expectCode(await apply(s), 0);
  expect((await stateOf(s, "gpurental_instance.gpu")).label).toBe("");
  expectCode(await plan(s), 0);
  await control(s, "PATCH", `/offers/${s.creds.offer_id}`, { availability: "withdrawn" });
  const r = expectCode(await plan(s), 0);
  expect(output(r)).not.toContain("Warning");

  // Only a re-creation needs the offer: a -replace is refused at plan time, saying why, and the
  // running instance is left alone.
  const id = await instanceId();
  const replaced = expectCode(await plan(s, ["-replace=gpurental_instance.gpu"]), 1);
  const text = output(replaced);
  expect(text).toContain("Error: OFFER_UNAVAILABLE: the offer cannot be rented");
  expect(text).toMatch(/with gpurental_instance\.gpu,[\s\S]*?offer_id\s+=/);
  expect(text.replace(/\s+/g, " ")).toContain("The offer has been withdrawn.");
  expect(liveInstances(s).map((i) => i.id)).toEqual([id]);
});

test("a new user's mistakes are reported on the argument they concern, before anything is deployed", async () => {
  const at = (text: string, line: RegExp) =>
    expect(text).toMatch(
      new RegExp(
        `with gpurental_instance\\.gpu,[^\\n]*\\n[^\\n]*on main\\.tf line \\d+[^\\n]*\\n[│\\s]*\\d+:\\s+${line.source}`,
      ),
    );
  const instance = (args: string) => `resource "gpurental_instance" "gpu" {
${args}
  template_id = "${s.creds.template_id}"
  disk_gb     = 50
}`;

  // A value inside offer_filter is shown at offer_filter, not at the resource's first line.
  writeConfig(s, instance(`  offer_filter = {\n    gpu_model = "RTX 4090"\n    num_gpus  = 0\n  }`));
  let text = output(expectCode(await plan(s), 1));
  expect(text).toContain("offer_filter.num_gpus must be a whole number from 1 to 1024; got 0.");
  at(text, /offer_filter = \{/);

  writeConfig(
    s,
    instance(
      `  offer_id     = "${s.creds.offer_id}"\n  offer_filter = { gpu_model = "RTX 4090", num_gpus = 1 }`,
    ),
  );
  text = output(expectCode(await plan(s), 1));
  expect(text).toContain("Error: Both offer_id and offer_filter are set");
  at(text, /offer_filter = \{/);

  writeConfig(s, instance(`  offer_id = ""`));
  text = output(expectCode(await plan(s), 1));
  expect(text).toContain("offer_id must be the ID of an offer, a UUID");
  at(text, /offer_id = ""/);

  expect(liveInstances(s)).toHaveLength(0);
});
