import type { Instance, Offer } from "../api/schemas";
import { makeTemplate } from "../api/testing/fixtures";
import {
  describeFilter,
  explainSelection,
  judgeRentedOffer,
  type OfferFilter,
  RACE_LOSS_CODES,
  type SelectionInput,
  selectOffers,
} from "./offer-selection";

const NOW = Date.parse("2026-11-22T08:00:00.000Z");

function offer(id: string, over: Partial<Offer> = {}, machine: Partial<Offer["machine"]> = {}): Offer {
  return {
    id,
    gpu_model: "RTX 4090",
    num_gpus: 1,
    availability: "available",
    free_units: 2,
    next_maintenance: null,
    price_per_hour_micro: 2_500_000,
    storage_price_per_gb_hour_micro: 200,
    region: "cn-east-1",
    ...over,
    machine: {
      id: `machine-${id}`,
      disk_gb: 2000,
      available_disk_gb: 1500,
      cuda_version: "12.4",
      vm_capable: false,
      architecture: "x86_64",
      ...machine,
    },
  };
}

const template = makeTemplate;

const filter: OfferFilter = { gpu_model: "RTX 4090", num_gpus: 1, max_price_per_hour_micro: 3_000_000 };

function select(offers: Offer[], over: Partial<SelectionInput> = {}) {
  return selectOffers({ offers, filter, template: template(), diskGb: 100, now: NOW, ...over });
}

const ids = (s: ReturnType<typeof selectOffers>) => s.candidates.map((c) => c.offer.id);
const why = (s: ReturnType<typeof selectOffers>) =>
  Object.fromEntries(s.exclusions.map((e) => [e.offer.id, [e.criterion, e.code ?? null]]));

describe("selectOffers", () => {
  it("ranks the candidates cheapest first", () => {
    const s = select([
      offer("b", { price_per_hour_micro: 2_600_000 }),
      offer("a", { price_per_hour_micro: 2_400_000 }),
      offer("c", { price_per_hour_micro: 2_900_000 }),
    ]);
    expect(ids(s)).toEqual(["a", "b", "c"]);
    expect(s.exclusions).toEqual([]);
  });

  it("breaks price ties by the disk price, then free units, then id", () => {
    const s = select([
      offer("d", { storage_price_per_gb_hour_micro: 300 }),
      offer("c", { free_units: 1 }),
      offer("b", { free_units: 5 }),
      offer("a", { free_units: 5 }),
    ]);
    expect(ids(s)).toEqual(["a", "b", "c", "d"]);
  });

  it.each<[string, Offer, string, string | null]>([
    ["another model", offer("x", { gpu_model: "RTX 3090" }), "gpu_model", null],
    ["another GPU count", offer("x", { num_gpus: 4 }), "num_gpus", null],
    ["above the maximum price", offer("x", { price_per_hour_micro: 3_000_001 }), "max_price", null],
    ["no listed price under a maximum", offer("x", { price_per_hour_micro: undefined }), "max_price", null],
    ["sold out", offer("x", { availability: "sold_out", free_units: 0 }), "unavailable", "OFFER_UNAVAILABLE"],
    ["no free unit", offer("x", { free_units: 0 }), "unavailable", "OFFER_UNAVAILABLE"],
    ["withdrawn", offer("x", { availability: "withdrawn" }), "unavailable", "OFFER_UNAVAILABLE"],
    ["a machine too small", offer("x", {}, { disk_gb: 80 }), "disk_too_large", "DISK_TOO_LARGE"],
    [
      "a machine too full",
      offer("x", {}, { available_disk_gb: 50 }),
      "disk_exhausted",
      "MACHINE_DISK_EXHAUSTED",
    ],
    ["a newer CUDA", offer("x", {}, { cuda_version: "12.8" }), "cuda_too_new", "TEMPLATE_CUDA_TOO_NEW"],
  ])("leaves out an offer %s", (_name, o, criterion, code) => {
    const s = select([o], { template: template({ cuda_max: "12.4" }) });
    expect(ids(s)).toEqual([]);
    expect(why(s)).toEqual({ x: [criterion, code] });
  });

  it("leaves out machines that cannot run a vm template only for a vm template", () => {
    const o = offer("x", {}, { vm_capable: false });
    expect(why(select([o], { template: template({ mode: "vm" }) }))).toEqual({
      x: ["not_vm_capable", "OFFER_NOT_VM_CAPABLE"],
    });
    expect(ids(select([o]))).toEqual(["x"]);
  });

  it("matches model and region case-insensitively and filters by region", () => {
    const s = select([offer("a", { gpu_model: "rtx 4090" }), offer("b", { region: "cn-north-1" })], {
      filter: { ...filter, region: "CN-EAST-1" },
    });
    expect(ids(s)).toEqual(["a"]);
    expect(why(s)).toEqual({ b: ["region", null] });
  });

  it("keeps an offer whose machine goes into maintenance within 24 hours, and tries it last", () => {
    const soon = offer("soon", {
      price_per_hour_micro: 2_000_000,
      next_maintenance: "2026-11-22T14:00:00.000Z",
    });
    const s = select([soon, offer("later", { next_maintenance: "2026-11-24T00:00:00.000Z" })]);
    expect(ids(s)).toEqual(["later", "soon"]);
    expect(s.candidates[1]?.caveats.map((c) => [c.code, c.severity])).toEqual([
      ["MACHINE_IN_MAINTENANCE", "warning"],
    ]);
  });

  it("keeps a sold-out offer one of our own instances holds (a replacement frees the unit), ranked last", () => {
    const ours = { id: "i", status: "running", disk_gb: 50, offer: { id: "held" } } as Instance;
    const s = select([offer("held", { free_units: 0, price_per_hour_micro: 1 }), offer("free")], {
      instances: [ours],
    });
    expect(ids(s)).toEqual(["free", "held"]);
  });

  it("skips the checks whose data is missing", () => {
    const o = offer("x", {}, { cuda_version: "12.8", disk_gb: 10 });
    expect(ids(select([o], { template: undefined, diskGb: undefined }))).toEqual(["x"]);
    expect(ids(selectOffers({ offers: [o], now: NOW }))).toEqual(["x"]);
  });

  it("orders the exclusions cheapest first", () => {
    const s = select([
      offer("b", { price_per_hour_micro: 3_500_000 }),
      offer("a", { price_per_hour_micro: 3_200_000 }),
    ]);
    expect(s.exclusions.map((e) => e.offer.id)).toEqual(["a", "b"]);
  });
});

