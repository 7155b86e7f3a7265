import { readFileSync } from "node:fs";
import { join } from "node:path";
import { stringify } from "lossless-json";
import type { Instance } from "../api/schemas";
import { makeInstance } from "../api/testing/fixtures";
import { UNSAFE_CHARACTERS } from "../display";
import { parseYen } from "../report/money";
import { parseJsonDocument } from "../tfstate/json";
import { type PlanDocument, readTerraformDocument } from "../tfstate/plan";
import { buildPlanReport } from "./build";
import { evaluateGates, parseFailOn, parseHours, tripped } from "./gates";
import { priceMicro, SENSITIVE_ATTRIBUTES } from "./inputs";
import type { PlanReport } from "./model";
import type { DeployReading, PlanReadings } from "./readings";
import { COMMENT_MARKER, renderMarkdown, reportJson } from "./render";

// The plan report built from the fixture plan (every action Terraform plans on instances and keys)
// and readings made by hand, with the figures worked out here independently. Against the real
// terraform and the fake backend's own billing: test/e2e/commands/plan-report.e2e.test.ts.

const FIXTURES = join(__dirname, "..", "tfstate", "fixtures");
const text = readFileSync(join(FIXTURES, "plan.json"), "utf8");
const doc = readTerraformDocument(parseJsonDocument(text, "plan.json"), "plan.json");
const plan = (doc.kind === "plan" ? doc.plan : undefined) as PlanDocument;

const I = (n: number) => `10000000-0000-4000-8000-${String(n).padStart(12, "0")}`;
const SECRETS = [`gpr_${"5ec2e7".repeat(8)}`, "a11cce55", "env-secret-value"];

// Listed now: eight instances at ¥2.50/h and 200 micro per GB-hour; node[1] is stopped, gone has 200 GB.
const listed: Instance[] = [1, 3, 4, 9, 10, 11, 12, 13].map((n) =>
  makeInstance({
    id: I(n),
    status: n === 4 ? "stopped" : "running",
    disk_gb: n === 9 ? 200 : 50,
    offer: { id: "00000000-0000-4000-8000-000000000041", gpu_model: "RTX 4090", num_gpus: 1 },
  }),
);

function deployReading(perHour: bigint, estimate = false): DeployReading {
  return {
    price: {
      perHour,
      storagePerGbHour: 200n,
      estimate,
      basis: estimate ? "the cheapest match now" : "offer 41",
    },
    gpu: { model: "RTX 4090", count: 1 },
    offerId: "00000000-0000-4000-8000-000000000041",
    findings: [],
  };
}

function readings(
  balance: PlanReadings["balance"],
  overrides: Record<string, DeployReading> = {},
): PlanReadings {
  return {
    now: Date.parse("2026-11-24T10:00:00Z"),
    instances: listed,
    balance,
    deploys: new Map(
      Object.entries({
        "gpurental_instance.new": deployReading(2_300_000n, true),
        "gpurental_instance.pinned": deployReading(2_500_000n),
        "gpurental_instance.a": deployReading(2_500_000n),
        "gpurental_instance.cbd": deployReading(2_500_000n),
        ...overrides,
      }),
    ),
  };
}

const report = (balance: PlanReadings["balance"], overrides?: Record<string, DeployReading>): PlanReport =>
  buildPlanReport({ plan }, readings(balance, overrides));

