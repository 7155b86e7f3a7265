import type { RequestOptions } from "../api/client";
import type { Diagnostics, HandlerContext } from "../framework";
import { budgetOf, READ_TIMEOUT_MS, within } from "../provider/deadline";
import { errorToDiagnostic } from "../provider/refusals";

// What every data source shares: the options of their API calls, how an API failure becomes a
// diagnostic.

/**
 * The options of the API calls of one data source read: they retry transient failures within the
 * read's time limit (data sources have no `timeouts`, so the default read limit).
 */
export function readOptions(ctx: Pick<HandlerContext<unknown>, "signal" | "timeoutMs">): RequestOptions {
  return within(budgetOf(ctx.timeoutMs ?? READ_TIMEOUT_MS, ctx.signal));
}

/**
 * Reports a failed read. The refusal mapping of the resources is the one place API errors become
 * diagnostics (summary starting with the API's code, then what to do); `hint` adds what is
 * particular to this data source. Messages there never contain credentials: the client masks them.
 */
export function reportReadError(diags: Diagnostics, typeName: string, err: unknown, hint?: string): void {
  const diag = errorToDiagnostic(err, "read");
  const what = `Reading data source ${typeName} failed`;
  // Errors without an API code (network, unknown provider configuration) get the mapping's
  // generic wording, which names no type; say which data source it was.
  const summary = diag.summary === "Reading the object failed." ? what : diag.summary;
  const detail = diag.detail.replace(/^Reading the object failed\. /, `${what}. `);
  diags.add({ severity: diag.severity, summary, detail: hint ? `${detail}\n\n${hint}` : detail });
}
