// Generates the Markdown docs of the provider, each resource and each data source from the schemas
// the provider serves, so the docs cannot say something the schema does not. Run it with
// `npm run docs`; a test fails when the committed docs differ from what this produces.
//
//   docs/index.md                     the provider: configuration, authentication, the type list
//   docs/resources/<name>.md          one per resource, with an example and an import section
//   docs/data-sources/<name>.md       one per data source, with an example
//   docs/ephemeral-resources/<name>.md one per ephemeral resource, with an example
//   docs/list-resources/<name>.md     one per list resource (Terraform 1.14+), with a .tfquery.hcl example
//   docs/actions/<name>.md            one per action (Terraform 1.14+), with an example and its invocation
//
// Examples come from examples/hcl/snippets/, where they are plain .tf files that a test formats and
// validates with the real terraform CLI. The layout follows the Terraform Registry's (names without
// the `gpurental_` prefix, "Schema" with Required / Optional / Read-Only groups).

import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import type { IdentitySchema } from "../../src/framework/identity";
import { requiresReplace } from "../../src/framework/modifiers";
import type { Attribute, Attributes, Schema } from "../../src/framework/schema";
import type { CtyType, CtyValue } from "../../src/plugin/cty";
import { PROVIDER_ENV, provider } from "../../src/provider";
import { packageName } from "../../src/version";

/** Repository root: the nearest folder above this file with the package's package.json. */
export const ROOT = findRoot(__dirname);
/** Where the generated docs go. */
export const DOCS_DIR = join(ROOT, "docs");
/** Where the example snippets live. */
export const SNIPPETS_DIR = join(ROOT, "examples", "hcl", "snippets");

/** One generated file, by path relative to the repository root. */
export interface DocFile {
  path: string;
  content: string;
}

/** What the generator reads of a resource or data source definition. */
export interface DocumentedType {
  readonly typeName: string;
  readonly schema: Schema;
  readonly description?: string | undefined;
  /** A resource's identity (Terraform 1.12+). */
  readonly identity?: { readonly schema: IdentitySchema } | undefined;
}

/** What the generator reads of the provider definition. */
export interface DocumentedProvider {
  readonly typeName: string;
  readonly schema: Schema;
  readonly resources: readonly DocumentedType[];
  readonly dataSources: readonly DocumentedType[];
  readonly ephemeralResources?: readonly DocumentedType[];
  readonly listResources?: readonly DocumentedType[];
  readonly actions?: readonly DocumentedType[];
}

type Kind = "resources" | "data-sources" | "ephemeral-resources" | "list-resources" | "actions";

const KINDS: Readonly<Record<Kind, { file: string; label: string; subcategory: string }>> = {
  resources: { file: "resource.tf", label: "Resource", subcategory: "Resources" },
  "data-sources": { file: "data-source.tf", label: "Data Source", subcategory: "Data Sources" },
  "ephemeral-resources": {
    file: "ephemeral-resource.tf",
    label: "Ephemeral Resource",
    subcategory: "Ephemeral Resources",
  },
  "list-resources": {
    file: "list-resource.tfquery.hcl",
    label: "List Resource",
    subcategory: "List Resources",
  },
  actions: { file: "action.tf", label: "Action", subcategory: "Actions" },
};

/** The docs folders the generator writes, one per kind. */
export const DOC_KINDS = Object.keys(KINDS) as Kind[];

// What to know about importing each resource that its schema cannot say.
const IMPORT_NOTES: Readonly<Record<string, string>> = {
  gpurental_api_key:
    "The API never returns a key's secret after creating it, so after an import `secret` is null: Terraform cannot know the secret of a key it did not create. Use a key created by Terraform when the secret is needed elsewhere in the configuration.",
  gpurental_instance:
    "The API does not return `ssh_key_id`, `env`, `secret_env` or `unset_env`, so they are null right after an import. The first plan after it is an in-place update that records the configured values in state without calling the API, with a warning that they were taken from the configuration as written; after that apply, changing them replaces the instance as usual. If the instance actually runs with other values, replace it with `terraform apply -replace=gpurental_instance.example`. `store_access_secrets` is not read either: an import stores the access secrets (the configuration is not known yet), and when the configuration says `false` the first apply removes them from the state in place; apply right after importing. `desired_status` is taken from the instance's power state, and `offer_id` and `offer` from the offer it rents; a configured `offer_filter` is recorded in place when that offer satisfies it, and replaces the instance (with a warning saying why) when it does not.",
};