test("every instance change in a reviewer's words, disk losses first, no-ops left out", () => {
  const r = report({ micro: 1_000_000_000n });
  expect(r.instances.map((l) => [l.address, l.action])).toEqual([
    ["gpurental_instance.a", "replace"],
    ["gpurental_instance.cbd", "replace"],
    ["gpurental_instance.gone", "destroy"],
    ["gpurental_instance.forgotten", "forget"],
    ["gpurental_instance.new", "create"],
    ["gpurental_instance.pinned", "create"],
    ["module.gpu.gpurental_instance.node[0]", "stop"],
    ["module.gpu.gpurental_instance.node[1]", "start"],
    ["gpurental_instance.adopted", "import"],
  ]);
  const a = r.instances[0]!;
  expect(a).toMatchObject({
    disk: { kind: "replaced", oldGb: 50, newGb: 100 },
    reasons: ["disk_gb 50 → 100"],
    order: "delete-first",
    burnBefore: 2_510_000n,
    burnAfter: 2_520_000n,
  });
  expect(r.instances[1]).toMatchObject({ order: "create-first", reasons: ["label cbd → cbd-2"] });
  expect(r.instances[2]).toMatchObject({ disk: { kind: "destroyed", gb: 200 }, burnAfter: 0n });
  expect(r.instances[3]!.notes[0]).toContain("keeps running and billing: a stray");
  expect(r.instances[5]).toMatchObject({ disk: { kind: "new", gb: 20 }, burnAfter: 4_000n }); // created, then stopped
  expect(r.instances[6]).toMatchObject({
    disk: { kind: "kept", gb: 50 },
    burnBefore: 2_510_000n,
    burnAfter: 10_000n,
  });
  expect(r.instances[7]).toMatchObject({ burnBefore: 10_000n, burnAfter: 2_510_000n });
  expect(r.keys.map((k) => [k.address, k.action, k.name, k.kind])).toEqual([
    ["gpurental_api_key.ci", "create", "ci", "team"],
    ["gpurental_api_key.old", "revoke", "old", "team"],
  ]);
});

test("burn before and after, worst case, balance hours, exact", () => {
  const r = report({ micro: 1_000_000_000n });
  // 6 running at 50 GB (2.51) + 1 stopped (0.01) + 1 running at 200 GB (2.54).
  expect(r.burn.before).toBe(17_610_000n);
  // + replace a (+0.01) - gone (2.54) + new (2.308) + pinned stopped (0.004) - stop (2.50) + start (2.50).
  expect(r.burn.after).toBe(17_392_000n);
  // Every deploy and start before any destroy or stop: + 2.308 + 2.504 + 2.52 + 2.51 + 2.50.
  expect(r.burn.worstCase).toBe(29_952_000n);
  expect(r.balance).toMatchObject({
    read: true,
    hoursBefore: { tenths: 567n },
    hoursAfter: { tenths: 574n },
  });
});

test.each([
  [19_891_999n, "broken"],
  [19_892_000n, "may-fail"],
  [29_951_999n, "may-fail"],
  [29_952_000n, "met"],
])("balance rule with a balance of %s micro: %s", (balance, status) => {
  const r = report({ micro: balance });
  // The last deploy at best faces the burn after the change plus the GPU of the create stopped right after.
  expect(r.rule).toMatchObject({ status, required: 19_892_000n, worstCase: 29_952_000n });
});

test("without the balance, or a price, the rule is not judged and says why", () => {
  const unread = report({ unread: "the balance needs a signed-in session" });
  expect(unread.rule).toMatchObject({ status: "not-judged", required: 19_892_000n });
  expect(unread.unread[0]).toContain("Balance: the balance needs a signed-in session");
  const unpriced = report(
    { micro: 10n ** 12n },
    { "gpurental_instance.new": { findings: [], unpriced: "no offer matches" } },
  );
  expect(unpriced.burn).toMatchObject({ after: undefined, unpriced: ["gpurental_instance.new"] });
  expect(unpriced.rule.status).toBe("not-judged");
  expect(unpriced.unread).toContain("Price of gpurental_instance.new: no offer matches.");
});

test("a change that only destroys and stops does not meet the rule at all", () => {
  const only: PlanDocument = {
    ...plan,
    changes: plan.changes.filter(
      (c) => ["delete", "update"].includes(c.action) && c.address !== "module.gpu.gpurental_instance.node[1]",
    ),
  };
  const r = buildPlanReport({ plan: only }, readings({ micro: 0n }));
  expect(r.rule.status).toBe("not-applicable");
  expect(r.limit.status).toBe("not-applicable");
});

test("instance limit: after and during the apply", () => {
  expect(report({ micro: 0n }).limit).toEqual({
    status: "met",
    before: 8,
    after: 9,
    worstCase: 11,
    limit: 25,
  });
  const crowded = buildPlanReport(
    { plan },
    {
      ...readings({ micro: 0n }),
      instances: [...listed, ...Array.from({ length: 15 }, (_, i) => makeInstance({ id: `x${i}` }))],
    },
  );
  expect(crowded.limit).toMatchObject({ status: "may-fail", after: 24, worstCase: 26 });
});

