import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { DOC_KINDS, generateDocs, ROOT, undescribedAttributes } from "../../scripts/generate/generate-docs";
import { provider } from "../../src/provider";

// The committed docs are what `npm run docs` produces from the provider's schemas now.

const files = generateDocs(provider);

it("describes every attribute of the provider, its resources, data sources, list resources and actions", () => {
  expect(undescribedAttributes(provider)).toEqual([]);
});

it.each(files.map((f) => [f.path, f.content]))("%s is up to date (run npm run docs)", (path, content) => {
  const file = join(ROOT, path);
  expect(existsSync(file) ? readFileSync(file, "utf8") : "(missing)").toBe(content);
});

it("has no page for a type the provider does not serve", () => {
  const generated = new Set(files.map((f) => f.path));
  for (const sub of DOC_KINDS) {
    const dir = join(ROOT, "docs", sub);
    const pages = existsSync(dir) ? readdirSync(dir).filter((n) => n.endsWith(".md")) : [];
    expect(pages.map((n) => `docs/${sub}/${n}`).filter((p) => !generated.has(p))).toEqual([]);
  }
});

it("lists every type of the provider and documents each attribute with its flags", () => {
  const index = files.find((f) => f.path === "docs/index.md")!.content;
  for (const t of [...provider.resources, ...provider.dataSources, ...(provider.ephemeralResources ?? [])])
    expect(index).toContain(`\`${t.typeName}\``);
  expect(index).toContain("(ephemeral-resources/instance_access.md)");
  const runKey = files.find((f) => f.path === "docs/ephemeral-resources/api_key.md")!.content;
  expect(runKey).toContain("# gpurental_api_key (Ephemeral Resource)");
  expect(runKey).toContain("- `secret` (String, Sensitive)");
  expect(runKey).toContain('ephemeral "gpurental_api_key" "run"');
  const instance = files.find((f) => f.path === "docs/resources/instance.md")!.content;
  expect(instance).toContain("- `offer_id` (String, Computed when unset, Forces replacement)");
  expect(instance).toContain("- `offer_filter` (Attributes) The market filter");
  expect(instance).toContain("### Nested Schema for `offer_filter`");
  expect(instance).toContain("- `access_token` (String, Sensitive)");
  expect(instance).toMatch(/## Import\n/);
  const apiKey = files.find((f) => f.path === "docs/resources/api_key.md")!.content;
  expect(apiKey).toContain("after an import `secret` is null");
  expect(instance).toContain("- `id` (String, Required for import) ID of the instance (a UUID).");
  expect(instance).toContain("  identity = {\n    id = ");
  const list = files.find((f) => f.path === "docs/list-resources/instance.md")!.content;
  expect(list).toContain("# gpurental_instance (List Resource)");
  expect(list).toContain('list "gpurental_instance" "training"');
  expect(list).toContain("- `label_prefix` (String)");
  const power = files.find((f) => f.path === "docs/actions/instance_power.md")!.content;
  expect(power).toContain("# gpurental_instance_power (Action)");
  expect(power).toContain("terraform apply -invoke=action.gpurental_instance_power.night");
  expect(power).toContain("- `state` (String)");
  for (const t of [...(provider.listResources ?? []), ...(provider.actions ?? [])])
    expect(index).toContain(`\`${t.typeName}\``);
  const logs = files.find((f) => f.path === "docs/data-sources/instance_logs.md")!.content;
  expect(logs).toContain("- `instance_id` (String) ID of the instance.");
  expect(logs).toContain("Constraint: A whole number from 1 to 1000.");
});
