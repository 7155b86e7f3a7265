import { closeSync, existsSync, openSync, readdirSync, readFileSync, readSync, statSync } from "node:fs";
import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import { UserFacingError } from "../user-facing";
import { isJsonObject, type JsonObject, parseJsonDocument } from "./json";
import { type PlanDocument, plannedImports, readTerraformDocument } from "./plan";
import type { StateSnapshot } from "./state";
import { terraformOk } from "./terraform";

// Where states and plans come from on the command line, and how each is read: a JSON file (a
// `.tfstate`, `terraform show -json` of a state or a plan), a saved plan file (converted with
// `terraform show -json` in its working directory), a Terraform working directory (`terraform state
// pull`, so local and remote backends such as pg read alike), and CDKTF: a project (cdktf.json,
// every synthesized stack or the ones named) or one synthesized stack directory, whose backend is
// read from its cdk.tf.json. A local backend's file is read directly, so a stack deployed with
// `cdktf deploy` needs no `terraform init` to be read; any other backend goes through state pull.

/** Raised for a source that cannot be used; the message names the path and what to do. */
export class SourceError extends UserFacingError {
  constructor(message: string) {
    super(message);
    this.name = "SourceError";
  }
}

/** How the command reads its inputs: the environment for terraform, the directory paths are relative to, stdin. */
export interface SourceContext {
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** Reads the whole of standard input (for the source `-`). */
  readStdin: () => Promise<string>;
}

/** A synthesized CDKTF stack. */
export interface CdktfStack {
  name: string;
  /** cdktf.out/stacks/<name>: where cdktf runs terraform for the stack. */
  dir: string;
}

/** What a path on the command line is. */
export type PathKind = "json-file" | "plan-file" | "cdktf-project" | "cdktf-stack" | "working-directory";

/** Whether a directory holds Terraform configuration or state (so a mistyped path is not taken for an empty state). */
function looksLikeWorkingDirectory(dir: string): boolean {
  return readdirSync(dir).some(
    (f) => f.endsWith(".tf") || f.endsWith(".tf.json") || f === ".terraform" || f === "terraform.tfstate",
  );
}

/** Tells what a path is by its contents; throws a SourceError for a path that is none of them. */
export function classifyPath(path: string): PathKind {
  if (!existsSync(path)) throw new SourceError(`${path} does not exist`);
  const st = statSync(path);
  if (st.isDirectory()) {
    if (existsSync(join(path, "cdktf.json"))) return "cdktf-project";
    if (existsSync(join(path, "cdk.tf.json"))) return "cdktf-stack";
    if (looksLikeWorkingDirectory(path)) return "working-directory";
    throw new SourceError(
      `${path} is a directory without Terraform configuration or state (no *.tf, *.tf.json, .terraform, cdktf.json or cdk.tf.json)`,
    );
  }
  const fd = openSync(path, "r");
  const head = Buffer.alloc(4);
  try {
    readSync(fd, head, 0, 4, 0);
  } finally {
    closeSync(fd);
  }
  // Saved plan files are zip archives.
  if (head[0] === 0x50 && head[1] === 0x4b) return "plan-file";
  return "json-file";
}

/** The synthesized stacks of a CDKTF project, all or the ones named (each must exist). */
export function cdktfStacks(projectDir: string, only: readonly string[] = []): CdktfStack[] {
  let output = "cdktf.out";
  try {
    const conf = parseJsonDocument(
      readFileSync(join(projectDir, "cdktf.json"), "utf8"),
      join(projectDir, "cdktf.json"),
    );
    if (isJsonObject(conf) && typeof conf.output === "string") output = conf.output;
  } catch (err) {
    throw new SourceError((err as Error).message);
  }
  const stacksDir = resolve(projectDir, output, "stacks");
  const found = existsSync(stacksDir)
    ? readdirSync(stacksDir)
        .filter((n) => existsSync(join(stacksDir, n, "cdk.tf.json")))
        .sort()
    : [];
  if (found.length === 0) {
    throw new SourceError(
      `the CDKTF project ${projectDir} has no synthesized stack under ${stacksDir}: run \`cdktf synth\` (or \`cdktn synth\`) there first`,
    );
  }
  const wanted = only.length > 0 ? [...new Set(only)] : found;
  const missing = wanted.filter((n) => !found.includes(n));
  if (missing.length > 0) {
    throw new SourceError(
      `the CDKTF project ${projectDir} has no synthesized stack ${missing.map((m) => `"${m}"`).join(", ")} (synthesized: ${found.join(", ")}); run \`cdktf synth\` after adding it`,
    );
  }
  return wanted.map((name) => ({ name, dir: join(stacksDir, name) }));
}