test("gates: conditions and limits, not judged without their figure", () => {
  const r = report({ micro: 19_892_000n });
  const gates = evaluateGates(r, {
    failOn: parseFailOn("disk-loss,replace,destroy,key-revoke,refusal,balance-rule,forget"),
    maxBurnPerHour: 17_392_000n,
    maxBurnIncreasePerHour: 0n,
    minBalanceTenths: parseHours("1.2"),
  });
  expect(gates.map((g) => [g.gate, g.status])).toEqual([
    ["disk-loss", "tripped"],
    ["replace", "tripped"],
    ["destroy", "tripped"],
    ["key-revoke", "tripped"],
    ["refusal", "passed"],
    ["balance-rule", "tripped"],
    ["forget", "tripped"],
    ["max-burn-per-hour=¥17.392", "passed"],
    ["max-burn-increase-per-hour=¥0.00", "passed"],
    ["min-balance-hours=1.2", "tripped"],
  ]);
  expect(gates[0]!.detail).toBe(
    "3 disks destroyed: gpurental_instance.a, gpurental_instance.cbd, gpurental_instance.gone",
  );
  expect(gates.at(-1)!.detail).toBe("the balance covers 1.1 h after the change, fewer than 1.2 h");

  const unread = report({ unread: "no session" });
  const g2 = evaluateGates(unread, { failOn: ["balance-rule"], minBalanceTenths: 10n });
  expect(g2.map((g) => g.status)).toEqual(["not-judged", "not-judged"]);
  expect(tripped(g2)).toBe(false);
  const g3 = evaluateGates(unread, { failOn: ["balance-rule", "unjudged"], minBalanceTenths: 10n });
  expect(g3.at(-1)).toEqual({
    gate: "unjudged",
    status: "tripped",
    detail: "not judged: balance-rule, min-balance-hours=1.0",
  });
  expect(() => parseFailOn("disk-loss,typo")).toThrow(/--fail-on takes disk-loss, replace, .* got 'typo'/);
  expect(() => parseHours("1.25")).toThrow(/at most one decimal/);
});

test.each([
  ["12.5", 12_500_000n],
  ["¥12.50", 12_500_000n],
  ["1,250", 1_250_000_000n],
  ["1,250,000.000001", 1_250_000_000_001n],
])("an amount %s is %d micro", (text, micro) => {
  expect(parseYen(text, "--max-burn-per-hour")).toBe(micro);
});

test.each(["25,50", "1,2,3", ",5", "1,2500", "12,50.5", "1.2345678", "-1", "1e3"])(
  "an amount %s is refused, naming the flag, not read another way",
  (text) => {
    expect(() => parseYen(text, "--max-burn-per-hour")).toThrow(
      `--max-burn-per-hour must be an amount in ¥ with at most 6 decimals and a comma only between groups of three digits, e.g. 12.50, ¥12.50 or 1,250, got '${text}'`,
    );
  },
);

test("a certain refusal trips refusal", () => {
  const r = report(
    { micro: 0n },
    {
      "gpurental_instance.pinned": {
        ...deployReading(2_500_000n),
        findings: [
          {
            severity: "error",
            summary: "DISK_TOO_LARGE: too big",
            detail: "...",
            path: [{ attribute: "disk_gb" }],
          },
        ],
      },
    },
  );
  expect(evaluateGates(r, { failOn: ["refusal"] })[0]).toMatchObject({
    status: "tripped",
    detail: "gpurental_instance.pinned: DISK_TOO_LARGE: too big",
  });
});

