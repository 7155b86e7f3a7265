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
// value. Each case starts from valid props and damages one to four of them, or adds keys.

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

/** The props of each construct, valid, and how to build it. */
const constructs: ReadonlyArray<
  [
    string,
    Record<string, unknown>,
    readonly string[],
    Build,
    Readonly<Record<string, fc.Arbitrary<unknown>>>?,
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
  ],
  [
    "Instance with an offer filter",
    {
      offer: { gpuModel: "RTX 4090", numGpus: 1, maxPricePerHourMicro: 3_000_000, region: "cn-east-1" },
      templateId: ID,
    },
    ["offerId"],
    (s, p) => new Instance(s, "c", p as unknown as InstanceProps),
  ],
  [
    "ApiKey",
    { name: "ci", kind: "team" },
    ["provider"],
    (s, p) => new ApiKey(s, "c", p as unknown as ApiKeyProps),
  ],
  [
    "OfferLookup",
    { gpuModel: "RTX 4090", numGpus: 2, region: "cn-east-1", deployableWith: { templateId: ID, diskGb: 50 } },
    ["maxPricePerHourMicro", "provider"],
    (s, p) => new OfferLookup(s, "c", p as unknown as OfferLookupProps),
  ],
  [
    "TemplateLookup",
    { mode: "ssh", tab: "all" },
    ["provider"],
    (s, p) => new TemplateLookup(s, "c", p as unknown as TemplateLookupProps),
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
  ],
];

const damagedProps = fc.constantFrom(...constructs).chain(([name, valid, optional, build, secrets = {}]) => {
  const names = [...Object.keys(valid), ...optional];
  const edit = fc.oneof(
    { weight: 6, arbitrary: fc.tuple(fc.constantFrom(...names), anyValue) },
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

test("the valid props of every construct synthesize", () => {
  for (const [name, valid, , build] of constructs) {
    expect([name, synthesize((s) => build(s, valid)).error]).toEqual([name, ""]);
  }
});
