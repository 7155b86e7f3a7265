// Regenerates provider-schema/gpurental.json and both sets of CDK bindings from what the provider
// really serves (src/bindings/cdktf for CDK for Terraform, src/bindings/cdktn for CDK Terrain): the provider is installed into a throwaway filesystem mirror and the real
// `terraform providers schema -json` is asked for it, offline. Run it with `npm run schema`.
//
//   npm run schema                       # terraform + provider -> schema file -> bindings
//   npm run schema -- --from <file>      # bindings from a schema file, no terraform
//
// The bindings are written by @cdktf/provider-generator and @cdktn/provider-generator out of the
// same schema and never edited by hand. Only CDK Terrain's generator knows ephemeral resources;
// CDK for Terraform's leaves them out. The generator's
// TypeScript does not mark overriding members with `override`, which our `noImplicitOverride` flag
// rejects; instead of relaxing the flag for part of the package (a second project with its own
// options, built and type-checked apart), the script applies TypeScript's own "add override
// modifier" fix to the output, so the bindings compile under exactly the same strict options.

import { execFile } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { devNull, tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { promisify } from "node:util";
import * as ts from "typescript";
import { packageName, version } from "../../src/version";

const run = promisify(execFile);

/** Repository root: the nearest folder above this file whose package.json names the package (the script also runs bundled from elsewhere). */
export const ROOT = findRoot(__dirname);
/** The committed schema file. */
export const SCHEMA_FILE = join(ROOT, "provider-schema", "gpurental.json");
/** The CDKs bindings are generated for. */
export type Cdk = "cdktf" | "cdktn";
/** Where each CDK's generated bindings live. */
export const GENERATED_DIRS: Readonly<Record<Cdk, string>> = {
  cdktf: join(ROOT, "src", "bindings", "cdktf"),
  cdktn: join(ROOT, "src", "bindings", "cdktn"),
};
/** Where the CDK for Terraform bindings live. */
export const GENERATED_DIR = GENERATED_DIRS.cdktf;
/** Fully qualified provider address as Terraform prints it. */
export const PROVIDER_FQPN = "registry.terraform.io/gpurental/gpurental";

/** The JSON `terraform providers schema -json` prints, plus the `provider_versions` we add. */
export interface ProviderSchemaJson {
  format_version: string;
  provider_schemas: Record<string, unknown>;
  provider_versions?: Record<string, string>;
}

/** Options of {@link fetchProviderSchema}. */
export interface FetchSchemaOptions {
  /** Installs the provider into a filesystem mirror rooted at `dir`. */
  install: (dir: string) => Promise<void>;
  /** The terraform binary; default $TERRAFORM_BINARY_NAME or `terraform`. */
  terraform?: string;
}

function findRoot(start: string): string {
  for (let dir = start; ; dir = dirname(dir)) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { name?: unknown };
      if (pkg.name === packageName) return dir;
    } catch {
      // no package.json here; keep climbing
    }
    if (dirname(dir) === dir) throw new Error(`no ${packageName} package.json above ${start}`);
  }
}

/** Returns a copy with object keys sorted recursively, so the file is stable across runs. */
export function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) out[key] = sortKeys((value as Record<string, unknown>)[key]);
    return out;
  }
  return value;
}

/** Serializes a schema the way the committed file is written. */
export function formatSchema(schema: ProviderSchemaJson): string {
  return `${JSON.stringify(sortKeys(schema), null, 2)}\n`;
}

