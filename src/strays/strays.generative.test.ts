import { readFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { stringify } from "lossless-json";
import type { ApiKey } from "../api/schemas";
import { makeInstance } from "../api/testing/fixtures";
import { firstUnsafeCharacter, jsonEscaped } from "../display";
import { damagedJsonText, generativeRuns, generativeSeed, hostileText } from "../testing/generative";
import { stateFromJson } from "../tfstate/sources";
import type { StateSnapshot } from "../tfstate/state";
import { UserFacingError } from "../user-facing";
import { importConfiguration } from "./adopt";
import { findStrays } from "./find";
import { renderStraysText, straysJson } from "./render";

// `gpurental strays` reads state files (a raw state, `terraform show -json` of a state or of a plan)
// that come from anywhere a pipeline keeps them, and the organization's listings, where any member
// names instances and keys. Any such file must end in states or in one error naming it, never in a
// fault of the program; and what the command prints (its table, the `import` and `resource` blocks
// it writes, its JSON) must hold no control character or override raw, and no secret the state
// holds. Here the fixture states are damaged at random places, cut short or replaced by any text,
// and the listings carry hostile labels, key names and GPU models.

const SEED = generativeSeed(20261129);
const RUNS = generativeRuns(300);

const FIXTURES = join(__dirname, "..", "tfstate", "fixtures");
const texts = ["raw-state-v4.json", "show-state.json", "plan.json"].map((name) => ({
  name,
  text: readFileSync(join(FIXTURES, name), "utf8"),
}));
/** Secrets the fixtures hold (an API key's secret, an access token, a secret env value). */
const SECRETS = ["a11cce55a11cce55a11cce55a11cce55", "env-secret-value"];

/** A state file: one of the fixtures, damaged. */
const stateFile = fc.oneof(
  ...texts.map(({ name, text }) => damagedJsonText(text).map((t) => ({ name, text: t }))),
);

const I = (n: number) => `10000000-0000-4000-8000-${String(n).padStart(12, "0")}`;

/** The organization's listings: instances and keys named by anyone, some held by the states. */
const listings = fc.record({
  labels: fc.array(fc.option(hostileText, { nil: null }), { maxLength: 4 }),
  gpu: hostileText,
  keyNames: fc.array(hostileText, { maxLength: 3 }),
});

test("any state file and any listing: a report with nothing raw and no secret, or one error naming the file", () => {
  let reports = 0;
  let refusals = 0;
  fc.assert(
    fc.property(fc.array(stateFile, { minLength: 1, maxLength: 2 }), listings, (files, l) => {
      const states: StateSnapshot[] = [];
      for (const f of files) {
        try {
          states.push(stateFromJson(f.text, f.name));
        } catch (err) {
          if (!(err instanceof UserFacingError)) throw err;
          expect(err.message).toContain(f.name);
          refusals++;
          return;
        }
      }
      const instances = l.labels.map((label, n) =>
        makeInstance({
          // Some are the fixtures' own (1, 3, 4, ...), held by their states; the others are strays.
          id: I(n * 2 + 1),
          label,
          offer: { id: "00000000-0000-4000-8000-000000000041", gpu_model: l.gpu, num_gpus: 1 },
        }),
      );
      const apiKeys: ApiKey[] = l.keyNames.map((name, n) => ({
        id: `20000000-0000-4000-8000-${String(n + 70).padStart(12, "0")}`,
        name,
        kind: "team",
        prefix: "gpr_5ec2e75e",
        created_at: "2026-11-20T08:00:00.000Z",
        last_used_at: null,
        creator_email: "admin@demo.example",
        creator_id: "u1",
        creator_is_member: true,
      }));
      const r = findStrays({ instances, apiKeys, states, now: Date.parse("2026-11-29T10:00:00Z") });
      // As the command prints them; its JSON through jsonEscaped, as `--json` writes it.
      const printed = [
        renderStraysText(r),
        importConfiguration(r),
        jsonEscaped(stringify(straysJson(r), null, 2) ?? ""),
      ];
      for (const out of printed) {
        const raw = firstUnsafeCharacter(out.replace(/[\n\t]/g, " "));
        if (raw !== undefined) throw new Error(`printed ${raw} raw:\n${out}`);
        for (const s of SECRETS) expect(out).not.toContain(s);
      }
      expect(JSON.parse(printed[2]!)).toEqual(JSON.parse(stringify(straysJson(r)) ?? ""));
      // The ids share their first 8 characters and many labels make the same name: still one
      // resource block per address, and every import into one of them.
      const resources = [...printed[1]!.matchAll(/^resource "(\S+)" "(\S+)" \{$/gm)].map(
        (m) => `${m[1]}.${m[2]}`,
      );
      const imports = [...printed[1]!.matchAll(/^ {2}to = (\S+)$/gm)].map((m) => m[1]!);
      expect(new Set(resources).size).toBe(resources.length);
      expect(imports.sort()).toEqual(resources.sort());
      reports++;
    }),
    { seed: SEED, numRuns: RUNS },
  );
  expect(reports).toBeGreaterThan(RUNS / 4);
  expect(refusals).toBeGreaterThan(0);
});
