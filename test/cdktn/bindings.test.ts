import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import {
  GENERATED_DIRS,
  generateBindings,
  type ProviderSchemaJson,
  SCHEMA_FILE,
} from "../../scripts/generate-schema";

// CDK Terrain's bindings are exactly what `npm run schema` makes of the committed schema with
// @cdktn/provider-generator; an ephemeral resource in the schema becomes a binding for cdktn (and
// is left out of cdktf's, whose generator has no such class); and the cdktn entry loads no cdktf.

jest.setTimeout(120_000);

const ROOT = join(__dirname, "..", "..");

function tree(dir: string): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (d: string) => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      const full = join(d, entry.name);
      if (entry.isDirectory()) walk(full);
      else files.set(relative(dir, full), readFileSync(full, "utf8"));
    }
  };
  walk(dir);
  return files;
}

const committed = (): ProviderSchemaJson =>
  JSON.parse(readFileSync(SCHEMA_FILE, "utf8")) as ProviderSchemaJson;

let out: string;
beforeEach(() => {
  out = mkdtempSync(join(tmpdir(), "gpurental-cdktn-bindings-"));
});
afterEach(() => rmSync(out, { recursive: true, force: true }));

test("the committed src/cdktn/generated is what @cdktn/provider-generator makes of the schema", async () => {
  await generateBindings(committed(), join(out, "generated"), "cdktn");
  const expected = tree(join(out, "generated"));
  const actual = tree(GENERATED_DIRS.cdktn);
  expect([...actual.keys()].sort()).toEqual([...expected.keys()].sort());
  for (const [file, text] of expected) expect([file, actual.get(file)]).toEqual([file, text]);
  for (const text of actual.values()) expect(text).not.toMatch(/from 'cdktf'|require\("cdktf"\)/);
});

test("an ephemeral resource in the schema gets a cdktn binding; cdktf's generator leaves it out", async () => {
  const schema = committed();
  const provider = Object.values(schema.provider_schemas)[0] as Record<string, unknown>;
  provider.ephemeral_resource_schemas = {
    gpurental_instance_access: {
      version: 0,
      block: {
        attributes: {
          instance_id: { type: "string", required: true, description: "ID of the instance." },
          access_token: { type: "string", computed: true, sensitive: true, description: "Access token." },
        },
        description: "Short-lived access to an instance.",
      },
    },
  };
  await generateBindings(schema, join(out, "cdktn"), "cdktn");
  await generateBindings(schema, join(out, "cdktf"), "cdktf");
  const cdktn = tree(join(out, "cdktn"));
  const ephemeral = [...cdktn.entries()].find(([, text]) => text.includes('"gpurental_instance_access"'));
  expect(ephemeral?.[1]).toMatch(/extends cdktn\.TerraformEphemeralResource/);
  expect(ephemeral?.[1]).toMatch(/get accessToken\(\)/);
  expect(cdktn.get("index.ts")).toContain(ephemeral![0].split("/")[0]);
  const cdktf = tree(join(out, "cdktf"));
  expect([...cdktf.values()].some((text) => text.includes("gpurental_instance_access"))).toBe(false);
  expect([...cdktf.keys()].sort()).toEqual([...tree(GENERATED_DIRS.cdktf).keys()].sort());
});

test("gpurental/cdktn loads cdktn and never cdktf; the package root loads cdktf and never cdktn", () => {
  const loaded = (entry: string): string[] =>
    JSON.parse(
      execFileSync(
        process.execPath,
        ["-e", `require(${JSON.stringify(entry)}); console.log(JSON.stringify(Object.keys(require.cache)))`],
        { cwd: ROOT, encoding: "utf8" },
      ),
    ) as string[];
  const cdk = (files: string[]) =>
    [...new Set(files.map((f) => /\/node_modules\/(cdktf|cdktn)\//.exec(f)?.[1]).filter(Boolean))].sort();
  expect(cdk(loaded(join(ROOT, "dist", "cdktn", "index.js")))).toEqual(["cdktn"]);
  expect(cdk(loaded(join(ROOT, "dist", "index.js")))).toEqual(["cdktf"]);
});