test("Markdown: disk losses first, the money, every line; JSON with exact integers; no secret in either", () => {
  const r = report({ micro: 29_952_000n });
  r.gates = evaluateGates(r, { failOn: ["disk-loss"] });
  const md = renderMarkdown(r);
  expect(
    md.startsWith(
      `${COMMENT_MARKER}\n### gpurental plan report\n\n> [!CAUTION]\n> **2 replacements destroy disks**`,
    ),
  ).toBe(true);
  expect(md).toContain(
    '> - `gpurental_instance.a` "a": **50 GB destroyed**, new empty 100 GB, because disk\\_gb 50 → 100',
  );
  expect(md).toContain(
    "| Hourly burn of the organization (balance rule) | ¥17.61/h | ¥17.392/h | -¥0.218/h |",
  );
  // Charged: 7 running GPUs (17.50) + 1 stopped disk (0.01); after: + new GPU 2.30 + pinned's disk
  // 0.004 - gone's GPU 2.50 - node[0]'s GPU + its disk 0.01 + node[1]'s GPU - its disk.
  expect(md).toContain(
    "| Charged per hour (GPU while running, disk while stopped) | ¥17.51/h | ¥17.314/h | -¥0.196/h |",
  );
  expect(md).toContain("| Hours of burn the balance covers (the rule needs 1) | 1.7 h | 1.7 h |  |");
  expect(md).toContain("**One-hour balance rule** (checked at each deploy and start): met.");
  expect(md).toContain(
    '| create | `gpurental_instance.new` "new" | RTX 4090 × 1 | ~¥2.30/h (estimate) | new 40 GB | ¥0.00 → ¥2.308 |',
  );
  expect(md).toContain(
    '| stop | `module.gpu.gpurental_instance.node[0]` "node-0" | RTX 4090 × 1 | ¥2.50/h | kept (50 GB) | ¥2.51 → ¥0.01 |',
  );
  expect(md).toContain("| **revoke** | `gpurental_api_key.old` | old | team |");
  expect(md).toContain("| `disk-loss` | **tripped** |");
  const json = stringify(reportJson(r)) ?? "";
  expect(JSON.parse(json)).toMatchObject({
    burn: {
      before_micro: 17610000,
      after_micro: 17392000,
      change_micro: -218000,
      worst_case_micro: 29952000,
    },
    balance: { read: true, balance_micro: 29952000, hours_now: "1.7", hours_after: "1.7" },
    balance_rule: { status: "met" },
    disk_loss: [
      { address: "gpurental_instance.a", action: "replace", disk_gb: 50 },
      { address: "gpurental_instance.cbd", action: "replace", disk_gb: 50 },
      { address: "gpurental_instance.gone", action: "destroy", disk_gb: 200 },
    ],
    gate_tripped: true,
  });
  for (const out of [md, json]) for (const s of SECRETS) expect(out).not.toContain(s);
});

test("a label Terraform marks sensitive is not shown", () => {
  const sensitive: PlanDocument = {
    ...plan,
    changes: plan.changes.map((c) =>
      c.address === "gpurental_instance.new"
        ? { ...c, afterSensitive: { ...c.afterSensitive, label: true } }
        : c,
    ),
  };
  const r = buildPlanReport({ plan: sensitive }, readings({ micro: 0n }));
  expect(r.instances.find((l) => l.address === "gpurental_instance.new")!.label).toBe("(sensitive)");
  expect(renderMarkdown(r)).not.toMatch(/`gpurental_instance.new` "new"/);
});

test("a label from the plan reaches the Markdown escaped: no terminal command, no markup, no override", () => {
  const evil = "evil\u001b]0;PWNED\u0007\u001b[2Jx <b>[x](y)</b> \u202e@team";
  const labelled: PlanDocument = {
    ...plan,
    changes: plan.changes.map((c) =>
      c.address === "gpurental_instance.new" ? { ...c, after: { ...c.after, label: evil } } : c,
    ),
  };
  const md = renderMarkdown(buildPlanReport({ plan: labelled }, readings({ micro: 0n })));
  expect(md.replace(/\n/g, "")).not.toMatch(new RegExp(`[${UNSAFE_CHARACTERS}]`));
  expect(md).not.toContain("<b>");
  expect(md).not.toContain("[x](y)");
  expect(md).not.toMatch(/@team/);
  expect(md).toContain("evil\\\\x1b\\]0;PWNED\\\\x07");
});

test("the plan's own text (Terraform's version, its timestamp) reaches the Markdown escaped too", () => {
  const evil = "1.11\u001b]0;PWNED\u0007 <b>@team</b>";
  const stamped: PlanDocument = { ...plan, terraformVersion: evil, timestamp: evil };
  const md = renderMarkdown(buildPlanReport({ plan: stamped }, readings({ micro: 0n })));
  expect(md.replace(/\n/g, "")).not.toMatch(new RegExp(`[${UNSAFE_CHARACTERS}]`));
  expect(md).not.toContain("<b>");
  expect(md).not.toMatch(/@team/);
  expect(md).toContain("Terraform 1.11\\\\x1b");
});

/** The fixture plan with `after` of one change patched. */
function planned(
  address: string,
  patch: (after: Record<string, unknown>) => Record<string, unknown>,
): PlanDocument {
  return {
    ...plan,
    changes: plan.changes.map((c) =>
      c.address === address
        ? { ...c, after: patch({ ...c.after }) as PlanDocument["changes"][0]["after"] }
        : c,
    ),
  };
}

