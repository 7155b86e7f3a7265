import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isThisExecutable, programOf, startedFile } from "./self";

describe("which program the executable is", () => {
  it.each([
    ["terraform-provider-gpurental_v0.1.0", "provider"],
    [
      "/home/u/.terraform/providers/registry.terraform.io/gpurental/gpurental/0.1.0/linux_amd64/terraform-provider-gpurental_v0.1.0",
      "provider",
    ],
    [
      "/home/u/.cache/gpurental/runtime/terraform-provider-gpurental-0123456789abcdef0123456789abcdef",
      "provider",
    ],
    ["C:\\terraform\\plugins\\TERRAFORM-PROVIDER-GPURENTAL_V0.1.0.EXE", "provider"],
    ["gpurental", "command"],
    ["./gpurental", "command"],
    ["/usr/local/bin/gpurental-0.1.0", "command"],
    ["C:\\tools\\gpurental.exe", "command"],
    ["", "command"],
  ])("%j is the %s", (argv0, program) => {
    expect(programOf(argv0)).toBe(program);
  });
});

describe("which file the executable is", () => {
  const dir = mkdtempSync(join(tmpdir(), "gpurental-self-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const id = "ab".repeat(32);
  const runtime = join(dir, "runtime", `terraform-provider-gpurental-${id.slice(0, 32)}`);
  mkdirSync(join(dir, "runtime"));
  writeFileSync(runtime, "the runtime");
  /** A compact file: anything, then the launcher's 104-byte trailer naming `runtimeId`. */
  const compact = (file: string, runtimeId: string, magic = "gpurental-rt-v1\n") => {
    const trailer = Buffer.alloc(104);
    trailer.write(magic, 0, "latin1");
    trailer.write(runtimeId, 40, "latin1");
    writeFileSync(file, Buffer.concat([Buffer.from("launcher and stream"), trailer]));
    chmodSync(file, 0o755);
    return file;
  };
  const bin = join(dir, "bin");
  mkdirSync(bin);
  const mine = compact(join(bin, "gpurental"), id);

  it("knows the compact file whose runtime it is, and no other", () => {
    expect(isThisExecutable(mine, runtime)).toBe(true);
    expect(isThisExecutable(compact(join(dir, "other"), "cd".repeat(32)), runtime)).toBe(false);
    expect(isThisExecutable(compact(join(dir, "no-magic"), id, "something-else!\n"), runtime)).toBe(false);
    expect(isThisExecutable(compact(join(dir, "bad-id"), "zz".repeat(32)), runtime)).toBe(false);
    writeFileSync(join(dir, "short"), "x");
    expect(isThisExecutable(join(dir, "short"), runtime)).toBe(false);
    expect(isThisExecutable(join(dir, "missing"), runtime)).toBe(false);
  });

  it("knows a plain executable by its real path, through links", () => {
    const plain = join(dir, "plain");
    writeFileSync(plain, "sea");
    symlinkSync(plain, join(dir, "linked"));
    expect(isThisExecutable(join(dir, "linked"), plain)).toBe(true);
  });

  it("resolves the name it was started by as the shell did: a path, or the first match on PATH", () => {
    expect(startedFile("./bin/gpurental", runtime, { PATH: "" }, dir)).toBe(mine);
    expect(startedFile(mine, runtime, { PATH: "" }, "/")).toBe(mine);
    const decoy = join(dir, "decoy");
    mkdirSync(decoy);
    compact(join(decoy, "gpurental"), "cd".repeat(32));
    // Another gpurental earlier on PATH is not this one: the search goes on.
    expect(startedFile("gpurental", runtime, { PATH: [decoy, bin].join(":") }, "/")).toBe(mine);
  });

  it("falls back to the running file where the name leads to nothing of its own", () => {
    expect(startedFile("gpurental", runtime, { PATH: join(dir, "nowhere") }, "/")).toBe(runtime);
    expect(startedFile("./missing", runtime, {}, dir)).toBe(runtime);
  });
});
