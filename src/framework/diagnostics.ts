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

/**
 * The part of a path Terraform can place in the configuration. Terraform before 1.15 finds the
 * source of a top-level attribute, or of one element of it (`env["K"]`, `list[0]`), but a path
 * reaching inside a nested attribute's value (`offer_filter.num_gpus`, `timeouts.create`) falls back
 * to the resource block's first line, away from the value. Cut there, the diagnostic is shown at
 * the attribute's expression in every version; newer ones would have shown the inner line.
 */
export function placeablePath(p: Path): Path {
  const [first, second] = p;
  if (!first || !("attribute" in first)) return [];
  return second && !("attribute" in second) ? [first, second] : [first];
}

/**
 * Converts a diagnostic to its protocol form (severity is always ERROR or WARNING, never INVALID).
 * A path deeper than Terraform places is cut to what it does (placeablePath); the detail then names
 * the whole path unless it already does.
 */
export function toProtoDiagnostic(d: Diagnostic): DiagnosticOut {
  const out: DiagnosticOut = {
    severity: d.severity === "warning" ? Severity.WARNING : Severity.ERROR,
    summary: d.summary,
    detail: d.detail,
  };
  if (d.path && d.path.length > 0) {
    const placed = placeablePath(d.path);
    if (placed.length < d.path.length) {
      const whole = formatPath(d.path);
      if (!d.detail.includes(whole)) out.detail = d.detail ? `${whole}: ${d.detail}` : whole;
    }
    if (placed.length > 0) out.attribute = toProtoPath(placed);
  }
  return out;
}

/**
 * A diagnostic whose path starts inside a block of the configuration Terraform places it in. A list
 * block's filters are in its nested `config` block, but Terraform resolves the paths of
 * ValidateListResourceConfig (every version), and of ListResource before 1.16, against the list
 * block's own body: without the `config` step a filter's error is shown at the list block's first
 * line instead of at the filter.
 */
export function inBlock(block: string, d: DiagnosticOut): DiagnosticOut {
  if (!d.attribute || d.attribute.steps.length === 0) return d;
  return {
    ...d,
    attribute: {
      steps: [{ selector: "attribute_name", attribute_name: block }, ...d.attribute.steps],
    },
  };
}

/** Turns anything thrown into an error diagnostic, so no handler failure becomes a gRPC error. */
export function errorDiagnostic(summary: string, err: unknown): Diagnostic {
  const detail = err instanceof Error ? err.message || err.name : String(err);
  return { severity: "error", summary, detail };
}
