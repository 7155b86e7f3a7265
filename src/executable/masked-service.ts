import { redactText } from "../api/redact";
import { terminalText } from "../display";
import type { DiagnosticOut, EventStream, ProviderService } from "../plugin/tfplugin6";

// The last step before Terraform: every diagnostic the provider answers, every progress message an
// action streams and every error a handler throws is masked with the one definition of a
// credential (api/redact.ts). Terraform prints diagnostics and progress on the terminal and in CI
// logs, so whatever a resource, the framework or a server's message put in them, a token, an
// access token or a key secret never gets that far; and neither does a control character or a
// bidirectional override (src/display.ts: a label or a server's message quoted in a diagnostic is
// no terminal command).

/** A diagnostic's text as Terraform may print it: masked, then made safe for a terminal. */
function shown(text: string, multiline: boolean): string {
  return terminalText(redactText(text), { multiline, maxLength: multiline ? 8000 : 500 });
}

type Handler = (req: unknown, stream?: EventStream<unknown>) => Promise<unknown>;

function maskDiagnostic(d: DiagnosticOut): DiagnosticOut {
  const out: DiagnosticOut = { ...d, summary: shown(d.summary, false) };
  if (d.detail !== undefined) out.detail = shown(d.detail, true);
  return out;
}

/**
 * An event of ListResource (`diagnostic`, and `display_name`, an instance's label as `terraform
 * query` prints it) or InvokeAction (`progress`, `completed`), masked and safe for a terminal.
 */
function maskEvent(event: unknown): unknown {
  if (event === null || typeof event !== "object") return event;
  const e = event as {
    diagnostic?: DiagnosticOut[];
    display_name?: string;
    progress?: { message?: string };
    completed?: { diagnostics?: DiagnosticOut[] };
  };
  const out: Record<string, unknown> = { ...e };
  if (Array.isArray(e.diagnostic)) out.diagnostic = e.diagnostic.map(maskDiagnostic);
  if (typeof e.display_name === "string") out.display_name = shown(e.display_name, false);
  if (e.progress) out.progress = { ...e.progress, message: shown(e.progress.message ?? "", true) };
  if (e.completed && Array.isArray(e.completed.diagnostics))
    out.completed = { ...e.completed, diagnostics: e.completed.diagnostics.map(maskDiagnostic) };
  return out;
}

function maskedStream(stream: EventStream<unknown>): EventStream<unknown> {
  return { signal: stream.signal, send: (event) => stream.send(maskEvent(event)) };
}

/** Wraps every RPC of `service` so that its diagnostics, events and thrown errors carry no credential. */
export function maskedService(service: ProviderService): ProviderService {
  const wrapped: Record<string, unknown> = {};
  for (const [name, fn] of Object.entries(service as unknown as Record<string, unknown>)) {
    if (typeof fn !== "function") {
      wrapped[name] = fn;
      continue;
    }
    wrapped[name] = async (req: unknown, stream?: EventStream<unknown>) => {
      let res: unknown;
      try {
        res = await (fn as Handler).call(service, req, stream && maskedStream(stream));
      } catch (err) {
        if (err instanceof Error) err.message = shown(err.message, true);
        throw err;
      }
      const diagnostics = (res as { diagnostics?: unknown } | undefined)?.diagnostics;
      if (!Array.isArray(diagnostics)) return res;
      return { ...(res as object), diagnostics: (diagnostics as DiagnosticOut[]).map(maskDiagnostic) };
    };
  }
  return wrapped as unknown as ProviderService;
}
