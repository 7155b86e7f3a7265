// Diagnostics as handlers report them, and their conversion to tfplugin6 messages.
import {
  type AttributePathOut,
  type AttributePathStepOut,
  type DiagnosticOut,
  Severity,
} from "../plugin/tfplugin6";

/** One step of an attribute path: an attribute name, a map key or a list index. Sets have no step. */
export type PathStep = { readonly attribute: string } | { readonly key: string } | { readonly index: number };

/** A path to an attribute or element, from the top of the resource's object. */
export type Path = readonly PathStep[];

/** A diagnostic: an error or warning, optionally pointing at an attribute. */
export interface Diagnostic {
  severity: "error" | "warning";
  summary: string;
  detail: string;
  path?: Path | undefined;
}

/** Builds a path: strings are attribute names, numbers list indexes; use `{ key }` for map keys. */
export function path(...steps: (string | number | PathStep)[]): Path {
  return steps.map((s) =>
    typeof s === "string" ? { attribute: s } : typeof s === "number" ? { index: s } : s,
  );
}

/** Human form of a path, e.g. `ports[0].name` or `tags["a"]`. */
export function formatPath(p: Path): string {
  return p
    .map((s, i) =>
      "attribute" in s
        ? i === 0
          ? s.attribute
          : `.${s.attribute}`
        : "key" in s
          ? `[${JSON.stringify(s.key)}]`
          : `[${s.index}]`,
    )
    .join("");
}

/** Collects diagnostics during one request. */
export class Diagnostics {
  /** Everything reported so far, in order. */
  readonly items: Diagnostic[] = [];

  /** Adds an error not tied to an attribute. */
  addError(summary: string, detail = ""): void {
    this.items.push({ severity: "error", summary, detail });
  }

  /** Adds a warning not tied to an attribute. */
  addWarning(summary: string, detail = ""): void {
    this.items.push({ severity: "warning", summary, detail });
  }

  /** Adds an error that Terraform shows at the attribute's place in the configuration. */
  addAttributeError(at: Path, summary: string, detail = ""): void {
    this.items.push({ severity: "error", summary, detail, path: at });
  }

  /** Adds a warning shown at the attribute's place in the configuration. */
  addAttributeWarning(at: Path, summary: string, detail = ""): void {
    this.items.push({ severity: "warning", summary, detail, path: at });
  }

  /** Adds diagnostics made elsewhere (e.g. by the resource's own helpers). */
  add(...diags: readonly Diagnostic[]): void {
    this.items.push(...diags);
  }

  /** Whether any error was reported. */
  hasErrors(): boolean {
    return this.items.some((d) => d.severity === "error");
  }
}

/** Converts a path to its protocol form. */
export function toProtoPath(p: Path): AttributePathOut {
  return {
    steps: p.map(
      (s): AttributePathStepOut =>
        "attribute" in s
          ? { selector: "attribute_name", attribute_name: s.attribute }
          : "key" in s
            ? { selector: "element_key_string", element_key_string: s.key }
            : { selector: "element_key_int", element_key_int: s.index },
    ),
  };
}

/** Converts a diagnostic to its protocol form (severity is always ERROR or WARNING, never INVALID). */
export function toProtoDiagnostic(d: Diagnostic): DiagnosticOut {
  const out: DiagnosticOut = {
    severity: d.severity === "warning" ? Severity.WARNING : Severity.ERROR,
    summary: d.summary,
    detail: d.detail,
  };
  if (d.path && d.path.length > 0) out.attribute = toProtoPath(d.path);
  return out;
}

/** Turns anything thrown into an error diagnostic, so no handler failure becomes a gRPC error. */
export function errorDiagnostic(summary: string, err: unknown): Diagnostic {
  const detail = err instanceof Error ? err.message || err.name : String(err);
  return { severity: "error", summary, detail };
}