/** Runs the real terraform CLI against the freshly installed provider and returns its schema JSON. */
export async function fetchProviderSchema(opts: FetchSchemaOptions): Promise<ProviderSchemaJson> {
  const terraform = opts.terraform ?? process.env.TERRAFORM_BINARY_NAME ?? "terraform";
  const work = mkdtempSync(join(tmpdir(), "gpurental-schema-"));
  try {
    const mirror = join(work, "mirror");
    const config = join(work, "terraform.rc");
    const project = join(work, "project");
    mkdirSync(mirror);
    mkdirSync(project);
    await opts.install(mirror);
    // A per-run CLI config pins installation to the mirror, so neither the user's ~/.terraformrc
    // nor the network can change what is read.
    writeFileSync(config, cliConfig(mirror));
    writeFileSync(
      join(project, "main.tf"),
      `terraform {\n  required_providers {\n    gpurental = {\n      source  = "gpurental/gpurental"\n      version = "${version}"\n    }\n  }\n}\n`,
    );
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      TF_CLI_CONFIG_FILE: config,
      TF_DATA_DIR: join(project, ".terraform"),
      TF_PLUGIN_CACHE_DIR: "",
      TF_IN_AUTOMATION: "1",
      TF_INPUT: "0",
      CHECKPOINT_DISABLE: "1",
      // The provider's code cache goes with the run's folder instead of staying in the temp directory.
      GPURENTAL_PROVIDER_CODE_CACHE_DIR: join(work, "code-cache"),
      GPURENTAL_PROVIDER_RESIDENT: "off",
    };
    delete env.TF_LOG;
    await run(terraform, ["init", "-backend=false", "-input=false", "-no-color"], { cwd: project, env });
    const { stdout } = await run(terraform, ["providers", "schema", "-json"], {
      cwd: project,
      env,
      maxBuffer: 64 * 1024 * 1024,
    });
    const schema = JSON.parse(stdout) as ProviderSchemaJson;
    if (!(PROVIDER_FQPN in schema.provider_schemas)) {
      throw new Error(`terraform printed no schema for ${PROVIDER_FQPN}`);
    }
    return withVersion(schema);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** A Terraform CLI configuration that installs gpurental from `mirror` and nothing from elsewhere. */
export function cliConfig(mirror: string): string {
  return [
    "provider_installation {",
    "  filesystem_mirror {",
    `    path    = ${JSON.stringify(mirror)}`,
    `    include = ["${PROVIDER_FQPN}"]`,
    "  }",
    "  direct {",
    `    exclude = ["${PROVIDER_FQPN}"]`,
    "  }",
    "}",
    "",
  ].join("\n");
}

/** Sets `provider_versions`, which terraform does not print but the generator needs for `required_providers`. */
export function withVersion(schema: ProviderSchemaJson): ProviderSchemaJson {
  return { ...schema, provider_versions: { [PROVIDER_FQPN]: version } };
}

/** Generates the TypeScript bindings for `schema` with `cdk`'s generator into `outDir` (replacing it). */
export async function generateBindings(
  schema: ProviderSchemaJson,
  outDir: string,
  cdk: Cdk = "cdktf",
): Promise<void> {
  // The generator's dependencies probe terraform and the checkpoint service when they load.
  process.env.CHECKPOINT_DISABLE = "1";
  // They also print terraform's complaint about a configured CLI config file that does not exist.
  const cliConfigFile = process.env.TF_CLI_CONFIG_FILE;
  if (cliConfigFile && !existsSync(cliConfigFile)) process.env.TF_CLI_CONFIG_FILE = devNull;
  const { CodeMaker, TerraformProviderGenerator, commons } = await loadGenerator(cdk);
  const scratch = mkdtempSync(join(tmpdir(), "gpurental-bindings-"));
  try {
    const code = new CodeMaker();
    const generator = new TerraformProviderGenerator(code, schema);
    const minor = version.split(".").slice(0, 2).join(".");
    generator.generate(
      new commons.ConstructsMakerProviderTarget(
        new commons.TerraformProviderConstraint(`${PROVIDER_FQPN}@~> ${minor}`),
        commons.Language.TYPESCRIPT,
      ),
    );
    await code.save(scratch);
    const generated = join(scratch, "providers", "gpurental");
    const files = new Map<string, string>();
    for (const file of walk(generated)) {
      // lazy-index.ts duplicates index.ts; the per-class READMEs link to a registry page that does
      // not exist for this provider (our docs live in docs/).
      const rel = relative(generated, file);
      if (rel === "lazy-index.ts" || !rel.endsWith(".ts")) continue;
      files.set(rel, readFileSync(file, "utf8"));
    }
    // Checked where the CDK's bindings live, whatever outDir is, so that imports resolve as they will there.
    const fixed = addOverrideModifiers(files, GENERATED_DIRS[cdk]);
    rmSync(outDir, { recursive: true, force: true });
    for (const [rel, text] of [...fixed].sort(([a], [b]) => a.localeCompare(b))) {
      const target = join(outDir, rel);
      mkdirSync(dirname(target), { recursive: true });
      writeFileSync(target, text);
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** The parts of a provider generator this script uses; both CDKs' generators have this shape. */
interface GeneratorModules {
  CodeMaker: new () => { save(dir: string): Promise<void> };
  TerraformProviderGenerator: new (code: unknown, schema: unknown) => { generate(target: unknown): void };
  commons: {
    ConstructsMakerProviderTarget: new (constraint: unknown, language: unknown) => unknown;
    TerraformProviderConstraint: new (constraint: string) => unknown;
    Language: { TYPESCRIPT: unknown };
  };
}

async function loadGenerator(cdk: Cdk): Promise<GeneratorModules> {
  const modules =
    cdk === "cdktf"
      ? { ...(await import("@cdktf/provider-generator")), commons: await import("@cdktf/commons") }
      : { ...(await import("@cdktn/provider-generator")), commons: await import("@cdktn/commons") };
  // The two packages' classes differ only in the CDK their types name; the script treats them alike.
  return modules as unknown as GeneratorModules;
}

function walk(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...walk(full));
    else out.push(full);
  }
  return out;
}

/**
 * Applies TypeScript's "add override modifier" code fix to every file, with the project's own
 * compiler options, as if the files were in `home`. Keys are paths relative to the bindings' root.
 */
export function addOverrideModifiers(
  files: ReadonlyMap<string, string>,
  home: string = GENERATED_DIR,
): Map<string, string> {
  const base = resolve(home);
  const texts = new Map<string, string>();
  for (const [rel, text] of files) texts.set(join(base, rel), text);
  const parsed = ts.getParsedCommandLineOfConfigFile(
    join(ROOT, "tsconfig.json"),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(ts.flattenDiagnosticMessageText(d.messageText, "\n"));
      },
    },
  );
  if (!parsed) throw new Error("cannot read tsconfig.json");
  const options: ts.CompilerOptions = { ...parsed.options, noEmit: true, noImplicitOverride: true };
  const versions = new Map<string, number>();
  const host: ts.LanguageServiceHost = {
    getCompilationSettings: () => options,
    getScriptFileNames: () => [...texts.keys()],
    getScriptVersion: (f) => String(versions.get(f) ?? 0),
    getScriptSnapshot: (f) => {
      const text = texts.get(f) ?? ts.sys.readFile(f);
      return text === undefined ? undefined : ts.ScriptSnapshot.fromString(text);
    },
    getCurrentDirectory: () => ROOT,
    getDefaultLibFileName: (o) => ts.getDefaultLibFilePath(o),
    fileExists: (f) => texts.has(f) || ts.sys.fileExists(f),
    readFile: (f) => texts.get(f) ?? ts.sys.readFile(f),
    readDirectory: ts.sys.readDirectory,
    directoryExists: ts.sys.directoryExists,
    getDirectories: ts.sys.getDirectories,
  };
  const service = ts.createLanguageService(host, ts.createDocumentRegistry());
  for (const file of texts.keys()) {
    const fix = service.getCombinedCodeFix(
      { type: "file", fileName: file },
      "fixAddOverrideModifier",
      {},
      {},
    );
    for (const change of fix.changes) {
      const before = texts.get(change.fileName);
      if (before === undefined) continue;
      texts.set(change.fileName, applyTextChanges(before, change.textChanges));
      versions.set(change.fileName, (versions.get(change.fileName) ?? 0) + 1);
    }
  }
  const out = new Map<string, string>();
  for (const [abs, text] of texts) out.set(relative(base, abs), text);
  return out;
}

