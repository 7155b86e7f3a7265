import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { makeInstance } from "../api/testing/fixtures";
import { DeployJournal, locateJournal, type RunIdentity } from "../journal";
import { instanceStateText } from "../testing/saved-state";
import { findStrays } from "./find";
import { closeImportedEntries, markLateArrivals } from "./journals";
import { renderStraysText, straysJson } from "./render";

// What `gpurental strays` reads and writes of the working directories' deploy journals.

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "gpr-strays-journal-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const gone: RunIdentity = { id: "gone", pid: 2 ** 22 + 1, boot: "another-boot" };
const journal = () => new DeployJournal(locateJournal({ cwd: dir, env: {} }), { run: gone });

test("import blocks written for strays close their journal entries, so no create adopts them too", () => {
  const j = journal();
  const a = j.sent("instance", "sha256:x", {});
  j.answered(a, "i-imported");
  const b = j.sent("instance", "sha256:x", {});
  j.answered(b, "i-other");
  expect(closeImportedEntries(["i-imported"], [dir], {}, "/")).toBe(1);
  expect(
    journal()
      .live()
      .map((e) => e.id),
  ).toEqual(["i-other"]);
});

test("import blocks for an instance a rolled-back state once held close its entry for good", () => {
  const state = (serial: number, ids: string[]) =>
    writeFileSync(join(dir, "terraform.tfstate"), instanceStateText(ids, { serial, lineage: "l" }));
  const j = journal();
  const a = j.sent("instance", "sha256:x", {});
  j.answered(a, "i-imported");
  j.handed(a);
  state(5, ["i-imported"]);
  expect(j.settleHanded()).toBe(1);
  // The state's backup put back: the entry is open again, until the import blocks take it.
  state(2, []);
  const next = () => new DeployJournal(locateJournal({ cwd: dir, env: {} }));
  expect(next().adoptable("instance", "sha256:x")).toHaveLength(1);
  closeImportedEntries(["i-imported"], [dir], {}, "/");
  expect(next().adoptable("instance", "sha256:x")).toEqual([]);
});

test("a stray matching a deploy the journal gave up, created after it was sent, is named a late arrival", () => {
  const now = Date.parse("2026-11-27T12:00:00Z");
  const j = new DeployJournal(locateJournal({ cwd: dir, env: {} }), {
    run: gone,
    now: () => now - 3600_000,
  });
  const request = { offer_id: "o-1", template_id: "t-1", disk_gb: 50, label: "gpu" };
  const e = j.sent("instance", "sha256:x", request, ["i-before"]);
  j.close(e, "abandoned");
  const inst = (id: string, created: string) =>
    makeInstance({
      id,
      label: "gpu",
      disk_gb: 50,
      created_at: created,
      offer: { ...makeInstance().offer, id: "o-1" },
      template: { ...makeInstance().template, id: "t-1" },
    });
  const report = findStrays({
    instances: [inst("i-late", "2026-11-27T11:10:00Z"), inst("i-before", "2026-11-27T10:00:00Z")],
    apiKeys: [],
    states: [],
    now,
  });
  expect(markLateArrivals(report, [dir], {}, "/", now)).toBe(1);
  const text = renderStraysText(report);
  expect(text).toContain("Late arrivals of given-up deploys (1):");
  expect(text).toContain(
    "i-late: landed after the deploy journal gave up its deploy sent at 2026-11-27T11:00:00Z",
  );
  const json = straysJson(report) as { instances: { id: string; late_arrival: unknown }[] };
  expect(json.instances.find((i) => i.id === "i-late")?.late_arrival).toMatchObject({
    deploy_sent_at: "2026-11-27T11:00:00.000Z",
    journal_entry: e,
  });
  expect(json.instances.find((i) => i.id === "i-before")?.late_arrival).toBeNull();
  // Past the watch, nothing is named.
  const later = findStrays({
    instances: [inst("i-late", "2026-11-27T11:10:00Z")],
    apiKeys: [],
    states: [],
    now,
  });
  expect(markLateArrivals(later, [dir], { GPURENTAL_LATE_ARRIVAL_WATCH: "30m" }, "/", now)).toBe(0);
});

test("a watch the provider refuses is refused here in its words: no silent default", () => {
  const report = findStrays({ instances: [], apiKeys: [], states: [], now: 0 });
  for (const value of ["banana", "0s", "0h0m"]) {
    expect(() => markLateArrivals(report, [dir], { GPURENTAL_LATE_ARRIVAL_WATCH: value }, "/", 0)).toThrow(
      `The GPURENTAL_LATE_ARRIVAL_WATCH environment variable must be a duration such as "48h" (at most 480h); got "${value}".`,
    );
  }
  expect(markLateArrivals(report, [dir], { GPURENTAL_LATE_ARRIVAL_WATCH: "" }, "/", 0)).toBe(0);
});
