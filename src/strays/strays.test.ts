import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { ApiKey } from "../api/schemas";
import { makeInstance } from "../api/testing/fixtures";
import { UNSAFE_CHARACTERS } from "../display";
import { parseJsonDocument } from "../tfstate/json";
import { readTerraformDocument } from "../tfstate/plan";
import type { StateSnapshot } from "../tfstate/state";
import { hclString, importConfiguration, strayResourceName, strayResourceNames } from "./adopt";
import { findStrays, heldObjects, strayCount } from "./find";
import { renderStraysText, straysJson } from "./render";

// Finding strays from listings and states, and what a person and a machine see of them. The
// command itself, with the real terraform and the fake backend, is in test/e2e/commands/strays.e2e.test.ts.

const FIXTURES = join(__dirname, "..", "tfstate", "fixtures");
function state(name: string): StateSnapshot {
  const doc = readTerraformDocument(
    parseJsonDocument(readFileSync(join(FIXTURES, name), "utf8"), name),
    name,
  );
  return doc.kind === "state" ? doc.state : doc.plan.priorState;
}
const I = (n: number) => `10000000-0000-4000-8000-${String(n).padStart(12, "0")}`;
const K = (n: number) => `20000000-0000-4000-8000-${String(n).padStart(12, "0")}`;
const SECRET = `gpr_${"5ec2e7".repeat(8)}`;
const NOW = Date.parse("2026-11-24T10:00:00.000Z");

function key(id: string, overrides: Partial<ApiKey> = {}): ApiKey {
  return {
    id,
    name: "key",
    kind: "team",
    prefix: "gpr_0a1b2c3d",
    creator_email: "admin@example.com",
    creator_id: "u1",
    created_at: "2026-11-23T10:00:00.000Z",
    last_used_at: null,
    creator_is_member: true,
    ...overrides,
  };
}

test("held: every managed object of every state, at any address, and what a plan imports", () => {
  const held = heldObjects([state("raw-state-v4.json"), state("plan.json")]);
  expect([...held.instances.keys()].sort()).toEqual([1, 2, 3, 4, 5, 9, 10, 12, 13, 11].map(I).sort());
  expect(held.instances.get(I(5))).toEqual([
    'module.gpu["west"].gpurental_instance.node[1] (deposed 0f1e2d3c) in raw-state-v4.json',
  ]);
  expect(held.instances.get(I(11))).toEqual([
    "gpurental_instance.adopted (imported by the plan) in plan.json (prior state)",
  ]);
  expect(held.apiKeys.get(K(2))).toEqual([
    'module.gpu["west"].module.keys.gpurental_api_key.ci["y"] in raw-state-v4.json',
  ]);
  // A data source reading an instance does not hold it.
  expect(held.instances.has(I(99))).toBe(false);
});

