import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseJsonDocument } from "./json";
import { readTerraformDocument } from "./plan";
import {
  cdktfConstructPaths,
  cdktfStacks,
  classifyPath,
  loadPlan,
  readStateSources,
  type SourceContext,
  SourceError,
} from "./sources";
import { objectId, objectsOfType, readRawState, StateDocumentError, type StateSnapshot } from "./state";

// The state and plan readers on fixtures shaped like what Terraform 1.11 writes (raw state v4,
// `terraform show -json` of a state and of a plan), and the sources around them: CDKTF projects and
// stacks, files, stdin. Reading a working directory through `terraform state pull` and a saved plan
// file through `terraform show -json` is covered end to end with the real terraform
// (test/e2e/commands/strays.e2e.test.ts, test/e2e/commands/plan-report.e2e.test.ts).

const FIXTURES = join(__dirname, "fixtures");
const fixture = (name: string) => readFileSync(join(FIXTURES, name), "utf8");

function read(name: string): StateSnapshot {
  const doc = readTerraformDocument(parseJsonDocument(fixture(name), name), name);
  if (doc.kind !== "state") throw new Error(`${name} is not a state`);
  return doc.state;
}

const addressesOf = (s: StateSnapshot, type: string) =>
  objectsOfType(s, type).map(
    (o) => `${o.address}${o.deposed ? ` deposed ${o.deposed}` : ""}${o.tainted ? " tainted" : ""}`,
  );

describe("raw state (version 4)", () => {
  const s = read("raw-state-v4.json");

  test("every managed object of every module, with count and for_each keys, deposed and tainted ones", () => {
    expect(s.format).toBe("state-v4");
    expect(s.terraformVersion).toBe("1.11.4");
    expect(addressesOf(s, "gpurental_instance")).toEqual([
      "gpurental_instance.a",
      "gpurental_instance.workstation_instance_6A3B1C2D",
      'module.gpu["west"].gpurental_instance.node[0]',
      'module.gpu["west"].gpurental_instance.node[1] tainted',
      'module.gpu["west"].gpurental_instance.node[1] deposed 0f1e2d3c',
    ]);
    expect(addressesOf(s, "gpurental_api_key")).toEqual([
      'module.gpu["west"].module.keys.gpurental_api_key.ci["x"]',
      'module.gpu["west"].module.keys.gpurental_api_key.ci["y"]',
    ]);
  });

  test("data sources do not count as objects of the state; other providers' resources are kept by type", () => {
    const ids = s.objects.map(objectId);
    expect(ids).not.toContain("10000000-0000-4000-8000-000000000099");
    expect(objectsOfType(s, "null_resource")).toHaveLength(1);
  });

  test("a state of another format version is refused with what to do", () => {
    expect(() => readRawState({ version: 3, resources: [] }, "old.tfstate")).toThrow(
      /old\.tfstate: state format version 3 is not supported; gpurental reads version 4.*terraform state pull/,
    );
  });

  test("a version too large for a number is quoted as its digits, not a fault", () => {
    const doc = parseJsonDocument(
      '{"version": 123456789012345678901234567890, "resources": []}',
      "big.tfstate",
    );
    expect(() => readTerraformDocument(doc, "big.tfstate")).toThrow(
      /big\.tfstate: state format version "123456789012345678901234567890" is not supported/,
    );
  });

  test("malformed documents name the source and the place", () => {
    expect(() => readRawState({ version: 4, resources: {} }, "s.json")).toThrow(
      "s.json: `resources` is not a list",
    );
    expect(() =>
      readRawState(
        { version: 4, resources: [{ mode: "managed", type: "t", name: "n", instances: [{}] }] },
        "s.json",
      ),
    ).toThrow("s.json: resources[0].instances[0] (t.n) has no attributes object");
  });
});

describe("terraform show -json of a state", () => {
  const s = read("show-state.json");

  test("nested child modules, deposed and tainted objects, no data sources", () => {
    expect(s.format).toBe("show-json-state");
    expect(addressesOf(s, "gpurental_instance")).toEqual([
      "gpurental_instance.a",
      "module.outer.module.inner[0].gpurental_instance.c[2] tainted",
      "module.outer.module.inner[0].gpurental_instance.c[1] deposed aa11bb22",
    ]);
    expect(objectsOfType(s, "gpurental_api_key").map((o) => [o.address, o.module, o.indexKey])).toEqual([
      ['module.outer.gpurental_api_key.k["x"]', "module.outer", "x"],
    ]);
  });

  test("an empty state (no values) has no objects", () => {
    const doc = readTerraformDocument({ format_version: "1.0", terraform_version: "1.11.4" }, "empty");
    expect(doc.kind === "state" && doc.state.objects).toEqual([]);
  });
});

