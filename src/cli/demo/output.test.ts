import { PassThrough } from "node:stream";
import { UNSAFE_CHARACTERS } from "../../display";
import { progressRelay, reporter } from "./output";

// What the demo prints of terraform's lines and the backend's values: no control character reaches
// the terminal raw, whatever a label or a message held.

function capture() {
  const out = new PassThrough();
  let text = "";
  out.on("data", (c: Buffer) => {
    text += c.toString("utf8");
  });
  return { out, text: () => text };
}

const EVIL = "evil\u001b]0;PWNED\u0007\u001b[2Jx";

test("the demo's lines, steps and relayed progress show control characters escaped", () => {
  const c = capture();
  const report = reporter(c.out);
  report.line(`  label         ${EVIL}`);
  report.step(`deploying ${EVIL}`).done(`done ${EVIL}\r`);
  const relay = progressRelay(c.out, false, "demo");
  relay(`demo  gpurental_instance.x: Creating... ${EVIL}`);
  relay(`demo  Error: refused\u009b2J`);
  relay(`demo  ${EVIL}\u202e`);
  const text = c.text();
  expect(text.replace(/\n/g, "")).not.toMatch(new RegExp(`[${UNSAFE_CHARACTERS}]`));
  expect(text.match(/evil\\x1b\]0;PWNED\\x07\\x1b\[2Jx/g)).toHaveLength(5);
});
