// Text written into a Terraform string, whether HCL (`gpurental strays`' adoption blocks) or
// JSON (cdktf's cdk.tf.json): Terraform reads `${` and `%{` in any string as the start of a
// template sequence, so text that must stay text has them doubled.

/** `text` with Terraform's template sequences escaped (`$${`, `%%{`): read back as itself. */
export function templateEscaped(text: string): string {
  return text.replace(/\$\{/g, () => "$${").replace(/%\{/g, () => "%%{");
}
