import { TerraformStack, Testing } from "cdktf";
import type { Construct } from "constructs";
import fc from "fast-check";
import {
  ApiKey,
  type ApiKeyProps,
  GpurentalProvider,
  type GpurentalProviderProps,
  Instance,
  type InstanceProps,
  OfferLookup,
  type OfferLookupProps,
  TemplateLookup,
  type TemplateLookupProps,
} from "../../src";
import { firstUnsafeCharacter } from "../../src/display";
import { generativeRuns, generativeSeed, hostileText } from "../../src/testing/generative";

// Whatever a JavaScript caller (or a cast) passes as a construct's props, synth ends in the
// constructs' own validation error or succeeds: never a TypeError from deep inside cdktf's
// bindings, never a message or a warning that prints a control character raw or quotes a secret
// value. Each case starts from valid props and damages one to four of them (null among the values
// most tried), or adds keys, or passes something that is no object as the props. Null is unset, as
// in Terraform: an optional prop of null synthesizes what leaving it out does.

const SEED = generativeSeed(20261129);
const RUNS = generativeRuns(400);

const ID = "00000000-0000-4000-8000-000000000041";
/** Every secret value carries this; no message may. */
const SECRET = "S3CRET-VALUE-7f3a";

type Build = (scope: Construct, props: Record<string, unknown>) => void;

const circular: Record<string, unknown> = { a: 1 };
circular.self = circular;

/** What a damaged prop holds instead: anything JavaScript can pass. */
const anyValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.anything({ withBigInt: true, withNullPrototype: true, withBoxedValues: true, maxDepth: 2 }),
  hostileText,
  fc.constantFrom(null, undefined, Number.NaN, -0, Infinity, 2 ** 53 + 1, "", " ", [], {}, true, circular),
  // Settings passed where a construct or a scalar belongs, credentials included: named by their
  // keys, or masked as every message masks a credential.
  fc.constantFrom<unknown>(
    { token: SECRET, baseUrl: "http://127.0.0.1:1" },
    new URL(`https://me:${SECRET}@proxy.example:3128/`),
    [{ password: SECRET }],
  ),
  fc.dictionary(fc.oneof(fc.string({ maxLength: 8 }), hostileText), fc.oneof(fc.string(), fc.anything()), {
    maxKeys: 3,
  }),
);

/** What a secret prop holds instead: any value, or one carrying the secret in any shape. */
const secretMap: fc.Arbitrary<unknown> = fc.oneof(
  anyValue,
  fc.constantFrom<unknown>(
    SECRET,
    { KEY: `${SECRET}\u0000` },
    { KEY: [SECRET] },
    { KEY: { v: SECRET } },
    { [`K\u001b${"x".repeat(70)}`]: `${SECRET}`.repeat(300) },
    [SECRET],
  ),
);
/** A URL prop whose password is secret. */
const secretUrl: fc.Arbitrary<unknown> = fc.oneof(
  anyValue,
  fc
    .constantFrom("http", "https", "ftp", "postgres", "", "http:/")
    .chain((scheme) => hostileText.map((h) => `${scheme}://me:${SECRET}@${h}`)),
);

/**
 * The props of each construct, valid; the optional props left out of them; how to build it; what
 * its secret props hold instead; the class name it reports, the props it requires (an object
 * prop's own as `object.prop`) and the object props among the valid ones, whose own props a case
 * may set to null too.
 */
const constructs: ReadonlyArray<
  [
    string,
    Record<string, unknown>,
    readonly string[],
    Build,
    Readonly<Record<string, fc.Arbitrary<unknown>>>,
    {
      readonly construct: string;
      readonly required: readonly string[];
      readonly objects?: readonly string[];
    },
  ]
