import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import {
  fetchProviderSchema,
  formatSchema,
  GENERATED_DIR,
  generateBindings,
  type ProviderSchemaJson,
  SCHEMA_FILE,
} from "../../scripts/generate-schema";
import { installProvider } from "../../src/cli/provider";
import { version } from "../../src/version";

// The committed schema and bindings must be exactly what `npm run schema` produces from the
// provider as built: a provider change without a regeneration (or a hand edit of the bindings)
// fails here. The schema comes from the real terraform CLI, as in the script.

jest.setTimeout(120_000);

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

describe("provider-schema/gpurental.json", () => {
  let served: ProviderSchemaJson;

  beforeAll(async () => {
    served = await fetchProviderSchema({
      install: async (dir) => {
        installProvider({ dir, version });
      },
    });
  });

  it("is what the provider serves (run `npm run schema` after changing the provider)", () => {
    expect(readFileSync(SCHEMA_FILE, "utf8")).toBe(formatSchema(served));
  });

  it("has every resource and data source", () => {
    const schemas = served.provider_schemas["registry.terraform.io/gpurental/gpurental"] as {
      resource_schemas: Record<string, unknown>;
      data_source_schemas: Record<string, unknown>;
    };
    expect(Object.keys(schemas.resource_schemas).sort()).toEqual(["gpurental_api_key", "gpurental_instance"]);
    expect(Object.keys(schemas.data_source_schemas).sort()).toEqual([
      "gpurental_api_keys",
      "gpurental_instance",
      "gpurental_instance_logs",
      "gpurental_instances",
      "gpurental_offer",
      "gpurental_offers",
      "gpurental_ssh_keys",
      "gpurental_template",
      "gpurental_templates",
    ]);
  });

  it("generates the committed bindings in src/generated", async () => {
    const out = mkdtempSync(join(tmpdir(), "gpurental-bindings-test-"));
    try {
      await generateBindings(
        JSON.parse(readFileSync(SCHEMA_FILE, "utf8")) as ProviderSchemaJson,
        join(out, "generated"),
      );
      const expected = tree(join(out, "generated"));
      const committed = tree(GENERATED_DIR);
      expect([...committed.keys()].sort()).toEqual([...expected.keys()].sort());
      for (const [file, text] of expected) expect([file, committed.get(file)]).toEqual([file, text]);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});