describe("findStrays", () => {
  const states = [state("raw-state-v4.json")];
  const listing = {
    instances: [
      makeInstance({ id: I(1), label: "a" }),
      makeInstance({ id: I(5), label: "node-1-old" }), // deposed, still held
      makeInstance({
        id: I(50),
        label: "lost",
        created_at: "2026-11-24T08:00:00.000Z",
        spend_micro: 5_000_000,
      }),
      makeInstance({ id: I(51), label: "older", status: "stopped", created_at: "2026-11-20T10:00:00.000Z" }),
      makeInstance({ id: I(52), status: "destroying" }),
      makeInstance({ id: I(53), status: "destroyed" }),
      makeInstance({ id: I(99), label: "seen by a data source only" }),
    ],
    apiKeys: [
      key(K(1)),
      key(K(60), { name: "lost key" }),
      key(K(61), { name: "ci", prefix: SECRET.slice(0, 12) }),
    ],
  };
  const r = findStrays({ ...listing, states, keyPrefix: SECRET.slice(0, 12), now: NOW });

  test("instances no state holds, oldest first, with age, burn and spend; destroyed and destroying ones are not strays", () => {
    expect(r.instances.map((s) => s.instance.id)).toEqual([I(51), I(99), I(50)]);
    const lost = r.instances.find((s) => s.instance.id === I(50))!;
    expect(lost).toMatchObject({ ageMs: 2 * 3600_000, pricePerHour: 2_500_000n, spend: 5_000_000n });
    // Running: GPU and disk (50 GB at 200 micro); stopped: disk only.
    expect(lost.hourlyBurn).toBe(2_510_000n);
    expect(r.instances.find((s) => s.instance.id === I(51))!.hourlyBurn).toBe(10_000n);
    expect(r.leaving.map((i) => i.id)).toEqual([I(52)]);
  });

  test("the key the command authenticates with is listed and marked, never counted", () => {
    expect(r.apiKeys.map((k) => [k.key.id, k.thisCredential])).toEqual([
      [K(60), false],
      [K(61), true],
    ]);
    expect(strayCount(r)).toBe(4);
  });

  test("ids the states hold that the organization does not list", () => {
    expect(r.missing.map((m) => m.id).sort()).toEqual([I(2), I(3), I(4), K(2)].sort());
  });

  test("text and JSON: figures exact, nothing but ids taken from the states, no secret", () => {
    const text = renderStraysText(r);
    expect(text).toContain("4 strays found: 3 instances burning ¥5.03/h and 1 API key.");
    expect(text).toMatch(
      /10000000-0000-4000-8000-000000000050 +lost +running +RTX 4090 × 1 +2h 0m +¥2\.50 +¥2\.51 +¥5\.00/,
    );
    expect(text).toContain("this command's credential (not counted, never revoked)");
    expect(text).toContain(`Being destroyed, not counted: ${I(52)}`);
    const json = JSON.stringify(straysJson(r), (_k, v) => (typeof v === "bigint" ? v.toString() : v));
    for (const out of [text, json]) {
      expect(out).not.toContain(SECRET);
      expect(out).not.toContain("a11cce55");
      expect(out).not.toContain("env-secret-value");
    }
    expect(straysJson(r)).toMatchObject({
      strays_found: true,
      stray_count: 4,
      hourly_burn_micro: 5_030_000n,
    });
  });

  test("nothing stray", () => {
    const none = findStrays({ instances: [listing.instances[0]!], apiKeys: [key(K(1))], states, now: NOW });
    expect(strayCount(none)).toBe(0);
    expect(renderStraysText(none)).toContain(
      "No strays: every instance and API key of the organization is held by a state read.",
    );
    expect(importConfiguration(none)).toBe("");
  });

  test("import configuration: an import and a resource block per stray, this command's key left out", () => {
    const hcl = importConfiguration(r);
    expect(hcl).toContain(`import {
  to = gpurental_instance.stray_lost_10000000
  id = "${I(50)}"
}

resource "gpurental_instance" "stray_lost_10000000" {
  offer_id    = "5f0c6f9e-1a2b-4c3d-8e9f-0000000000a1"
  template_id = "5f0c6f9e-1a2b-4c3d-8e9f-0000000000b1"
  disk_gb     = 50
  label       = "lost"
`);
    // A stopped instance stays stopped once adopted.
    expect(hcl).toMatch(
      /resource "gpurental_instance" "stray_older_10000000" \{[^}]*desired_status = "stopped"/,
    );
    expect(hcl).toContain(`resource "gpurental_api_key" "stray_lost_key_20000000" {
  name = "lost key"
  kind = "team"
}`);
    expect(hcl).not.toContain(`id = "${K(61)}"`);
    expect(hcl).toContain(`# Left out: API key ${K(61)}`);
  });
});

test("HCL strings and names survive any label", () => {
  // A label is a literal: HCL's template sequences in it are escaped, not interpolated.
  const template = ['a "b" \\ ', "$", "{x} %{y}\nz"].join("");
  expect(hclString(template)).toBe(['"a \\"b\\" \\\\ ', "$$", '{x} %%{y}\\nz"'].join(""));
  // Other control characters and overrides as HCL escapes: the same string, nothing for a terminal.
  expect(hclString("evil\u001b]0;PWNED\u0007\u202e")).toBe('"evil\\u001b]0;PWNED\\u0007\\u202e"');
  expect(strayResourceName("GPU #1 (eval)", "abcdef12-3456")).toBe("stray_gpu_1_eval_abcdef12");
  expect(strayResourceName(null, "abcdef12-3456")).toBe("stray_abcdef12");
  expect(strayResourceName("---", "abcdef12")).toBe("stray_abcdef12");
});

test("labels, names and statuses from the API reach the terminal escaped, never as commands", () => {
  const evil = "evil\u001b]0;PWNED\u0007\u001b[2Jx";
  const r = findStrays({
    instances: [
      makeInstance({ id: I(70), label: evil }),
      makeInstance({ id: I(71), label: `leaving\r\n${evil}`, status: "destroying" }),
    ],
    apiKeys: [key(K(70), { name: `\u202eyek-${evil}`, creator_email: "a@example.com" })],
    states: [],
    now: NOW,
  });
  const text = renderStraysText(r);
  expect(text.replace(/\n/g, "")).not.toMatch(new RegExp(`[${UNSAFE_CHARACTERS}]`));
  expect(text).toContain("evil\\x1b]0;PWNED\\x07\\x1b[2Jx");
  expect(text).toContain("\\u202eyek-evil");
  // A line break in a label cannot start a line of its own.
  expect(text).toContain(`(leaving\\x0d\\x0a${"evil\\x1b"}`);
  // Nor in the import blocks, printed on stdout with --import.
  expect(importConfiguration(r).replace(/\n/g, "")).not.toMatch(new RegExp(`[${UNSAFE_CHARACTERS}]`));
});