/** The backend a synthesized stack declares: its type and settings. */
function stackBackend(stackDir: string): { type: string; config: JsonObject } | undefined {
  const file = join(stackDir, "cdk.tf.json");
  const doc = parseJsonDocument(readFileSync(file, "utf8"), file);
  const tf = isJsonObject(doc) && isJsonObject(doc.terraform ?? null) ? (doc.terraform as JsonObject) : {};
  if (isJsonObject(tf.cloud ?? null)) return { type: "cloud", config: tf.cloud as JsonObject };
  const backend = isJsonObject(tf.backend ?? null) ? (tf.backend as JsonObject) : {};
  const [type] = Object.keys(backend);
  if (!type) return undefined;
  return { type, config: isJsonObject(backend[type] ?? null) ? (backend[type] as JsonObject) : {} };
}

/** The construct path of every resource a synthesized stack declares, by address (`type.name`). */
export function cdktfConstructPaths(stackDir: string): Map<string, string> {
  const out = new Map<string, string>();
  const file = join(stackDir, "cdk.tf.json");
  const doc = parseJsonDocument(readFileSync(file, "utf8"), file);
  const resources =
    isJsonObject(doc) && isJsonObject(doc.resource ?? null) ? (doc.resource as JsonObject) : {};
  for (const [type, byName] of Object.entries(resources)) {
    if (!isJsonObject(byName)) continue;
    for (const [name, body] of Object.entries(byName)) {
      const meta = isJsonObject(body) && isJsonObject(body["//"] ?? null) ? (body["//"] as JsonObject) : {};
      const md = isJsonObject(meta.metadata ?? null) ? (meta.metadata as JsonObject) : {};
      if (typeof md.path === "string") out.set(`${type}.${name}`, md.path);
    }
  }
  return out;
}

function emptySnapshot(source: string, note: string): StateSnapshot {
  return { source, format: "state-v4", objects: [], imports: [], note };
}

/** Parses a JSON text as a state, or as a plan's prior state (with the objects it imports). */
export function stateFromJson(text: string, source: string): StateSnapshot {
  const doc = readTerraformDocument(parseJsonDocument(text, source), source);
  if (doc.kind === "state") return doc.state;
  return { ...doc.plan.priorState, imports: plannedImports(doc.plan.changes) };
}

/** `terraform state pull` in a directory: its state through whatever backend it uses. */
async function pullState(dir: string, ctx: SourceContext, label: string): Promise<StateSnapshot> {
  const hint = existsSync(join(dir, ".terraform"))
    ? ""
    : `  The directory has no .terraform: run \`terraform init\` there first${existsSync(join(dir, "cdk.tf.json")) ? " (`cdktf diff` or `cdktf deploy` does it for a stack)" : ""}.`;
  const text = await terraformOk(["state", "pull", "-no-color"], dir, ctx.env, hint);
  const source = `${label} (terraform state pull)`;
  if (text.trim() === "") return emptySnapshot(source, "no state yet");
  return stateFromJson(text, source);
}

/** Reads a synthesized CDKTF stack's state: its local state file directly, any other backend with state pull. */
export async function readCdktfStackState(stack: CdktfStack, ctx: SourceContext): Promise<StateSnapshot> {
  const backend = stackBackend(stack.dir);
  const label = `CDKTF stack ${stack.name}`;
  if (backend === undefined || backend.type === "local") {
    const configured = backend?.config.path;
    const file = resolve(stack.dir, typeof configured === "string" ? configured : "terraform.tfstate");
    if (!existsSync(file))
      return emptySnapshot(`${label} (${file})`, "no state file yet: the stack was never deployed");
    return stateFromJson(readFileSync(file, "utf8"), `${label} (${file})`);
  }
  return pullState(stack.dir, ctx, `${label} (${backend.type} backend)`);
}

/** Converts a saved plan file with `terraform show -json` in the working directory it was made in. */
export async function showPlanFile(
  planFile: string,
  workDir: string,
  ctx: SourceContext,
): Promise<PlanDocument> {
  const abs = resolve(ctx.cwd, planFile);
  const text = await terraformOk(
    ["show", "-json", "-no-color", abs],
    workDir,
    ctx.env,
    `  A saved plan is read in the working directory it was made in, after \`terraform init\` (choose it with --dir).`,
  );
  const source = `${planFile} (terraform show -json in ${workDir})`;
  const doc = readTerraformDocument(parseJsonDocument(text, source), source);
  if (doc.kind !== "plan") throw new SourceError(`${source} did not describe a plan`);
  return doc.plan;
}

/** The working directory of a plan file: the one given, else its own directory when initialized there, else cwd. */
export function planWorkDir(planFile: string, ctx: SourceContext, dir?: string): string {
  if (dir !== undefined) return resolve(ctx.cwd, dir);
  const own = dirname(resolve(ctx.cwd, planFile));
  return existsSync(join(own, ".terraform")) ? own : ctx.cwd;
}

/** Options of {@link readStateSources}. */
export interface StateSourceOptions {
  /** CDKTF stacks to read from the CDKTF projects given (default: every synthesized stack). */
  stacks?: readonly string[];
  /** The working directory of saved plan files given (default: see planWorkDir). */
  planDir?: string;
}