describe("explainSelection", () => {
  it("counts the exclusions per criterion and lists the nearest offers with their reasons", () => {
    const s = select(
      [
        offer("p1", { price_per_hour_micro: 3_100_000 }),
        offer("p2", { price_per_hour_micro: 2_900_000, availability: "sold_out", free_units: 0 }),
        offer("p3", { price_per_hour_micro: 2_200_000 }, { cuda_version: "12.8" }),
        offer("p4", { num_gpus: 2 }),
      ],
      { template: template({ cuda_max: "12.4" }) },
    );
    const text = explainSelection({ ...s, candidates: [] }, filter);
    expect(text.split("\n")[0]).toBe(
      "No offer matches RTX 4090 × 1 at most ¥3.00/h and would be accepted for this template and disk. 4 RTX 4090 offers were considered: 1 with another GPU count (2), 1 above the maximum price (cheapest ¥3.10/h), 1 sold out or withdrawn, 1 on machines whose CUDA is newer than the template supports.",
    );
    expect(text).toContain(
      "offer p3 at ¥2.20/h: The template supports CUDA up to 12.4; the machine has 12.8",
    );
    expect(text).toContain("offer p1 at ¥3.10/h: ¥3.10/h is above the maximum of ¥3.00/h");
    expect(text.indexOf("p3")).toBeLessThan(text.indexOf("p1"));
  });

  it("says when the market lists no offer of the model at all", () => {
    expect(explainSelection(select([]), filter)).toBe("No offer of RTX 4090 is listed on the market now.");
  });

  it("is empty when there are candidates", () => {
    expect(explainSelection(select([offer("a")]), filter)).toBe("");
  });

  it("lists at most ten offers", () => {
    const many = Array.from({ length: 12 }, (_, i) => offer(`o${i}`, { availability: "withdrawn" }));
    expect(explainSelection(select(many), filter)).toContain("  - and 2 more");
  });
});

describe("judgeRentedOffer", () => {
  const rented = { gpu_model: "RTX 4090", num_gpus: 1, region: "cn-east-1", price_per_hour_micro: 2_500_000 };
  it.each<[string, Partial<OfferFilter>, string[]]>([
    ["the same filter", {}, []],
    ["a tighter maximum it still meets", { max_price_per_hour_micro: 2_500_000 }, []],
    ["its region, in other case", { region: "CN-East-1" }, []],
    [
      "a lower maximum",
      { max_price_per_hour_micro: 2_400_000 },
      ["it was rented at ¥2.50/h, above the maximum of ¥2.40/h"],
    ],
    ["another model", { gpu_model: "RTX 3090" }, ["it rents RTX 4090, not RTX 3090"]],
    ["another count", { num_gpus: 2 }, ["it rents 1 GPU(s), not 2"]],
    ["another region", { region: "cn-north-1" }, ["it runs in cn-east-1, not cn-north-1"]],
  ])("%s", (_name, over, unmet) => {
    expect(judgeRentedOffer(rented, { ...filter, ...over })).toEqual({ unmet, unknown: [] });
  });

  it("names what the snapshot cannot tell", () => {
    expect(
      judgeRentedOffer({ ...rented, region: null, gpu_model: null }, { ...filter, region: "cn-east-1" }),
    ).toEqual({ unmet: [], unknown: ["gpu_model", "region"] });
  });
});

test("race losses are the refusals that mean another deploy was first", () => {
  expect([...RACE_LOSS_CODES].sort()).toEqual([
    "MACHINE_DISK_EXHAUSTED",
    "MACHINE_IN_MAINTENANCE",
    "OFFER_NOT_PINNABLE",
    "OFFER_UNAVAILABLE",
  ]);
});

test("describeFilter", () => {
  expect(
    describeFilter({
      gpu_model: "A100",
      num_gpus: 2,
      region: "cn-east-1",
      max_price_per_hour_micro: 1_500_000,
    }),
  ).toBe("A100 × 2 in cn-east-1 at most ¥1.50/h");
});
