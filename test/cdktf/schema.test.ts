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
} from "../../scripts/generate/generate-schema";
import { isCredentialKey } from "../../src/api/redact";
import { installProvider } from "../../src/cli/provider/provider";
import { version } from "../../src/version";

// The committed schema and bindings must be exactly what `npm run schema` produces from the
// provider as built: a provider change without a regeneration (or a hand edit of the bindings)
// fails here. The schema comes from the real terraform CLI, as in the script.

jest.setTimeout(120_000);

/** A block of `terraform providers schema -json`, as far as these checks read it. */
interface SchemaBlock {
  attributes?: Record<
    string,
    { type?: unknown; sensitive?: boolean; write_only?: boolean; nested_type?: SchemaBlock }
  >;
  block_types?: Record<string, { block: SchemaBlock }>;
}

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

  // What Terraform was told is sensitive, read back from Terraform itself rather than from the
  // committed schema or the docs: Terraform hides these values in plan output and in
  // `terraform output`, and keeps them out of logs.
  it("marks every credential and every value that carries one sensitive, as Terraform receives it", () => {
    const sensitive: string[] = [];
    const writeOnly: string[] = [];
    const credentialNamed: string[] = [];
    const walk = (where: string, block: SchemaBlock, prefix = "") => {
      for (const [name, a] of Object.entries(block.attributes ?? {})) {
        const path = `${where} ${prefix}${name}`;
        if (a.sensitive) sensitive.push(path);
        if (a.write_only) writeOnly.push(path);
        // Text named like a credential; a flag (env.secret) or an object describing a key is not one.
        if (isCredentialKey(name) && JSON.stringify(a.type ?? null).includes("string"))
          credentialNamed.push(path);
        if (a.nested_type) walk(where, a.nested_type, `${prefix}${name}.`);
      }
      for (const [name, b] of Object.entries(block.block_types ?? {}))
        walk(where, b.block, `${prefix}${name}.`);
    };
    const schemas = served.provider_schemas["registry.terraform.io/gpurental/gpurental"] as {
      provider: { block: SchemaBlock };
      resource_schemas: Record<string, { block: SchemaBlock }>;
      data_source_schemas: Record<string, { block: SchemaBlock }>;
    };
    walk("provider", schemas.provider.block);
    for (const [type, r] of Object.entries(schemas.resource_schemas)) walk(`resource ${type}`, r.block);
    for (const [type, d] of Object.entries(schemas.data_source_schemas)) walk(`data ${type}`, d.block);

    expect(sensitive.sort()).toEqual(
      [
        "provider token",
        // A proxy URL may hold the proxy's user and password.
        "provider https_proxy",
        "provider http_proxy",
        // The journal's database URL may hold its password.
        "provider journal_url",
        "resource gpurental_api_key secret",
        "resource gpurental_instance access_token",
        "resource gpurental_instance jupyter_url",
        "resource gpurental_instance open_url",
        "resource gpurental_instance secret_env",
        // Write-only as well: never in plan or state, and masked wherever Terraform shows it.
        "resource gpurental_instance secret_env_wo",
        "data gpurental_instance access_token",
        "data gpurental_instance jupyter_url",
        "data gpurental_instance open_url",
        "data gpurental_instances instances.access_token",
        "data gpurental_instances instances.jupyter_url",
        "data gpurental_instances instances.open_url",
      ].sort(),
    );
    // Never written to a plan or state (Terraform 1.11's write-only arguments).
    expect(writeOnly).toEqual(["resource gpurental_instance secret_env_wo"]);
    // A new text attribute named like a credential must be sensitive too.
    expect(credentialNamed.filter((p) => !sensitive.includes(p))).toEqual([]);
  });

  it("generates the committed bindings in src/bindings/cdktf", async () => {
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
