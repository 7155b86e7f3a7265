import {
  attr,
  defineSchema,
  type ProviderDefinition,
  type ResourceDefinition,
  readPrivate,
  requiresReplaceIf,
  writePrivate,
} from "./index";
import { createHarness } from "./testing";

// Private data flows as Terraform carries it: import → read → plan → apply, handlers may change it
// through their request, and a failed apply keeps what the object had.

describe("readPrivate / writePrivate", () => {
  it("round-trips a JSON object and writes nothing for an empty one", () => {
    expect(readPrivate(writePrivate({ imported: true, n: 2 }))).toEqual({ imported: true, n: 2 });
    expect(writePrivate({})).toEqual(Buffer.alloc(0));
  });

  it("reads empty, foreign or broken bytes as an empty object", () => {
    expect(readPrivate(undefined)).toEqual({});
    expect(readPrivate(Buffer.alloc(0))).toEqual({});
    expect(readPrivate(Buffer.from("[1,2]"))).toEqual({});
    expect(readPrivate(Buffer.from("\x00\xffnot json"))).toEqual({});
  });
});

interface Log {
  seen: Record<string, unknown>[];
  failUpdate: boolean;
}

const schema = defineSchema({
  description: "A test note.",
  attributes: {
    id: attr.string({ computed: true }),
    // Replaces the note, except while the imported marker says the prior value was never known.
    body: attr.string({
      optional: true,
      planModifiers: [
        requiresReplaceIf((req) => !(readPrivate(req.private).imported && req.state === null), "Replaces."),
      ],
    }),
  },
});

const note = {
  typeName: "gpurental_note",
  schema,
  async create(req, ctx) {
    ctx.providerData.seen.push({ op: "create", ...readPrivate(req.private) });
    req.private = writePrivate({ created: true });
    return { id: "n-1" };
  },
  async read(req, ctx) {
    ctx.providerData.seen.push({ op: "read", ...readPrivate(req.private) });
    return req.state;
  },
  async update(req, ctx) {
    ctx.providerData.seen.push({ op: "update", ...readPrivate(req.private) });
    if (ctx.providerData.failUpdate) throw new Error("backend exploded");
    req.private = writePrivate({});
    return {};
  },
  async delete() {},
  async importState(req) {
    req.private = writePrivate({ imported: true });
    return { id: req.id };
  },
  modifyPlan(req, ctx) {
    ctx.providerData.seen.push({ op: "plan", ...readPrivate(req.private) });
    if (req.state && readPrivate(req.private).imported)
      req.private = writePrivate({ ...readPrivate(req.private), planned: true });
  },
} satisfies ResourceDefinition<typeof schema, Log>;

const providerSchema = defineSchema({ attributes: {} });

function provider(log: Log) {
  return {
    typeName: "gpurental",
    schema: providerSchema,
    configure: async () => log,
    resources: [note],
    dataSources: [],
  } satisfies ProviderDefinition<typeof providerSchema, Log>;
}

async function setup(failUpdate = false) {
  const log: Log = { seen: [], failUpdate };
  const h = createHarness(provider(log));
  await h.configure({});
  return { h, log };
}

describe("private data through the service", () => {
  it("goes from import through read and plan to the update, which may clear it", async () => {
    const { h, log } = await setup();
    const imported = await h.import("gpurental_note", "n-9");
    expect(readPrivate(imported.private)).toEqual({ imported: true });

    const refreshed = await h.read("gpurental_note", imported.value!, imported.private);
    expect(readPrivate(refreshed.private)).toEqual({ imported: true });

    // body was never known: with the marker, setting it is an in-place change, not a replacement.
    const plan = await h.plan("gpurental_note", refreshed.value, { body: "hello" }, refreshed.private);
    expect(plan.requiresReplace).toEqual([]);
    expect(readPrivate(plan.private)).toEqual({ imported: true, planned: true });

    const applied = await h.apply(
      "gpurental_note",
      refreshed.value,
      plan.planned,
      { body: "hello" },
      plan.private,
    );
    expect(applied.diags).toEqual([]);
    expect(applied.value).toMatchObject({ id: "n-9", body: "hello" });
    expect(applied.private).toEqual(Buffer.alloc(0));
    expect(log.seen).toEqual([
      { op: "read", imported: true },
      { op: "plan", imported: true },
      { op: "update", imported: true, planned: true },
    ]);

    // Without the marker the same change replaces.
    const later = await h.plan("gpurental_note", applied.value, { body: "bye" }, applied.private);
    expect(later.requiresReplace).toEqual([["body"]]);
  });

  it("keeps the planned private data when an update throws", async () => {
    const { h } = await setup(true);
    const imported = await h.import("gpurental_note", "n-9");
    const plan = await h.plan("gpurental_note", imported.value, { body: "x" }, imported.private);
    const applied = await h.apply(
      "gpurental_note",
      imported.value,
      plan.planned,
      { body: "x" },
      plan.private,
    );
    expect(applied.diags.map((d) => d.severity)).toEqual(["error"]);
    expect(applied.value).toEqual(imported.value);
    expect(readPrivate(applied.private)).toEqual({ imported: true, planned: true });
  });

  it("starts a create with empty private data, whatever the planned bytes, and saves what create sets", async () => {
    const { h, log } = await setup();
    const plan = await h.plan("gpurental_note", null, { body: "x" }, writePrivate({ imported: true }));
    expect(plan.private).toEqual(Buffer.alloc(0));
    const applied = await h.apply("gpurental_note", null, plan.planned, { body: "x" }, plan.private);
    expect(readPrivate(applied.private)).toEqual({ created: true });
    expect(log.seen).toEqual([{ op: "plan" }, { op: "create" }]);
  });
});
