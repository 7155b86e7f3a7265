import { spawnSync } from "node:child_process";
import {
  existsSync,
  lchownSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bundle } from "../../scripts/build/bundle-provider";
import { bundleId } from "./bundle-id";
import { V8_FLAGS_CHANGED_KEY, WRITE_CODE_CACHES_KEY } from "./code-cache-loader";

// The launcher's code cache, in separate processes: it is written at exit.

jest.setTimeout(60_000);

const work = mkdtempSync(join(tmpdir(), "gpurental-launcher-"));
let launcher = "";

beforeAll(async () => {
  launcher = await bundle(join(__dirname, "code-cache-loader.ts"), join(work, "provider-launcher.js"));
  writeFileSync(join(work, "part.js"), "exports.main = async () => {};\n");
});

afterAll(() => rmSync(work, { recursive: true, force: true }));

/**
 * Loads part.js through the launcher in a new process with `env`; `changeFlags` marks V8's flags
 * changed, after asking for the caches owed (as scripts/build/undici-request.js does) when it is
 * "announced".
 */
function load(env: NodeJS.ProcessEnv, changeFlags: boolean | "announced" = false): void {
  const script = [
    `const { loadBundle } = require(${JSON.stringify(launcher)});`,
    `loadBundle(${JSON.stringify(join(work, "part.js"))});`,
    changeFlags === "announced"
      ? `globalThis[Symbol.for(${JSON.stringify(WRITE_CODE_CACHES_KEY.description)})]();`
      : "",
    changeFlags ? `globalThis[Symbol.for(${JSON.stringify(V8_FLAGS_CHANGED_KEY.description)})] = true;` : "",
  ].join("\n");
  const r = spawnSync(process.execPath, ["-e", script], { env: { PATH: process.env.PATH, ...env } });
  expect(r.status).toBe(0);
}

/** The caches written in `dir`. */
const caches = (dir: string) =>
  existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith(".v8cache")) : [];

/** Loads part.js with the cache in `cacheDir`; returns the caches written there. */
function run(cacheDir: string, changeFlags: boolean | "announced"): string[] {
  mkdirSync(cacheDir, { recursive: true, mode: 0o700 });
  load({ GPURENTAL_PROVIDER_CODE_CACHE_DIR: cacheDir }, changeFlags);
  return caches(cacheDir);
}

/** A new private directory under the test's own. */
let n = 0;
function fresh(): string {
  const dir = join(work, `d${++n}`);
  mkdirSync(dir, { mode: 0o700 });
  return dir;
}