// What a list resource's or action's page says beyond its schema description, which is kept short:
// the schemas travel in every GetProviderSchema answer, to every Terraform version.
const PAGE_NOTES: Readonly<Record<string, string>> = {
  "list-resources/gpurental_instance":
    'Each instance comes with its identity, so `terraform query -generate-config-out=FILE` writes an `import` block and a `resource` block for it. With `include_resource = true`, which `-generate-config-out` implies, the whole object comes too, without the access secrets (`access_token`, `jupyter_url` and `open_url` are null; the import reads them), and the provider writes the resource block\'s arguments from it: the `offer_id` the instance runs on, its template, disk and label, and `desired_status` when stopped, so that the import plans no change. Filters match as follows: `status` exactly, `label_prefix` case-sensitively (`""` matches instances without a label too), `gpu_model` case-insensitively on the whole name, `created_after` strictly after the time, which needs its offset.',
  "list-resources/gpurental_api_key":
    "Each key comes with its identity; `terraform query -generate-config-out=FILE` writes an `import` block and a `resource` block with its `name` and, for a team key, its `kind`. The secret is never listed: an imported key's `secret` is null, as after `terraform import`. `name_prefix` matches case-sensitively; `created_after` strictly after the time, which needs its offset.",
  "actions/gpurental_instance_power":
    "`running` starts a stopped instance, `stopped` stops a running one (its disk is kept and billed), `restarted` stops it if it runs and starts it again; asking for the state it is in does nothing, and a transition under way is waited for first. While it waits it prints a line per status the instance passes through, and one every 15 seconds while a status lasts: the status, the time elapsed, and the price per hour it is charged now (GPU time while running or stopping; disk, and any GPU hold, once stopped or while starting). Refusals (`INSUFFICIENT_BALANCE`, `HOST_UNREACHABLE`, `CAPACITY_UNAVAILABLE`, ...) end it with the API's code and what to do, on `state`, as in plans; at plan time an instance that is gone, in error or being destroyed is refused.\n\nAn action changes no Terraform state. When a `gpurental_instance` resource manages the same instance, its `desired_status` (`running` unless set) still decides: its next plan moves the instance back, with a warning saying why. Add `lifecycle { ignore_changes = [desired_status] }` to that resource to leave its power to actions, as in the example.",
};

const REPLACES = requiresReplace().description;

// Not shared with generate-schema.ts: bundled together, that script's `require.main === module`
// entry point would run too and regenerate the schema and bindings.
function findRoot(from: string): string {
  let dir = resolve(from);
  for (;;) {
    const pkg = join(dir, "package.json");
    if (
      existsSync(pkg) &&
      (JSON.parse(readFileSync(pkg, "utf8")) as { name?: string }).name === packageName
    ) {
      return dir;
    }
    const up = dirname(dir);
    if (up === dir) throw new Error(`no ${packageName} package.json above ${from}`);
    dir = up;
  }
}

/** The name of a type in docs file names and titles: `gpurental_instance` -> `instance`. */
export function shortName(typeName: string, providerName = "gpurental"): string {
  return typeName.startsWith(`${providerName}_`) ? typeName.slice(providerName.length + 1) : typeName;
}

function typeLabel(type: CtyType): string {
  switch (type.kind) {
    case "string":
      return "String";
    case "number":
      return "Number";
    case "bool":
      return "Boolean";
    case "dynamic":
      return "Dynamic";
    case "list":
      return `List of ${typeLabel(type.element)}`;
    case "set":
      return `Set of ${typeLabel(type.element)}`;
    case "map":
      return `Map of ${typeLabel(type.element)}`;
    case "object":
      return "Object";
    case "tuple":
      return "Tuple";
  }
}

function attributeType(a: Attribute): string {
  if (!a.nested) return typeLabel(a.type);
  switch (a.nested.nesting) {
    case "single":
      return "Attributes";
    case "list":
      return "Attributes List";
    case "set":
      return "Attributes Set";
    case "map":
      return "Attributes Map";
  }
}

function literal(v: CtyValue): string {
  return JSON.stringify(v);
}

/** An anchor for a nested schema section, e.g. `nestedatt--offers--machine`. */
function anchor(path: readonly string[]): string {
  return `nestedatt--${path.join("--")}`;
}

