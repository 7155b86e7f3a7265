/**
 * What `gpurental demo` prints: its steps and their times, amounts in yuan, terraform's progress
 * lines relayed from cdktf's output, and the failures meant for the user.
 */
import { readFileSync } from "node:fs";
import { terminalText } from "../../display";
import type { FakeBackend } from "../../fake-backend";

/** A line of the demo's output: terraform's words and the backend's values are no terminal commands. */
const safe = (text: string) => terminalText(text, { multiline: true });

/** A demo step that failed, with a message meant for the user. */
export class DemoError extends Error {
  /** Names the error class. */
  public override readonly name = "DemoError";
}

/** One step of the demo as printed: started, then done. */
export interface Step {
  done(detail: string): void;
}

/** Prints the demo's lines and steps; see {@link reporter}. */
export type Reporter = ReturnType<typeof reporter>;

/** Prints the demo's lines and steps, each step with its time. */
export function reporter(out: NodeJS.WritableStream) {
  const started = Date.now();
  const seconds = (since: number) => `${((Date.now() - since) / 1000).toFixed(1)}s`;
  return {
    line(text = ""): void {
      out.write(`${safe(text)}\n`);
    },
    step(text: string): Step {
      const t0 = Date.now();
      out.write(`  … ${safe(text)}\n`);
      return {
        done(detail: string) {
          out.write(`  ✓ ${safe(detail)} (${seconds(t0)})\n`);
        },
      };
    },
    total(): string {
      return seconds(started);
    },
  };
}

// Terraform's per-resource progress lines, as cdktf relays them ("<stack>  <address>: Creating...").
const PROGRESS =
  /(Reading\.\.\.|Read complete|Creating\.\.\.|Creation complete|Still creating|Destroying\.\.\.|Destruction complete|Still destroying|Error:)/;
// cdktf names each resource's construct path after its address: "gpurental_instance.x (x/Default)".
const CONSTRUCT_PATH = / \([\w./-]+\/Default\)/;

/**
 * Progress lines as they come, and an error with the lines that explain it (a refusal's code, a
 * failed postcondition's message), without the rest of terraform's output. `stack`: cdktf starts
 * each line of a stack's output with the stack's name.
 */
export function progressRelay(
  out: NodeJS.WritableStream,
  verbose: boolean,
  stack: string,
): (line: string) => void {
  const stackPrefix = new RegExp(`^${stack}\\s+`);
  let explainLines = 0;
  return (line: string) => {
    if (verbose) return;
    const text = line.replace(stackPrefix, "").replace(CONSTRUCT_PATH, "").trim();
    if (PROGRESS.test(line)) {
      out.write(`      ${terminalText(text)}\n`);
      explainLines = line.includes("Error:") ? 8 : 0;
    } else if (explainLines > 0 && text !== "") {
      out.write(`        ${terminalText(text)}\n`);
      explainLines -= 1;
    }
  };
}

/** An amount in micro-yuan, as yuan. */
export function formatYuan(micro: number): string {
  const yuan = micro / 1_000_000;
  return `¥${yuan.toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: yuan < 1 ? 6 : 2 })}`;
}

/** The instances and API keys of an organization the fake backend still holds. */
export function liveCounts(backend: FakeBackend, orgId: string): { instances: number; apiKeys: number } {
  const state = backend.state();
  const instances = backend.listInstances(orgId).filter((i) => i.status !== "destroyed").length;
  const apiKeys = Object.values(state.api_keys).filter(
    (k) => k.org_id === orgId && k.revoked_at === null,
  ).length;
  return { instances, apiKeys };
}

/** The last `n` lines of a text file. */
export function lastLines(file: string, n: number): string[] {
  const lines = readFileSync(file, "utf8").trimEnd().split("\n");
  return lines.slice(-n);
}
