import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { linkedNpxEntry } from "./npx-cache";

describe("the npx cache entry of a clone", () => {
  const dir = mkdtempSync(join(tmpdir(), "gpurental-npx-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const clone = join(dir, "clone");
  mkdirSync(join(clone, "bin"), { recursive: true });
  writeFileSync(join(clone, "bin", "gpurental"), "#!/usr/bin/env node\n");
  /** An npx entry as npm makes it: node_modules/.bin/gpurental through the package's folder. */
  const entry = (hash: string, linkToClone: boolean) => {
    const root = join(dir, "cache", "_npx", hash);
    const pkg = join(root, "node_modules", "@gpurental", "gpurental");
    mkdirSync(join(root, "node_modules", ".bin"), { recursive: true });
    mkdirSync(join(pkg, ".."), { recursive: true });
    if (linkToClone) symlinkSync(clone, pkg);
    else {
      mkdirSync(join(pkg, "bin"), { recursive: true });
      writeFileSync(join(pkg, "bin", "gpurental"), "#!/usr/bin/env node\n");
    }
    const bin = join(root, "node_modules", ".bin", "gpurental");
    symlinkSync("../@gpurental/gpurental/bin/gpurental", bin);
    return { root, bin };
  };

  it("finds an entry that links to the package (npx inside a clone)", () => {
    const e = entry("6c58b7486fea6b3b", true);
    expect(linkedNpxEntry(e.bin)).toBe(e.root);
  });

  it("leaves an entry that holds a copy of the package (npx of the published one) alone", () => {
    expect(linkedNpxEntry(entry("0123456789abcdef", false).bin)).toBeUndefined();
  });

  it.each([
    [undefined],
    ["/usr/lib/node_modules/@gpurental/gpurental/bin/gpurental"],
    ["/project/node_modules/.bin/gpurental"],
    ["/x/_npx/not-hex/node_modules/.bin/gpurental"],
    ["/x/_npx/0123456789abcdef/node_modules/other/gpurental"],
  ])("is none for %j", (script) => {
    expect(linkedNpxEntry(script)).toBeUndefined();
  });
});