/**
 * Reads every state the arguments name: files (`-` is stdin), working directories, CDKTF projects
 * and stack directories. Each argument gives one state, a CDKTF project one per stack.
 */
export async function readStateSources(
  args: readonly string[],
  ctx: SourceContext,
  opts: StateSourceOptions = {},
): Promise<StateSnapshot[]> {
  const out: StateSnapshot[] = [];
  let stdinUsed = false;
  let projects = 0;
  for (const arg of args) {
    if (arg === "-") {
      if (stdinUsed) throw new SourceError("standard input (-) can be given only once");
      stdinUsed = true;
      out.push(stateFromJson(await ctx.readStdin(), "standard input"));
      continue;
    }
    const path = isAbsolute(arg) ? arg : resolve(ctx.cwd, arg);
    switch (classifyPath(path)) {
      case "json-file":
        out.push(stateFromJson(readFileSync(path, "utf8"), arg));
        break;
      case "plan-file": {
        const plan = await showPlanFile(path, planWorkDir(path, ctx, opts.planDir), ctx);
        out.push({ ...plan.priorState, imports: plannedImports(plan.changes) });
        break;
      }
      case "working-directory":
        out.push(await pullState(path, ctx, `${arg === "." ? basename(path) || path : arg}`));
        break;
      case "cdktf-project":
        projects++;
        for (const stack of cdktfStacks(path, opts.stacks)) out.push(await readCdktfStackState(stack, ctx));
        break;
      case "cdktf-stack":
        out.push(await readCdktfStackState({ name: basename(path), dir: path }, ctx));
        break;
    }
  }
  if (opts.stacks && opts.stacks.length > 0 && projects === 0) {
    throw new SourceError(
      "--stack names stacks of a CDKTF project: give the project's directory (with cdktf.json) as a source",
    );
  }
  return out;
}

/** A plan to report on, with the CDKTF stack it belongs to when it came from one. */
export interface LoadedPlan {
  plan: PlanDocument;
  /** The stack, and the construct path of each of its resources by address, for a CDKTF stack's plan. */
  cdktf?: { stack: string; constructPaths: Map<string, string> };
}

/** Options of {@link loadPlan}. */
export interface PlanSourceOptions {
  /** The working directory a plan file was made in. */
  dir?: string;
  /** The stack of a CDKTF project. */
  stack?: string;
}

/**
 * Loads a plan: `terraform show -json` output (a file or `-`), a saved plan file, a CDKTF project
 * (with its stack) or a synthesized stack directory, whose plan `cdktf diff` saved as `plan`.
 */
export async function loadPlan(
  arg: string,
  ctx: SourceContext,
  opts: PlanSourceOptions = {},
): Promise<LoadedPlan> {
  const asPlan = (text: string, source: string): PlanDocument => {
    const doc = readTerraformDocument(parseJsonDocument(text, source), source);
    if (doc.kind !== "plan") {
      throw new SourceError(
        `${source} is a state, not a plan: save a plan with \`terraform plan -out=FILE\` and pass FILE or \`terraform show -json FILE\``,
      );
    }
    return doc.plan;
  };
  if (arg === "-") return { plan: asPlan(await ctx.readStdin(), "standard input") };
  const path = isAbsolute(arg) ? arg : resolve(ctx.cwd, arg);
  const kind = classifyPath(path);
  if (opts.stack !== undefined && kind !== "cdktf-project") {
    throw new SourceError(
      "--stack names a stack of a CDKTF project: give the project's directory (with cdktf.json)",
    );
  }
  const fromStack = async (stack: CdktfStack): Promise<LoadedPlan> => {
    const planFile = join(stack.dir, "plan");
    if (!existsSync(planFile)) {
      throw new SourceError(
        `the CDKTF stack ${stack.name} has no saved plan at ${planFile}: run \`cdktf diff ${stack.name}\` first (or \`cdktn diff ${stack.name}\`; it saves the plan there)`,
      );
    }
    return {
      plan: await showPlanFile(planFile, stack.dir, ctx),
      cdktf: { stack: stack.name, constructPaths: cdktfConstructPaths(stack.dir) },
    };
  };
  switch (kind) {
    case "json-file":
      return { plan: asPlan(readFileSync(path, "utf8"), arg) };
    case "plan-file":
      return { plan: await showPlanFile(path, planWorkDir(path, ctx, opts.dir), ctx) };
    case "cdktf-project": {
      const stacks = cdktfStacks(path, opts.stack !== undefined ? [opts.stack] : []);
      if (stacks.length > 1) {
        throw new SourceError(
          `the CDKTF project ${arg} has ${stacks.length} stacks (${stacks.map((s) => s.name).join(", ")}): name one with --stack`,
        );
      }
      return fromStack(stacks[0]!);
    }
    case "cdktf-stack":
      return fromStack({ name: basename(path), dir: path });
    case "working-directory":
      throw new SourceError(
        `${arg} is a working directory: give the saved plan file instead (\`terraform plan -out=FILE\`), made in that directory`,
      );
  }
}
