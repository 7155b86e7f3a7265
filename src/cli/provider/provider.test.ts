import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  executableText,
  installProvider,
  mirrorCliConfig,
  NODE_SCRIPT,
  normalizeSource,
  packageHash,
  terraformPlatform,
} from "./provider";

describe("provider install", () => {
  const work = mkdtempSync(join(tmpdir(), "gpurental-install-"));
  const bundle = join(work, "provider.js");
  const launcher = join(work, "provider-launcher.js");
  writeFileSync(bundle, "exports.main = async () => {};\n");
  writeFileSync(launcher, "exports.launch = () => {};\n");
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it("writes the unpacked mirror layout with an executable named for Terraform", () => {
    const r = installProvider({
      dir: join(work, "m1"),
      version: "1.2.3",
      bundle,
      launcher,
      sources: ["gpurental/gpurental"],
    });
    expect(r.packageDir).toBe(
      join(work, "m1", "registry.terraform.io", "gpurental", "gpurental", "1.2.3", terraformPlatform()),
    );
    expect(r.executable).toBe(join(r.packageDir, "terraform-provider-gpurental_v1.2.3"));
    expect(statSync(r.executable).mode & 0o111).toBe(0o111);
    const text = readFileSync(r.executable, "utf8");
    expect(text.startsWith("#!/bin/sh\n")).toBe(true);
    expect(text).not.toContain(work);
    const script = readFileSync(join(r.packageDir, NODE_SCRIPT), "utf8");
    expect(script.startsWith("#!/usr/bin/env node\n")).toBe(true);
    expect(script).not.toContain(work);
  });

  it("installs the parts the production bundle loads after the handshake", () => {
    const split = join(work, "split");
    mkdirSync(split);
    const parts = ["provider-transport.js", "provider-impl.js", "provider-schema.pb"];
    for (const f of ["provider.js", "provider-launcher.js", ...parts])
      writeFileSync(join(split, f), `// ${f}\n`);
    const r = installProvider({ dir: join(work, "m-split"), bundle: join(split, "provider.js") });
    for (const f of parts) expect(readFileSync(join(r.packageDir, f), "utf8")).toBe(`// ${f}\n`);
  });

  it("installs every platform's launcher in C with the script: the same files on every platform", () => {
    const withLaunchers = join(work, "with-launchers");
    mkdirSync(withLaunchers);
    for (const f of ["provider.js", "provider-launcher.js"])
      writeFileSync(join(withLaunchers, f), `// ${f}\n`);
    const amd64 = Buffer.from("\x7fELF amd64", "latin1");
    const arm64 = Buffer.from("\x7fELF arm64", "latin1");
    writeFileSync(join(withLaunchers, "node-launcher-linux_amd64"), amd64, { mode: 0o755 });
    writeFileSync(join(withLaunchers, "node-launcher-linux_arm64"), arm64, { mode: 0o755 });
    // A file the executable would never run is not installed.
    writeFileSync(join(withLaunchers, "node-launcher-plan9_mips"), "other", { mode: 0o755 });
    const r = installProvider({
      dir: join(work, "m-launchers"),
      version: "1.2.3",
      bundle: join(withLaunchers, "provider.js"),
    });
    expect(readdirSync(r.packageDir).sort()).toEqual([
      "node-launcher-linux_amd64",
      "node-launcher-linux_arm64",
      "provider-launcher.js",
      NODE_SCRIPT,
      "provider.js",
      "terraform-provider-gpurental_v1.2.3",
    ]);
    expect(readFileSync(join(r.packageDir, "node-launcher-linux_amd64")).equals(amd64)).toBe(true);
    expect(readFileSync(join(r.packageDir, "node-launcher-linux_arm64")).equals(arm64)).toBe(true);
    for (const f of ["node-launcher-linux_amd64", NODE_SCRIPT])
      expect(statSync(join(r.packageDir, f)).mode & 0o111).toBe(0o111);
    // Nothing in it depends on the platform installing it: the executable is one text.
    expect(readFileSync(r.executable, "utf8")).toBe(executableText());
  });

  const posix = process.platform === "win32" ? it.skip : it;
  posix("the executable hands the launch to this machine's launcher in C, else to node", () => {
    const machine = execFileSync("uname", ["-sm"], { encoding: "utf8" }).trim();
    const own = { "Linux x86_64": "node-launcher-linux_amd64", "Linux aarch64": "node-launcher-linux_arm64" }[
      machine
    ];
    const dir = join(work, "dispatch");
    const bin = join(dir, "bin");
    mkdirSync(bin, { recursive: true });
    for (const f of ["provider.js", "provider-launcher.js"]) writeFileSync(join(dir, f), `// ${f}\n`);
    // Stand-ins that say who ran, with what: each launcher, and node on PATH.
    for (const name of ["node-launcher-linux_amd64", "node-launcher-linux_arm64"])
      writeFileSync(join(dir, name), `#!/bin/sh\necho "${name}" "$@"\n`, { mode: 0o755 });
    writeFileSync(join(bin, "node"), '#!/bin/sh\necho node "$@"\n', { mode: 0o755 });
    const r = installProvider({
      dir: join(work, "m-dispatch"),
      version: "1.2.3",
      bundle: join(dir, "provider.js"),
    });
    const env = { PATH: `${bin}:/usr/bin:/bin` };
    const ran = execFileSync(r.executable, ["two words", "--x"], { encoding: "utf8", env });
    expect(ran).toBe(
      own ? `${own} two words --x\n` : `node ${join(r.packageDir, NODE_SCRIPT)} two words --x\n`,
    );
    // Without a launcher (a build without a C compiler), node runs the script.
    for (const name of ["node-launcher-linux_amd64", "node-launcher-linux_arm64"])
      rmSync(join(r.packageDir, name));
    const bare = execFileSync(r.executable, ["--x"], { encoding: "utf8", env, cwd: r.packageDir });
    expect(bare).toBe(`node ${join(r.packageDir, NODE_SCRIPT)} --x\n`);
  });

  it("installs a standalone executable alone, named for Terraform, linked between sources", () => {
    const exe = join(work, "gpurental");
    writeFileSync(exe, Buffer.alloc(2 << 20, 7), { mode: 0o755 });
    const r = installProvider({ dir: join(work, "m-standalone"), version: "1.2.3", executable: exe });
    const name = `terraform-provider-gpurental_v1.2.3${process.platform === "win32" ? ".exe" : ""}`;
    expect(r.executable).toBe(join(r.packageDir, name));
    for (const d of r.packageDirs) expect(readdirSync(d)).toEqual([name]);
    expect(readFileSync(r.executable).equals(readFileSync(exe))).toBe(true);
    expect(statSync(r.executable).mode & 0o111).toBe(0o111);
    // The second source's copy is the same file, not a second 2 MB: what Terraform hashes is alike.
    expect(statSync(join(r.packageDirs[1]!, name)).ino).toBe(statSync(r.executable).ino);
    expect(packageHash(r.packageDirs[1]!)).toBe(r.hash);
    expect(() => installProvider({ dir: join(work, "m-none"), executable: join(work, "nope") })).toThrow(
      `cannot read the provider executable ${join(work, "nope")}: ENOENT`,
    );
  });

  it("gives the same lock hash wherever the mirror is, so lock files stay valid across machines", () => {
    const a = installProvider({ dir: join(work, "a"), bundle, launcher });
    const b = installProvider({ dir: join(work, "elsewhere", "b"), bundle, launcher });
    expect(a.hash).toMatch(/^h1:[A-Za-z0-9+/]{43}=$/);
    expect(a.hash).toBe(b.hash);
    expect(packageHash(a.packageDirs[1]!)).toBe(a.hash);
  });

  it("installs under every requested source, fully qualified ones included", () => {
    const r = installProvider({
      dir: join(work, "c"),
      bundle,
      launcher,
      sources: ["example.com/acme/gpurental", "gpurental/gpurental"],
    });
    expect(r.sources).toEqual(["example.com/acme/gpurental", "registry.terraform.io/gpurental/gpurental"]);
    expect(r.cliConfig).toBe(mirrorCliConfig(join(work, "c"), r.sources));
    expect(r.cliConfig).toMatch(
      /filesystem_mirror \{\n {4}path {4}= ".*c"\n {4}include = \["example.com\/acme\/gpurental", "registry.terraform.io\/gpurental\/gpurental"\]/,
    );
    expect(r.cliConfig).toMatch(/direct \{\n {4}exclude = \[/);
  });

  it("refuses bad sources, versions and a missing bundle", () => {
    expect(() => normalizeSource("gpurental/other")).toThrow(/must end in \/gpurental/);
    expect(() => normalizeSource("a/b/c/d")).toThrow(/invalid provider source/);
    expect(() => installProvider({ dir: join(work, "d"), version: "v1", bundle, launcher })).toThrow(
      /invalid version/,
    );
    expect(() =>
      installProvider({ dir: join(work, "d"), bundle: join(work, "missing.js"), launcher }),
    ).toThrow(/npm run bundle/);
  });

  it("refuses a mirror directory that is a file, empty, or cannot be written, naming --dir", () => {
    const file = join(work, "a-file");
    writeFileSync(file, "x");
    expect(() => installProvider({ dir: file, bundle, launcher })).toThrow(
      `the mirror directory (--dir) ${file} is a file, not a directory`,
    );
    expect(() => installProvider({ dir: " ", bundle, launcher })).toThrow(/--dir\) must not be empty/);
    // A file where a directory of the layout belongs: the write fails below the mirror.
    const blocked = join(work, "blocked");
    mkdirSync(blocked);
    writeFileSync(join(blocked, "registry.terraform.io"), "x");
    expect(() => installProvider({ dir: blocked, bundle, launcher })).toThrow(
      new RegExp(
        `cannot write the provider into the mirror directory \\(--dir\\) ${blocked}: (ENOTDIR|EEXIST)`,
      ),
    );
  });

  (process.platform === "linux" ? it : it.skip)(
    "fails with the path, instead of hanging, where mkdir cannot create a directory",
    () => {
      // Under /proc mkdir answers ENOENT for a path whose parent exists, where Node's recursive mkdir
      // loops for ever.
      expect(() => installProvider({ dir: "/proc/gpurental-mirror", bundle, launcher })).toThrow(
        /cannot write the provider into the mirror directory \(--dir\) \/proc\/gpurental-mirror: ENOENT at \/proc\/gpurental-mirror/,
      );
    },
  );

  it("names platforms as Terraform does", () => {
    expect(terraformPlatform("linux", "x64")).toBe("linux_amd64");
    expect(terraformPlatform("darwin", "arm64")).toBe("darwin_arm64");
    expect(terraformPlatform("win32", "x64")).toBe("windows_amd64");
  });
});