test.each<[string, unknown, string]>([
  ["the most negative whole number", -9007199254740991, "got -9007199254740991."],
  ["zero", 0, "got 0."],
  ["one below the least", 9, "got 9."],
  ["one above the most", 20001, "got 20001."],
  ["a fraction", 50.5, "got 50.5."],
  ["a number past 2^53", 2n ** 70n, "got 1.1805916207174113e+21."],
  ["text", "40", 'disk_gb must be a number; got "40".'],
])(
  "a disk_gb out of the schema's range (%s) makes the cost unknown: its gates are not judged",
  (_, disk, said) => {
    const p = planned("gpurental_instance.new", (a) => ({ ...a, disk_gb: disk }));
    const r = buildPlanReport({ plan: p }, readings({ micro: 1_000_000_000n }));
    expect(r.burn).toMatchObject({
      after: undefined,
      chargedAfter: undefined,
      unpriced: ["gpurental_instance.new"],
    });
    const gates = evaluateGates(r, {
      failOn: ["unjudged"],
      maxBurnPerHour: 1_000_000n,
      maxBurnIncreasePerHour: 0n,
      minBalanceTenths: 10n,
    });
    r.gates = gates;
    expect(gates.map((g) => [g.gate, g.status])).toEqual([
      ["max-burn-per-hour=¥1.00", "not-judged"],
      ["max-burn-increase-per-hour=¥0.00", "not-judged"],
      ["min-balance-hours=1.0", "not-judged"],
      ["unjudged", "tripped"],
    ]);
    expect(r.rule.status).toBe("not-judged");
    const line = r.instances.find((l) => l.address === "gpurental_instance.new")!;
    expect(line.burnAfter).toBeUndefined();
    expect(line.notes[0]).toContain(said);
    expect(line.notes[0]).toMatch(
      /The provider refuses this value, so the plan cannot be applied as it is; its cost is not known\.$/,
    );
    expect(r.unread).toContainEqual(
      expect.stringMatching(/^Cost of gpurental_instance\.new: disk_gb must be /),
    );
    expect(renderMarkdown(r)).toContain("| `max-burn-per-hour=¥1.00` | not judged |");
  },
);

test("the range is the schema's: 10 and 20000 GB are priced", () => {
  for (const disk of [10, 20000]) {
    const r = buildPlanReport(
      { plan: planned("gpurental_instance.new", (a) => ({ ...a, disk_gb: disk })) },
      readings({ micro: 1_000_000_000n }),
    );
    const line = r.instances.find((l) => l.address === "gpurental_instance.new")!;
    // GPU ¥2.30 and the disk at 200 micro per GB-hour.
    expect(line.burnAfter).toBe(2_300_000n + BigInt(disk) * 200n);
  }
});

test.each<[string, Record<string, unknown>, string]>([
  [
    "no GPU",
    { gpu_model: "RTX 4090", num_gpus: 0 },
    "offer_filter.num_gpus must be a whole number from 1 to 1024; got 0.",
  ],
  ["too many GPUs", { gpu_model: "RTX 4090", num_gpus: 1025 }, "got 1025."],
  [
    "a negative price limit",
    { gpu_model: "RTX 4090", num_gpus: 1, max_price_per_hour_micro: -1 },
    "offer_filter.max_price_per_hour_micro must be a whole number from 0 to 1000000000000; got -1.",
  ],
])("an offer_filter out of the schema's range (%s) makes the cost unknown", (_, filter, said) => {
  const p = planned("gpurental_instance.new", (a) => ({ ...a, offer_filter: filter }));
  const r = buildPlanReport({ plan: p }, readings({ micro: 1_000_000_000n }));
  expect(r.burn.unpriced).toEqual(["gpurental_instance.new"]);
  expect(r.instances.find((l) => l.address === "gpurental_instance.new")!.notes[0]).toContain(said);
});

