import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setCommandHost } from "../host";
import { HCL_EXAMPLE_FILES, hclExample, writeHclExample } from "./example";
import { openWorkDir } from "./workdir";

const ROOT = join(__dirname, "..", "..", "..");

describe("the HCL example the command carries", () => {
  const dir = mkdtempSync(join(tmpdir(), "gpurental-example-"));
  afterEach(() => setCommandHost({}));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("is examples/hcl's configuration, from the package", () => {
    expect(hclExample()).toEqual(
      HCL_EXAMPLE_FILES.map((name) => ({
        name,
        text: readFileSync(join(ROOT, "examples", "hcl", name), "utf8"),
      })),
    );
  });

  it("comes from the standalone executable's assets there, and says so when one is missing", () => {
    const assets: Record<string, string> = {
      "examples/hcl/main.tf": "# main",
      "examples/hcl/variables.tf": "# v",
    };
    setCommandHost({
      standalone: {
        file: "/x/gpurental",
        asset: (n) => (n in assets ? Buffer.from(assets[n] as string) : undefined),
      },
    });
    expect(() => hclExample()).toThrow(
      "the executable carries no examples/hcl/outputs.tf: download it again",
    );
    assets["examples/hcl/outputs.tf"] = "# o";
    expect(hclExample().map((f) => f.text)).toEqual(["# main", "# v", "# o"]);
  });

  it("is written into a new folder, and never over a file that is there", () => {
    const target = join(dir, "new", "demo");
    expect(writeHclExample(target)).toEqual(HCL_EXAMPLE_FILES.map((n) => join(target, n)));
    expect(readdirSync(target).sort()).toEqual([...HCL_EXAMPLE_FILES].sort());

    const mine = join(dir, "mine");
    mkdirSync(mine);
    writeFileSync(join(mine, "main.tf"), "# my own\n");
    expect(() => writeHclExample(mine)).toThrow(
      `${join(mine, "main.tf")} already exists: choose an empty or new folder`,
    );
    expect(readdirSync(mine)).toEqual(["main.tf"]);
    expect(readFileSync(join(mine, "main.tf"), "utf8")).toBe("# my own\n");
  });

  it("names the argument, the path and the reason when the folder cannot take it", () => {
    const file = join(dir, "a-file");
    writeFileSync(file, "");
    expect(() => writeHclExample(file)).toThrow(
      `<dir> ${file}: cannot create the folder ${file}: a file that is not a folder is in its place (EEXIST)`,
    );
    expect(() => writeHclExample(join(file, "sub"))).toThrow(
      `<dir> ${join(file, "sub")}: cannot create the folder ${join(file, "sub")}: a part of its path is not a directory (ENOTDIR)`,
    );
  });
});

describe("the demo's --work-dir", () => {
  const dir = mkdtempSync(join(tmpdir(), "gpurental-workdir-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("names the flag, the path and the reason when no folder can be made there", () => {
    const file = join(dir, "a-file");
    writeFileSync(file, "");
    expect(() => openWorkDir(file, undefined)).toThrow(
      `--work-dir ${file}: cannot create the folder ${file}: a file that is not a folder is in its place (EEXIST)`,
    );
    const kept = openWorkDir(join(dir, "new"), undefined);
    expect(kept).toMatchObject({ dir: join(dir, "new"), kept: true });
  });
});
