import { t, typeFromBytes } from "../plugin/cty";
import { Diagnostics, formatPath, path, toProtoDiagnostic } from "./diagnostics";
import { oneOf } from "./modifiers";
import { attr, checkNoWriteOnly, defineSchema, type InferModel, SchemaError, toProtoSchema } from "./schema";
import { parseDuration, timeoutsAttribute } from "./timeouts";

describe("defineSchema", () => {
  const schema = defineSchema({
    version: 2,
    description: "An **instance**.",
    attributes: {
      name: attr.string({ required: true, description: "Name.", validators: [oneOf("a", "b")] }),
      count: attr.number({ optional: true, computed: true, deprecated: "Use size." }),
      labels: attr.set(t.string, { optional: true }),
      env: attr.mapNested({ value: attr.string({ required: true }) }, { optional: true }),
      timeouts: timeoutsAttribute({ create: "20m" }),
    },
  });

  it("yields the protocol schema with sorted attributes, markdown and type JSON", () => {
    const proto = toProtoSchema(schema);
    expect(proto.version).toBe(2);
    expect(proto.block.description).toBe("An **instance**.");
    expect(proto.block.description_kind).toBe(1);
    expect(proto.block.attributes.map((a) => a.name)).toEqual(["count", "env", "labels", "name", "timeouts"]);
    const [count, env, labels, name, timeouts] = proto.block.attributes;
    expect(count).toMatchObject({
      optional: true,
      computed: true,
      deprecated: true,
      deprecation_message: "Use size.",
    });
    expect(env!.type).toBeUndefined();
    expect(env!.nested_type).toMatchObject({ nesting: 4 });
    expect(labels!.type!.toString()).toBe('["set","string"]');
    expect(name).toMatchObject({ required: true, optional: false, computed: false, description: "Name." });
    expect(timeouts!.nested_type!.attributes[0]).toMatchObject({ name: "create", optional: true });
  });

  it("tells Terraform which attributes are sensitive and write-only, whether required, optional or computed, at any depth", () => {
    const flagged = defineSchema({
      version: 0,
      attributes: {
        key: attr.string({ required: true, sensitive: true }),
        password: attr.string({ optional: true, sensitive: true }),
        secret: attr.string({ computed: true, sensitive: true }),
        token: attr.string({ optional: true, computed: true, sensitive: true }),
        token_wo: attr.string({ optional: true, sensitive: true, writeOnly: true }),
        name: attr.string({ computed: true }),
        nested: attr.single(
          {
            url: attr.string({ computed: true, sensitive: true }),
            port: attr.number({ computed: true }),
            value_wo: attr.string({ optional: true, writeOnly: true }),
          },
          { optional: true, computed: true },
        ),
      },
    });
    const flags = (attrs: ReturnType<typeof toProtoSchema>["block"]["attributes"]) =>
      Object.fromEntries(attrs.map((a) => [a.name, [a.sensitive, a.write_only]]));
    const proto = toProtoSchema(flagged);
    expect(flags(proto.block.attributes)).toEqual({
      key: [true, false],
      password: [true, false],
      secret: [true, false],
      token: [true, false],
      token_wo: [true, true],
      name: [false, false],
      nested: [false, false],
    });
    const nested = proto.block.attributes.find((a) => a.name === "nested")!;
    expect(flags(nested.nested_type!.attributes)).toEqual({
      url: [true, false],
      port: [false, false],
      value_wo: [false, true],
    });
  });

  it("yields the cty object type", () => {
    expect(schema.type.attributes.labels).toEqual(t.set(t.string));
    expect(schema.type.attributes.env).toEqual(t.map(t.object({ value: t.string })));
    expect(typeFromBytes(JSON.stringify(["object", { create: "string" }]))).toEqual(
      schema.type.attributes.timeouts,
    );
  });

  it("infers the model type", () => {
    const model: InferModel<typeof schema> = {
      name: "a",
      count: 1,
      labels: ["x"],
      env: { K: { value: "v" } },
      timeouts: { create: null },
    };
    expect(model.name).toBe("a");
  });

  it.each([
    ["a bad name", { "Bad-Name": attr.string({ optional: true }) }, /must match/],
    ["no flags", { a: attr.string({} as never) }, /required, optional or computed/],
    [
      "required and computed",
      { a: attr.string({ required: true, computed: true } as never) },
      /cannot be required/,
    ],
    ["a default on a required attribute", { a: attr.string({ required: true, default: "x" }) }, /default/],
    ["write-only and computed", { a: attr.string({ computed: true, writeOnly: true }) }, /write-only/],
    [
      "dynamic inside a set",
      { s: attr.setNested({ d: attr.dynamic({ optional: true }) }, { optional: true }) },
      /inside a set/,
    ],
  ])("rejects %s", (_name, attributes, message) => {
    expect(() => defineSchema({ attributes })).toThrow(SchemaError);
    expect(() => defineSchema({ attributes })).toThrow(message);
  });

  it.each([
    ["a name with a dash", { "a-b": attr.string({ optional: true }) }, 'attribute name "a-b" must match'],
    [
      "a default on an attribute that is optional only",
      { a: attr.string({ optional: true, default: "x" }) },
      'attribute "a" has a default, so it must be optional and computed',
    ],
    [
      "a default on an attribute that is computed only",
      { a: attr.string({ computed: true, default: "x" }) },
      'attribute "a" has a default, so it must be optional and computed',
    ],
    [
      "bad flags inside a nested attribute, named by their whole path",
      { outer: attr.single({ inner: attr.string({} as never) }, { optional: true }) },
      'attribute "outer.inner" must be required, optional or computed',
    ],
  ])("rejects %s, naming the attribute", (_name, attributes, message) => {
    const err = (() => {
      try {
        defineSchema({ attributes });
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(SchemaError);
    expect((err as Error).name).toBe("SchemaError");
    expect((err as Error).message.startsWith(message)).toBe(true);
  });

  it("accepts a default on an optional and computed attribute", () => {
    expect(() =>
      defineSchema({ attributes: { a: attr.string({ optional: true, computed: true, default: "x" }) } }),
    ).not.toThrow();
  });

  it.each([-1, 1.5, Number.NaN, 2 ** 53])("rejects schema version %d", (version) => {
    expect(() => defineSchema({ version, attributes: {} })).toThrow(
      new SchemaError("schema version must be a whole number"),
    );
  });

  it("defaults the version to 0 and descriptions to empty text, and flags nothing deprecated unless asked", () => {
    const plain = toProtoSchema(defineSchema({ attributes: { a: attr.string({ optional: true }) } }));
    expect(plain.version).toBe(0);
    expect(plain.block).toMatchObject({ description: "", deprecated: false });
    expect(plain.block.attributes[0]).toMatchObject({ description: "", deprecated: false });
    const old = toProtoSchema(defineSchema({ version: 3, deprecated: "Use gpurental_new.", attributes: {} }));
    expect(old.version).toBe(3);
    expect(old.block).toMatchObject({ deprecated: true, deprecation_message: "Use gpurental_new." });
  });

  it("refuses write-only attributes where Terraform has none, naming nested ones by their whole path", () => {
    const nested = defineSchema({
      attributes: {
        outer: attr.single({ inner: attr.string({ optional: true, writeOnly: true }) }, { optional: true }),
      },
    });
    expect(() => checkNoWriteOnly(nested, "data source gpurental_x")).toThrow(
      new SchemaError(
        'data source gpurental_x has a write-only attribute "outer.inner"; only managed resources can have write-only attributes',
      ),
    );
    expect(() =>
      checkNoWriteOnly(defineSchema({ attributes: { a: attr.string({ optional: true }) } }), "x"),
    ).not.toThrow();
  });
});

describe("durations", () => {
  it.each([
    ["20m", 1_200_000],
    ["1h30m", 5_400_000],
    ["90s", 90_000],
    ["1.5h", 5_400_000],
    ["250ms", 250],
    ["20", undefined],
    ["20 minutes", undefined],
    ["", undefined],
    ["m", undefined],
    // At most 480h: every duration becomes a timer, and past about 596h Node.js refuses one.
    ["480h", 1_728_000_000],
    ["480h1ms", undefined],
    ["99999999999h", undefined],
  ])("%s -> %s", (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it("rejects a bad default at definition time", () => {
    expect(() => timeoutsAttribute({ create: "soon" })).toThrow(/create = "soon"/);
  });
});

describe("diagnostics", () => {
  it("collects errors and warnings with paths", () => {
    const diags = new Diagnostics();
    diags.addWarning("Careful");
    expect(diags.hasErrors()).toBe(false);
    diags.addAttributeError(path("ports", 0, { key: "k" }, "name"), "Bad", "Very bad");
    expect(diags.hasErrors()).toBe(true);
    expect(formatPath(diags.items[1]!.path!)).toBe('ports[0]["k"].name');
  });

  it("converts to protocol diagnostics with severity 1 or 2 and oneof steps", () => {
    expect(
      toProtoDiagnostic({ severity: "error", summary: "S", detail: "D", path: path("tags", { key: "a" }) }),
    ).toEqual({
      severity: 1,
      summary: "S",
      detail: "D",
      attribute: {
        steps: [
          { selector: "attribute_name", attribute_name: "tags" },
          { selector: "element_key_string", element_key_string: "a" },
        ],
      },
    });
    expect(
      toProtoDiagnostic({ severity: "error", summary: "S", detail: "D", path: path("ports", 2) }),
    ).toEqual({
      severity: 1,
      summary: "S",
      detail: "D",
      attribute: {
        steps: [
          { selector: "attribute_name", attribute_name: "ports" },
          { selector: "element_key_int", element_key_int: 2 },
        ],
      },
    });
    expect(toProtoDiagnostic({ severity: "warning", summary: "W", detail: "" })).toEqual({
      severity: 2,
      summary: "W",
      detail: "",
    });
  });

  // Terraform up to 1.14 shows a path inside a nested attribute's value at the resource block's
  // first line; the attribute itself is where the user looks.
  it("places a path inside a nested attribute on that attribute, naming the whole path in the detail", () => {
    const proto = (p: ReturnType<typeof path>, detail: string) =>
      toProtoDiagnostic({ severity: "error", summary: "Invalid attribute value", detail, path: p });
    const offerFilter = { steps: [{ selector: "attribute_name", attribute_name: "offer_filter" }] };
    expect(
      proto(path("offer_filter", "num_gpus"), "offer_filter.num_gpus must be at least 1; got 0."),
    ).toEqual({
      severity: 1,
      summary: "Invalid attribute value",
      detail: "offer_filter.num_gpus must be at least 1; got 0.",
      attribute: offerFilter,
    });
    expect(proto(path("offer_filter", "region"), "Must not be empty.")).toMatchObject({
      detail: "offer_filter.region: Must not be empty.",
      attribute: offerFilter,
    });
    expect(proto(path("rules", 1, "port"), "Too high.")).toMatchObject({
      detail: "rules[1].port: Too high.",
      attribute: {
        steps: [
          { selector: "attribute_name", attribute_name: "rules" },
          { selector: "element_key_int", element_key_int: 1 },
        ],
      },
    });
  });
});