test("a price is a whole amount from 0; a burn too large to add up exactly is not known", () => {
  expect([-1, 0, 2_500_000, -1n, 2n ** 53n, 2n ** 53n - 1n, 1.5, "2"].map(priceMicro)).toEqual([
    undefined,
    0n,
    2_500_000n,
    undefined,
    undefined,
    2n ** 53n - 1n,
    undefined,
    undefined,
  ]);
  const huge = deployReading(BigInt(Number.MAX_SAFE_INTEGER));
  const r = report({ micro: 1_000_000_000n }, { "gpurental_instance.new": huge });
  expect(r.burn.unpriced).toEqual(["gpurental_instance.new"]);
  expect(r.instances.find((l) => l.address === "gpurental_instance.new")!.notes).toContainEqual(
    expect.stringMatching(/is too large to add up exactly, so it is not known$/),
  );
  // A state's own negative price (an instance the API does not list) is not shown as its rate.
  const negative = buildPlanReport(
    {
      plan: {
        ...plan,
        changes: plan.changes.map((c) =>
          c.address === "gpurental_instance.gone" && c.before
            ? { ...c, before: { ...c.before, price_per_hour_micro: -2_500_000 } }
            : c,
        ),
      },
    },
    { ...readings({ micro: 0n }), instances: [] },
  );
  expect(negative.instances.find((l) => l.address === "gpurental_instance.gone")!.price).toBeUndefined();
});

test("the provider's secret attributes are masked in replace reasons, whatever the plan marks", () => {
  // A plan JSON without Terraform's sensitive markers (written by hand or by another tool), whose
  // replacement is forced by secret attributes.
  const unmarked: PlanDocument = {
    ...plan,
    changes: plan.changes.map((c) =>
      c.address === "gpurental_instance.a"
        ? {
            ...c,
            beforeSensitive: {},
            afterSensitive: {},
            after: { ...c.after, access_token: "new-token-value", secret_env: { TOKEN: "new-env-secret" } },
            afterUnknown: {},
            replacePaths: [
              ["access_token"],
              ["secret_env"],
              ["secret_env", "TOKEN"],
              ["disk_gb"],
              ["env", "MODE"],
            ],
          }
        : c,
    ),
  };
  const r = buildPlanReport({ plan: unmarked }, readings({ micro: 0n }));
  expect(r.instances.find((l) => l.address === "gpurental_instance.a")!.reasons).toEqual([
    "access_token (sensitive) → (sensitive)",
    "secret_env (sensitive) → (sensitive)",
    "secret_env changes",
    "disk_gb 50 → 100",
    "env.MODE changes",
  ]);
  const md = renderMarkdown(r);
  const json = stringify(reportJson(r)) ?? "";
  for (const out of [md, json]) {
    for (const s of [...SECRETS, "new-token-value", "new-env-secret", "TOKEN"]) expect(out).not.toContain(s);
  }
});

test("the secret attributes are the provider schema's sensitive ones", () => {
  const schema = JSON.parse(
    readFileSync(join(__dirname, "..", "..", "provider-schema", "gpurental.json"), "utf8"),
  ) as {
    provider_schemas: Record<
      string,
      { resource_schemas: Record<string, { block: { attributes: Record<string, { sensitive?: boolean }> } }> }
    >;
  };
  const [provider] = Object.values(schema.provider_schemas);
  for (const type of ["gpurental_instance", "gpurental_api_key"]) {
    const attributes = provider!.resource_schemas[type]!.block.attributes;
    const sensitive = Object.keys(attributes).filter((a) => attributes[a]!.sensitive);
    expect(sensitive.length).toBeGreaterThan(0);
    expect([...SENSITIVE_ATTRIBUTES[type]!].sort()).toEqual(sensitive.sort());
  }
  expect(SENSITIVE_ATTRIBUTES.gpurental_instance!.has("access_token")).toBe(true);
  expect(SENSITIVE_ATTRIBUTES.gpurental_api_key!.has("secret")).toBe(true);
});

test("a label that is an address links nowhere in the Markdown", () => {
  const labelled = planned("gpurental_instance.new", (a) => ({ ...a, label: "https://evil.example/login" }));
  const md = renderMarkdown(buildPlanReport({ plan: labelled }, readings({ micro: 0n })));
  expect(md).toContain(
    '| create | `gpurental_instance.new` "https:\u2060//evil.example/login" | RTX 4090 × 1 | ~¥2.30/h (estimate) | new 40 GB | ¥0.00 → ¥2.308 |',
  );
  const www = planned("gpurental_instance.new", (a) => ({ ...a, label: "www.evil.example" }));
  expect(renderMarkdown(buildPlanReport({ plan: www }, readings({ micro: 0n })))).toContain(
    '`gpurental_instance.new` "www\u2060.evil.example"',
  );
});