function sentence(text: string): string {
  const t = text.trim();
  return t === "" || /[.!?)`]$/.test(t) ? t : `${t}.`;
}

/** The bullet of one attribute: name, type and flags, then the description and constraints. */
function bullet(name: string, a: Attribute, path: readonly string[], resource: boolean): string {
  const flags: string[] = [attributeType(a)];
  if (a.sensitive) flags.push("Sensitive");
  if (a.writeOnly) flags.push("Write-only");
  if (a.deprecationMessage) flags.push("Deprecated");
  // Optional and computed: the provider picks the value when the configuration leaves it unset.
  if (a.optional && a.computed && a.default === undefined && !a.timeoutDefaults)
    flags.push("Computed when unset");
  if (resource && a.planModifiers.some((m) => m.description === REPLACES)) flags.push("Forces replacement");
  const notes: string[] = [];
  if (a.description) notes.push(sentence(a.description));
  if (a.default !== undefined) notes.push(`Default: \`${literal(a.default)}\`.`);
  if (a.timeoutDefaults) {
    const d = Object.entries(a.timeoutDefaults).map(([op, v]) => `${op} \`${v}\``);
    if (d.length > 0) notes.push(`Defaults: ${d.join(", ")}.`);
  }
  for (const v of a.validators) notes.push(`Constraint: ${sentence(v.description)}`);
  if (a.deprecationMessage) notes.push(`Deprecated: ${sentence(a.deprecationMessage)}`);
  if (a.nested) notes.push(`See [below for nested schema](#${anchor([...path, name])}).`);
  return `- \`${name}\` (${flags.join(", ")}) ${notes.join(" ")}`.trimEnd();
}

/** The Required / Optional / Read-Only groups of a record of attributes, then its nested sections. */
function schemaSections(attributes: Attributes, path: readonly string[], resource: boolean): string[] {
  const names = Object.keys(attributes).sort();
  const groups: [string, (a: Attribute) => boolean][] = [
    ["Required", (a) => a.required],
    ["Optional", (a) => a.optional],
    ["Read-Only", (a) => a.computed && !a.optional],
  ];
  const out: string[] = [];
  const level = path.length === 0 ? "###" : "####";
  for (const [title, member] of groups) {
    const rows = names.filter((n) => member(attributes[n]!));
    if (rows.length === 0) continue;
    out.push(`${level} ${title}`, "", ...rows.map((n) => bullet(n, attributes[n]!, path, resource)), "");
  }
  for (const n of names) {
    const a = attributes[n]!;
    if (!a.nested) continue;
    const here = [...path, n];
    out.push(
      `<a id="${anchor(here)}"></a>`,
      `### Nested Schema for \`${here.join(".")}\``,
      "",
      ...schemaSections(a.nested.attributes, here, resource),
    );
  }
  return out;
}

function readSnippet(...parts: string[]): string | undefined {
  const file = join(SNIPPETS_DIR, ...parts);
  return existsSync(file) ? readFileSync(file, "utf8").trimEnd() : undefined;
}