function applyTextChanges(text: string, changes: readonly ts.TextChange[]): string {
  let out = text;
  // Right to left, so earlier offsets stay valid.
  for (const c of [...changes].sort((a, b) => b.span.start - a.span.start)) {
    out = out.slice(0, c.span.start) + c.newText + out.slice(c.span.start + c.span.length);
  }
  return out;
}

async function main(argv: string[]): Promise<void> {
  const fromIndex = argv.indexOf("--from");
  let schema: ProviderSchemaJson;
  if (fromIndex >= 0) {
    const from = argv[fromIndex + 1];
    if (!from) throw new Error("--from needs a schema file");
    schema = withVersion(JSON.parse(readFileSync(from, "utf8")) as ProviderSchemaJson);
  } else {
    const { installProvider } = await import("../../src/cli/provider/provider");
    schema = await fetchProviderSchema({
      install: async (dir) => {
        installProvider({ dir, version });
      },
    });
  }
  mkdirSync(dirname(SCHEMA_FILE), { recursive: true });
  writeFileSync(SCHEMA_FILE, formatSchema(schema));
  for (const [cdk, dir] of Object.entries(GENERATED_DIRS) as Array<[Cdk, string]>) {
    await generateBindings(schema, dir, cdk);
  }
  const dirs = Object.values(GENERATED_DIRS).map((dir) => `${relative(ROOT, dir)}/`);
  process.stdout.write(`wrote ${relative(ROOT, SCHEMA_FILE)}, ${dirs.join(" and ")} (provider ${version})\n`);
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    // The generator's dependencies leave timers behind; do not wait for them.
    () => process.exit(0),
    (err: unknown) => {
      process.stderr.write(`generate-schema: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    },
  );
}
