import { ESCAPED_CHARACTERS, terminalText } from "../display";
import { templateEscaped } from "../hcl-text";
import { formatMicro, formatPerHour } from "../report/money";
import { API_KEY_TYPE, INSTANCE_TYPE, type StrayApiKey, type StrayInstance, type StrayReport } from "./find";

// Terraform configuration that adopts strays: for each one an `import` block and the resource block
// it imports into, with the arguments the API lets us read, so that `terraform plan` shows an import
// and no create. What the API never returns (an instance's ssh_key_id and env, a key's secret) is
// said in a comment instead of guessed.

/** A string literal in HCL: quotes, backslashes, control characters and template sequences escaped. */
export function hclString(s: string): string {
  const body = s
    .replace(/\\/g, "\\\\")
    .replace(/"/g, '\\"')
    .replace(/\n/g, "\\n")
    .replace(/\r/g, "\\r")
    .replace(/\t/g, "\\t")
    // Any other control character, bidirectional override or invisible character as HCL's
    // \uNNNN: the same string to Terraform, and nothing a terminal obeys or hides when printed.
    .replace(UNSAFE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
  return `"${templateEscaped(body)}"`;
}

const UNSAFE = new RegExp(`[${ESCAPED_CHARACTERS}]`, "g");

/** The characters of an id a resource name takes: letters and digits, lower case. */
function idChars(id: string): string {
  return id.replace(/[^0-9a-zA-Z]/g, "").toLowerCase();
}

/**
 * A resource name from a label or key name and the id: `stray_<words>_<first idLength characters
 * of the id>` (8 unless names collide, see {@link strayResourceNames}).
 */
export function strayResourceName(words: string | null, id: string, idLength = 8): string {
  const slug = (words ?? "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "_")
    .replace(/^_+|_+$/g, "")
    .slice(0, 40)
    .replace(/_+$/, "");
  return ["stray", slug, idChars(id).slice(0, idLength)].filter((p) => p !== "").join("_");
}

/**
 * The resource names of objects written into one configuration, each distinct: Terraform refuses
 * two blocks of one name. Ids created close together share their first characters (time-ordered
 * ids share the first 8 for about a minute), so where names collide, the id part of each of them
 * is lengthened one character at a time until they differ; names that still collide (ids equal
 * once reduced to lower-case letters and digits) are numbered `_2`, `_3`, … in the order given.
 * The same objects always get the same names.
 */
export function strayResourceNames(objects: readonly { words: string | null; id: string }[]): string[] {
  const lengths = objects.map(() => 8);
  const names = () => objects.map((o, i) => strayResourceName(o.words, o.id, lengths[i]));
  for (;;) {
    const current = names();
    const count = new Map<string, number>();
    for (const n of current) count.set(n, (count.get(n) ?? 0) + 1);
    let lengthened = false;
    current.forEach((n, i) => {
      const length = lengths[i]!;
      if (count.get(n)! > 1 && length < idChars(objects[i]!.id).length) {
        lengths[i] = length + 1;
        lengthened = true;
      }
    });
    if (!lengthened) break;
  }
  const final = names();
  const bases = new Set(final);
  const taken = new Set<string>();
  return final.map((n) => {
    let name = n;
    // A numbered name must not be another object's own name either.
    for (let k = 2; taken.has(name) || (name !== n && bases.has(name)); k++) name = `${n}_${k}`;
    taken.add(name);
    return name;
  });
}

function block(kind: string, labels: string[], attrs: [string, string][], comments: string[] = []): string {
  const width = Math.max(0, ...attrs.map(([k]) => k.length));
  const lines = attrs.map(([k, v]) => `  ${k.padEnd(width)} = ${v}`);
  return [
    `${kind}${labels.map((l) => ` ${l}`).join("")} {`,
    ...lines,
    ...comments.map((c) => `  # ${terminalText(c)}`),
    "}",
  ].join("\n");
}

function comment(text: string): string {
  return text
    .split("\n")
    .map((l) => `# ${terminalText(l)}`)
    .join("\n");
}

function instanceBlocks(s: StrayInstance, name: string): string {
  const i = s.instance;
  const attrs: [string, string][] = [
    ["offer_id", hclString(i.offer.id)],
    ["template_id", hclString(i.template.id ?? "")],
    ["disk_gb", String(i.disk_gb)],
  ];
  if (i.label) attrs.push(["label", hclString(i.label)]);
  if (i.status === "stopped" || i.status === "stopping") attrs.push(["desired_status", hclString("stopped")]);
  const gpu = i.offer.gpu_model
    ? `${i.offer.gpu_model}${i.offer.num_gpus ? ` × ${i.offer.num_gpus}` : ""}, `
    : "";
  return [
    comment(
      `Instance ${i.id}${i.label ? ` "${i.label}"` : ""}: ${gpu}${i.status}, ${formatPerHour(s.pricePerHour)}, spent ${formatMicro(s.spend)} since ${i.created_at ?? "an unknown time"}.`,
    ),
    block(
      "import",
      [],
      [
        ["to", `${INSTANCE_TYPE}.${name}`],
        ["id", hclString(i.id)],
      ],
    ),
    "",
    block("resource", [hclString(INSTANCE_TYPE), hclString(name)], attrs, [
      "The API does not return ssh_key_id, env, secret_env or unset_env: add them as the instance was",
      "deployed. The first plan records them in state without calling the API; changing them later",
      "replaces the instance. offer_id pins the offer it rents; an offer_filter it satisfies also works.",
    ]),
  ].join("\n");
}

function keyBlocks(k: StrayApiKey, name: string): string {
  return [
    comment(
      `API key ${k.key.id} "${k.key.name}" (${k.key.kind}, ${k.key.prefix}…), created ${k.key.created_at}.\nIts secret is not readable again: the imported key's \`secret\` stays null.`,
    ),
    block(
      "import",
      [],
      [
        ["to", `${API_KEY_TYPE}.${name}`],
        ["id", hclString(k.key.id)],
      ],
    ),
    "",
    block(
      "resource",
      [hclString(API_KEY_TYPE), hclString(name)],
      [
        ["name", hclString(k.key.name)],
        ["kind", hclString(k.key.kind)],
      ],
    ),
  ].join("\n");
}

/**
 * The configuration that adopts every stray, or an empty string when there is none. The key the
 * command authenticates with is left out: managing it would let a destroy revoke the credential in use.
 */
export function importConfiguration(r: StrayReport): string {
  const keys = r.apiKeys.filter((k) => !k.thisCredential);
  if (r.instances.length === 0 && keys.length === 0) return "";
  // One set of names for both kinds: no two blocks of the output share a name.
  const names = strayResourceNames([
    ...r.instances.map((s) => ({ words: s.instance.label, id: s.instance.id })),
    ...keys.map((k) => ({ words: k.key.name, id: k.key.id })),
  ]);
  const parts = [
    comment(
      `Adopts what no state held when \`gpurental strays\` listed the organization (${new Date(r.at).toISOString()}).\nAdd this file to the configuration that should manage them; \`terraform plan\` then shows\neach as an import, and \`terraform apply\` records them in the state.`,
    ),
    ...r.instances.map((s, n) => instanceBlocks(s, names[n]!)),
    ...keys.map((k, n) => keyBlocks(k, names[r.instances.length + n]!)),
  ];
  const own = r.apiKeys.find((k) => k.thisCredential);
  if (own) {
    parts.push(
      comment(`Left out: API key ${own.key.id} (${own.key.prefix}…), the credential this listing used.`),
    );
  }
  return `${parts.join("\n\n")}\n`;
}