describe("the launcher's code cache", () => {
  it("is written at exit", () => {
    expect(run(join(work, "plain"), false)).toHaveLength(1);
  });

  it("is not written by a process that changed V8's flags, which would make it useless to others", () => {
    expect(run(join(work, "flags"), true)).toHaveLength(0);
    // The next process, flags unchanged, writes it.
    expect(run(join(work, "flags"), false)).toHaveLength(1);
  });

  it("is written before V8's flags change by code that asks for it first, as the API client's loading does", () => {
    expect(run(join(work, "announced"), "announced")).toHaveLength(1);
  });

  it("is only ever used for the code it was made from, even a bundle of the same length, place and time", () => {
    // An upgrade that leaves a file of the same size in the same place, with the one time npm
    // gives every file it extracts: V8 would take the old cache for the new code.
    const cacheDir = fresh();
    const file = join(work, "same.js");
    const answer = (value: string) => {
      writeFileSync(file, `exports.main = async () => {}; globalThis.answer = "${value}";\n`);
      utimesSync(file, new Date("1985-10-26T08:15:00Z"), new Date("1985-10-26T08:15:00Z"));
      const script = [
        `const { loadBundle } = require(${JSON.stringify(launcher)});`,
        `loadBundle(${JSON.stringify(file)});`,
        "process.stdout.write(globalThis.answer);",
      ].join("\n");
      const r = spawnSync(process.execPath, ["-e", script], {
        env: { PATH: process.env.PATH, GPURENTAL_PROVIDER_CODE_CACHE_DIR: cacheDir },
        encoding: "utf8",
      });
      expect(r.status).toBe(0);
      return r.stdout;
    };
    expect(answer("old")).toBe("old");
    expect(answer("old")).toBe("old");
    expect(caches(cacheDir)).toHaveLength(1);
    expect(answer("new")).toBe("new");
  });

  it("is named by the id the build writes into a bundle, and by the content of one without it", () => {
    const marked = readFileSync(launcher, "utf8");
    const id = /\/\/# gpurental-bundle=([0-9a-f]{16})\n/.exec(marked)?.[1];
    expect(id).toMatch(/^[0-9a-f]{16}$/);
    // Written before the source map's line, which stays last.
    expect(marked.trimEnd().split("\n").pop()).toMatch(/^\/\/# sourceMappingURL=/);
    expect(bundleId(marked)).toBe(id);
    expect(bundleId("exports.a = 1;\n")).not.toBe(bundleId("exports.a = 2;\n"));
    expect(bundleId("exports.a = 1;\n")).toMatch(/^[0-9a-f]{16}$/);
  });
});

describe("what a bundle may require", () => {
  it("is Node's built-in modules only, never a package a search of the folders above finds", () => {
    const dir = fresh();
    // A folder beside the bundle, as anyone may create /tmp/node_modules above a runtime in /tmp.
    mkdirSync(join(dir, "node_modules", "pg-native"), { recursive: true });
    writeFileSync(
      join(dir, "node_modules", "pg-native", "index.js"),
      "process.stdout.write('planted ran');\n",
    );
    const part = join(dir, "wants.js");
    writeFileSync(
      part,
      [
        "exports.main = async () => {};",
        'require("node:fs"); require("path");',
        'try { require("pg-native"); } catch (err) { process.stdout.write("refused: " + err.code); }',
      ].join("\n"),
    );
    const script = `require(${JSON.stringify(launcher)}).loadBundle(${JSON.stringify(part)});`;
    const r = spawnSync(process.execPath, ["-e", script], {
      env: { PATH: process.env.PATH, GPURENTAL_PROVIDER_CODE_CACHE: "off" },
      encoding: "utf8",
    });
    expect(r.status).toBe(0);
    expect(r.stdout).toBe("refused: MODULE_NOT_FOUND");
  });
});

describe("where the code cache lives", () => {
  const uid = process.getuid?.() ?? 0;

  it("follows HOME, as the standalone runtime does, not the temp directory", () => {
    const home = fresh();
    const tmp = fresh();
    load({ HOME: home, TMPDIR: tmp });
    expect(caches(join(home, ".cache", "gpurental", "code-cache"))).toHaveLength(1);
    expect(readdirSync(tmp)).toEqual([]);
  });

  it("prefers an absolute XDG_CACHE_HOME, and ignores a relative one", () => {
    const home = fresh();
    const xdg = fresh();
    load({ HOME: home, XDG_CACHE_HOME: xdg, TMPDIR: fresh() });
    expect(caches(join(xdg, "gpurental", "code-cache"))).toHaveLength(1);
    load({ HOME: home, XDG_CACHE_HOME: "relative", TMPDIR: fresh() });
    expect(caches(join(home, ".cache", "gpurental", "code-cache"))).toHaveLength(1);
  });

  it("uses the temp directory without a HOME", () => {
    const tmp = fresh();
    load({ TMPDIR: tmp });
    expect(caches(join(tmp, `gpurental-provider-cache-${uid}`))).toHaveLength(1);
  });

  it("never writes where a symbolic link leads, even to the user's own directory", () => {
    const tmp = fresh();
    const target = fresh();
    symlinkSync(target, join(tmp, `gpurental-provider-cache-${uid}`));
    load({ TMPDIR: tmp });
    const chosen = fresh();
    const link = join(fresh(), "cache");
    symlinkSync(chosen, link);
    load({ GPURENTAL_PROVIDER_CODE_CACHE_DIR: link });
    expect([readdirSync(target), readdirSync(chosen)]).toEqual([[], []]);
  });

  (uid === 0 ? it : it.skip)(
    "creates nothing in another user's home, nor through another user's link (needs root)",
    () => {
      const home = fresh();
      lchownSync(home, 65534, 65534);
      const tmp = fresh();
      load({ HOME: home, TMPDIR: tmp });
      expect(readdirSync(home)).toEqual([]);
      expect(caches(join(tmp, `gpurental-provider-cache-${uid}`))).toHaveLength(1);

      const target = fresh();
      const link = join(fresh(), "elsewhere");
      symlinkSync(target, link);
      lchownSync(link, 65534, 65534);
      load({ XDG_CACHE_HOME: link, TMPDIR: fresh() });
      expect(readdirSync(target)).toEqual([]);
    },
  );
});