function example(kind: Kind, typeName: string): string[] {
  const file = KINDS[kind].file;
  const text = readSnippet(kind, typeName, file);
  if (text === undefined)
    throw new Error(`missing example ${join("examples/hcl/snippets", kind, typeName, file)}`);
  const lines = ["## Example Usage", "", "```terraform", text, "```", ""];
  if (kind === "list-resources")
    lines.push(
      "In a `*.tfquery.hcl` file, with Terraform 1.14 or later: `terraform query` lists what the block finds, and `terraform query -generate-config-out=generated.tf` writes a `resource` block and an `import` block (by identity) for each object, ready to plan. `limit` (default 100) and `include_resource` are Terraform's own arguments of the `list` block; the `config` block holds the filters below.",
      "",
    );
  if (kind === "actions") {
    const name = /action\s+"[^"]+"\s+"([^"]+)"/.exec(text)?.[1] ?? "example";
    lines.push(
      "With Terraform 1.14 or later, invoke it with:",
      "",
      "```shell",
      `terraform apply -invoke=action.${typeName}.${name}`,
      "```",
      "",
      "or from a resource's `lifecycle` with an `action_trigger` block.",
      "",
    );
  }
  return lines;
}

/** The identity of a resource, for its Import section. */
function identitySection(t: DocumentedType): string[] {
  const identity = t.identity?.schema;
  if (!identity) return [];
  const attrs = Object.keys(identity.attributes).sort();
  const required = attrs.filter((a) => identity.attributes[a]!.requiredForImport);
  return [
    "Import by identity, with Terraform 1.12 and later, e.g. from the `import` blocks `terraform query -generate-config-out` writes:",
    "",
    "```terraform",
    "import {",
    `  to = ${t.typeName}.example`,
    "  identity = {",
    ...required.map((a) => `    ${a} = "00000000-0000-4000-8000-000000000000"`),
    "  }",
    "}",
    "```",
    "",
    `The identity (version ${identity.version}):`,
    "",
    ...attrs.map((a) => {
      const x = identity.attributes[a]!;
      return `- \`${a}\` (${typeLabel(x.type)}, ${x.requiredForImport ? "Required" : "Optional"} for import) ${sentence(x.description)}`;
    }),
    "",
  ];
}

function frontMatter(title: string, subcategory: string, description: string): string[] {
  const first = description.split("\n")[0] ?? "";
  return [
    "---",
    `page_title: ${JSON.stringify(title)}`,
    ...(subcategory ? [`subcategory: ${JSON.stringify(subcategory)}`] : []),
    `description: ${JSON.stringify(first)}`,
    "---",
    "",
  ];
}

function typePage(kind: Kind, t: DocumentedType): string {
  const resource = kind === "resources";
  const description = t.description ?? t.schema.description;
  const title = `${t.typeName} (${KINDS[kind].label})`;
  const note = PAGE_NOTES[`${kind}/${t.typeName}`];
  const lines = [
    ...frontMatter(title, KINDS[kind].subcategory, description),
    `# ${title}`,
    "",
    description.trim(),
    "",
    ...(note ? [note, ""] : []),
    ...example(kind, t.typeName),
    "## Schema",
    "",
    ...schemaSections(t.schema.attributes, [], resource),
  ];
  if (resource) {
    const importNote = IMPORT_NOTES[t.typeName];
    lines.push(
      "## Import",
      "",
      "Import by ID, with an `import` block (Terraform 1.5 and later):",
      "",
      "```terraform",
      "import {",
      `  to = ${t.typeName}.example`,
      '  id = "00000000-0000-4000-8000-000000000000"',
      "}",
      "```",
      "",
      "or with the command:",
      "",
      "```shell",
      `terraform import ${t.typeName}.example 00000000-0000-4000-8000-000000000000`,
      "```",
      "",
      ...identitySection(t),
    );
    if (importNote) lines.push(importNote, "");
  }
  return `${lines.join("\n").trimEnd()}\n`;
}

function indexPage(p: DocumentedProvider): string {
  const providerExample = readSnippet("provider", "provider.tf");
  if (providerExample === undefined)
    throw new Error("missing example examples/hcl/snippets/provider/provider.tf");
  const env = Object.entries(PROVIDER_ENV).map(([arg, name]) => `| \`${arg}\` | \`${name}\` |`);
  const link = (kind: string, t: DocumentedType) =>
    `- [\`${t.typeName}\`](${kind}/${shortName(t.typeName, p.typeName)}.md): ${sentence(
      (t.description ?? t.schema.description).split("\n")[0] ?? "",
    )}`;
  const lines = [
    ...frontMatter(`Provider: ${p.typeName}`, "", p.schema.description),
    `# ${p.typeName} Provider`,
    "",
    p.schema.description.trim(),
    "",
    "## Example Usage",
    "",
    "```terraform",
    providerExample,
    "```",
    "",
    "## Authentication",
    "",
    "The provider sends `token` as `Authorization: Bearer`. Two kinds of credential work:",
    "",
    "- an **API key** secret (`gpr_…`), for CI and automation: it can read offers, templates, instances, API keys and logs and manage instances, but cannot create or revoke API keys nor list SSH keys;",
    "- a **session** token (`gps_…`) of a signed-in member: needed for `gpurental_api_key` (a `team` key needs an admin) and for the `gpurental_ssh_keys` data source.",
    "",
    "Every argument falls back to an environment variable, so no credential has to be written into a configuration:",
    "",
    "| Argument | Environment variable |",
    "|---|---|",
    ...env,
    "",
    "Give the token through `GPURENTAL_TOKEN`, not through a Terraform variable: a saved plan (`terraform plan -out`) keeps the value of every variable in clear text, `sensitive` or not, and `terraform show -json` prints it. See [CI pipelines](ci.md) for credentials, shared state and plans in CI.",
    "",
    "Errors from the API are reported with the API's code first (for example `INSUFFICIENT_BALANCE: ...`), followed by what happened and what to do. Tokens, API key secrets and instance access tokens never appear in diagnostics or logs.",
    "",
    "## Schema",
    "",
    ...schemaSections(p.schema.attributes, [], false),
    "## Resources",
    "",
    ...p.resources.map((t) => link("resources", t)),
    "",
    "## Data Sources",
    "",
    ...p.dataSources.map((t) => link("data-sources", t)),
    "",
    "## Ephemeral Resources",
    "",
    "Values for one run (Terraform 1.10 or later), never written to a plan or a state; see [Secrets and the state](../README.md#secrets-and-the-state).",
    "",
    ...(p.ephemeralResources ?? []).map((t) => link("ephemeral-resources", t)),
    "",
    "## List Resources",
    "",
    "Searches for `terraform query` (Terraform 1.14 or later), in `*.tfquery.hcl` files; `-generate-config-out` writes configuration and import blocks for what they find. Proven at the protocol level; see [Terraform 1.12 and later](../README.md#terraform-112-and-later-identity-query-and-actions).",
    "",
    ...(p.listResources ?? []).map((t) => link("list-resources", t)),
    "",
    "## Actions",
    "",
    "Operations run on request (`terraform apply -invoke=action.<type>.<name>`, Terraform 1.14 or later) or from a resource's lifecycle; they change no state.",
    "",
    ...(p.actions ?? []).map((t) => link("actions", t)),
    "",
  ];
  return `${lines.join("\n").trimEnd()}\n`;
}

/** Every docs file for a provider definition, in a stable order. */
export function generateDocs(p: DocumentedProvider): DocFile[] {
  const files: DocFile[] = [{ path: "docs/index.md", content: indexPage(p) }];
  for (const r of p.resources) {
    files.push({
      path: `docs/resources/${shortName(r.typeName, p.typeName)}.md`,
      content: typePage("resources", r),
    });
  }
  for (const d of p.dataSources) {
    files.push({
      path: `docs/data-sources/${shortName(d.typeName, p.typeName)}.md`,
      content: typePage("data-sources", d),
    });
  }
  for (const e of p.ephemeralResources ?? []) {
    files.push({
      path: `docs/ephemeral-resources/${shortName(e.typeName, p.typeName)}.md`,
      content: typePage("ephemeral-resources", e),
    });
  }
  for (const l of p.listResources ?? []) {
    files.push({
      path: `docs/list-resources/${shortName(l.typeName, p.typeName)}.md`,
      content: typePage("list-resources", l),
    });
  }
  for (const a of p.actions ?? []) {
    files.push({
      path: `docs/actions/${shortName(a.typeName, p.typeName)}.md`,
      content: typePage("actions", a),
    });
  }
  return files;
}

/** Attributes (nested included) of the provider and every type that have no description. */
export function undescribedAttributes(p: DocumentedProvider): string[] {
  const missing: string[] = [];
  const walk = (where: string, attributes: Attributes) => {
    for (const [name, a] of Object.entries(attributes)) {
      if (!a.description?.trim()) missing.push(`${where}.${name}`);
      if (a.nested) walk(`${where}.${name}`, a.nested.attributes);
    }
  };
  walk(p.typeName, p.schema.attributes);
  for (const t of [
    ...p.resources,
    ...p.dataSources,
    ...(p.ephemeralResources ?? []),
    ...(p.listResources ?? []),
    ...(p.actions ?? []),
  ]) {
    if (!(t.description ?? t.schema.description).trim()) missing.push(t.typeName);
    walk(t.typeName, t.schema.attributes);
  }
  return missing;
}

/** Writes the docs, removing pages of types that no longer exist. */
export function writeDocs(files: readonly DocFile[], root = ROOT): void {
  for (const sub of DOC_KINDS) {
    const dir = join(root, "docs", sub);
    if (!existsSync(dir)) continue;
    const keep = new Set(files.map((f) => join(root, f.path)));
    for (const name of readdirSync(dir)) {
      if (name.endsWith(".md") && !keep.has(join(dir, name))) rmSync(join(dir, name));
    }
  }
  for (const f of files) {
    const target = join(root, f.path);
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, f.content);
  }
}

if (require.main === module) {
  const missing = undescribedAttributes(provider);
  if (missing.length > 0) {
    process.stderr.write(`These attributes have no description:\n${missing.map((m) => `  ${m}\n`).join("")}`);
    process.exit(1);
  }
  const files = generateDocs(provider);
  writeDocs(files);
  process.stdout.write(`Wrote ${files.length} files under docs/.\n`);
}