> = [
  [
    "Instance",
    {
      offerId: ID,
      templateId: ID,
      diskGb: 50,
      label: "gpu",
      sshKeyId: ID,
      env: { TZ: "UTC" },
      secretEnv: { HF_TOKEN: SECRET },
      secretEnvWo: { WANDB_KEY: SECRET },
      secretEnvWoVersion: 1,
      unsetEnv: ["LANG"],
      storeAccessSecrets: true,
      desiredStatus: "running",
      timeouts: { create: "20m", update: "30m", delete: "10m" },
    },
    ["offer", "dependsOn", "provider"],
    (s, p) => new Instance(s, "c", p as unknown as InstanceProps),
    { secretEnv: secretMap, secretEnvWo: secretMap },
    { construct: "Instance", required: ["templateId"], objects: ["timeouts"] },
  ],
  [
    "Instance with an offer filter",
    {
      offer: { gpuModel: "RTX 4090", numGpus: 1, maxPricePerHourMicro: 3_000_000, region: "cn-east-1" },
      templateId: ID,
    },
    ["offerId"],
    (s, p) => new Instance(s, "c", p as unknown as InstanceProps),
    {},
    { construct: "Instance", required: ["templateId", "offer.gpuModel"], objects: ["offer"] },
  ],
  [
    "ApiKey",
    { name: "ci", kind: "team" },
    ["provider"],
    (s, p) => new ApiKey(s, "c", p as unknown as ApiKeyProps),
    {},
    { construct: "ApiKey", required: ["name"] },
  ],
  [
    "OfferLookup",
    { gpuModel: "RTX 4090", numGpus: 2, region: "cn-east-1", deployableWith: { templateId: ID, diskGb: 50 } },
    ["maxPricePerHourMicro", "provider"],
    (s, p) => new OfferLookup(s, "c", p as unknown as OfferLookupProps),
    {},
    {
      construct: "OfferLookup",
      required: ["gpuModel", "deployableWith.templateId", "deployableWith.diskGb"],
      objects: ["deployableWith"],
    },
  ],
  [
    "TemplateLookup",
    { mode: "ssh", tab: "all" },
    ["provider"],
    (s, p) => new TemplateLookup(s, "c", p as unknown as TemplateLookupProps),
    {},
    { construct: "TemplateLookup", required: ["mode"] },
  ],
  [
    "GpurentalProvider",
    {
      alias: "other",
      baseUrl: `http://me:${SECRET}@127.0.0.1:1`,
      token: SECRET,
      orgId: ID,
      journalUrl: `postgres://me:${SECRET}@db/x`,
      reconcileTimeout: "2m",
      httpsProxy: `http://me:${SECRET}@proxy:3128`,
      noProxy: "localhost",
    },
    ["journalDir", "caCertFile", "httpProxy"],
    (s, p) => new GpurentalProvider(s, "c", p as unknown as GpurentalProviderProps),
    {
      token: fc.oneof(anyValue, fc.constant(SECRET)),
      baseUrl: secretUrl,
      journalUrl: secretUrl,
      httpsProxy: secretUrl,
      httpProxy: secretUrl,
    },
    { construct: "GpurentalProvider", required: [] },
  ],
];

const damagedProps = fc.constantFrom(...constructs).chain(([name, valid, optional, build, secrets]) => {
  const names = [...Object.keys(valid), ...optional];
  const edit = fc.oneof(
    { weight: 6, arbitrary: fc.tuple(fc.constantFrom(...names), anyValue) },
    { weight: 2, arbitrary: fc.tuple(fc.constantFrom(...names), fc.constant(null)) },
    { weight: 1, arbitrary: fc.tuple(fc.oneof(fc.string({ maxLength: 12 }), hostileText), anyValue) },
    ...Object.entries(secrets).map(([key, value]) => ({
      weight: 2,
      arbitrary: fc.tuple(fc.constant(key), value),
    })),
  );
  return fc.array(edit, { minLength: 1, maxLength: 4 }).map((edits) => {
    const props: Record<string, unknown> = { ...valid };
    for (const [key, value] of edits) props[key] = value;
    return { name, props, build };
  });
});

/** Synthesizes `build`; the error cdktf's validation raises, or "" when valid. Anything else throws. */
function synthesize(build: (scope: Construct) => void): { error: string; warnings: string[] } {
  const app = Testing.app();
  const stack = new TerraformStack(app, "test");
  new GpurentalProvider(stack, "gpurental");
  build(stack);
  const warnings = stack.node
    .findAll()
    .flatMap((c) => c.node.metadata)
    .map((m) => String(m.data));
  try {
    Testing.synth(stack, true);
    return { error: "", warnings };
  } catch (err) {
    if (!(err instanceof Error) || !err.message.startsWith("Validation failed")) throw err;
    return { error: err.message, warnings };
  }
}

