import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import {
  GENERATED_DIRS,
  generateBindings,
  type ProviderSchemaJson,
  SCHEMA_FILE,
} from "../../scripts/generate/generate-schema";

// CDK Terrain's bindings are exactly what `npm run schema` makes of the committed schema with
// @cdktn/provider-generator; each ephemeral resource in the schema is a binding for cdktn (and is
// left out of cdktf's, whose generator has no such class); and the cdktn entry loads no cdktf.

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

test("the committed src/bindings/cdktn is what @cdktn/provider-generator makes of the schema", async () => {
  await generateBindings(committed(), join(out, "generated"), "cdktn");
  const expected = tree(join(out, "generated"));
  const actual = tree(GENERATED_DIRS.cdktn);
  expect([...actual.keys()].sort()).toEqual([...expected.keys()].sort());
  for (const [file, text] of expected) expect([file, actual.get(file)]).toEqual([file, text]);
  for (const text of actual.values()) expect(text).not.toMatch(/from 'cdktf'|require\("cdktf"\)/);
});

test("each ephemeral resource of the schema is a cdktn class; cdktf's bindings have none", () => {
  const provider = Object.values(committed().provider_schemas)[0] as {
    ephemeral_resource_schemas?: Record<string, unknown>;
  };
  const types = Object.keys(provider.ephemeral_resource_schemas ?? {}).sort();
  expect(types).toEqual(["gpurental_api_key", "gpurental_instance_access"]);
  const cdktn = tree(GENERATED_DIRS.cdktn);
  for (const type of types) {
    const folder = `ephemeral-${type.replaceAll("_", "-")}`;
    const text = cdktn.get(join(folder, "index.ts"));
    expect(text).toMatch(/export class EphemeralGpurental\w+ extends cdktn\.TerraformEphemeralResource/);
    expect(text).toContain(`terraformResourceType: '${type}'`);
    expect(cdktn.get("index.ts")).toContain(`from './${folder}/index'`);
  }
  const cdktf = tree(GENERATED_DIRS.cdktf);
  expect([...cdktf.keys()].filter((f) => f.startsWith("ephemeral-"))).toEqual([]);
  expect([...cdktf.values()].some((text) => text.includes("EphemeralResource"))).toBe(false);
});

test("@gpurental/gpurental/cdktn loads cdktn and never cdktf; the package root loads cdktf and never cdktn", () => {
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
