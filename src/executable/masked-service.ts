import { redactText } from "../api/redact";
import type { DiagnosticOut, EventStream, ProviderService } from "../plugin/tfplugin6";

// The last step before Terraform: every diagnostic the provider answers, every progress message an
// action streams and every error a handler throws is masked with the one definition of a
// credential (api/redact.ts). Terraform prints diagnostics and progress on the terminal and in CI
// logs, so whatever a resource, the framework or a server's message put in them, a token, an
// access token or a key secret never gets that far.

type Handler = (req: unknown, stream?: EventStream<unknown>) => Promise<unknown>;

function maskDiagnostic(d: DiagnosticOut): DiagnosticOut {
  const out: DiagnosticOut = { ...d, summary: redactText(d.summary) };
  if (d.detail !== undefined) out.detail = redactText(d.detail);
  return out;
}

/** An event of ListResource (`diagnostic`) or InvokeAction (`progress`, `completed`), masked. */
function maskEvent(event: unknown): unknown {
  if (event === null || typeof event !== "object") return event;
  const e = event as {
    diagnostic?: DiagnosticOut[];
    progress?: { message?: string };
    completed?: { diagnostics?: DiagnosticOut[] };
  };
  const out: Record<string, unknown> = { ...e };
  if (Array.isArray(e.diagnostic)) out.diagnostic = e.diagnostic.map(maskDiagnostic);
  if (e.progress) out.progress = { ...e.progress, message: redactText(e.progress.message ?? "") };
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
        if (err instanceof Error) err.message = redactText(err.message);
        throw err;
      }
      const diagnostics = (res as { diagnostics?: unknown } | undefined)?.diagnostics;
      if (!Array.isArray(diagnostics)) return res;
      return { ...(res as object), diagnostics: (diagnostics as DiagnosticOut[]).map(maskDiagnostic) };
    };
  }
  return wrapped as unknown as ProviderService;
}
