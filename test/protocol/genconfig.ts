// The HCL Terraform 1.14+ writes for what a query found (`terraform query -generate-config-out`),
// from GenerateResourceConfig's answer, rendered by the rules of Terraform's own generator
// (internal/genconfig/generate_config.go at v1.14.1: GenerateResourceContents 103,
// GenerateListResourceContents 146, GenerateImportBlock 202, writeConfigAttributesFromExisting
// 266, writeConfigNestedTypeAttributeFromExisting 477). Written here from those facts:
// - one resource block per result, named `<list name>_<index>`, with `provider = <local name>`;
// - attributes in name order; a computed attribute whose value is null is left out, a deprecated
//   one too; a sensitive one is written `null # sensitive` whatever its value; a string holding a
//   JSON object or array is written through jsonencode(); any other value as its HCL literal;
// - a nested attribute: null as `null`, a single object as `{ ... }`, a list or set as `[{ ... }]`;
// - after it, an import block with `to`, `provider` and the identity as `identity = { ... }`.
// Terraform 1.11 has no import by identity, so for the real 1.11 CLI the import block names the
// identity's `id` instead (`renderForTerraform111`): what can be checked with a CLI here.
import { CtyNumber, type CtyValue, isRecord } from "../../src/plugin/cty";
import type { GeneratedResource, SchemaAttr } from "./driver";

const IDENT = /^[A-Za-z_][A-Za-z0-9_-]*$/;

/** An HCL literal of a value (hclwrite.TokensForValue's forms). */
export function hclLiteral(v: CtyValue): string {
  if (v === null || v === undefined) return "null";
  if (typeof v === "string") return JSON.stringify(v).replace(/\$\{/g, "$${").replace(/%\{/g, "%%{");
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  if (v instanceof CtyNumber) return v.decimal;
  if (Array.isArray(v)) return `[${v.map(hclLiteral).join(", ")}]`;
  if (isRecord(v)) {
    const entries = Object.keys(v)
      .sort()
      .map((k) => `${IDENT.test(k) ? k : JSON.stringify(k)} = ${hclLiteral(v[k] ?? null)}`);
    return entries.length === 0 ? "{}" : `{ ${entries.join(", ")} }`;
  }
  throw new Error(`cannot write ${String(v)} as HCL`);
}

function jsonOrString(v: string): string {
  try {
    const parsed: unknown = JSON.parse(v);
    if (parsed !== null && typeof parsed === "object") return `jsonencode(${hclLiteral(parsed as CtyValue)})`;
  } catch {
    // Not JSON: an ordinary string.
  }
  return hclLiteral(v);
}

function attributes(
  attrs: readonly SchemaAttr[],
  value: Record<string, CtyValue> | null,
  indent: number,
): string {
  const pad = " ".repeat(indent);
  let out = "";
  for (const a of [...attrs].sort((x, y) => (x.name < y.name ? -1 : 1))) {
    const v = value ? (value[a.name] ?? null) : null;
    if (a.computed && v === null) continue;
    if (a.deprecated) continue;
    if (a.nested_type && a.nested_type.nesting !== 0) {
      const single = a.nested_type.nesting === 1;
      if (a.sensitive) out += `${pad}${a.name} = ${single ? "{}" : "[]"} # sensitive\n`;
      else if (v === null) out += `${pad}${a.name} = null\n`;
      else if (single)
        out += `${pad}${a.name} = {\n${attributes(a.nested_type.attributes, v as Record<string, CtyValue>, indent + 2)}${pad}}\n`;
      else {
        const items = (v as CtyValue[]).map(
          (el) =>
            `${pad}  {\n${attributes(a.nested_type!.attributes, el as Record<string, CtyValue>, indent + 4)}${pad}  },\n`,
        );
        out += `${pad}${a.name} = [\n${items.join("")}${pad}]\n`;
      }
      continue;
    }
    if (a.sensitive) out += `${pad}${a.name} = null # sensitive\n`;
    else out += `${pad}${a.name} = ${typeof v === "string" ? jsonOrString(v) : hclLiteral(v)}\n`;
  }
  return out;
}

function resourceBlock(g: GeneratedResource, provider: string): string {
  const [type, name] = g.address.split(".");
  return `resource "${type}" "${name}" {\n  provider = ${provider}\n${attributes(g.attributes, g.config, 2)}}\n`;
}

/** What `terraform query -generate-config-out` writes (Terraform 1.14+). */
export function renderGenerated(generated: readonly GeneratedResource[], provider = "gpurental"): string {
  return generated
    .map((g) => {
      const identity = g.identityAttributes
        .slice()
        .sort()
        .map((k) => `    ${k} = ${hclLiteral(g.identity[k] ?? null)}\n`)
        .join("");
      return `${resourceBlock(g, provider)}\nimport {\n  to       = ${g.address}\n  provider = ${provider}\n  identity = {\n${identity}  }\n}\n`;
    })
    .join("\n");
}

/** The same configuration with import blocks by id, which the real Terraform 1.11 can plan. */
export function renderForTerraform111(
  generated: readonly GeneratedResource[],
  provider = "gpurental",
): string {
  return generated
    .map(
      (g) =>
        `${resourceBlock(g, provider)}\nimport {\n  to       = ${g.address}\n  provider = ${provider}\n  id       = ${hclLiteral(g.identity.id ?? null)}\n}\n`,
    )
    .join("\n");
}
