import { closeSync, existsSync, openSync, rmSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { type Command, InvalidArgumentError, Option } from "commander";
import { stringify } from "lossless-json";
import { ReadGroup } from "../../api/read-group";
import type { ApiKey, Instance } from "../../api/schemas";
import { jsonEscaped } from "../../display";
import { parseDuration } from "../../framework/timeouts";
import { importConfiguration } from "../../strays/adopt";
import { findStrays, type StrayReport, strayCount } from "../../strays/find";
import { closeImportedEntries, lateArrivalWatchMs, markLateArrivals } from "../../strays/journals";
import { type RemovalOutcome, removeStrays } from "../../strays/remove";
import { renderStraysText, straysJson } from "../../strays/render";
import { readStateSources, type SourceContext } from "../../tfstate/sources";
import type { StateSnapshot } from "../../tfstate/state";
import { UserFacingError } from "../../user-facing";
import { type CommandIO, inCi, processIO } from "../io";
import { type ApiAccess, type ApiFlags, apiAccess, commandErrorText, isUserFacing } from "./api-access";

// `gpurental strays`: the organization's instances and API keys that no given state holds, for a
// person (a table), a machine (--json) and a nightly CI job (the exit code), with two ways out on
// request: configuration that adopts them (--import, --output-import) or a destroy and revoke
// (--destroy, confirmed by a person or by --yes, never in CI without --yes).

/** Exit codes of `gpurental strays`. */
export const STRAYS_EXIT = {
  /** No strays (or every one was destroyed or revoked). */
  none: 0,
  /** The command failed: bad arguments, an unreadable state, the API or terraform failed, a removal failed or was refused. */
  failed: 1,
  /** Strays found (and, with --destroy, some remain). */
  found: 2,
} as const;

/** Options of {@link runStrays}, as the flags give them. */
export interface StraysOptions extends ApiFlags {
  stack?: string[];
  planDir?: string;
  json?: boolean;
  import?: boolean;
  outputImport?: string;
  destroy?: boolean;
  yes?: boolean;
  wait?: boolean;
  waitTimeout?: number;
}

/**
 * The organization's instances and API keys, read at once. When one read fails, the other is
 * cancelled and awaited before the failure is thrown: a read left running would go on retrying
 * (until first contact, bounded) after the command has answered, in the command's process.
 */
async function readOrganization(api: ApiAccess): Promise<[Instance[], ApiKey[]]> {
  const reads = new ReadGroup();
  const opts = { signal: reads.signal };
  const instances = reads.add(api.client.listInstances({}, opts));
  const apiKeys = reads.add(api.client.listApiKeys(opts));
  await reads.settle();
  return [await instances, await apiKeys];
}

async function listStrays(
  sources: readonly string[],
  opts: StraysOptions,
  api: ApiAccess,
  ctx: SourceContext,
  now: () => number,
): Promise<StrayReport> {
  const states: StateSnapshot[] = await readStateSources(sources, ctx, {
    ...(opts.stack ? { stacks: opts.stack } : {}),
    ...(opts.planDir ? { planDir: opts.planDir } : {}),
  });
  const [instances, apiKeys] = await readOrganization(api);
  const report = findStrays({ instances, apiKeys, states, keyPrefix: api.keyPrefix, now: now() });
  markLateArrivals(report, sources, ctx.env, ctx.cwd, now());
  return report;
}

/** Keeps the strays of `first` that `second` still finds: what a confirmed removal may touch. */
function stillStrays(first: StrayReport, second: StrayReport): { report: StrayReport; dropped: string[] } {
  const inst = new Set(second.instances.map((s) => s.instance.id));
  const keys = new Set(second.apiKeys.map((k) => k.key.id));
  const dropped = [
    ...first.instances.filter((s) => !inst.has(s.instance.id)).map((s) => `instance ${s.instance.id}`),
    ...first.apiKeys.filter((k) => !keys.has(k.key.id)).map((k) => `API key ${k.key.id}`),
  ];
  return {
    report: {
      ...second,
      instances: second.instances.filter((s) => first.instances.some((f) => f.instance.id === s.instance.id)),
      apiKeys: second.apiKeys.filter((k) => first.apiKeys.some((f) => f.key.id === k.key.id)),
    },
    dropped,
  };
}

/** A file `--output-import` cannot take, or import blocks that could not be kept. */
class ImportOutputError extends UserFacingError {}

/** How `--output-import` refuses a file that is there: never replaced, as `gpurental example` refuses. */
function outputTaken(file: string): ImportOutputError {
  return new ImportOutputError(
    `--output-import ${file} already exists: choose another file or remove it (an existing file is never replaced)`,
  );
}

/** Why a file operation failed, in words and with the system's code. */
function fileProblem(err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code;
  const words: Record<string, string> = {
    ENOENT: "its directory does not exist",
    ENOTDIR: "a part of its path is not a directory",
    EISDIR: "it is a directory",
    EACCES: "permission denied",
    EPERM: "operation not permitted",
    EROFS: "the file system is read-only",
    ENOSPC: "no space left on the device",
    EDQUOT: "the disk quota is exceeded",
  };
  const message = err instanceof Error ? err.message : String(err);
  return code && words[code] ? `${words[code]} (${code})` : message;
}

/**
 * Writes the import blocks to `file`, which must not exist yet (opened with "wx": not even a file
 * created meanwhile is replaced). A file left half-written is removed; every failure is an
 * {@link ImportOutputError} naming the flag, the file and why.
 */
function writeImportFile(file: string, text: string): void {
  let fd: number;
  try {
    fd = openSync(file, "wx");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EEXIST") throw outputTaken(file);
    throw new ImportOutputError(
      `--output-import ${file} could not be written: ${fileProblem(err)}. Nothing was adopted: choose a file in a directory that can be written.`,
    );
  }
  let failure: unknown;
  try {
    writeFileSync(fd, text);
  } catch (err) {
    failure = err;
  }
  try {
    closeSync(fd);
  } catch (err) {
    failure ??= err;
  }
  if (failure === undefined) return;
  let removed = "the partial file was removed";
  try {
    rmSync(file, { force: true });
  } catch (rmErr) {
    removed = `the partial file could not be removed (${fileProblem(rmErr)}): delete it`;
  }
  throw new ImportOutputError(
    `--output-import ${file} could not be written: ${fileProblem(failure)}. Nothing was adopted (${removed}).`,
  );
}

/**
 * Closes the journal entries of the instances the import blocks adopt, once the blocks are written
 * (`written`, the file) or about to be printed. When that fails, the written file is removed again:
 * import blocks next to open entries would let an apply adopt one instance at two addresses.
 */
function closeAdoptedEntries(
  ids: readonly string[],
  sources: readonly string[],
  io: CommandIO,
  written: string | undefined,
): void {
  try {
    closeImportedEntries(ids, sources, io.env, io.cwd);
  } catch (err) {
    let kept = "";
    if (written) {
      kept = removedAgain(written);
    } else {
      kept = ", so the import blocks printed on standard output must not be used";
    }
    const why = (err instanceof Error ? err.message : String(err)).replace(/\.$/, "");
    throw new ImportOutputError(
      `the deploy journal entries of the instances to adopt could not be closed${kept} (with the entries open, an apply could adopt an instance the import blocks also import): ${why}. Run the command again once the journal can be written.`,
    );
  }
}

/** Removes the import file the command wrote, and says so: ", so <file> was removed again". */
function removedAgain(written: string): string {
  try {
    rmSync(written, { force: true });
    return `, so ${written} was removed again`;
  } catch (err) {
    return `, and ${written} could not be removed (${fileProblem(err)}): delete it before the next apply`;
  }
}

/** Runs `gpurental strays` and returns its exit code (see {@link STRAYS_EXIT}). */
export async function runStrays(
  sources: readonly string[],
  opts: StraysOptions,
  io: CommandIO,
): Promise<number> {
  const say = (t: string) => (opts.json || opts.import ? io.stderr(t) : io.stdout(t));
  try {
    if (sources.length === 0) {
      throw new InvalidArgumentError(
        "give at least one state to compare with: a state file, `terraform show -json` output, a working directory or a CDKTF project (without one, everything would be a stray)",
      );
    }
    if (opts.destroy && (opts.import || opts.outputImport)) {
      throw new InvalidArgumentError("--destroy and --import/--output-import are opposites: choose one");
    }
    if (opts.yes && !opts.destroy)
      throw new InvalidArgumentError("--yes confirms --destroy, which was not given");
    const outputFile = opts.outputImport === undefined ? undefined : resolve(io.cwd, opts.outputImport);
    // Refused before anything is read, whether or not there turn out to be strays; the write
    // itself refuses a file created meanwhile.
    if (outputFile !== undefined && existsSync(outputFile)) throw outputTaken(outputFile);
    lateArrivalWatchMs(io.env);
    const api = apiAccess(opts, io.env, "gpurental-strays");
    const ctx: SourceContext = { env: io.env, cwd: io.cwd, readStdin: () => io.readStdin() };
    const report = await listStrays(sources, opts, api, ctx, () => io.now());
    const hcl = opts.import || opts.outputImport !== undefined ? importConfiguration(report) : "";
    const found = strayCount(report);
    // The file first: a journal entry closed for import blocks that were never written would leave
    // its instance adopted by nothing.
    const written = outputFile !== undefined && hcl ? outputFile : undefined;
    if (written) writeImportFile(written, hcl);
    // Or printed first, and delivered: a closed pipe or a full disk under stdout loses the blocks.
    const printed = hcl !== "" && opts.import === true;
    if (printed) {
      io.stdout(
        opts.json
          ? `${jsonEscaped(stringify({ ...straysJson(report), import_configuration: hcl }, null, 2) ?? "")}\n`
          : hcl,
      );
      if (!(await io.stdoutDelivered())) {
        // The file holds the same blocks: beside open entries, it must not stay either.
        const removed = written ? removedAgain(written) : "";
        throw new ImportOutputError(
          `the import blocks could not be written to standard output, so nothing was adopted and no deploy journal entry was closed${removed}: run the command again with the output going where it can be written, or use --output-import <file>`,
        );
      }
    }
    // The import blocks say where these instances go: no create of a journal may adopt them too.
    if (hcl)
      closeAdoptedEntries(
        report.instances.map((s) => s.instance.id),
        sources,
        io,
        written,
      );

    if (outputFile !== undefined) {
      if (written) io.stderr(`Import blocks for ${found} stray(s) written to ${written}\n`);
      else io.stderr(`No strays: ${outputFile} was not written\n`);
    }
    if (!opts.json) {
      if (opts.import) {
        if (!printed) io.stdout(hcl);
        io.stderr(renderStraysText(report));
      } else {
        io.stdout(renderStraysText(report));
      }
    }

    let removals: RemovalOutcome[] | undefined;
    let exit: number = found > 0 ? STRAYS_EXIT.found : STRAYS_EXIT.none;
    if (opts.destroy && found > 0) {
      const what = `${report.instances.length} instance(s) (their disks are lost) and revoke ${report.apiKeys.filter((k) => !k.thisCredential).length} API key(s)`;
      if (!opts.yes) {
        if (inCi(io.env)) {
          throw new InvalidArgumentError(
            `CI is set, so nothing is destroyed without --yes: add --yes to destroy ${what}`,
          );
        }
        if (!io.interactive || sources.includes("-")) {
          throw new InvalidArgumentError(
            `standard input is not a terminal to confirm on: add --yes to destroy ${what}`,
          );
        }
        const answer = await io.ask(`Destroy ${what} listed above? Only 'yes' is accepted: `);
        if (answer?.trim() !== "yes") {
          io.stderr("Nothing was destroyed or revoked.\n");
          if (opts.json) io.stdout(`${jsonEscaped(stringify(straysJson(report), null, 2) ?? "")}\n`);
          return exit;
        }
      }
      // The states and the organization are read again: an apply may have adopted one meanwhile.
      const again = await listStrays(sources, opts, api, ctx, () => io.now());
      const { report: targets, dropped } = stillStrays(report, again);
      for (const d of dropped) say(`${d}: no longer a stray, left alone\n`);
      removals = await removeStrays(api.client, targets, {
        credential: api.credential,
        wait: opts.wait !== false,
        waitTimeoutMs: opts.waitTimeout ?? 10 * 60_000,
        progress: (line) => say(`${line}\n`),
      });
      const failed = removals.some((r) => r.result === "failed");
      const remaining = removals.filter((r) => r.result === "failed" || r.result === "skipped").length;
      const ownSkipped = removals.some((r) => r.detail?.startsWith("this command's own"));
      const left = remaining - (ownSkipped ? 1 : 0);
      exit = failed ? STRAYS_EXIT.failed : left > 0 ? STRAYS_EXIT.found : STRAYS_EXIT.none;
    }

    if (opts.json && !printed) {
      const doc: Record<string, unknown> = straysJson(report);
      if (opts.import) doc.import_configuration = hcl;
      if (removals) doc.removals = removals;
      io.stdout(`${jsonEscaped(stringify(doc, null, 2) ?? "")}\n`);
    }
    return exit;
  } catch (err) {
    if (err instanceof InvalidArgumentError || isUserFacing(err)) {
      io.stderr(`error: ${commandErrorText(err as Error)}\n`);
      return STRAYS_EXIT.failed;
    }
    throw err;
  }
}

/** Parses --wait-timeout as every duration of the provider and the command is parsed: "90s", "1h30m". */
function parseWaitTimeout(value: string): number {
  const ms = parseDuration(value.trim());
  if (ms === undefined)
    throw new InvalidArgumentError(
      `--wait-timeout must be a duration of at most 480h, such as 90s, 10m or 1h30m, got '${value}'.`,
    );
  if (ms <= 0) throw new InvalidArgumentError(`--wait-timeout must be longer than 0, got '${value}'.`);
  return ms;
}

/** Adds the API flags every reading command shares. */
export function addApiOptions(cmd: Command): Command {
  return cmd
    .option("--base-url <url>", "API address (default: $GPURENTAL_BASE_URL)")
    .option(
      "--token-file <path>",
      "file holding the token (default: $GPURENTAL_TOKEN); never pass a token as a flag",
    )
    .option(
      "--org-id <uuid>",
      "organization to act in (default: $GPURENTAL_ORG_ID, else the credential's own)",
    )
    .option(
      "--ca-cert-file <path>",
      "PEM file of extra CAs to trust, for a private CA or a TLS-inspecting proxy (default: $GPURENTAL_CA_CERT_FILE)",
    );
}

/** Registers `gpurental strays`. */
export function register(program: Command): void {
  const cmd = program
    .command("strays")
    .description(
      "List the organization's instances and API keys that no given state holds (exit 2 when there are any)",
    )
    .argument(
      "<sources...>",
      "states to compare with: state files (.tfstate), `terraform show -json` output (state or plan), saved plan files, Terraform working directories (read with `terraform state pull`), CDKTF or CDK Terrain projects (every synthesized stack, or --stack) or synthesized stack directories; - reads JSON from stdin",
    )
    .option(
      "--stack <name>",
      "a CDKTF stack to read from the CDKTF projects given; repeat it for several (default: all synthesized stacks)",
      (name: string, previous: string[] | undefined) => [...(previous ?? []), name],
    )
    .option(
      "--plan-dir <dir>",
      "working directory of the saved plan files given (default: their own when initialized, else the current one)",
    )
    .option("--json", "print the report as JSON")
    .option(
      "--import",
      "print import and resource blocks that adopt the strays on stdout (the table goes to stderr)",
    )
    .option(
      "--output-import <file>",
      "write the import and resource blocks to a new file (an existing file is never replaced)",
    )
    .option("--destroy", "destroy the stray instances and revoke the stray API keys, after confirmation")
    .option(
      "--yes",
      "confirm --destroy without a question (needed without a terminal, and whenever CI is set)",
    )
    .option("--no-wait", "with --destroy, do not wait until each instance is destroyed")
    .addOption(
      new Option("--wait-timeout <duration>", "with --destroy, how long to wait for each instance (e.g. 10m)")
        .argParser(parseWaitTimeout)
        .default(10 * 60_000, "10m"),
    );
  addApiOptions(cmd)
    .addHelpText(
      "after",
      "\nExit codes: 0 no strays (or all removed), 1 the command failed, 2 strays found (or some remain after --destroy).\n\nWith Terraform 1.14 or later, `terraform query` is its counterpart: the provider's list resources (gpurental_instance, gpurental_api_key) list the whole organization, and -generate-config-out writes import blocks by identity. This command is the one that compares with your states.",
    )
    .action(async (sources: string[], opts: StraysOptions) => {
      process.exitCode = await runStrays(sources, opts, processIO());
    });
}
