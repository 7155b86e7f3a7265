// Plain-text and Markdown tables and the small formatting helpers reports share. Every cell and
// every text is made safe where it is shaped (src/display.ts): the values come from the API and
// from states, and a report is printed on a terminal or posted as a pull-request comment.
import { markdownText, terminalText } from "../display";

/** The most characters a table cell shows; a longer value is cut with a note. */
const CELL_MAX_LENGTH = 200;

/**
 * Renders rows as columns padded with spaces, a header line first; no trailing spaces. Cells are
 * shown through terminalText on one line each.
 */
export function textTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const all = [header, ...rows].map((r) => r.map((c) => terminalText(c, { maxLength: CELL_MAX_LENGTH })));
  const widths = header.map((_, i) => Math.max(...all.map((r) => [...(r[i] ?? "")].length)));
  return all
    .map((r) =>
      r
        .map((cell, i) => (i === r.length - 1 ? cell : cell + " ".repeat(widths[i]! - [...cell].length)))
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
}

/** Text for a Markdown table cell or line: markdownText (controls, Markdown, HTML, line breaks). */
export function mdText(s: string): string {
  return markdownText(s);
}

/** A code span that survives any backticks inside; controls and overrides shown escaped. */
export function mdCode(text: string): string {
  const s = terminalText(text, { maxLength: CELL_MAX_LENGTH });
  const ticks = "`".repeat(Math.max(0, ...[...s.matchAll(/`+/g)].map((m) => m[0].length)) + 1);
  const pad = s.startsWith("`") || s.endsWith("`") ? " " : "";
  return `${ticks}${pad}${s.replace(/\r?\n/g, " ")}${pad}${ticks}`;
}

/** Renders a Markdown table. */
export function mdTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const line = (cells: readonly string[]) => `| ${cells.map((c) => c.replace(/\|/g, "\\|")).join(" | ")} |`;
  return [line(header), `|${header.map(() => "---").join("|")}|`, ...rows.map(line)].join("\n");
}

/** A duration for a person, two units at most: "3d 4h", "2h 5m", "45s". */
export function formatAge(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return "-";
  const s = Math.floor(ms / 1000);
  const d = Math.floor(s / 86_400);
  const h = Math.floor((s % 86_400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  if (d > 0) return `${d}d ${h}h`;
  if (h > 0) return `${h}h ${m}m`;
  if (m > 0) return `${m}m ${s % 60}s`;
  return `${s}s`;
}

/** "1 instance", "2 instances". */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}
