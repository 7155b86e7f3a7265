import {
  closeSync,
  existsSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  rmSync,
  type Stats,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import { formatBytes, readBounded, TooLargeError } from "../bounded-read";
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

/** What the system says of a file it could not read, in words, with its code: `it is a directory (EISDIR)`. */
export function fsReason(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  const code = typeof e?.code === "string" ? e.code : undefined;
  const words = code ? FS_WORDS[code] : undefined;
  if (words) return `${words} (${code})`;
  // Node's own text without its code and system call: "EXDEV: cross-device link not permitted, rename".
  const text = (e instanceof Error ? e.message : String(err))
    .replace(/^[A-Z][A-Z0-9_]*: /, "")
    .replace(/, [a-z]+(?: '.*')?$/, "");
  return code ? `${text} (${code})` : text;
}

const FS_WORDS: Record<string, string> = {
  ENOENT: "it does not exist",
  EISDIR: "it is a directory, not a file",
  ENOTDIR: "a part of its path is not a directory",
  EACCES: "permission denied",
  EPERM: "the operation is not permitted",
  EIO: "an input/output error: the device or file system failed to read it",
  ELOOP: "too many levels of symbolic links",
  ENAMETOOLONG: "the path is too long",
  EMFILE: "too many open files",
  ENFILE: "too many open files in the system",
  ENXIO: "no such device or address",
  ENODEV: "no such device",
  EINVAL: "the file cannot be read this way (invalid argument)",
  EAGAIN: "it has nothing to read now and would block",
  ESPIPE: "it cannot be read from a position (a pipe or a device)",
  ENOMEM: "not enough memory",
  ERR_FS_FILE_TOO_LARGE: "it is larger than 2 GiB",
};

/** A SourceError for a file of `arg` that could not be read: the argument, the file and why. */
function unreadable(arg: string, file: string, err: unknown): SourceError {
  const where = arg === file ? `cannot read ${file}` : `${arg}: cannot read ${file}`;
  return new SourceError(`${where}: ${fsReason(err)}`);
}

/** A whole file as text, or a SourceError naming the argument, the file and why. */
function readText(file: string, arg: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch (err) {
    throw unreadable(arg, file, err);
  }
}

/**
 * The most a pipe or a device is read before it is refused: a V8 string holds no more than about
 * 512 MiB, and a device such as /dev/zero never ends.
 */
const MAX_STREAM_BYTES = 512 * 1024 * 1024;

/** The whole of a pipe or a device, read once from its current position (it has no other). */
function readStream(path: string, arg: string): Buffer {
  try {
    return readBounded(path, MAX_STREAM_BYTES);
  } catch (err) {
    if (err instanceof TooLargeError) {
      throw new SourceError(
        `${arg === path ? path : `${arg} (${path})`} gives more than ${formatBytes(MAX_STREAM_BYTES)}: it is no state or plan`,
      );
    }
    throw unreadable(arg, path, err);
  }
}

/** Whether bytes begin as a zip archive does: saved plan files are zip archives. */
function isZip(head: Buffer): boolean {
  return head.length >= 2 && head[0] === 0x50 && head[1] === 0x4b;
}

/** Whether a directory holds Terraform configuration or state (so a mistyped path is not taken for an empty state). */
function looksLikeWorkingDirectory(dir: string, arg: string): boolean {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (err) {
    throw unreadable(arg, dir, err);
  }
  return names.some(
    (f) => f.endsWith(".tf") || f.endsWith(".tf.json") || f === ".terraform" || f === "terraform.tfstate",
  );
}

/** A path on the command line, told apart; a pipe or a device comes with its content, which can be read only once. */
interface Examined {
  kind: PathKind;
  /** The whole content of a path that is not a regular file (`<(cat plan.json)`, a FIFO). */
  content?: Buffer;
}

/** Tells what a path is; reads the whole of a pipe or device (once) to tell. */
function examine(path: string, arg: string): Examined {
  if (!existsSync(path)) throw new SourceError(`${path} does not exist`);
  let st: Stats;
  try {
    st = statSync(path);
  } catch (err) {
    throw unreadable(arg, path, err);
  }
  if (st.isDirectory()) {
    if (existsSync(join(path, "cdktf.json"))) return { kind: "cdktf-project" };
    if (existsSync(join(path, "cdk.tf.json"))) return { kind: "cdktf-stack" };
    if (looksLikeWorkingDirectory(path, arg)) return { kind: "working-directory" };
    throw new SourceError(
      `${path} is a directory without Terraform configuration or state (no *.tf, *.tf.json, .terraform, cdktf.json or cdk.tf.json)`,
    );
  }
  if (!st.isFile()) {
    // A pipe has no position to read a header at: its content is read once, and told from that.
    const content = readStream(path, arg);
    return { kind: isZip(content) ? "plan-file" : "json-file", content };
  }
  const head = Buffer.alloc(4);
  let n = 0;
  try {
    const fd = openSync(path, "r");
    try {
      n = readSync(fd, head, 0, 4, 0);
    } finally {
      closeSync(fd);
    }
  } catch (err) {
    throw unreadable(arg, path, err);
  }
  return { kind: isZip(head.subarray(0, n)) ? "plan-file" : "json-file" };
}

/**
 * Tells what a path is by its contents; throws a SourceError for a path that is none of them, or
 * that cannot be read (naming the path and why). A pipe or a device is read whole to tell.
 */
export function classifyPath(path: string): PathKind {
  return examine(path, path).kind;
}

/** A JSON file's text: a regular file read now, a pipe's content as it was read to tell what it is. */
function jsonText(path: string, arg: string, examined: Examined): string {
  return examined.content ? examined.content.toString("utf8") : readText(path, arg);
}

/**
 * Runs `use` with a saved plan file's path: the file itself, or for a pipe a private temporary copy
 * of what it gave (terraform show reads a file), removed afterwards.
 */
async function withPlanFile<T>(
  path: string,
  examined: Examined,
  use: (file: string) => Promise<T>,
): Promise<T> {
  if (!examined.content) return use(path);
  const dir = mkdtempSync(join(tmpdir(), "gpurental-plan-"));
  try {
    const file = join(dir, "plan");
    writeFileSync(file, examined.content, { mode: 0o600 });
    return await use(file);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The synthesized stacks of a CDKTF project, all or the ones named (each must exist). */
export function cdktfStacks(projectDir: string, only: readonly string[] = []): CdktfStack[] {
  let output = "cdktf.out";
  const confFile = join(projectDir, "cdktf.json");
  const what = `the CDKTF project ${projectDir}`;
  try {
    const conf = parseJsonDocument(readText(confFile, what), confFile);
    if (isJsonObject(conf) && typeof conf.output === "string") output = conf.output;
  } catch (err) {
    if (err instanceof SourceError) throw err;
    throw new SourceError((err as Error).message);
  }
  const stacksDir = resolve(projectDir, output, "stacks");
  let found: string[] = [];
  if (existsSync(stacksDir)) {
    try {
      found = readdirSync(stacksDir)
        .filter((n) => existsSync(join(stacksDir, n, "cdk.tf.json")))
        .sort();
    } catch (err) {
      throw unreadable(what, stacksDir, err);
    }
  }
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
function stackBackend(stackDir: string, what: string): { type: string; config: JsonObject } | undefined {
  const file = join(stackDir, "cdk.tf.json");
  const doc = parseJsonDocument(readText(file, what), file);
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
  const doc = parseJsonDocument(readText(file, `the CDKTF stack ${basename(stackDir)}`), file);
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
  const label = `CDKTF stack ${stack.name}`;
  const backend = stackBackend(stack.dir, `the ${label}`);
  if (backend === undefined || backend.type === "local") {
    const configured = backend?.config.path;
    const file = resolve(stack.dir, typeof configured === "string" ? configured : "terraform.tfstate");
    if (!existsSync(file))
      return emptySnapshot(`${label} (${file})`, "no state file yet: the stack was never deployed");
    return stateFromJson(readText(file, `the ${label}`), `${label} (${file})`);
  }
  return pullState(stack.dir, ctx, `${label} (${backend.type} backend)`);
}

/** Converts a saved plan file with `terraform show -json` in the working directory it was made in. */
export async function showPlanFile(
  planFile: string,
  workDir: string,
  ctx: SourceContext,
  /** How the plan is named in messages (default: planFile). */
  label: string = planFile,
): Promise<PlanDocument> {
  const abs = resolve(ctx.cwd, planFile);
  const text = await terraformOk(
    ["show", "-json", "-no-color", abs],
    workDir,
    ctx.env,
    `  A saved plan is read in the working directory it was made in, after \`terraform init\` (choose it with --dir).`,
  );
  const source = `${label} (terraform show -json in ${workDir})`;
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
    const examined = examine(path, arg);
    switch (examined.kind) {
      case "json-file":
        out.push(stateFromJson(jsonText(path, arg, examined), arg));
        break;
      case "plan-file": {
        const workDir = planWorkDir(path, ctx, opts.planDir);
        const plan = await withPlanFile(path, examined, (file) => showPlanFile(file, workDir, ctx, arg));
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
  const examined = examine(path, arg);
  const kind = examined.kind;
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
      return { plan: asPlan(jsonText(path, arg, examined), arg) };
    case "plan-file": {
      const workDir = planWorkDir(path, ctx, opts.dir);
      return { plan: await withPlanFile(path, examined, (file) => showPlanFile(file, workDir, ctx, arg)) };
    }
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
