import { closeSync, existsSync, lstatSync, openSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { type Command, InvalidArgumentError, Option } from "commander";
import { stringify } from "lossless-json";
import { jsonEscaped } from "../../display";
import { buildPlanReport } from "../../plan-report/build";
import {
  evaluateGates,
  type FailOn,
  type GateSpec,
  parseFailOn,
  parseHours,
  tripped,
} from "../../plan-report/gates";
import { readForPlan } from "../../plan-report/readings";
import { renderMarkdown, reportJson } from "../../plan-report/render";
import { type Micro, parseYen } from "../../report/money";
import { fsReason, loadPlan, type SourceContext } from "../../tfstate/sources";
import { UserFacingError } from "../../user-facing";
import { type CommandIO, processIO } from "../io";
import { type ApiFlags, apiAccess, commandErrorText, isUserFacing } from "./api-access";
import { addApiOptions } from "./strays";

// `gpurental plan-report`: what a saved plan does to the organization's instances, disks, keys and
// money, for a pull request (Markdown) or a pipeline (--json), with exit codes for gating. Reads
// the API only (an API key is enough; the balance needs a session and is reported as not read
// otherwise).

/** Exit codes of `gpurental plan-report`. */
export const PLAN_REPORT_EXIT = {
  /** The report was printed and no gate tripped. */
  ok: 0,
  /** The command failed: bad arguments, an unreadable plan, terraform or the API failed. */
  failed: 1,
  /** A gate tripped (the report was printed). */
  gated: 2,
} as const;

/** Options of {@link runPlanReport}, as the flags give them. */
export interface PlanReportOptions extends ApiFlags {
  dir?: string;
  stack?: string;
  json?: boolean;
  output?: string;
  failOn?: FailOn[];
  maxBurnPerHour?: Micro;
  maxBurnIncreasePerHour?: Micro;
  minBalanceHours?: bigint;
}

/** Raised for an `--output` the report cannot go to; the message names the flag, the path and what to do. */
export class OutputFileError extends UserFacingError {
  constructor(message: string) {
    super(message);
    this.name = "OutputFileError";
  }
}

/** Whether two paths name the same file (the same path, a link to it, another hard link). */
function sameFile(a: string, b: string): boolean {
  if (a === b) return true;
  try {
    const x = statSync(a);
    const y = statSync(b);
    return x.dev === y.dev && x.ino === y.ino;
  } catch {
    return false;
  }
}

/** Why the report cannot be written to `file`, from the system's error code, in the flag's words. */
function outputFailure(output: string, file: string, err: unknown): OutputFileError {
  const at = `--output ${output}${output === file ? "" : ` (${file})`}`;
  switch ((err as NodeJS.ErrnoException)?.code) {
    case "EEXIST":
      return new OutputFileError(
        `${at} already exists: the report never replaces a file. Remove it first, or give a path that does not exist.`,
      );
    case "EISDIR":
      return new OutputFileError(`${at} is a directory: give the path of a file to create in it.`);
    case "ENOENT":
      return new OutputFileError(`${at}: its folder ${dirname(file)} does not exist. Create it first.`);
    case "ENOTDIR":
      return new OutputFileError(`${at}: a part of its folder ${dirname(file)} is not a directory.`);
    default:
      return new OutputFileError(`${at}: cannot write the report there: ${fsReason(err)}.`);
  }
}

/**
 * The file `--output` names, checked before anything is read: not empty, not the plan itself, not
 * an existing file or directory, in a folder that exists. Throws an OutputFileError saying which.
 */
export function outputFile(output: string, plan: string, cwd: string): string {
  if (output.trim() === "") {
    throw new OutputFileError(
      "--output needs the path of a file to write the report to, got an empty value.",
    );
  }
  const file = resolve(cwd, output);
  if (plan !== "-" && sameFile(file, resolve(cwd, plan))) {
    throw new OutputFileError(
      `--output ${output} is the plan being read: the report would replace it. Write the report to another file.`,
    );
  }
  let exists = false;
  try {
    lstatSync(file);
    exists = true;
  } catch {
    // Not there: what is wanted.
  }
  if (exists) {
    const dir = (() => {
      try {
        return statSync(file).isDirectory();
      } catch {
        return false;
      }
    })();
    throw outputFailure(output, file, { code: dir ? "EISDIR" : "EEXIST" });
  }
  const folder = dirname(file);
  if (!existsSync(folder)) throw outputFailure(output, file, { code: "ENOENT" });
  if (!statSync(folder).isDirectory()) throw outputFailure(output, file, { code: "ENOTDIR" });
  return file;
}

/** Writes the report to a new file (never over one); a file it could not write whole is removed. */
function writeNewFile(output: string, file: string, text: string): void {
  let fd: number;
  try {
    fd = openSync(file, "wx", 0o644);
  } catch (err) {
    throw outputFailure(output, file, err);
  }
  try {
    writeFileSync(fd, text);
    closeSync(fd);
  } catch (err) {
    try {
      closeSync(fd);
    } catch {
      // Closed already, or the close fails as the write did.
    }
    rmSync(file, { force: true });
    throw outputFailure(output, file, err);
  }
}

/** Runs `gpurental plan-report` and returns its exit code (see {@link PLAN_REPORT_EXIT}). */
export async function runPlanReport(plan: string, opts: PlanReportOptions, io: CommandIO): Promise<number> {
  try {
    // A report that cannot be written is known before the plan and the API are read.
    const file = opts.output !== undefined ? outputFile(opts.output, plan, io.cwd) : undefined;
    const ctx: SourceContext = { env: io.env, cwd: io.cwd, readStdin: () => io.readStdin() };
    const api = apiAccess(opts, io.env, "gpurental-plan-report");
    const loaded = await loadPlan(plan, ctx, {
      ...(opts.dir !== undefined ? { dir: opts.dir } : {}),
      ...(opts.stack !== undefined ? { stack: opts.stack } : {}),
    });
    const readings = await readForPlan(api.client, api.credential, loaded.plan, () => io.now());
    const report = buildPlanReport(loaded, readings);
    const spec: GateSpec = {
      failOn: [...new Set(opts.failOn ?? [])],
      ...(opts.maxBurnPerHour !== undefined ? { maxBurnPerHour: opts.maxBurnPerHour } : {}),
      ...(opts.maxBurnIncreasePerHour !== undefined
        ? { maxBurnIncreasePerHour: opts.maxBurnIncreasePerHour }
        : {}),
      ...(opts.minBalanceHours !== undefined ? { minBalanceTenths: opts.minBalanceHours } : {}),
    };
    report.gates = evaluateGates(report, spec);
    const text = opts.json
      ? `${jsonEscaped(stringify(reportJson(report), null, 2) ?? "")}\n`
      : renderMarkdown(report);
    if (opts.output !== undefined && file !== undefined) {
      writeNewFile(opts.output, file, text);
      io.stderr(`Plan report written to ${file}\n`);
    } else {
      io.stdout(text);
    }
    const hit = report.gates.filter((g) => g.status === "tripped");
    for (const g of hit) io.stderr(`gate ${g.gate} tripped: ${g.detail}\n`);
    return tripped(report.gates) ? PLAN_REPORT_EXIT.gated : PLAN_REPORT_EXIT.ok;
  } catch (err) {
    if (isUserFacing(err)) {
      io.stderr(`error: ${commandErrorText(err)}\n`);
      return PLAN_REPORT_EXIT.failed;
    }
    throw err;
  }
}

function argParser<T>(parse: (v: string) => T) {
  return (value: string): T => {
    try {
      return parse(value);
    } catch (err) {
      throw new InvalidArgumentError((err as Error).message);
    }
  };
}

/** Registers `gpurental plan-report`. */
export function register(program: Command): void {
  const cmd = program
    .command("plan-report")
    .description(
      "Report what a saved plan does to the organization's instances, disks, API keys and hourly burn (Markdown for a pull request, or --json)",
    )
    .argument(
      "<plan>",
      "`terraform show -json` output of a saved plan (- reads it from stdin), a saved plan file (converted with terraform show -json in its working directory), a CDKTF or CDK Terrain project (with --stack when it has several) or a synthesized stack directory (its plan saved by `cdktf diff` or `cdktn diff`)",
    )
    .option(
      "--dir <dir>",
      "working directory a saved plan file was made in (default: its own when initialized, else the current one)",
    )
    .option("--stack <name>", "the stack of a CDKTF project")
    .option("--json", "print the report as JSON")
    .option(
      "--output <file>",
      "write the report to a new file instead of stdout (an existing file, the plan itself included, is never replaced)",
    )
    .addOption(
      new Option(
        "--fail-on <conditions>",
        "exit 2 when any condition holds (comma-separated, repeatable): disk-loss, replace, destroy, key-revoke, refusal, balance-rule, forget, unjudged",
      ).argParser((v: string, prev: FailOn[] | undefined) => [...(prev ?? []), ...argParser(parseFailOn)(v)]),
    )
    .addOption(
      new Option(
        "--max-burn-per-hour <amount>",
        "exit 2 when the organization's hourly burn after the change is above this amount in ¥ (e.g. 25.50)",
      ).argParser(argParser((v) => parseYen(v, "--max-burn-per-hour"))),
    )
    .addOption(
      new Option(
        "--max-burn-increase-per-hour <amount>",
        "exit 2 when the change raises the hourly burn by more than this amount in ¥",
      ).argParser(argParser((v) => parseYen(v, "--max-burn-increase-per-hour"))),
    )
    .addOption(
      new Option(
        "--min-balance-hours <hours>",
        "exit 2 when the balance covers fewer hours than this after the change (needs a session to read the balance)",
      ).argParser(argParser(parseHours)),
    );
  addApiOptions(cmd)
    .addHelpText(
      "after",
      "\nExit codes: 0 report printed and no gate tripped, 1 the command failed, 2 a gate tripped (the report is printed too).\nA gate whose figure cannot be read (the balance with an API key, an unknown price) is not judged and does not trip, unless --fail-on unjudged.",
    )
    .action(async (plan: string, opts: PlanReportOptions) => {
      process.exitCode = await runPlanReport(plan, opts, processIO());
    });
}