describe("terraform show -json of a plan", () => {
  const doc = readTerraformDocument(parseJsonDocument(fixture("plan.json"), "plan.json"), "plan.json");
  const plan = doc.kind === "plan" ? doc.plan : undefined;

  test("is told apart from a state", () => {
    expect(doc.kind).toBe("plan");
  });

  test("actions, replacement order, reasons, imports and module addresses", () => {
    const byAddress = Object.fromEntries(plan!.changes.map((c) => [c.address, c]));
    expect(plan!.changes.map((c) => [c.address, c.action, c.replaceOrder])).toEqual([
      ["gpurental_instance.new", "create", undefined],
      ["gpurental_instance.pinned", "create", undefined],
      ["gpurental_instance.a", "replace", "delete-first"],
      ["module.gpu.gpurental_instance.node[0]", "update", undefined],
      ["module.gpu.gpurental_instance.node[1]", "update", undefined],
      ["gpurental_instance.gone", "delete", undefined],
      ["gpurental_instance.same", "no-op", undefined],
      ["gpurental_instance.adopted", "no-op", undefined],
      ["gpurental_instance.forgotten", "forget", undefined],
      ["gpurental_instance.cbd", "replace", "create-first"],
      ["gpurental_api_key.ci", "create", undefined],
      ["gpurental_api_key.old", "delete", undefined],
      ["data.gpurental_offers.market", "read", undefined],
    ]);
    expect(byAddress["gpurental_instance.a"]).toMatchObject({
      replacePaths: [["disk_gb"]],
      actionReason: "replace_because_cannot_update",
      before: { disk_gb: 50 },
      after: { disk_gb: 100 },
    });
    expect(byAddress["module.gpu.gpurental_instance.node[0]"]).toMatchObject({
      module: "module.gpu",
      indexKey: 0,
    });
    expect(byAddress["gpurental_instance.new"]!.afterUnknown.offer_id).toBe(true);
    expect(byAddress["data.gpurental_offers.market"]!.mode).toBe("data");
  });

  test("the prior state is read, and objects the plan imports are listed with it", () => {
    expect(plan!.priorState.objects.map((o) => o.address)).toContain("module.gpu.gpurental_instance.node[1]");
    expect(plan!.priorState.imports).toEqual([
      {
        address: "gpurental_instance.adopted",
        type: "gpurental_instance",
        id: "10000000-0000-4000-8000-000000000011",
      },
    ]);
  });

  test("an action list Terraform never plans is an error naming it", () => {
    expect(() =>
      readTerraformDocument(
        {
          format_version: "1.2",
          resource_changes: [
            { address: "x.y", type: "x", name: "y", change: { actions: ["delete", "update"] } },
          ],
        },
        "p.json",
      ),
    ).toThrow(
      'p.json: resource_changes[0].change.actions ["delete","update"] is not an action Terraform plans',
    );
  });
});

test("integers beyond 2^53 stay exact (bigint); others are plain numbers", () => {
  const doc = parseJsonDocument('{"a": 12345678901234567891, "b": 2500000, "c": 1.5}', "n.json");
  expect(doc).toEqual({ a: 12345678901234567891n, b: 2500000, c: 1.5 });
});

test("a document that is neither a state nor a plan is refused", () => {
  expect(() => readTerraformDocument({ hello: "world" }, "x.json")).toThrow(
    "x.json: is neither a Terraform state (a .tfstate file or `terraform state pull`) nor `terraform show -json` output",
  );
  expect(() => parseJsonDocument("{not json", "y.json")).toThrow(/^y\.json is not valid JSON/);
  expect(() => readTerraformDocument([1, 2], "z.json")).toThrow(StateDocumentError);
});