test("any props end in a named error or a valid synth, printing nothing raw and no secret", () => {
  fc.assert(
    fc.property(damagedProps, ({ props, build }) => {
      const { error, warnings } = synthesize((s) => build(s, props));
      for (const text of [error, ...warnings]) {
        expect(firstUnsafeCharacter(text.replace(/[\n\t]/g, " "))).toBeUndefined();
        expect(text).not.toContain(SECRET);
      }
    }),
    { seed: SEED, numRuns: RUNS },
  );
});

/** Whole props that are no object: anything JavaScript (or JSON) can pass instead. */
const notAnObject: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom<unknown>(null, undefined, 0, Number.NaN, "", SECRET, true, 1n, Symbol("props"), () => ({})),
  fc.anything({ withBigInt: true, maxDepth: 1 }).filter((v) => v === null || typeof v !== "object"),
  fc.array(anyValue, { maxLength: 3 }),
);

test("props that are no object end in the construct's own error, or are none where none is required", () => {
  fc.assert(
    fc.property(
      fc.constantFrom(...constructs),
      notAnObject,
      ([, , , build, , { construct, required }], props) => {
        const { error, warnings } = synthesize((s) => build(s, props as Record<string, unknown>));
        if ((props === null || props === undefined) && required.length === 0) expect(error).toBe("");
        else expect(error).toContain(`[test/c] ${construct} props must be an object, got `);
        for (const text of [error, ...warnings]) {
          expect(firstUnsafeCharacter(text.replace(/[\n\t]/g, " "))).toBeUndefined();
          expect(text).not.toContain(SECRET);
        }
      },
    ),
    { seed: SEED, numRuns: RUNS },
  );
});

/** The configuration synthesized (validations on), or the validation error. */
function configuration(build: (scope: Construct) => void): string {
  const stack = new TerraformStack(Testing.app(), "test");
  new GpurentalProvider(stack, "gpurental");
  build(stack);
  try {
    return Testing.synth(stack, true);
  } catch (err) {
    if (!(err instanceof Error) || !err.message.startsWith("Validation failed")) throw err;
    return err.message;
  }
}

test("null for any optional props synthesizes what leaving them out does; for a required one, names it", () => {
  const cases = fc.constantFrom(...constructs).chain(([, valid, optional, build, , meta]) => {
    const { required, objects = [] } = meta;
    const paths = [
      ...Object.keys(valid),
      ...optional,
      ...objects.flatMap((o) => Object.keys(valid[o] as object).map((k) => `${o}.${k}`)),
    ];
    return fc.record({
      valid: fc.constant(valid),
      build: fc.constant(build),
      required: fc.constant(required),
      objects: fc.constant(objects),
      nulls: fc.subarray(paths, { minLength: 1 }),
    });
  });
  fc.assert(
    fc.property(cases, ({ valid, build, required, objects, nulls }) => {
      const copy = () => {
        const props: Record<string, unknown> = { ...valid };
        for (const o of objects) props[o] = { ...(valid[o] as object) };
        return props;
      };
      const withNull = copy();
      const without = copy();
      // An object prop's own first: the object itself may be set to null after.
      for (const path of [...nulls].sort((a, b) => Number(b.includes(".")) - Number(a.includes(".")))) {
        const [name, inner] = path.split(".") as [string, string?];
        if (inner === undefined) {
          withNull[name] = null;
          delete without[name];
        } else {
          (withNull[name] as Record<string, unknown>)[inner] = null;
          delete (without[name] as Record<string, unknown>)[inner];
        }
      }
      const json = configuration((s) => build(s, withNull));
      // A required prop of an object set to null is unset with it.
      const missing = nulls.filter(
        (path) => required.includes(path) && !(path.includes(".") && nulls.includes(path.split(".")[0]!)),
      );
      if (missing.length === 0) {
        expect(json).toBe(configuration((s) => build(s, without)));
        expect(json).not.toContain('": null');
      } else {
        for (const path of missing) expect(json).toContain(`[test/c] ${path} is required, got null\n`);
      }
    }),
    { seed: SEED, numRuns: RUNS },
  );
});

test("the valid props of every construct synthesize", () => {
  for (const [name, valid, , build] of constructs) {
    expect([name, synthesize((s) => build(s, valid)).error]).toEqual([name, ""]);
  }
});
