import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bundle } from "../../scripts/bundle-provider";
import { V8_FLAGS_CHANGED_KEY } from "./launcher";

// The launcher's code cache, in separate processes: it is written at exit.

jest.setTimeout(60_000);

const work = mkdtempSync(join(tmpdir(), "gpurental-launcher-"));
let launcher = "";

beforeAll(async () => {
  launcher = await bundle(join(__dirname, "launcher.ts"), join(work, "provider-launcher.js"));
  writeFileSync(join(work, "part.js"), "exports.main = async () => {};\n");
});

afterAll(() => rmSync(work, { recursive: true, force: true }));

/** Loads part.js through the launcher in a new process; `changeFlags` marks V8's flags changed. */
function run(cacheDir: string, changeFlags: boolean): string[] {
  mkdirSync(cacheDir, { recursive: true, mode: 0o700 });
  const script = [
    `const { loadBundle } = require(${JSON.stringify(launcher)});`,
    `loadBundle(${JSON.stringify(join(work, "part.js"))});`,
    changeFlags ? `globalThis[Symbol.for(${JSON.stringify(V8_FLAGS_CHANGED_KEY.description)})] = true;` : "",
  ].join("\n");
  const r = spawnSync(process.execPath, ["-e", script], {
    env: { PATH: process.env.PATH, GPURENTAL_PROVIDER_CODE_CACHE_DIR: cacheDir },
  });
  expect(r.status).toBe(0);
  return readdirSync(cacheDir).filter((f) => f.endsWith(".v8cache"));
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
});