describe("sources", () => {
  let root: string;
  let ctx: SourceContext;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), "gpurental-sources-"));
    ctx = { env: { PATH: "" }, cwd: root, readStdin: async () => fixture("show-state.json") };
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  function stack(project: string, name: string, backend: unknown, resources: unknown = {}) {
    const dir = join(project, "out", "stacks", name);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "cdk.tf.json"), JSON.stringify({ terraform: { backend }, resource: resources }));
    return dir;
  }

  test("a CDKTF project: every synthesized stack, its local state read directly, a missing state noted", async () => {
    const project = join(root, "app");
    mkdirSync(project);
    writeFileSync(join(project, "cdktf.json"), JSON.stringify({ app: "node main.js", output: "out" }));
    writeFileSync(join(project, "terraform.gpu.tfstate"), fixture("raw-state-v4.json"));
    stack(project, "gpu", { local: { path: join(project, "terraform.gpu.tfstate") } });
    stack(project, "keys", { local: { path: "../../../terraform.keys.tfstate" } });

    expect(cdktfStacks(project).map((s) => s.name)).toEqual(["gpu", "keys"]);
    const states = await readStateSources(["app"], ctx);
    expect(states.map((s) => [s.source, s.objects.length, s.note])).toEqual([
      [`CDKTF stack gpu (${join(project, "terraform.gpu.tfstate")})`, 8, undefined],
      [
        `CDKTF stack keys (${join(project, "terraform.keys.tfstate")})`,
        0,
        "no state file yet: the stack was never deployed",
      ],
    ]);
    // --stack narrows; a stack that was not synthesized is named with the ones that were.
    expect((await readStateSources(["app"], ctx, { stacks: ["keys"] })).map((s) => s.source)).toEqual([
      `CDKTF stack keys (${join(project, "terraform.keys.tfstate")})`,
    ]);
    await expect(readStateSources(["app"], ctx, { stacks: ["nope"] })).rejects.toThrow(
      'has no synthesized stack "nope" (synthesized: gpu, keys)',
    );
    // A stack directory on its own.
    const states2 = await readStateSources([join("app", "out", "stacks", "gpu")], ctx);
    expect(states2[0]!.objects).toHaveLength(8);
  });

  test("a CDKTF project never synthesized says to run cdktf synth", () => {
    writeFileSync(join(root, "cdktf.json"), "{}");
    expect(() => cdktfStacks(root)).toThrow(
      /no synthesized stack under .*cdktf\.out\/stacks: run `cdktf synth`/,
    );
  });

  test("a stack with a remote backend is read through terraform, which must be found", async () => {
    const project = join(root, "app");
    mkdirSync(project);
    writeFileSync(join(project, "cdktf.json"), JSON.stringify({ output: "out" }));
    stack(project, "shared", { pg: { conn_str: "postgres://db/state" } });
    await expect(readStateSources(["app"], ctx)).rejects.toThrow(
      /needs the Terraform CLI, and none of terraform, tofu was found on PATH/,
    );
  });

  test("construct paths of a synthesized stack, by address", () => {
    const dir = stack(
      root,
      "gpu",
      { local: {} },
      {
        gpurental_instance: {
          workstation_instance_6A3B1C2D: { "//": { metadata: { path: "gpu/workstation/instance" } } },
        },
      },
    );
    expect([...cdktfConstructPaths(dir)]).toEqual([
      ["gpurental_instance.workstation_instance_6A3B1C2D", "gpu/workstation/instance"],
    ]);
  });

  test("files, stdin once, and paths that are nothing Terraform wrote", async () => {
    writeFileSync(join(root, "a.tfstate"), fixture("raw-state-v4.json"));
    const states = await readStateSources(["a.tfstate", "-"], ctx);
    expect(states.map((s) => [s.source, s.format])).toEqual([
      ["a.tfstate", "state-v4"],
      ["standard input", "show-json-state"],
    ]);
    await expect(readStateSources(["-", "-"], ctx)).rejects.toThrow(
      "standard input (-) can be given only once",
    );
    mkdirSync(join(root, "empty"));
    await expect(readStateSources(["empty"], ctx)).rejects.toThrow(
      /empty is a directory without Terraform configuration or state/,
    );
    await expect(readStateSources(["missing.tfstate"], ctx)).rejects.toThrow(
      /missing\.tfstate does not exist/,
    );
    await expect(readStateSources(["a.tfstate"], ctx, { stacks: ["x"] })).rejects.toThrow(SourceError);
  });

  test("a plan given where a state is expected counts its prior state and its imports", async () => {
    writeFileSync(join(root, "plan.json"), fixture("plan.json"));
    const [s] = await readStateSources(["plan.json"], ctx);
    expect(s!.format).toBe("show-json-plan");
    expect(s!.objects.length).toBe(8);
    expect(s!.imports.map((i) => i.id)).toEqual(["10000000-0000-4000-8000-000000000011"]);
  });

  test("loadPlan: a plan JSON file; a state is refused; a saved plan file is recognised as one", async () => {
    writeFileSync(join(root, "plan.json"), fixture("plan.json"));
    writeFileSync(join(root, "state.json"), fixture("show-state.json"));
    writeFileSync(join(root, "plan.bin"), Buffer.from([0x50, 0x4b, 0x03, 0x04, 0, 0]));
    expect((await loadPlan("plan.json", ctx)).plan.changes).toHaveLength(13);
    await expect(loadPlan("state.json", ctx)).rejects.toThrow(/state\.json is a state, not a plan/);
    expect(classifyPath(join(root, "plan.bin"))).toBe("plan-file");
    // Converting it needs terraform, which this context's PATH lacks.
    await expect(loadPlan("plan.bin", ctx)).rejects.toThrow(/needs the Terraform CLI/);
  });
});
