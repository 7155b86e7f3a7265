"use strict";
// RELEASE-NOTES.md of a release: the key that signed it, which platforms were built and which ran
// on the build machine, the `gpurental` command's archives, and what a user should know about the
// compact form, emulated runs and unsigned macOS and Windows executables.

const { COMMAND } = require("./shared");

/** The notes' Markdown, from the release's facts and its built and skipped platforms. */
function releaseNotes({ version, keyId, throwaway, nodeEnd }, built, skipped, tools) {
  const mb = (n) => `${(n / 1e6).toFixed(1)} MB`;
  const lines = [
    `# terraform-provider-gpurental ${version}`,
    "",
    ...(throwaway
      ? [
          `**Signed with a throwaway key (${keyId}): for trying, not for production.** The key was made`,
          "for this build and deleted with it: nobody can sign anything else with it, and nobody vouches",
          "for it either. Publish only a release signed with your team's key (docs/releasing.md).",
          "",
        ]
      : []),
    "Each archive holds one executable, a Node.js single executable application: it runs without",
    `Node.js installed. Signed with the GPG key ${keyId}. The Node.js line built in has security`,
    `support until ${nodeEnd}.`,
    "",
    "| Platform | Node.js | Form | Executable | Built | Executed on the build machine |",
    "| -------- | ------- | ---- | ---------- | ----- | ----------------------------- |",
    ...built.map(
      (b) =>
        `| ${b.platform} | ${b.node} | ${b.form}${b.formNote ? ` (${b.formNote})` : ""} | ${mb(b.size)} | yes | ${b.executed ? `yes (\`--version\`: ${b.executed})` : "no"} |`,
    ),
    ...skipped.map((s) => `| ${s.platform} | - | - | - | no: ${s.reason} | no |`),
    "",
    "## The gpurental command",
    "",
    `\`${COMMAND}_${version}_<os>_<arch>.zip\` holds the same executable, named \`${COMMAND}\` (\`${COMMAND}.exe\` on`,
    "Windows): under that name it is the `gpurental` command, with no Node.js needed: `fake-backend`,",
    "`demo --hcl`, `example hcl`, `strays`, `plan-report`, `journal`, `provider install` (which",
    "installs the executable itself as the provider) and `provider resident`. Run as",
    "terraform-provider-gpurental it is the provider; the signed sums above cover both archives.",
    "",
    "| Platform | Archive | Executable | Executed on the build machine |",
    "| -------- | ------- | ---------- | ----------------------------- |",
    ...built.map(
      (b) =>
        `| ${b.platform} | ${b.command.filename} | ${mb(b.size)}, ${b.form} | ${b.command.executed ? `yes (\`${b.command.executed}\`)` : "no"} |`,
    ),
    "",
  ];
  if (tools.length > 1)
    lines.push(
      "A compact executable is a small launcher followed by the executable compressed with xz.",
      "At its first launch the launcher unpacks it into a private per-user cache directory",
      "(`$XDG_CACHE_HOME/gpurental/runtime`, else `~/.cache/gpurental/runtime`, else",
      "`$TMPDIR/gpurental-runtime-<uid>`; `GPURENTAL_RUNTIME_DIR` chooses one), and runs it from there:",
      "Terraform hashes the installed provider on every command, and a smaller file costs it less.",
      "Built with:",
      "",
      ...tools.map((t) => `- ${t}`),
      "",
    );
  if (built.some((b) => b.executed.includes(" under ")))
    lines.push(
      "Under an emulator (qemu-user) the launcher unpacks the runtime, which is then checked against",
      "the executable it was made from and run with `--version`; the emulator cannot follow the",
      "launcher's exec of a foreign runtime, so the two steps run one after the other.",
      "",
    );
  if (built.some((b) => b.platform.startsWith("darwin")))
    lines.push(
      "The macOS executables are unsigned: Node's code signature is removed before the provider is",
      "injected (it would no longer match, and macOS kills such a program). Intel Macs run unsigned",
      "programs that Terraform downloads; signing again needs Apple's codesign (`codesign --sign -`",
      "for an ad-hoc signature, which Apple silicon requires).",
      "",
    );
  if (built.some((b) => b.platform.startsWith("windows")))
    lines.push(
      "The Windows executable is unsigned: Node's Authenticode signature is removed before the",
      "provider is injected (it would no longer match). Terraform runs it; SmartScreen or an",
      "application control policy may ask about an unsigned program. Signing it needs a certificate.",
      "",
    );
  if (built.some((b) => b.node !== built[0]?.node))
    lines.push(
      "Where the npm registry lacks a platform's binary of the build's Node.js version, the newest",
      "of the same major was used; the provider blob is made by the build's Node.js for all.",
      "",
    );
  return `${lines.join("\n")}`;
}

module.exports = { releaseNotes };