/** The `to` of every import block and the address of every resource block of a configuration. */
function addresses(hcl: string): { imports: string[]; resources: string[] } {
  return {
    imports: [...hcl.matchAll(/^ {2}to = (\S+)$/gm)].map((m) => m[1]!),
    resources: [...hcl.matchAll(/^resource "(\S+)" "(\S+)" \{$/gm)].map((m) => `${m[1]}.${m[2]}`),
  };
}

describe("resource names are unique within one configuration", () => {
  // Time-ordered ids (UUIDv7) of objects created within a minute share their first 8 characters.
  const A = "01890a5d-ac96-774b-bcce-b302099a8057";
  const B = "01890a5d-ac97-7c4f-8a1d-0d5e4f2a9b11";
  const C = "01890a5d-ac97-7d00-9e2a-3c4d5e6f7a8b";
  const D = "01890a5d-f000-7000-8000-000000000000";

  test("unlabelled instances: the id part is lengthened until the names differ, and only there", () => {
    expect(strayResourceNames([A, B, C, D].map((id) => ({ words: null, id })))).toEqual([
      "stray_01890a5dac96",
      "stray_01890a5dac977c",
      "stray_01890a5dac977d",
      "stray_01890a5df",
    ]);
    // A name that collides with nothing keeps its 8 characters.
    expect(strayResourceNames([{ words: null, id: A }])).toEqual(["stray_01890a5d"]);
  });

  test("labels that make the same name collide too; other labels keep their short names", () => {
    expect(
      strayResourceNames([
        { words: "GPU 1", id: A },
        { words: "gpu-1", id: B },
        { words: "train", id: C },
        { words: "gpu_1", id: D },
      ]),
    ).toEqual([
      "stray_gpu_1_01890a5dac96",
      "stray_gpu_1_01890a5dac97",
      "stray_train_01890a5d",
      "stray_gpu_1_01890a5df",
    ]);
    // Labels alike in their first 40 characters only.
    const long = "x".repeat(40);
    expect(
      strayResourceNames([
        { words: `${long}a`, id: A },
        { words: `${long}b`, id: B },
      ]),
    ).toEqual([`stray_${long}_01890a5dac96`, `stray_${long}_01890a5dac97`]);
  });

  test("ids alike once reduced to letters and digits are numbered, in order, never onto another's name", () => {
    expect(
      strayResourceNames([
        { words: null, id: "AB-12" },
        { words: null, id: "ab12" },
        { words: null, id: "ab_12" },
        { words: "ab12", id: "2" },
        { words: null, id: "ab12-2" },
      ]),
    ).toEqual(["stray_ab12", "stray_ab12_3", "stray_ab12_4", "stray_ab12_2", "stray_ab122"]);
  });

  test("the same listing always gets the same names", () => {
    const objects = [A, B, C, D].map((id) => ({ words: null, id }));
    expect(strayResourceNames(objects)).toEqual(strayResourceNames(objects.map((o) => ({ ...o }))));
  });

  test("import configuration: one resource block per name, each import into one of them", () => {
    const r = findStrays({
      instances: [
        makeInstance({ id: A, created_at: "2026-11-24T09:00:00.000Z" }),
        makeInstance({ id: B, created_at: "2026-11-24T09:00:01.000Z" }),
        makeInstance({ id: C, label: "job", created_at: "2026-11-24T09:00:02.000Z" }),
        makeInstance({ id: D, label: "job", created_at: "2026-11-24T09:00:03.000Z" }),
      ],
      apiKeys: [key("01890a5d-ac96-7000-8000-000000000001", { name: "job" })],
      states: [],
      now: NOW,
    });
    const { imports, resources } = addresses(importConfiguration(r));
    expect(resources).toHaveLength(5);
    expect(new Set(resources).size).toBe(5);
    expect(imports.sort()).toEqual([...resources].sort());
    expect(resources).toEqual([
      "gpurental_instance.stray_01890a5dac96",
      "gpurental_instance.stray_01890a5dac97",
      "gpurental_instance.stray_job_01890a5dac97",
      "gpurental_instance.stray_job_01890a5df",
      "gpurental_api_key.stray_job_01890a5dac96",
    ]);
  });
});
